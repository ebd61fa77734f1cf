/* rank.c: learning to rank: the query index, LambdaRank's gradients,
 * NDCG@k and MAP@k (the rules, ties included, are in rank.h). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include "rank.h"
#include "error.h"
#include "threads.h"
#include "dist.h"

int hb_rank_query_create(int n, const int *qid, int nq, hb_rank_query_t **out) {
  *out = NULL;
  if (n < 0 || nq < 0 || (n > 0 && !qid)) return hb_error_set(HB_ERR_INPUT, "no query codes given");
  for (int i = 0; i < n; i++)
    if (qid[i] < 0 || qid[i] >= nq)
      return hb_error_set(HB_ERR_INPUT, "query code %d of row %d is outside 0..%d", qid[i], i + 1, nq - 1);
  hb_rank_query_t *q = hb_calloc(1, sizeof *q);
  if (!q) return HB_ERR_NOMEM;
  q->n = n;
  q->nq = nq;
  q->start = hb_calloc((size_t)nq + 1, sizeof(int));
  q->rows = hb_malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  if (!q->start || !q->rows) goto nomem;
  /* a counting sort: each query's rows stay in increasing order */
  for (int i = 0; i < n; i++) q->start[qid[i] + 1]++;
  for (int g = 0; g < nq; g++) {
    const int size = q->start[g + 1];
    if (size > q->max_size) q->max_size = size;
    q->start[g + 1] += q->start[g];
  }
  int *fill = hb_malloc(sizeof(int) * (size_t)(nq > 0 ? nq : 1));
  if (!fill) goto nomem;
  for (int g = 0; g < nq; g++) fill[g] = q->start[g];
  for (int i = 0; i < n; i++) q->rows[fill[qid[i]]++] = i;
  hb_free(fill);
  q->discount = hb_malloc(sizeof(double) * (size_t)(q->max_size > 0 ? q->max_size : 1));
  if (!q->discount) goto nomem;
  for (int p = 0; p < q->max_size; p++) q->discount[p] = 1.0 / log2(2.0 + p);
  *out = q;
  return HB_OK;
nomem:
  hb_rank_query_free(q);
  return hb_error_set(HB_ERR_NOMEM, "out of memory indexing %d queries", nq);
}

void hb_rank_query_free(hb_rank_query_t *q) {
  if (!q) return;
  hb_free(q->start);
  hb_free(q->rows);
  hb_free(q->discount);
  hb_free(q);
}

int hb_rank_check_labels(const hb_config_t *cfg, int n, const double *label) {
  for (int i = 0; i < n; i++) {
    const double y = label[i];
    if (!(y >= 0.0 && y < cfg->num_label_gain && y == floor(y)))
      return hb_error_set(HB_ERR_INPUT,
                          "ranking labels must be whole numbers from 0 to %d, one less than the values of label_gain "
                          "(label %d is %g)",
                          cfg->num_label_gain - 1, i + 1, y);
  }
  return HB_OK;
}

/* A document of a query: its score, row and grade. */
typedef struct {
  double s;
  int row, grade;
} doc_t;

/* x before y in a query's ranking: score descending, then row (a total
 * order, so every sort gives the same result); inline, unlike qsort's calls. */
static inline int doc_before(const doc_t *x, const doc_t *y) {
  return x->s > y->s || (x->s == y->s && x->row < y->row);
}

/* Insertion sort of m documents while it moves at most `budget` of them in
 * all; 1 when sorted, 0 when it gave up (the documents are then partly sorted). */
static int insertion_sort(doc_t *d, int m, long budget) {
  for (int i = 1; i < m; i++) {
    doc_t v = d[i];
    int j = i - 1;
    while (j >= 0 && doc_before(&v, &d[j])) {
      d[j + 1] = d[j];
      j--;
    }
    d[j + 1] = v;
    budget -= i - 1 - j;
    if (budget < 0) return 0;
  }
  return 1;
}

