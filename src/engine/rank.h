/* rank.h: learning to rank: the query index (which rows make each query),
 * LambdaRank's gradients and the NDCG@k and MAP@k metrics.
 *
 * The gradients are LightGBM's lambdarank objective (Burges 2010; LightGBM's
 * rank_objective.hpp): within a query, every pair of documents with
 * different labels of which at least one is ranked in the top
 * lambdarank_truncation_level by the current scores pulls the better one up
 * and the other down with
 *   lambda = -sigma(s_hi - s_lo) |dNDCG|,  hessian = sigma (1 - sigma) |dNDCG|,
 *   sigma(d) = 1 / (1 + e^d),  |dNDCG| = |gain_hi - gain_lo| |D(p_hi) - D(p_lo)| / maxDCG@truncation,
 * D(p) = 1 / log2(2 + p) at 0-based positions p; with lambdarank_norm,
 * |dNDCG| is divided by 0.01 + |s_hi - s_lo| (unless every score of the query
 * is the same) and the query's lambdas and hessians are scaled by
 * log2(1 + S) / S, S the sum of |lambda| over its pairs.
 *
 * Ties: documents with equal scores have no order, and LightGBM's (their row
 * order) would make the model depend on how the rows are sorted. Here every
 * pair's weight |D(p_hi) - D(p_lo)| x [a document of the pair is in the top
 * truncation_level] is its expectation over the orders of the tied
 * documents, all equally likely. Without ties that is LightGBM's weight; with
 * them the gradients depend only on scores and labels, never on the row
 * order (the first round, where every score ties, included).
 *
 * NDCG@k likewise takes the expectation over tied orders (McSherry and
 * Najork 2008): each document of a tied block gets the mean of the block's
 * discounts (0 beyond position k). A query whose ideal DCG is 0 (every label
 * of gain 0) counts as NDCG 1, as in LightGBM; one whose labels are all equal
 * gets zero gradients and hessians, and NDCG 1.
 *
 * MAP@k is LightGBM's (map_metric.hpp): a document is relevant when its
 * label is > 0; with R relevant documents in a query and the documents
 * ordered by score, AP@k = sum over positions i = 1..k of
 * rel_i x (relevant documents in positions 1..i) / i, divided by min(k, R);
 * a query with no relevant document counts as 1, as in LightGBM. Ties again
 * take the expectation over the tied orders (LightGBM leaves their order to
 * its sort): in a tied block of b documents, r of them relevant, after H
 * relevant documents, the j-th position (j = 0..b-1) is relevant with
 * probability r / b, and then holds an expected H + 1 + j (r - 1) / (b - 1)
 * relevant documents up to it; AP@k is linear in these, so its expectation
 * is exact. The query's weight is its rows' mean weight, as for NDCG
 * (LightGBM's query weights). */
#ifndef HB_RANK_H
#define HB_RANK_H
#include "config.h"

/* The rows of each query. */
typedef struct {
  int n, nq;          /* rows, queries */
  int *start;         /* nq + 1: query q's rows are rows[start[q] .. start[q + 1]) */
  int *rows;          /* n row indices: each query's in increasing order, or (after
                         hb_rank_gradients) in the order of the last ranking */
  int max_size;       /* rows of the largest query */
  double *discount;   /* max_size values: D(p) = 1 / log2(2 + p) */
} hb_rank_query_t;

/* Index n rows by their query codes qid[i] in 0..nq-1 (a query may have no
 * rows). HB_OK and *out, or HB_ERR_INPUT (a code out of range) or
 * HB_ERR_NOMEM with *out NULL. */
int hb_rank_query_create(int n, const int *qid, int nq, hb_rank_query_t **out);
void hb_rank_query_free(hb_rank_query_t *q);

/* HB_OK when every label is a whole number in 0..num_label_gain-1, else
 * HB_ERR_INPUT naming the first that is not. */
int hb_rank_check_labels(const hb_config_t *cfg, int n, const double *label);

/* LambdaRank gradients and hessians of every row (see above) into gh as
 * (gradient, hessian) pairs, each times the row's weight when given. Queries
 * in parallel; each query's values are the same for any thread count (and
 * any order of its rows). Each query's rows are left in q in the order of
 * this ranking, so the next round's sort starts from nearly sorted rows.
 * HB_OK or HB_ERR_NOMEM. */
int hb_rank_gradients(const hb_config_t *cfg, hb_rank_query_t *q, const double *label,
                      const double *weight, const double *score, double *gh, int nthreads);

/* Mean NDCG@k over the queries with rows (k >= 1), each weighted by its
 * rows' mean weight when weights are given. HB_OK, HB_ERR_INPUT or
 * HB_ERR_NOMEM. */
int hb_rank_ndcg(const hb_config_t *cfg, const hb_rank_query_t *q, const double *label, const double *weight,
                 const double *score, int k, int nthreads, double *out);

/* Mean MAP@k over the queries with rows (k >= 1), weighted as hb_rank_ndcg
 * weights them. HB_OK, HB_ERR_INPUT or HB_ERR_NOMEM. */
int hb_rank_map(const hb_rank_query_t *q, const double *label, const double *weight, const double *score, int k,
                int nthreads, double *out);

/* hb_rank_ndcg (map 0) or hb_rank_map (map 1) of a data set sharded over
 * processes (dist.h; NULL: one process), called on every process at once:
 * q indexes this shard's rows by global query codes, every query's rows on
 * one process. The value is the one process's on the concatenated rows,
 * the same double on every process. */
struct hb_dist;
int hb_rank_metric_dist(const hb_config_t *cfg, const hb_rank_query_t *q, const double *label, const double *weight,
                        const double *score, int k, int map, int nthreads, const struct hb_dist *dist, double *out);

#endif
