/* goss.h: gradient-based one-side sampling (Ke et al., "LightGBM: A Highly
 * Efficient Gradient Boosting Decision Tree", 2017, Algorithm 2): a round's
 * tree is grown from the rows with the largest gradients (the top
 * top_rate share) and a random other_rate share of the rest, whose
 * gradients and hessians are multiplied by (1 - top_rate) / other_rate so
 * that the sums the splits are chosen from stay unbiased. */
#ifndef HB_GOSS_H
#define HB_GOSS_H
#include <stdint.h>

/* Sample round `round`'s rows from gh (K blocks of n interleaved (g, h)
 * pairs, as objective.h writes them). A row's size is sum_k |g_k h_k|;
 * the ceil(top_rate n) largest are kept (ties broken by row order: the
 * lower row first), and each other row is kept when its draw for (seed,
 * HB_RNG_GOSS, round, row) is below other_rate / (1 - top_rate), its g and
 * h then multiplied in place by (1 - top_rate) / other_rate. Writes the kept
 * rows (increasing) to bag, their flags to in_bag, and returns how many.
 * scratch: 2 n doubles. Rows are sized and drawn on nthreads threads; the
 * sample does not depend on how many. */
int hb_goss_sample(double *gh, int n, int K, double top_rate, double other_rate, uint64_t seed, uint64_t round,
                   double *scratch, int *bag, uint8_t *in_bag, int nthreads);

/* The same for one shard of a data-parallel training (dist.h; NULL: one
 * process, row0 0, nglobal n), called on every process at once: the top
 * share is of all nglobal rows, chosen by an exact order statistic of every
 * shard's sizes, ties kept in global row order; the draws are keyed by the
 * global row row0 + i. The sample is the one process's on the concatenated
 * rows. *m_out: rows kept here. HB_OK, or a status from the communicator. */
struct hb_dist;
int hb_goss_sample_dist(double *gh, int n, int K, double top_rate, double other_rate, uint64_t seed,
                        uint64_t round, double *scratch, int *bag, uint8_t *in_bag, int nthreads,
                        const struct hb_dist *dist, int64_t row0, int64_t nglobal, int *m_out);

/* The rules above in pieces, which the GPU learner's sample (src/cuda,
 * learner.cu) takes too:
 * - hb_goss_top: how many of n rows the top share keeps, ceil(top_rate n)
 *   within [1, n];
 * - hb_goss_select_byte: one step of the threshold's radix select, from the
 *   256 counts (summed over the processes) of the sizes' next byte among
 *   those of the prefix found so far: the byte of the size of rank *r
 *   (0-based, increasing), *r becoming its rank among those with it;
 * - hb_goss_ties_before: of the rows equal to the threshold, how many this
 *   process may keep, c being {rows above it everywhere, each process's
 *   rows equal to it in rank order} (summed): top less those above and
 *   those of the lower ranks, which come first (may be negative or exceed
 *   this process's own: none, or all of them). */
int64_t hb_goss_top(double top_rate, int64_t n);
int hb_goss_select_byte(const int64_t *cnt, int64_t *r);
int64_t hb_goss_ties_before(const int64_t *c, int rank, int64_t top);

#endif