/* Sort a query's documents: quicksort (median of three) down to short runs, then insertion sort. */
static void sort_docs(doc_t *d, int m) {
  while (m > 16) {
    doc_t *a = &d[0], *b = &d[m / 2], *c = &d[m - 1], t;
    if (doc_before(b, a)) { t = *a; *a = *b; *b = t; }
    if (doc_before(c, b)) { t = *b; *b = *c; *c = t; }
    if (doc_before(b, a)) { t = *a; *a = *b; *b = t; }
    const doc_t pivot = *b;
    int i = 0, j = m - 1;
    for (;;) {
      while (doc_before(&d[i], &pivot)) i++;
      while (doc_before(&pivot, &d[j])) j--;
      if (i >= j) break;
      t = d[i]; d[i] = d[j]; d[j] = t;
      i++;
      j--;
    }
    /* d[0..j] precede d[j+1..m): recurse into the smaller side, loop on the larger */
    if (j + 1 < m - j - 1) {
      sort_docs(d, j + 1);
      d += j + 1;
      m -= j + 1;
    } else {
      sort_docs(d + j + 1, m - j - 1);
      m = j + 1;
    }
  }
  insertion_sort(d, m, LONG_MAX);
}

/* DCG@k of the ideal order of m documents with these grades (count per grade first). */
static double ideal_dcg(const hb_config_t *cfg, const doc_t *d, int m, int k, const double *disc, int *cnt) {
  const int G = cfg->num_label_gain;
  for (int g = 0; g < G; g++) cnt[g] = 0;
  for (int i = 0; i < m; i++) cnt[d[i].grade]++;
  double dcg = 0.0;
  int p = 0;
  const int top = k < m ? k : m;
  for (int g = G - 1; g >= 0 && p < top; g--)
    for (int c = 0; c < cnt[g] && p < top; c++) dcg += cfg->label_gain[g] * disc[p++];
  return dcg;
}

/* Per-thread scratch of one query. */
typedef struct {
  doc_t *doc;                  /* m documents, sorted */
  double *lam, *hes;           /* m lambdas and hessians, in sorted order */
  int *blk;                    /* m: the tie block of each position */
  int *bstart;                 /* blocks + 1: first position of each block */
  double *bt, *ba, *bd, *bw;   /* per block: share of positions < T, mean of D over positions < T (0
                                  beyond), mean of D, and the expected weight of a pair inside it */
  double *bdpos, *ex;          /* per position: its block's bd, and exp(score - the query's top score) */
  int *cnt;                    /* num_label_gain grade counts */
  int *present;                /* the grades present in a block */
  double *absg;                /* num_label_gain: per grade, the block's sum of gain differences */
} rank_ws_t;

/* The lambdas and hessians of one query's m documents (sorted in ws->doc). */
static void query_gradients(const hb_config_t *cfg, const double *disc, int m, rank_ws_t *ws) {
  doc_t *d = ws->doc;
  double *lam = ws->lam, *hes = ws->hes;
  const double *gain = cfg->label_gain;
  const int T = cfg->lambdarank_truncation_level;
  for (int i = 0; i < m; i++) lam[i] = hes[i] = 0.0;
  const double maxdcg = ideal_dcg(cfg, d, m, T, disc, ws->cnt);
  if (!(maxdcg > 0.0)) return;  /* every gain 0: NDCG is 1 whatever the order */
  if (m > 0 && ws->cnt[d[0].grade] == m) return;  /* one grade: no pairs */
  const double inv = 1.0 / maxdcg;
  /* tie blocks, and what each contributes to its pairs' expected weights */
  int nb = 0;
  for (int i = 0; i < m; i++) {
    if (i == 0 || d[i].s != d[i - 1].s) ws->bstart[nb++] = i;
    ws->blk[i] = nb - 1;
  }
  ws->bstart[nb] = m;
  for (int b = 0; b < nb; b++) {
    const int s = ws->bstart[b], e = ws->bstart[b + 1], mb = e - s;
    double top = 0.0, dtop = 0.0, dall = 0.0, acc = 0.0, suffix = 0.0;
    for (int p = e - 1; p >= s; p--) {
      dall += disc[p];
      if (p < T) {
        top += 1.0;
        dtop += disc[p];
        /* pairs (p, q > p) of the block: D(p) - D(q) when p < T */
        acc += (double)(e - 1 - p) * disc[p] - suffix;
      }
      suffix += disc[p];
    }
    ws->bt[b] = top / mb;
    ws->ba[b] = dtop / mb;
    ws->bd[b] = dall / mb;
    ws->bw[b] = mb > 1 ? 2.0 * acc / ((double)mb * (mb - 1)) : 0.0;
  }
  const int norm = cfg->lambdarank_norm && nb > 1;
  const double s_top = d[0].s;
  for (int i = 0; i < m; i++) {
    ws->bdpos[i] = ws->bd[ws->blk[i]];
    ws->ex[i] = exp(d[i].s - s_top);
  }
  double sum_lambdas = 0.0;
  for (int a = 0; a < nb && ws->bstart[a] < T; a++) {
    const int s = ws->bstart[a], e = ws->bstart[a + 1];
    const double sa = d[s].s;
    /* pairs with a document in a later block: E[1{p < T} (D(p) - D(q))] = ba - bt x bd(later);
     * sigma(s_hi - s_lo) = e_lo / (e_hi + e_lo) with e = exp(s - the query's top score), no exp a pair */
    const double ta = ws->bt[a] * inv, aa = ws->ba[a] * inv;
    for (int i = s; i < e; i++) {
      const int gi = d[i].grade;
      const double gain_i = gain[gi], ei = ws->ex[i];
      double li = 0.0, hi_ = 0.0;
      for (int j = e; j < m; j++) {
        const int gj = d[j].grade;
        if (gi == gj) continue;
        const double ej = ws->ex[j], gap = sa - d[j].s;  /* > 0 */
        const double delta = fabs(gain_i - gain[gj]) * (aa - ta * ws->bdpos[j]);
        const double nf = norm ? 0.01 + gap : 1.0, sum_e = ei + ej;  /* delta is divided by nf */
        double p, q;  /* sigma(s_hi - s_lo) / nf and 1 - sigma */
        if (sum_e > 0.0) {
          const double r = 1.0 / (nf * sum_e);  /* one division a pair */
          p = (gi > gj ? ej : ei) * r;
          q = (gi > gj ? ei : ej) * r * nf;
        } else {  /* both scores far below the top: exp() itself */
          p = 1.0 / (1.0 + exp(gi > gj ? gap : -gap));
          q = 1.0 - p;
          p /= nf;
        }
        const double pd = p * delta, ph = pd * q;
        /* the better document's lambda falls by p delta, the other's rises by it */
        const double signed_pd = gi > gj ? -pd : pd;
        li += signed_pd;
        lam[j] -= signed_pd;
        hi_ += ph;
        hes[j] += ph;
        sum_lambdas += 2.0 * pd;
      }
      lam[i] += li;
      hes[i] += hi_;
    }
    /* pairs inside the block: equal scores (sigma = 1/2), the block's
     * expected weight; by grade counts, not pair by pair */
    if (e - s < 2 || !(ws->bw[a] > 0.0)) continue;
    const double wb = ws->bw[a] * inv * (norm ? 100.0 : 1.0);  /* 1 / (0.01 + 0) */
    int *cnt = ws->cnt, np = 0;
    for (int g = 0; g < cfg->num_label_gain; g++) cnt[g] = 0;
    double sg = 0.0;
    for (int i = s; i < e; i++) {
      if (cnt[d[i].grade]++ == 0) ws->present[np++] = d[i].grade;
      sg += gain[d[i].grade];
    }
    for (int u = 0; u < np; u++) {  /* sum over the block of |gain(g) - gain(other)| for each grade g present */
      const int g = ws->present[u];
      double sum_abs = 0.0;
      for (int v = 0; v < np; v++) sum_abs += cnt[ws->present[v]] * fabs(gain[g] - gain[ws->present[v]]);
      ws->absg[g] = sum_abs;
    }
    for (int i = s; i < e; i++) {
      const double gx = gain[d[i].grade], abs_sum = ws->absg[d[i].grade];
      lam[i] += -0.5 * wb * ((double)(e - s) * gx - sg);
      hes[i] += 0.25 * wb * abs_sum;
      sum_lambdas += 0.5 * wb * abs_sum;
    }
  }
  if (cfg->lambdarank_norm && sum_lambdas > 0.0) {
    const double f = log2(1.0 + sum_lambdas) / sum_lambdas;
    for (int i = 0; i < m; i++) {
      lam[i] *= f;
      hes[i] *= f;
    }
  }
}

/* Scratch for nth threads and queries of up to m documents; NULL when out of memory. */
static void *ws_alloc(int nth, int m, int ngain, rank_ws_t *ws) {
  const size_t M = (size_t)(m > 0 ? m : 1);
  size_t per = M * (sizeof(doc_t) + 2 * sizeof(double) + sizeof(int)) +
                                                 (M + 1) * sizeof(int) + 6 * M * sizeof(double) +
                                                 (size_t)ngain * (2 * sizeof(int) + sizeof(double)) + 64;
  per = (per + 15) / 16 * 16;  /* each thread's share starts aligned */
  char *mem = hb_malloc(per * (size_t)nth);
  if (!mem) return NULL;
  for (int t = 0; t < nth; t++) {
    char *p = mem + per * (size_t)t;
    ws[t].doc = (doc_t *)p;            p += M * sizeof(doc_t);
    ws[t].lam = (double *)p;           p += M * sizeof(double);
    ws[t].hes = (double *)p;           p += M * sizeof(double);
    ws[t].bt = (double *)p;            p += M * sizeof(double);
    ws[t].ba = (double *)p;            p += M * sizeof(double);
    ws[t].bd = (double *)p;            p += M * sizeof(double);
    ws[t].bw = (double *)p;            p += M * sizeof(double);
    ws[t].bdpos = (double *)p;         p += M * sizeof(double);
    ws[t].ex = (double *)p;            p += M * sizeof(double);
    ws[t].absg = (double *)p;          p += (size_t)ngain * sizeof(double);
    ws[t].blk = (int *)p;              p += M * sizeof(int);
    ws[t].bstart = (int *)p;           p += (M + 1) * sizeof(int);
    ws[t].cnt = (int *)p;              p += (size_t)ngain * sizeof(int);
    ws[t].present = (int *)p;
  }
  return mem;
}

/* Sort a query's documents: by insertion while that moves few of them (a
 * query in nearly the order of the last ranking: one tree's change of the
 * scores), else by the quicksort. */
static void sort_docs_adaptive(doc_t *d, int m) {
  if (!insertion_sort(d, m, 4L * m + 32)) sort_docs(d, m);
}

/* Fill ws->doc with query g's documents, in the order of q's rows; returns their number. */
static int load_docs(const hb_rank_query_t *q, int g, const double *label, const double *score, rank_ws_t *ws) {
  const int s = q->start[g], m = q->start[g + 1] - s;
  for (int i = 0; i < m; i++) {
    const int r = q->rows[s + i];
    ws->doc[i].s = score[r];
    ws->doc[i].row = r;
    ws->doc[i].grade = (int)label[r];
  }
  return m;
}

#define RANK_MAX_THREADS 256

int hb_rank_gradients(const hb_config_t *cfg, hb_rank_query_t *q, const double *label,
                      const double *weight, const double *score, double *gh, int nthreads) {
  int nth = hb_threads_use(nthreads);
  if (nth > RANK_MAX_THREADS) nth = RANK_MAX_THREADS;
  if (nth > q->nq) nth = q->nq > 0 ? q->nq : 1;
  rank_ws_t ws[RANK_MAX_THREADS];
  void *mem = ws_alloc(nth, q->max_size, cfg->num_label_gain, ws);
  if (!mem) return hb_error_set(HB_ERR_NOMEM, "out of memory computing ranking gradients");
  for (int i = 0; i < q->n; i++) gh[2 * (size_t)i] = gh[2 * (size_t)i + 1] = 0.0;  /* rows in no query */
HB_OMP(parallel for num_threads(nth) schedule(dynamic, 16) if (nth > 1))
  for (int g = 0; g < q->nq; g++) {
    rank_ws_t *w = &ws[hb_threads_id()];
    /* the rows come in the order of the last round's ranking, nearly sorted, and stay in this one's */
    const int m = load_docs(q, g, label, score, w);
    sort_docs_adaptive(w->doc, m);
    for (int i = 0; i < m; i++) q->rows[q->start[g] + i] = w->doc[i].row;
    query_gradients(cfg, q->discount, m, w);
    for (int i = 0; i < m; i++) {
      const int r = w->doc[i].row;
      const double wr = weight ? weight[r] : 1.0;
      gh[2 * (size_t)r] = wr * w->lam[i];
      gh[2 * (size_t)r + 1] = wr * w->hes[i];
    }
  }
  hb_free(mem);
  return HB_OK;
}

/* NDCG@k of one query's m documents, sorted by score: tied documents share
 * their block's mean discount (0 at positions >= k); 1 when the ideal DCG is 0. */
static double query_ndcg(const hb_config_t *cfg, const double *disc, rank_ws_t *w, int m, int k) {
  const doc_t *d = w->doc;
  const double idcg = ideal_dcg(cfg, d, m, k, disc, w->cnt);
  if (!(idcg > 0.0)) return 1.0;
  double dcg = 0.0;
  for (int s = 0; s < m && s < k;) {
    int e = s + 1;
    while (e < m && d[e].s == d[s].s) e++;
    double dsum = 0.0, gsum = 0.0;
    for (int p = s; p < e; p++) {
      if (p < k) dsum += disc[p];
      gsum += cfg->label_gain[d[p].grade];
    }
    dcg += dsum / (e - s) * gsum;
    s = e;
  }
  return dcg / idcg;
}

/* AP@k of one query's m documents, sorted by score; 1 when none is relevant
 * (label > 0). Ties: the expectation over their orders (rank.h). */
static double query_ap(const doc_t *d, int m, int k) {
  int R = 0;
  for (int i = 0; i < m; i++) R += d[i].grade > 0;
  if (R == 0) return 1.0;
  double sum = 0.0;
  int hits = 0;  /* relevant documents in the blocks before this one */
  for (int s = 0; s < m && s < k;) {
    int e = s + 1, r = d[s].grade > 0;
    while (e < m && d[e].s == d[s].s) r += d[e++].grade > 0;
    if (r > 0) {
      const int b = e - s;
      const double pr = (double)r / b, step = b > 1 ? (double)(r - 1) / (b - 1) : 0.0;
      for (int p = s; p < e && p < k; p++) sum += pr * (hits + 1 + (p - s) * step) / (p + 1);
    }
    hits += r;
    s = e;
  }
  return sum / (k < R ? k : R);
}

/* The mean over the queries with rows of NDCG@k (map 0) or AP@k (map 1),
 * each query weighted by its rows' mean weight. */
static int rank_metric(const hb_config_t *cfg, const hb_rank_query_t *q, const double *label, const double *weight,
                       const double *score, int k, int nthreads, int map, const hb_dist_t *dist, double *out) {
  const char *name = map ? "map" : "ndcg";
  if (k < 1) return hb_error_set(HB_ERR_INPUT, "%s@k needs k >= 1 (got %d)", name, k);
  int nth = hb_threads_use(nthreads);
  if (nth > RANK_MAX_THREADS) nth = RANK_MAX_THREADS;
  if (nth > q->nq) nth = q->nq > 0 ? q->nq : 1;
  rank_ws_t ws[RANK_MAX_THREADS];
  void *mem = ws_alloc(nth, q->max_size, cfg ? cfg->num_label_gain : 0, ws);
  double *val = hb_malloc(sizeof(double) * 2 * (size_t)(q->nq > 0 ? q->nq : 1));
  int st = HB_OK;
  if (!mem || !val) {  /* data-parallel: agreed on below before any exchange */
    st = hb_error_set(HB_ERR_NOMEM, "out of memory computing %s", name);
    if (!(dist && dist->size > 1)) {
      hb_free(mem);
      hb_free(val);
      return st;
    }
  }
HB_OMP(parallel for num_threads(nth) schedule(dynamic, 16) if (nth > 1))
  for (int g = 0; g < (st == HB_OK ? q->nq : 0); g++) {
    rank_ws_t *w = &ws[hb_threads_id()];
    const int m = load_docs(q, g, label, score, w);
    sort_docs(w->doc, m);
    double qw = 0.0;
    for (int i = 0; i < m; i++) qw += weight ? weight[w->doc[i].row] : 1.0;
    val[2 * (size_t)g + 1] = m > 0 ? qw / m : 0.0;
    val[2 * (size_t)g] = map ? query_ap(w->doc, m, k) : query_ndcg(cfg, q->discount, w, m, k);
  }
  hb_free(mem);
  /* Sharded queries (dist.h): each query's rows are on one process, so a
   * query's value and weight are summed with zeros from the others (exact),
   * and its global row count says whether it has rows anywhere. */
  int64_t *rows = NULL;
  if (dist && dist->size > 1) {
    if (st == HB_OK) rows = hb_malloc(sizeof(int64_t) * (size_t)(q->nq > 0 ? q->nq : 1));
    if (st == HB_OK && !rows) st = hb_error_set(HB_ERR_NOMEM, "out of memory computing %s", name);
    for (int g = 0; rows && g < q->nq; g++) {
      rows[g] = q->start[g + 1] - q->start[g];
      if (rows[g] == 0) val[2 * (size_t)g] = val[2 * (size_t)g + 1] = 0.0;
    }
    /* every process calls both (a failure to allocate fails them all alike) */
    if (!hb_dist_any(dist, st != HB_OK) && (st = hb_dist_sum_i64(dist, rows, q->nq)) == HB_OK)
      st = hb_dist_sum_f64(dist, val, 2 * (int64_t)q->nq);
    else if (st == HB_OK)
      st = hb_error_set(HB_ERR_NOMEM, "out of memory computing %s on another process", name);
  }
  double num = 0.0, den = 0.0;  /* in query order: the same sum for any thread count */
  for (int g = 0; st == HB_OK && g < q->nq; g++) {
    if (rows ? rows[g] == 0 : q->start[g + 1] == q->start[g]) continue;
    num += val[2 * (size_t)g + 1] * val[2 * (size_t)g];
    den += val[2 * (size_t)g + 1];
  }
  hb_free(rows);
  hb_free(val);
  if (st != HB_OK) return st;
  if (!(den > 0.0)) return hb_error_set(HB_ERR_INPUT, "%s: the queries' weights sum to zero", name);
  *out = num / den;
  return HB_OK;
}

int hb_rank_ndcg(const hb_config_t *cfg, const hb_rank_query_t *q, const double *label, const double *weight,
                 const double *score, int k, int nthreads, double *out) {
  return rank_metric(cfg, q, label, weight, score, k, nthreads, 0, NULL, out);
}

int hb_rank_map(const hb_rank_query_t *q, const double *label, const double *weight, const double *score, int k,
                int nthreads, double *out) {
  return rank_metric(NULL, q, label, weight, score, k, nthreads, 1, NULL, out);
}

int hb_rank_metric_dist(const hb_config_t *cfg, const hb_rank_query_t *q, const double *label, const double *weight,
                        const double *score, int k, int map, int nthreads, const hb_dist_t *dist, double *out) {
  return rank_metric(map ? NULL : cfg, q, label, weight, score, k, nthreads, map, dist, out);
}
