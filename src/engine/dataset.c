/* dataset.c: bins input columns (dense or CSC) into 8-bit per-feature storage:
 * LightGBM-like numeric boundaries from a row sample, frequency-ordered
 * categorical bins, dense or sparse storage per feature, and binning of new
 * data with a reference dataset's mappers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "dataset.h"
#include "error.h"
#include "interrupt.h"
#include "threads.h"
#include "rng.h"
#include "dist.h"
#include "cuda.h"

#define HB_MAX_LEVELS (1 << 30)
/* Sparse storage when at least SPARSE_NUM/SPARSE_DEN of the rows sit in default_bin. */
#define SPARSE_NUM 4
#define SPARSE_DEN 5

void hb_binparams_default(hb_binparams_t *bp) {
  bp->max_bin = 255;
  bp->max_bin_by_col = NULL;
  bp->bin_sample_rows = 200000;
  bp->min_data_in_bin = 3;
  bp->min_data_per_level = 1;
  bp->lgb_bins = 0;
  bp->seed = 0;
  bp->nthreads = 0;
  bp->device = 0;
  bp->device_min_rows = 8192;
}

/* ---------------------------------------------------------------- mappers */

/* Bin of a value for a numeric mapper: the first b with v <= upper[b]. A
 * branch-free lower bound: the comparisons are unpredictable, so a
 * conditional move beats a branch several times over when binning every row. */
static inline int numeric_bin(const double *upper, int num_bin, double v) {
  if (isnan(v) || num_bin < 2) return num_bin - 1;
  const double *base = upper;
  int len = num_bin - 1;  /* upper[num_bin-2] is +Inf, so some bound always qualifies */
  while (len > 1) {
    int half = len >> 1;
    base = base[half - 1] < v ? base + half : base;
    len -= half;
  }
  return (int)(base - upper);
}

static inline int factor_bin(const hb_binmapper_t *m, int code) {
  if (code < 1 || code > m->nlevels) return m->num_bin - 1;  /* HB_NA_INT included */
  return m->level_bin[code - 1];
}

/* Bin n values into out and add them to cnt. The searches of a block of
 * rows run in lockstep: each is a chain of dependent loads, and interleaving
 * independent chains hides their latency (several times faster than one
 * search after another). */
#define HB_LANES 8
static void numeric_bin_many(const double *upper, int num_bin, const double *v, int n,
                             uint8_t *out, long long *cnt) {
  int r = 0;
  if (num_bin >= 2) {
    for (; r + HB_LANES <= n; r += HB_LANES) {
      int idx[HB_LANES] = {0};
      int len = num_bin - 1;
      while (len > 1) {
        int half = len >> 1;
        for (int k = 0; k < HB_LANES; k++) idx[k] += half * (upper[idx[k] + half - 1] < v[r + k]);
        len -= half;
      }
      for (int k = 0; k < HB_LANES; k++) {
        int b = isnan(v[r + k]) ? num_bin - 1 : idx[k];
        out[r + k] = (uint8_t)b;
        cnt[b]++;
      }
    }
  }
  for (; r < n; r++) {
    int b = numeric_bin(upper, num_bin, v[r]);
    out[r] = (uint8_t)b;
    cnt[b]++;
  }
}

/* Free a mapper's arrays and zero it (safe on a zeroed mapper). */
void hb_binmapper_clear(hb_binmapper_t *m) {
  if (!m) return;
  hb_free(m->upper);
  hb_free(m->level_bin);
  hb_free(m->bin_level);
  memset(m, 0, sizeof *m);
}

/* Deep copy src into dst (dst owns nothing on entry); on failure dst is zeroed. */
int hb_binmapper_copy(const hb_binmapper_t *src, hb_binmapper_t *dst) {
  memset(dst, 0, sizeof *dst);
  dst->type = src->type;
  dst->num_bin = src->num_bin;
  dst->trivial = src->trivial;
  dst->missing = src->missing;
  dst->count_right = src->count_right;
  dst->na_alone_left = src->na_alone_left;
  dst->default_bin = src->default_bin;
  dst->nlevels = src->nlevels;
  int nval = src->num_bin > 0 ? src->num_bin - 1 : 0;
  if (src->upper) {
    dst->upper = hb_malloc((size_t)nval * sizeof(double));
    if (!dst->upper) goto fail;
    memcpy(dst->upper, src->upper, (size_t)nval * sizeof(double));
  }
  if (src->level_bin) {
    dst->level_bin = hb_malloc((size_t)src->nlevels);
    if (!dst->level_bin) goto fail;
    memcpy(dst->level_bin, src->level_bin, (size_t)src->nlevels);
  }
  if (src->bin_level) {
    dst->bin_level = hb_malloc((size_t)nval * sizeof(int));
    if (!dst->bin_level) goto fail;
    memcpy(dst->bin_level, src->bin_level, (size_t)nval * sizeof(int));
  }
  return HB_OK;
fail:
  hb_binmapper_clear(dst);
  return HB_ERR_NOMEM;
}

/* ------------------------------------------------------ numeric boundaries */

/* An upper bound u with a <= u < b for a < b: the midpoint when it lands
 * there (halving first so huge values cannot overflow), else a itself
 * (adjacent doubles, infinities). */
static double upper_between(double a, double b) {
  double m = a / 2 + b / 2;
  if (!(m >= a && m < b)) m = a;
  return m;
}

/* LightGBM's GreedyFindBin over distinct increasing values v with counts c
 * (n >= 1). Writes at most max_bin increasing bounds to out, the last +Inf;
 * returns how many. `big` is scratch of n bytes. */
static int greedy_find_bin(const double *v, const int *c, int n, int max_bin,
                           long long total, int min_data_in_bin, unsigned char *big,
                           double *out) {
  int nb = 0;
  if (max_bin <= 1) {
    out[0] = INFINITY;
    return 1;
  }
  if (n <= max_bin) {
    /* Few values: a bin per value, but merge leading values until a bin holds min_data_in_bin. */
    long long cur = 0;
    for (int i = 0; i < n - 1; i++) {
      cur += c[i];
      if (cur >= min_data_in_bin) {
        out[nb++] = upper_between(v[i], v[i + 1]);
        cur = 0;
      }
    }
    out[nb++] = INFINITY;
    return nb;
  }
  if (min_data_in_bin > 0) {
    long long cap = total / min_data_in_bin;
    if (cap < max_bin) max_bin = (int)cap;
    if (max_bin <= 1) {
      out[0] = INFINITY;
      return 1;
    }
  }
  /* Values at least as frequent as an average bin get a bin of their own; the
   * rest are cut at (re-estimated) equal cumulative counts. */
  double mean = (double)total / max_bin;
  int rest_bins = max_bin;
  long long rest_cnt = total;
  for (int i = 0; i < n; i++) {
    big[i] = (double)c[i] >= mean;
    if (big[i]) {
      rest_bins--;
      rest_cnt -= c[i];
    }
  }
  mean = rest_bins > 0 ? (double)rest_cnt / rest_bins : INFINITY;
  double ub[HB_MAX_BIN], lb[HB_MAX_BIN];
  int bc = 0;
  lb[0] = v[0];
  long long cur = 0;
  for (int i = 0; i < n - 1; i++) {
    if (!big[i]) rest_cnt -= c[i];
    cur += c[i];
    double half = mean * 0.5 > 1.0 ? mean * 0.5 : 1.0;
    if (big[i] || (double)cur >= mean || (big[i + 1] && (double)cur >= half)) {
      ub[bc] = v[i];
      bc++;
      lb[bc] = v[i + 1];
      if (bc >= max_bin - 1) break;
      cur = 0;
      if (!big[i]) {
        rest_bins--;
        mean = rest_bins > 0 ? (double)rest_cnt / rest_bins : INFINITY;
      }
    }
  }
  bc++;
  for (int i = 0; i < bc - 1; i++) out[nb++] = upper_between(ub[i], lb[i + 1]);
  out[nb++] = INFINITY;
  return nb;
}

/* LightGBM's zero: values in (-HB_LGB_ZERO, HB_LGB_ZERO] are 0 to its
 * binning (its kZeroThreshold, a float constant). */
#define HB_LGB_ZERO ((double)1e-35f)

/* Bounds as LightGBM's BinMapper::FindBin places them (its
 * FindBinWithZeroAsOneBin): the values at most -HB_LGB_ZERO, about 0 and
 * above HB_LGB_ZERO apart; the negative side greedy bins within its share
 * of max_bin - 1 (by rows), its last bound -HB_LGB_ZERO; 0 a bin; the
 * positive side greedy bins within what is left but one. Greedy bins merge
 * few values (at most the side's budget) until a bin holds min_data_in_bin
 * rows, and cut many at about equal rows. A sample with missing values
 * (has_na) gives max_bin - 1 to the values, as LightGBM keeps its NaN bin
 * within max_bin. The one difference: LightGBM's zero bin when no value is
 * about 0 holds no row, and is left out here (the rows' bins are the same,
 * one bin fewer). On small data the merging matters: a threshold between
 * two values of one row each is a candidate split without it, and lightgbm
 * never offers it (survival::pbc under early stopping, 2.6% worse
 * multi-logloss than lightgbm's without it,
 * inst/bench/results/real-factors-cv-numeric-bins-2026-12-03.md). */
static int lgb_bounds(const double *v, const int *c, int n, long long total, int has_na,
                      const hb_binparams_t *bp, unsigned char *big, double *out) {
  const int max_bin = bp->max_bin - (has_na ? 1 : 0), mdib = bp->min_data_in_bin;
  int lo = 0, hi;  /* v[0..lo) at most -zero, v[lo..hi) about 0, v[hi..n) above */
  while (lo < n && v[lo] <= -HB_LGB_ZERO) lo++;
  for (hi = lo; hi < n && v[hi] <= HB_LGB_ZERO; hi++) {}
  long long left = 0, zeros = 0, right = 0;
  for (int i = 0; i < n; i++) *(i < lo ? &left : i < hi ? &zeros : &right) += c[i];
  int nb = 0;
  if (lo > 0 && max_bin > 1) {
    int lmax = (int)((double)left / (double)(total - zeros) * (max_bin - 1));
    if (lmax < 1) lmax = 1;
    nb = greedy_find_bin(v, c, lo, lmax, left, mdib, big, out);
    out[nb - 1] = -HB_LGB_ZERO;
  }
  const int rmax = max_bin - 1 - nb;
  if (hi < n && rmax > 0) {
    if (zeros > 0) out[nb++] = HB_LGB_ZERO;  /* LightGBM's zero bin, left out when empty */
    nb += greedy_find_bin(v + hi, c + hi, n - hi, rmax, right, mdib, big, out + nb);
  } else if (nb > 0 && zeros == 0 && hi == n) {
    out[nb - 1] = INFINITY;  /* only negatives: LightGBM's last bin would be empty */
  } else {
    out[nb++] = INFINITY;
  }
  return nb;
}

/* Bounds for a numeric feature from distinct increasing values v (counts c,
 * n of them, `total` values in all, besides missing ones when has_na) into
 * out (capacity max_bin); returns how many. With lgb_bins, LightGBM's
 * (lgb_bounds). Without: few values (at most max_bin) get a bin each with
 * midpoint bounds; many, greedy equal-frequency bins, with 0.0 alone in a
 * bin when present (bounds just below zero and at zero), since sparse data
 * keep every implicit zero in that bin. */
static int numeric_bounds(const double *v, const int *c, int n, long long total, int has_na,
                          const hb_binparams_t *bp, unsigned char *big, double *out) {
  int max_bin = bp->max_bin;
  if (n == 0) {
    out[0] = INFINITY;
    return 1;
  }
  if (bp->lgb_bins) return lgb_bounds(v, c, n, total, has_na, bp, big, out);
  if (n <= max_bin) {
    for (int i = 0; i < n - 1; i++) out[i] = upper_between(v[i], v[i + 1]);
    out[n - 1] = INFINITY;
    return n;
  }
  int z = -1;
  for (int i = 0; i < n; i++) {
    if (v[i] == 0.0) { z = i; break; }
    if (v[i] > 0.0) break;
  }
  if (z < 0) return greedy_find_bin(v, c, n, max_bin, total, bp->min_data_in_bin, big, out);

  long long left = 0, right = 0, zeros = c[z];
  for (int i = 0; i < z; i++) left += c[i];
  for (int i = z + 1; i < n; i++) right += c[i];
  int nb = 0;
  if (z > 0) {
    /* The negative side gets bins in proportion to its share of non-zero values. */
    int lmax = (int)((double)left / (double)(total - zeros) * (max_bin - 1));
    if (lmax < 1) lmax = 1;
    nb = greedy_find_bin(v, c, z, lmax, left, bp->min_data_in_bin, big, out);
    out[nb - 1] = nextafter(0.0, -1.0);  /* the largest double below zero */
  }
  int rmax = max_bin - 1 - nb;
  if (z + 1 < n && rmax > 0) {
    out[nb++] = 0.0;
    nb += greedy_find_bin(v + z + 1, c + z + 1, n - z - 1, rmax, right,
                          bp->min_data_in_bin, big, out + nb);
  } else {
    out[nb++] = INFINITY;
  }
  return nb;
}

/* ------------------------------------------------------------ radix sort */

/* Order-preserving map of a (non-NaN) double to an unsigned key. */
static inline uint64_t dkey(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return (u >> 63) ? ~u : (u | (1ULL << 63));
}

static inline double dval(uint64_t u) {
  u = (u >> 63) ? (u ^ (1ULL << 63)) : ~u;
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* LSD radix sort of n keys (8-bit digits, skipping digits all keys share);
 * tmp holds n keys. The result ends in a. One pass counts all eight digits
 * (the counts do not change as the keys move), so each digit that varies
 * costs one scatter pass. */
static void radix_sort(uint64_t *a, uint64_t *tmp, int n) {
  if (n < 64) {
    for (int i = 1; i < n; i++) {
      uint64_t k = a[i];
      int j = i - 1;
      while (j >= 0 && a[j] > k) { a[j + 1] = a[j]; j--; }
      a[j + 1] = k;
    }
    return;
  }
  size_t cnt[8][256];
  memset(cnt, 0, sizeof cnt);
  for (int i = 0; i < n; i++) {
    uint64_t k = a[i];
    for (int d = 0; d < 8; d++) cnt[d][(k >> (8 * d)) & 0xFF]++;
  }
  uint64_t *src = a, *dst = tmp;
  for (int d = 0; d < 8; d++) {
    size_t *c = cnt[d], acc = 0;
    int skip = 0;
    for (int b = 0; b < 256; b++) if (c[b] == (size_t)n) { skip = 1; break; }
    if (skip) continue;
    for (int b = 0; b < 256; b++) { size_t t = c[b]; c[b] = acc; acc += t; }
    int shift = 8 * d;
    for (int i = 0; i < n; i++) dst[c[(src[i] >> shift) & 0xFF]++] = src[i];
    uint64_t *t = src; src = dst; dst = t;
  }
  if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
}

/* ------------------------------------------------------- per-feature work */

/* The row sample used to place numeric boundaries (shared, read-only). */
typedef struct {
  int all;             /* 1: every row is in the sample */
  int n;               /* rows in the sample */
  int *rows;           /* increasing sampled rows (when !all) */
  unsigned char *flag; /* nrow: 1 when sampled (when !all) */
} sample_t;

/* Per-thread scratch, grown lazily. Worker threads allocate with plain
 * malloc: hb_malloc would write the shared error message, which only the
 * main thread may do; failures are reported after the parallel region. */
typedef struct {
  uint64_t *keys, *tmp;
  double *dv;
  int *dc;
  unsigned char *big;
  uint8_t *bins;  /* nrow bins of the current feature; handed to dense storage */
} scratch_t;

static void *wmalloc(size_t n) { return malloc(n ? n : 1); }

static void scratch_free(scratch_t *sc) {
  free(sc->keys); free(sc->tmp); free(sc->dv); free(sc->dc); free(sc->big); free(sc->bins);
  memset(sc, 0, sizeof *sc);
}

static int scratch_sample(scratch_t *sc, int n) {
  if (sc->keys) return HB_OK;
  size_t m = (size_t)n + 1;  /* + the implicit zeros of a CSC column */
  sc->keys = wmalloc(m * sizeof(uint64_t));
  sc->tmp = wmalloc(m * sizeof(uint64_t));
  sc->dv = wmalloc(m * sizeof(double));
  sc->dc = wmalloc(m * sizeof(int));
  sc->big = wmalloc(m);
  if (!sc->keys || !sc->tmp || !sc->dv || !sc->dc || !sc->big) return HB_ERR_NOMEM;
  return HB_OK;
}

static inline double col_value(const hb_column_t *col, int r) {
  if (col->type == HB_COL_DOUBLE) return col->dbl[r];
  int x = col->i32[r];
  return x == HB_NA_INT ? NAN : (double)x;
}

/* Distinct values with counts from n sorted keys plus `zextra` implicit
 * zeros (merged with explicit zeros); returns the number of distinct values. */
static int distinct_counts(const uint64_t *keys, int n, long long zextra, double *dv, int *dc) {
  int nd = 0, zdone = zextra == 0;
  for (int i = 0; i < n; i++) {
    double x = dval(keys[i]);
    if (!zdone && x > 0.0) {
      dv[nd] = 0.0; dc[nd] = (int)zextra; nd++;
      zdone = 1;
    }
    if (nd > 0 && dv[nd - 1] == x) dc[nd - 1]++;
    else { dv[nd] = x; dc[nd] = 1; nd++; }
    if (!zdone && x == 0.0) { dc[nd - 1] += (int)zextra; zdone = 1; }
  }
  if (!zdone) { dv[nd] = 0.0; dc[nd] = (int)zextra; nd++; }
  return nd;
}

/* Whether LightGBM's most frequent bin of a numeric feature is its first
 * (its FeatureMetainfo's offset 1), decided from the sample as its
 * BinMapper::FindBin decides it: the bin holding most sampled rows (the
 * first of equal ones; missing values a last bin of their own) stays the
 * most frequent when it is the zero bin (values in (-HB_LGB_ZERO,
 * HB_LGB_ZERO], a bin LightGBM keeps even empty) or holds 70% of the rows
 * or more; otherwise the zero bin is. Its first bin is the lowest negative
 * one, or without negatives the zero bin. Then LightGBM's scan from the
 * bottom counts the rows right of a threshold, missing ones included, and
 * takes the left side as the rest (split.c). v, c: the sample's nd distinct
 * values and their counts (nan missing ones besides, total rows in all);
 * upper: the nb bins' bounds, as lgb_bounds placed them. */
static int lgb_first_bin_most(const double *upper, int nb, const double *v, const int *c, int nd, long long nan,
                              long long total) {
  long long cnt[HB_MAX_BIN];
  for (int b = 0; b < nb; b++) cnt[b] = 0;
  long long zeros = 0;
  int zb = -1, neg = 0;
  for (int i = 0, b = 0; i < nd; i++) {
    while (b < nb - 1 && v[i] > upper[b]) b++;
    cnt[b] += c[i];
    if (v[i] <= -HB_LGB_ZERO) neg = 1;
    else if (v[i] <= HB_LGB_ZERO) { zeros += c[i]; zb = b; }
  }
  if (zeros == 0) zb = -1;
  int best = -1;  /* nb: the missing values' bin */
  long long most = -1;
  for (int b = 0; b < nb; b++)
    if (cnt[b] > most) { most = cnt[b]; best = b; }
  if (nan > most) { most = nan; best = nb; }
  const int zero_most = (zb >= 0 && best == zb) || (double)most / (double)total < 0.7;
  return neg ? !zero_most && best == 0 : zero_most;
}

/* Place the numeric boundaries of feature f from the sample. */
static int build_numeric_mapper(const hb_input_t *in, const hb_binparams_t *bp,
                                const sample_t *smp, int f, hb_binmapper_t *m,
                                scratch_t *sc) {
  if (scratch_sample(sc, smp->n) != HB_OK) return HB_ERR_NOMEM;
  int n = 0, has_na;
  long long zextra = 0, nan;
  if (in->csc) {
    const hb_csc_t *x = in->csc;
    int seen = 0;
    for (int k = x->p[f]; k < x->p[f + 1]; k++) {
      if (!smp->all && !smp->flag[x->i[k]]) continue;
      seen++;
      if (!isnan(x->x[k])) sc->keys[n++] = dkey(x->x[k]);
    }
    zextra = smp->n - seen;
    nan = seen - n;
    has_na = n < seen;
  } else {
    const hb_column_t *col = &in->cols[f];
    for (int s = 0; s < smp->n; s++) {
      double v = col_value(col, smp->all ? s : smp->rows[s]);
      if (!isnan(v)) sc->keys[n++] = dkey(v);
    }
    nan = smp->n - n;
    has_na = n < smp->n;
  }
  radix_sort(sc->keys, sc->tmp, n);
  int nd = distinct_counts(sc->keys, n, zextra, sc->dv, sc->dc);
  double out[HB_MAX_BIN];
  int nb = numeric_bounds(sc->dv, sc->dc, nd, (long long)n + zextra, has_na, bp, sc->big, out);
  if (nb < 1 || nb > bp->max_bin || out[nb - 1] != INFINITY) return HB_ERR_INTERNAL;
  m->type = HB_FEAT_NUMERIC;
  m->num_bin = nb + 1;
  m->upper = wmalloc((size_t)nb * sizeof(double));
  if (!m->upper) return HB_ERR_NOMEM;
  memcpy(m->upper, out, (size_t)nb * sizeof(double));
  m->default_bin = numeric_bin(m->upper, m->num_bin, 0.0);
  /* LightGBM's missing type NaN, and how its scan from the bottom counts (split.c) */
  m->missing = has_na;
  m->count_right = bp->lgb_bins && lgb_first_bin_most(out, nb, sc->dv, sc->dc, nd, nan, smp->n);
  m->na_alone_left = bp->lgb_bins && has_na && nd > 0 && sc->dv[0] > HB_LGB_ZERO;
  return HB_OK;
}

typedef struct { int count, code; } level_count_t;

/* Most frequent first; ties: lower level code first (a total order, so qsort is deterministic). */
static int cmp_level(const void *a, const void *b) {
  const level_count_t *x = a, *y = b;
  if (x->count != y->count) return x->count > y->count ? -1 : 1;
  return (x->code > y->code) - (x->code < y->code);
}

/* Map the levels of factor column f, counted over all rows: the kept ones,
 * most frequent first, max_bin to a feature, into *nmaps (1 ..
 * HB_MAX_COLUMN_FEATURES) new mappers at *maps. The first feature's default
 * bin is its most frequent level; the further ones', their missing bin
 * (the levels of the other features), so those are stored sparse. */
static int factor_mappers_from_counts(const hb_binparams_t *bp, int nlev, int *cnt, hb_binmapper_t **maps,
                                      int *nmaps);

static int build_factor_mappers(const hb_input_t *in, const hb_binparams_t *bp, int f,
                                hb_binmapper_t **maps, int *nmaps) {
  const hb_column_t *col = &in->cols[f];
  int nlev = col->nlevels;
  *maps = NULL;
  *nmaps = 0;
  int *cnt = calloc((size_t)nlev + 1, sizeof(int));
  if (!cnt) return HB_ERR_NOMEM;
  for (int r = 0; r < in->nrow; r++) {
    int c = col->i32[r];
    cnt[c >= 1 && c <= nlev ? c : 0]++;  /* [0]: missing */
  }
  return factor_mappers_from_counts(bp, nlev, cnt, maps, nmaps);
}

/* How many of a factor's levels get bins of their own, LightGBM's rule
 * (its BinMapper::FindBin for categorical features): the levels in kept,
 * most frequent first, are taken until, past the first two, a level has
 * fewer than min_data_in_bin rows, or until the levels taken hold 99% of
 * the non-missing rows and the bins (the missing one counted) reach the
 * number of distinct values (one more with missing rows) or max_bin. The
 * levels left out share the missing bin. (On small data this matters: a
 * factor whose rare levels stay apart can have too many bins for a one-hot
 * split yet too few rows a level for a many-vs-many one.) */
static int factor_levels_kept(const hb_binparams_t *bp, const level_count_t *kept, int ncand, long long na) {
  long long nonmiss = 0;
  for (int k = 0; k < ncand; k++) nonmiss += kept[k].count;
  /* 99% of the non-missing rows, rounded as LightGBM rounds it (a float product) */
  const long long cut = (long long)((double)((float)nonmiss * 0.99f) + 0.5);
  const int distinct = ncand + (na > 0);
  const int maxb = distinct < bp->max_bin ? distinct : bp->max_bin;
  long long used = 0;
  int k = 0, nbin = 1;
  while (k < ncand && (used < cut || nbin < maxb)) {
    if (k > 1 && kept[k].count < bp->min_data_in_bin) break;
    used += kept[k].count;
    nbin++;
    k++;
  }
  return k;
}

/* The mappers of a factor of nlev levels whose level c has cnt[c] rows,
 * cnt[0] the missing rows (cnt: nlev + 1 values, freed here). */
static int factor_mappers_from_counts(const hb_binparams_t *bp, int nlev, int *cnt, hb_binmapper_t **maps,
                                      int *nmaps) {
  *maps = NULL;
  *nmaps = 0;
  int thr = bp->min_data_per_level > 1 ? bp->min_data_per_level : 1;
  int nkeep = 0;
  for (int c = 1; c <= nlev; c++) nkeep += cnt[c] >= thr;
  level_count_t *kept = wmalloc((size_t)nkeep * sizeof *kept);
  if (!kept) { free(cnt); return HB_ERR_NOMEM; }
  int k = 0;
  for (int c = 1; c <= nlev; c++)
    if (cnt[c] >= thr) { kept[k].count = cnt[c]; kept[k].code = c; k++; }
  const long long na = cnt[0];
  free(cnt);
  qsort(kept, (size_t)nkeep, sizeof *kept, cmp_level);
  if (bp->lgb_bins) nkeep = factor_levels_kept(bp, kept, nkeep, na);
  int per = bp->max_bin;
  int nm = nkeep <= per ? 1 : (nkeep + per - 1) / per;
  if (nm > HB_MAX_COLUMN_FEATURES) nm = HB_MAX_COLUMN_FEATURES;
  if (nkeep > nm * per) nkeep = nm * per;
  hb_binmapper_t *ms = calloc((size_t)nm, sizeof *ms);
  if (!ms) { free(kept); return HB_ERR_NOMEM; }
  *maps = ms;
  *nmaps = nm;
  for (int j = 0; j < nm; j++) {
    hb_binmapper_t *m = &ms[j];
    int first = j * per, nb = nkeep - first < per ? nkeep - first : per;
    m->type = HB_FEAT_CATEGORICAL;
    m->num_bin = nb + 1;
    m->nlevels = nlev;
    m->default_bin = j == 0 ? 0 : nb;
    m->level_bin = wmalloc((size_t)nlev);
    m->bin_level = wmalloc((size_t)nb * sizeof(int));
    if (!m->level_bin || !m->bin_level) { free(kept); return HB_ERR_NOMEM; }
    memset(m->level_bin, nb, (size_t)nlev);  /* the missing bin */
    for (int b = 0; b < nb; b++) {
      m->bin_level[b] = kept[first + b].code;
      m->level_bin[kept[first + b].code - 1] = (uint8_t)b;
    }
  }
  free(kept);
  return HB_OK;
}

/* Store a feature whose nrow bins are in sc->bins, with bin counts cnt:
 * sparse when most rows sit in default_bin, else take the buffer as dense. */
static int store_bins(scratch_t *sc, int nrow, const long long *cnt, int db,
                      hb_featstore_t *st) {
  long long nnz = nrow - cnt[db];
  if ((long long)SPARSE_DEN * cnt[db] >= (long long)SPARSE_NUM * nrow) {
    st->sparse = 1;
    st->nnz = (int)nnz;
    st->rows = wmalloc((size_t)nnz * sizeof(int));
    st->vals = wmalloc((size_t)nnz);
    if (!st->rows || !st->vals) return HB_ERR_NOMEM;
    int k = 0;
    for (int r = 0; r < nrow; r++)
      if (sc->bins[r] != db) { st->rows[k] = r; st->vals[k] = sc->bins[r]; k++; }
  } else {
    st->sparse = 0;
    st->bins = sc->bins;
    sc->bins = NULL;
  }
  return HB_OK;
}

/* Store feature f of a CSC matrix without densifying it: implicit zeros all
 * sit in the bin of 0.0, so only explicit entries are binned (eb: their
 * bins; cnt: every row's counts, the implicit zeros' included). */
static int store_csc_feature(const hb_input_t *in, int f, const hb_binmapper_t *m,
                             hb_featstore_t *st, const long long *cnt, const uint8_t *eb) {
  const hb_csc_t *x = in->csc;
  int nrow = in->nrow, p0 = x->p[f], ne = x->p[f + 1] - p0;
  int zb = numeric_bin(m->upper, m->num_bin, 0.0), db = m->default_bin;
  if ((long long)SPARSE_DEN * cnt[db] >= (long long)SPARSE_NUM * nrow) {
    long long nnz = nrow - cnt[db];
    st->sparse = 1;
    st->nnz = (int)nnz;
    st->rows = wmalloc((size_t)nnz * sizeof(int));
    st->vals = wmalloc((size_t)nnz);
    if (!st->rows || !st->vals) return HB_ERR_NOMEM;
    int j = 0;
    if (zb != db) {
      /* Only reachable with a reference whose default bin is not 0.0's bin: merge implicit rows. */
      int k = 0;
      for (int r = 0; r < nrow; r++) {
        int b = (k < ne && x->i[p0 + k] == r) ? eb[k++] : zb;
        if (b != db) { st->rows[j] = r; st->vals[j] = (uint8_t)b; j++; }
      }
    } else {
      for (int k = 0; k < ne; k++)
        if (eb[k] != db) { st->rows[j] = x->i[p0 + k]; st->vals[j] = eb[k]; j++; }
    }
  } else {
    st->sparse = 0;
    st->bins = wmalloc((size_t)nrow);
    if (!st->bins) return HB_ERR_NOMEM;
    memset(st->bins, zb, (size_t)nrow);
    for (int k = 0; k < ne; k++) st->bins[x->i[p0 + k]] = eb[k];
  }
  return HB_OK;
}

/* Column c's binning parameters: bp's, with its own max_bin where
 * max_bin_by_col gives one (then copied into *tmp). */
static const hb_binparams_t *column_binparams(const hb_binparams_t *bp, int c, hb_binparams_t *tmp) {
  if (!bp->max_bin_by_col || bp->max_bin_by_col[c] <= 0) return bp;
  *tmp = *bp;
  tmp->max_bin = bp->max_bin_by_col[c];
  return tmp;
}

/* The mappers of column c (training): one numeric mapper, or a factor's
 * one or more. Runs on a worker thread: no hb_error_set. */
static int build_column_mappers(const hb_input_t *in, const hb_binparams_t *bp_all, const sample_t *smp, int c,
                                hb_binmapper_t **maps, int *nmaps, scratch_t *sc) {
  hb_binparams_t cbp;
  const hb_binparams_t *bp = column_binparams(bp_all, c, &cbp);
  const hb_column_t *col = in->cols ? &in->cols[c] : NULL;
  if (col && col->type == HB_COL_FACTOR) return build_factor_mappers(in, bp, c, maps, nmaps);
  *maps = calloc(1, sizeof **maps);
  *nmaps = *maps ? 1 : 0;
  if (!*maps) return HB_ERR_NOMEM;
  return build_numeric_mapper(in, bp, smp, c, *maps, sc);
}

/* The bins of input column c under mapper m into bins, their counts added
 * to cnt: every row's of a dense column; a CSC column's explicit entries'
 * (the implicit zeros counted in 0.0's bin). */
static void column_bins(const hb_input_t *in, int c, const hb_binmapper_t *m, uint8_t *bins, long long *cnt) {
  const int nrow = in->nrow;
  if (in->csc) {
    const int p0 = in->csc->p[c], ne = in->csc->p[c + 1] - p0;
    cnt[numeric_bin(m->upper, m->num_bin, 0.0)] += nrow - ne;
    numeric_bin_many(m->upper, m->num_bin, in->csc->x + p0, ne, bins, cnt);
    return;
  }
  const hb_column_t *col = &in->cols[c];
  if (col->type == HB_COL_FACTOR) {
    for (int r = 0; r < nrow; r++) {
      int b = factor_bin(m, col->i32[r]);
      bins[r] = (uint8_t)b;
      cnt[b]++;
    }
  } else if (col->type == HB_COL_DOUBLE) {
    numeric_bin_many(m->upper, m->num_bin, col->dbl, nrow, bins, cnt);
  } else {
    double buf[256];
    for (int r0 = 0; r0 < nrow; r0 += 256) {
      int len = nrow - r0 < 256 ? nrow - r0 : 256;
      for (int k = 0; k < len; k++) buf[k] = col_value(col, r0 + k);
      numeric_bin_many(m->upper, m->num_bin, buf, len, bins + r0, cnt);
    }
  }
}

/* Feature f's storage from its bins (sc->bins, as column_bins made them,
 * taken over when dense) and counts; in training (`train`), also mark the
 * mapper trivial when all rows share one bin. Runs on a worker thread: no
 * hb_error_set. */
static int store_feature(const hb_input_t *in, int c, int train, hb_binmapper_t *m, hb_featstore_t *st,
                         scratch_t *sc, const long long *cnt) {
  int status = in->csc ? store_csc_feature(in, c, m, st, cnt, sc->bins)
                       : store_bins(sc, in->nrow, cnt, m->default_bin, st);
  if (status != HB_OK) return status;
  if (train) {
    /* Trivial: all training rows share one bin (the missing bin counts), so no split separates them. */
    int nonempty = 0;
    for (int b = 0; b < m->num_bin; b++) nonempty += cnt[b] > 0;
    m->trivial = nonempty <= 1;
    /* missing rows the binning sample missed still get both directions */
    if (m->type == HB_FEAT_NUMERIC && cnt[m->num_bin - 1] > 0) m->missing = 1;
  }
  return HB_OK;
}

/* Bin every row of input column c with mapper m (feature f) into its
 * storage (store_feature). Runs on a worker thread: no hb_error_set. */
static int bin_feature(const hb_input_t *in, int c, int train, hb_binmapper_t *m, hb_featstore_t *st,
                       scratch_t *sc) {
  if (!sc->bins) {
    sc->bins = wmalloc((size_t)in->nrow);
    if (!sc->bins) return HB_ERR_NOMEM;
  }
  long long cnt[HB_MAX_NUM_BIN];
  memset(cnt, 0, sizeof cnt);
  column_bins(in, c, m, sc->bins, cnt);
  return store_feature(in, c, train, m, st, sc, cnt);
}

static void first_error(int *err_c, int *err_code, int c, int st);

/* n items of `size` bytes from src to dst on nt threads. */
static void copy_parallel(void *dst, const void *src, int64_t n, size_t size, int nt) {
  const int64_t piece = 1 << 16;
  const int64_t np = (n + piece - 1) / piece;
  (void)nt;
#ifdef _OPENMP
HB_OMP(parallel for num_threads(nt) schedule(static) if (np > 1))
#endif
  for (int64_t k = 0; k < np; k++) {
    const int64_t a = k * piece, len = n - a < piece ? n - a : piece;
    memcpy((char *)dst + (size_t)a * size, (const char *)src + (size_t)a * size, (size_t)len * size);
  }
}

/* A chunk in a binner's slot: its job's rows r0 .. r0 + m - 1 (job NULL: none). */
typedef struct {
  const hb_cuda_bin_job_t *job;
  int64_t r0;
  int m;
} bin_chunk_t;

/* Slot s's chunk back from the device: its counts added, its bins copied
 * to their rows. */
static int bin_chunk_collect(hb_cuda_binner_t *B, int s, bin_chunk_t *c, int nt) {
  if (!c->job) return HB_OK;
  int st = hb_cuda_binner_wait(B, s, c->job->num_bin, c->job->cnt);
  if (st == HB_OK) copy_parallel(c->job->bins + c->r0, hb_cuda_binner_out(B, s), c->m, 1, nt);
  c->job = NULL;
  return st;
}

/* The jobs' values binned on the GPU (cuda.h's binner), chunk by chunk:
 * the threads stage a chunk in one slot while the device bins the other
 * slot's, and copy each chunk's bins out when it is back; interrupts are
 * checked after each chunk (a few milliseconds). On the main thread; HB_OK
 * or an error with its message. */
static int device_bin_jobs(const hb_cuda_bin_job_t *jobs, int njobs, int nt) {
  int64_t most = 0;
  int nlev = 1;
  for (int j = 0; j < njobs; j++) {
    if (jobs[j].n > most) most = jobs[j].n;
    if (jobs[j].kind == HB_CUDA_BIN_FACTOR && jobs[j].nlevels > nlev) nlev = jobs[j].nlevels;
  }
  hb_cuda_binner_t *B = NULL;
  int st = hb_cuda_binner_create(most, nlev, &B);
  if (st != HB_OK) return st;
  const int64_t chunk = hb_cuda_binner_rows(B);
  bin_chunk_t slot[2] = {{NULL, 0, 0}, {NULL, 0, 0}};
  int s = 0;
  for (int j = 0; j < njobs && st == HB_OK; j++) {
    const hb_cuda_bin_job_t *J = &jobs[j];
    for (int64_t r0 = 0; r0 < J->n && st == HB_OK; r0 += chunk) {
      if ((st = bin_chunk_collect(B, s, &slot[s], nt)) != HB_OK) break;
      if ((st = hb_interrupt_check()) != HB_OK) break;
      const int m = (int)(J->n - r0 < chunk ? J->n - r0 : chunk);
      if (J->kind == HB_CUDA_BIN_DOUBLE) copy_parallel(hb_cuda_binner_in(B, s), J->dbl + r0, m, sizeof(double), nt);
      else copy_parallel(hb_cuda_binner_in(B, s), J->i32 + r0, m, sizeof(int), nt);
      if ((st = hb_cuda_binner_run(B, s, J, m)) != HB_OK) break;
      slot[s].job = J;
      slot[s].r0 = r0;
      slot[s].m = m;
      s ^= 1;
    }
  }
  for (int k = 0; k < 2; k++, s ^= 1) {  /* the last chunks (after a failure: not read) */
    if (st == HB_OK) st = bin_chunk_collect(B, s, &slot[s], nt);
  }
  hb_cuda_binner_free(B);  /* waits for anything still in flight */
  return st;
}

/* Every feature of at least bp->device_min_rows values binned on the GPU
 * (device_bin_jobs), the smaller ones here (a launch and its wait would
 * cost more), then all stored here as bin_feature stores them. On the main
 * thread; HB_OK or an error with its message. */
static int bin_features_device(const hb_input_t *in, const hb_binparams_t *bp, hb_dataset_t *d, int train,
                               int nt) {
  const int nfeat = d->nfeat, nrow = in->nrow;
  uint8_t **buf = hb_calloc((size_t)nfeat, sizeof *buf);
  size_t *coff = hb_malloc(sizeof *coff * ((size_t)nfeat + 1));  /* feature f's counts at cnt + coff[f] */
  hb_cuda_bin_job_t *jobs = hb_calloc((size_t)nfeat, sizeof *jobs);
  int *host = hb_malloc(sizeof *host * ((size_t)nfeat + 1));     /* the features binned here */
  long long *cnt = NULL;
  int status = buf && coff && jobs && host ? HB_OK : HB_ERR_NOMEM, njobs = 0, nhost = 0;
  if (status == HB_OK) {
    coff[0] = 0;
    for (int f = 0; f < nfeat; f++) coff[f + 1] = coff[f] + (size_t)d->mappers[f].num_bin;
    if (!(cnt = hb_calloc(coff[nfeat] > 0 ? coff[nfeat] : 1, sizeof *cnt))) status = HB_ERR_NOMEM;
  }
  for (int f = 0; f < nfeat && status == HB_OK; f++) {
    const int c = d->feat_col[f];
    const hb_binmapper_t *m = &d->mappers[f];
    hb_cuda_bin_job_t *J = &jobs[njobs];
    const int64_t n = in->csc ? in->csc->p[c + 1] - in->csc->p[c] : nrow;
    if (!(buf[f] = hb_malloc((size_t)(n > 0 ? n : 1)))) {
      status = HB_ERR_NOMEM;
      break;
    }
    if (n < bp->device_min_rows) {
      host[nhost++] = f;
      continue;
    }
    J->num_bin = m->num_bin;
    J->cnt = cnt + coff[f];
    J->n = n;
    J->bins = buf[f];
    if (in->csc) {
      J->kind = HB_CUDA_BIN_DOUBLE;
      J->dbl = in->csc->x + in->csc->p[c];
      J->cnt[numeric_bin(m->upper, m->num_bin, 0.0)] += nrow - n;  /* the implicit zeros */
    } else {
      const hb_column_t *col = &in->cols[c];
      J->kind = col->type == HB_COL_DOUBLE ? HB_CUDA_BIN_DOUBLE : col->type == HB_COL_FACTOR ? HB_CUDA_BIN_FACTOR
                                                                                                : HB_CUDA_BIN_INT;
      J->dbl = col->dbl;
      J->i32 = col->i32;
    }
    J->upper = m->upper;
    J->level_bin = m->level_bin;
    J->nlevels = m->type == HB_FEAT_CATEGORICAL ? m->nlevels : 0;
    if (J->kind == HB_CUDA_BIN_FACTOR && m->type != HB_FEAT_CATEGORICAL) {
      status = hb_error_set(HB_ERR_INTERNAL, "dataset: a factor column without a categorical mapper");
      break;
    }
    njobs++;
  }
  if (status == HB_ERR_NOMEM) hb_error_set(status, "dataset: out of memory for the bins");
  if (status == HB_OK && njobs > 0) status = device_bin_jobs(jobs, njobs, nt);
  if (status == HB_OK) {
    int err_c = -1, err_code = HB_OK;
    (void)nt;
#ifdef _OPENMP
HB_OMP(parallel for num_threads(nt) schedule(dynamic, 1))
#endif
    for (int k = 0; k < nhost; k++) {
      const int f = host[k];
      column_bins(in, d->feat_col[f], &d->mappers[f], buf[f], cnt + coff[f]);
    }
#ifdef _OPENMP
HB_OMP(parallel for num_threads(nt) schedule(dynamic, 1))
#endif
    for (int f = 0; f < nfeat; f++) {
      scratch_t sc;
      memset(&sc, 0, sizeof sc);
      sc.bins = buf[f];
      int st = store_feature(in, d->feat_col[f], train, &d->mappers[f], &d->store[f], &sc, cnt + coff[f]);
      buf[f] = sc.bins;  /* NULL when dense storage took it */
      if (st != HB_OK) first_error(&err_c, &err_code, d->feat_col[f], st);
    }
    if (err_c >= 0) status = hb_error_set(err_code, "dataset: out of memory storing column %d", err_c + 1);
  }
  for (int f = 0; buf && f < nfeat; f++) hb_free(buf[f]);
  hb_free(buf);
  hb_free(coff);
  hb_free(cnt);
  hb_free(jobs);
  hb_free(host);
  return status;
}

/* ------------------------------------------------------------- validation */

static int validate_input(const hb_input_t *in, const hb_binparams_t *bp,
                          const hb_dataset_t *ref) {
  if (!in) return hb_error_set(HB_ERR_INPUT, "dataset: no input given");
  if (in->nrow < 1) return hb_error_set(HB_ERR_INPUT, "dataset: nrow must be >= 1 (got %d)", in->nrow);
  if (in->ncol < 1) return hb_error_set(HB_ERR_INPUT, "dataset: ncol must be >= 1 (got %d)", in->ncol);
  if ((in->cols == NULL) == (in->csc == NULL))
    return hb_error_set(HB_ERR_INPUT, "dataset: exactly one of dense columns or a CSC matrix must be given");
  if (bp->max_bin < 2 || bp->max_bin > HB_MAX_BIN)
    return hb_error_set(HB_ERR_INPUT, "dataset: max_bin must be in 2..%d (got %d)", HB_MAX_BIN, bp->max_bin);
  for (int c = 0; bp->max_bin_by_col && c < in->ncol; c++)
    if (bp->max_bin_by_col[c] != 0 && (bp->max_bin_by_col[c] < 2 || bp->max_bin_by_col[c] > HB_MAX_BIN))
      return hb_error_set(HB_ERR_INPUT, "dataset: max_bin_by_feature of column %d must be in 2..%d (got %d)", c + 1,
                          HB_MAX_BIN, bp->max_bin_by_col[c]);
  if (in->weight) {
    for (int r = 0; r < in->nrow; r++)
      if (!(in->weight[r] >= 0.0) || isinf(in->weight[r]))
        return hb_error_set(HB_ERR_INPUT, "dataset: weight of row %d is negative, infinite or missing", r + 1);
  }
  if (in->init_score) {
    if (in->init_score_ncol < 1)
      return hb_error_set(HB_ERR_INPUT, "dataset: init_score needs at least one column (got %d)", in->init_score_ncol);
    size_t ni = (size_t)in->nrow * (size_t)in->init_score_ncol;
    for (size_t e = 0; e < ni; e++)
      if (!isfinite(in->init_score[e]))
        return hb_error_set(HB_ERR_INPUT, "dataset: init_score of row %d is missing or infinite",
                            (int)(e % (size_t)in->nrow) + 1);
  }
  if (in->cols) {
    for (int j = 0; j < in->ncol; j++) {
      const hb_column_t *c = &in->cols[j];
      if (c->type == HB_COL_DOUBLE) {
        if (!c->dbl) return hb_error_set(HB_ERR_INPUT, "dataset: column %d (double) has no values", j + 1);
      } else if (c->type == HB_COL_INT || c->type == HB_COL_FACTOR) {
        if (!c->i32) return hb_error_set(HB_ERR_INPUT, "dataset: column %d (%s) has no values", j + 1,
                                         c->type == HB_COL_INT ? "integer" : "factor");
        if (c->type == HB_COL_FACTOR && (c->nlevels < 1 || c->nlevels > HB_MAX_LEVELS))
          return hb_error_set(HB_ERR_INPUT, "dataset: column %d is a factor with %d levels (must be 1..%d)",
                              j + 1, c->nlevels, HB_MAX_LEVELS);
      } else {
        return hb_error_set(HB_ERR_INPUT, "dataset: column %d has unknown type %d", j + 1, c->type);
      }
    }
  } else {
    const hb_csc_t *x = in->csc;
    if (!x->p) return hb_error_set(HB_ERR_INPUT, "dataset: CSC matrix has no column pointers");
    if (x->p[0] != 0) return hb_error_set(HB_ERR_INPUT, "dataset: CSC column pointers must start at 0 (got %d)", x->p[0]);
    for (int j = 0; j < in->ncol; j++)
      if (x->p[j + 1] < x->p[j])
        return hb_error_set(HB_ERR_INPUT, "dataset: CSC column pointers decrease at column %d", j + 1);
    if (x->p[in->ncol] > 0 && (!x->i || !x->x))
      return hb_error_set(HB_ERR_INPUT, "dataset: CSC matrix has entries but no row indices or values");
    for (int j = 0; j < in->ncol; j++) {
      for (int k = x->p[j]; k < x->p[j + 1]; k++) {
        if (x->i[k] < 0 || x->i[k] >= in->nrow)
          return hb_error_set(HB_ERR_INPUT, "dataset: CSC row index %d out of range 0..%d in column %d",
                              x->i[k], in->nrow - 1, j + 1);
        if (k > x->p[j] && x->i[k] <= x->i[k - 1])
          return hb_error_set(HB_ERR_INPUT, "dataset: CSC row indices not increasing in column %d", j + 1);
      }
    }
  }
  if (ref) {
    if (in->ncol != ref->ncol)
      return hb_error_set(HB_ERR_INPUT, "dataset: %d columns given but the reference has %d",
                          in->ncol, ref->ncol);
    for (int j = 0; j < in->ncol; j++) {
      const hb_binmapper_t *m = &ref->mappers[ref->col_first[j]];
      int is_factor = in->cols ? in->cols[j].type == HB_COL_FACTOR : 0;
      if (is_factor && m->type != HB_FEAT_CATEGORICAL)
        return hb_error_set(HB_ERR_INPUT, "dataset: column %d is a factor but numeric in the reference", j + 1);
      if (!is_factor && m->type == HB_FEAT_CATEGORICAL)
        return hb_error_set(HB_ERR_INPUT, "dataset: column %d is numeric but a factor in the reference", j + 1);
      if (is_factor && in->cols[j].nlevels != m->nlevels)
        return hb_error_set(HB_ERR_INPUT, "dataset: column %d has %d levels but the reference has %d",
                            j + 1, in->cols[j].nlevels, m->nlevels);
    }
  }
  return HB_OK;
}

/* -------------------------------------------------------------- dataset */

/* Free a dataset and everything it owns (NULL-safe, also for partial builds). */
void hb_dataset_free(hb_dataset_t *d) {
  if (!d) return;
  if (d->mappers)
    for (int f = 0; f < d->nfeat; f++) hb_binmapper_clear(&d->mappers[f]);
  if (d->store)
    for (int f = 0; f < d->nfeat; f++) {
      hb_free(d->store[f].bins);
      hb_free(d->store[f].rows);
      hb_free(d->store[f].vals);
    }
  hb_free(d->mappers);
  hb_free(d->store);
  hb_free(d->col_first);
  hb_free(d->feat_col);
  hb_free(d->hist_offset);
  hb_free(d->label);
  hb_free(d->weight);
  hb_free(d->init_score);
  hb_free(d);
}

/* The boundary sample's rows among rows 0 .. nrow - 1, global rows row0 +
 * r: row r is in it when its uniform draw for (seed, HB_RNG_BINNING, 0,
 * row0 + r) falls below frac, so the choice depends on nothing but the seed
 * and the global row. Into a new increasing array *rows of *n (every row
 * when frac >= 1). The draws run on nt threads a chunk of rows at a time:
 * counted, then written at each chunk's offset. */
#define SAMPLE_CHUNK 65536
static int sample_rows(int nrow, int64_t row0, double frac, uint64_t seed, int nt, int **rows, int *n) {
  const int nchunk = (int)(((int64_t)nrow + SAMPLE_CHUNK - 1) / SAMPLE_CHUNK);
  int *off = hb_calloc((size_t)nchunk + 1, sizeof *off);
  if (!off) return HB_ERR_NOMEM;
  (void)nt;
HB_OMP(parallel for num_threads(nt) schedule(static) if (nchunk > 1))
  for (int c = 0; c < nchunk; c++) {
    const int r1 = c + 1 < nchunk ? (c + 1) * SAMPLE_CHUNK : nrow;
    int k = 0;
    for (int r = c * SAMPLE_CHUNK; r < r1; r++) k += hb_rng_unif(seed, HB_RNG_BINNING, 0, (uint64_t)(row0 + r)) < frac;
    off[c + 1] = k;
  }
  for (int c = 0; c < nchunk; c++) off[c + 1] += off[c];
  int *out = hb_malloc((size_t)(off[nchunk] > 0 ? off[nchunk] : 1) * sizeof *out);
  if (!out) { hb_free(off); return HB_ERR_NOMEM; }
HB_OMP(parallel for num_threads(nt) schedule(static) if (nchunk > 1))
  for (int c = 0; c < nchunk; c++) {
    const int r1 = c + 1 < nchunk ? (c + 1) * SAMPLE_CHUNK : nrow;
    int k = off[c];
    for (int r = c * SAMPLE_CHUNK; r < r1; r++)
      if (hb_rng_unif(seed, HB_RNG_BINNING, 0, (uint64_t)(row0 + r)) < frac) out[k++] = r;
  }
  *n = off[nchunk];
  *rows = out;
  hb_free(off);
  return HB_OK;
}

/* Draw the boundary sample (sample_rows), with a per-row flag when asked. */
static int make_sample(int nrow, const hb_binparams_t *bp, int need_flag, int nt, sample_t *s) {
  memset(s, 0, sizeof *s);
  if (bp->bin_sample_rows <= 0 || nrow <= bp->bin_sample_rows) {
    s->all = 1;
    s->n = nrow;
    return HB_OK;
  }
  int st = sample_rows(nrow, 0, (double)bp->bin_sample_rows / nrow, bp->seed, nt, &s->rows, &s->n);
  if (st != HB_OK) return st;
  if (need_flag) {
    s->flag = hb_calloc((size_t)nrow, 1);
    if (!s->flag) { hb_free(s->rows); s->rows = NULL; return HB_ERR_NOMEM; }
    for (int k = 0; k < s->n; k++) s->flag[s->rows[k]] = 1;
  }
  return HB_OK;
}

/* Columns (or features) are binned a group at a time, one parallel loop per
 * group, and interrupts are checked between groups (interrupt.h): a group
 * holds about GROUP_VALUES input values (tens of milliseconds), and at
 * least two columns a thread. Each thread keeps its scratch from group to
 * group. */
#define GROUP_VALUES ((long long)1 << 21)

static int column_group(int nrow, int nt, int ncol) {
  long long g = GROUP_VALUES / (nrow > 0 ? nrow : 1);
  if (g < 2LL * nt) g = 2LL * nt;
  if (g > ncol) g = ncol;
  return g > 0 ? (int)g : 1;
}

static void scratch_free_all(scratch_t *sc, int nt) {
  if (!sc) return;
  for (int t = 0; t < nt; t++) scratch_free(&sc[t]);
  hb_free(sc);
}

/* Keep the failure of the lowest column (worker threads; the message is set after). */
static void first_error(int *err_c, int *err_code, int c, int st) {
#ifdef _OPENMP
HB_OMP(critical(hb_dataset_error))
#endif
  {
    if (*err_c < 0 || c < *err_c) { *err_c = c; *err_code = st; }
  }
}

/* Bin `in` into a new dataset (boundaries from the data, or the reference's
 * mappers); *out owns copies of labels and weights. On failure returns a
 * status with a message set, *out is NULL and nothing leaks. */
int hb_dataset_create(const hb_input_t *in, const hb_binparams_t *bp_in,
                      const hb_dataset_t *reference, hb_dataset_t **out) {
  if (!out) return hb_error_set(HB_ERR_INPUT, "dataset: no output pointer given");
  *out = NULL;
  hb_binparams_t bp;
  if (bp_in) bp = *bp_in; else hb_binparams_default(&bp);
  int status = validate_input(in, &bp, reference);
  if (status != HB_OK) return status;

  int nrow = in->nrow, ncol = in->ncol;
  hb_dataset_t *d = hb_calloc(1, sizeof *d);
  if (!d) return HB_ERR_NOMEM;
  d->nrow = nrow;
  d->ncol = ncol;
  d->col_first = hb_calloc((size_t)ncol + 1, sizeof *d->col_first);
  if (!d->col_first) { hb_dataset_free(d); return HB_ERR_NOMEM; }
  if (in->label) {
    d->label = hb_malloc((size_t)nrow * sizeof(double));
    if (!d->label) { hb_dataset_free(d); return HB_ERR_NOMEM; }
    memcpy(d->label, in->label, (size_t)nrow * sizeof(double));
  }
  if (in->weight) {
    d->weight = hb_malloc((size_t)nrow * sizeof(double));
    if (!d->weight) { hb_dataset_free(d); return HB_ERR_NOMEM; }
    memcpy(d->weight, in->weight, (size_t)nrow * sizeof(double));
  }
  if (in->init_score) {
    size_t ni = (size_t)nrow * (size_t)in->init_score_ncol;
    d->init_score = hb_malloc(ni * sizeof(double));
    if (!d->init_score) { hb_dataset_free(d); return HB_ERR_NOMEM; }
    memcpy(d->init_score, in->init_score, ni * sizeof(double));
    d->init_score_ncol = in->init_score_ncol;
  }
  int nt = hb_threads_use(bp.nthreads);
  (void)nt;
  int err_c = -1, err_code = HB_OK;
  if (reference) {
    memcpy(d->col_first, reference->col_first, ((size_t)ncol + 1) * sizeof *d->col_first);
  } else {
    /* The columns' mappers first: a factor's level counts decide how many features it spans. */
    sample_t smp;
    hb_binmapper_t **cm = hb_calloc((size_t)ncol, sizeof *cm);
    int *cn = hb_calloc((size_t)ncol, sizeof *cn);
    scratch_t *scs = hb_calloc((size_t)nt, sizeof *scs);
    if (!cm || !cn || !scs || make_sample(nrow, &bp, in->csc != NULL, nt, &smp) != HB_OK) {
      hb_free(cm); hb_free(cn); hb_free(scs); hb_dataset_free(d);
      return HB_ERR_NOMEM;
    }
    const int group = column_group(smp.n, nt, ncol);
    for (int c0 = 0; c0 < ncol && err_c < 0; c0 += group) {
      const int c1 = ncol - c0 < group ? ncol : c0 + group;
#ifdef _OPENMP
HB_OMP(parallel for num_threads(nt) schedule(dynamic, 1))
#endif
      for (int c = c0; c < c1; c++) {
        int st = build_column_mappers(in, &bp, &smp, c, &cm[c], &cn[c], &scs[hb_threads_id()]);
        if (st != HB_OK) first_error(&err_c, &err_code, c, st);
      }
      if (err_c < 0 && c1 < ncol && hb_interrupt_check() != HB_OK) { err_c = c1; err_code = HB_ERR_INTERRUPT; }
    }
    scratch_free_all(scs, nt);
    hb_free(smp.rows);
    hb_free(smp.flag);
    for (int c = 0; c < ncol; c++) d->col_first[c + 1] = d->col_first[c] + cn[c];
    d->nfeat = d->col_first[ncol];
    d->mappers = err_c < 0 ? hb_calloc((size_t)d->nfeat, sizeof *d->mappers) : NULL;
    if (err_c < 0 && !d->mappers) { err_c = 0; err_code = HB_ERR_NOMEM; }
    for (int c = 0; c < ncol; c++) {
      for (int j = 0; j < cn[c]; j++) {
        if (d->mappers) d->mappers[d->col_first[c] + j] = cm[c][j];  /* moved */
        else hb_binmapper_clear(&cm[c][j]);
      }
      free(cm[c]);
    }
    hb_free(cm);
    hb_free(cn);
    if (err_c >= 0) d->nfeat = 0;
  }
  if (err_c < 0) {
    int nfeat = d->nfeat = d->col_first[ncol];
    if (!d->mappers) d->mappers = hb_calloc((size_t)nfeat, sizeof *d->mappers);
    d->store = hb_calloc((size_t)nfeat, sizeof *d->store);
    d->feat_col = hb_malloc((size_t)nfeat * sizeof *d->feat_col);
    d->hist_offset = hb_calloc((size_t)nfeat + 1, sizeof *d->hist_offset);
    if (!d->mappers || !d->store || !d->feat_col || !d->hist_offset) { hb_dataset_free(d); return HB_ERR_NOMEM; }
    for (int c = 0; c < ncol; c++)
      for (int f = d->col_first[c]; f < d->col_first[c + 1]; f++) d->feat_col[f] = c;
    if (reference) {
      for (int f = 0; f < nfeat; f++) {
        if (hb_binmapper_copy(&reference->mappers[f], &d->mappers[f]) != HB_OK) {
          hb_dataset_free(d);
          return HB_ERR_NOMEM;
        }
      }
    }
    int train = reference == NULL;
    if (bp.device) {  /* interrupts are checked between its chunks */
      int st = bin_features_device(in, &bp, d, train, nt);
      if (st != HB_OK) {
        hb_dataset_free(d);
        return st;
      }
    } else {
      scratch_t *scs = hb_calloc((size_t)nt, sizeof *scs);
      if (!scs) { hb_dataset_free(d); return HB_ERR_NOMEM; }
      const int group = column_group(nrow, nt, nfeat);
      for (int f0 = 0; f0 < nfeat && err_c < 0; f0 += group) {
        const int f1 = nfeat - f0 < group ? nfeat : f0 + group;
#ifdef _OPENMP
HB_OMP(parallel for num_threads(nt) schedule(dynamic, 1))
#endif
        for (int f = f0; f < f1; f++) {
          int st = bin_feature(in, d->feat_col[f], train, &d->mappers[f], &d->store[f], &scs[hb_threads_id()]);
          if (st != HB_OK) first_error(&err_c, &err_code, d->feat_col[f], st);
        }
        if (err_c < 0 && f1 < nfeat && hb_interrupt_check() != HB_OK) {
          err_c = d->feat_col[f1];
          err_code = HB_ERR_INTERRUPT;
        }
      }
      scratch_free_all(scs, nt);
    }
  }
  if (err_c >= 0) {
    hb_dataset_free(d);
    if (err_code == HB_ERR_INTERRUPT) return hb_error_set(HB_ERR_INTERRUPT, "interrupted");
    if (err_code == HB_ERR_NOMEM)
      return hb_error_set(HB_ERR_NOMEM, "dataset: out of memory binning column %d", err_c + 1);
    return hb_error_set(err_code, "dataset: internal error binning column %d", err_c + 1);
  }

  int nfeat = d->nfeat;
  long long off = 0;
  for (int f = 0; f < nfeat; f++) {
    d->hist_offset[f] = (int)off;
    off += d->mappers[f].num_bin;
    if (off > INT_MAX) {
      hb_dataset_free(d);
      return hb_error_set(HB_ERR_INPUT, "dataset: too many histogram bins (%d features)", nfeat);
    }
  }
  d->hist_offset[nfeat] = (int)off;
  d->total_bins = (int)off;
  *out = d;
  return HB_OK;
}

/* Bins of feature f for rows [row0, row0 + n): a copy for dense storage, the
 * default bin with the stored entries of the range written over it for sparse. */
void hb_dataset_feature_bins(const hb_dataset_t *d, int f, int row0, int n, uint8_t *out) {
  const hb_featstore_t *st = &d->store[f];
  if (!st->sparse) {
    memcpy(out, st->bins + row0, (size_t)n);
    return;
  }
  memset(out, d->mappers[f].default_bin, (size_t)n);
  int lo = 0, hi = st->nnz;
  while (lo < hi) {
    int mid = lo + ((hi - lo) >> 1);
    if (st->rows[mid] < row0) lo = mid + 1; else hi = mid;
  }
  for (int k = lo; k < st->nnz && st->rows[k] < row0 + n; k++) out[st->rows[k] - row0] = st->vals[k];
}

int hb_dataset_pack_rows(const hb_dataset_t *d, int row0, int n, int stride, uint32_t *out, int nthreads) {
  int nw = (d->nfeat + 3) / 4, err = 0;
  if (stride < nw) return hb_error_set(HB_ERR_INPUT, "dataset: %d words per row cannot hold %d features", stride,
                                       d->nfeat);
  int nt = hb_threads_use(nthreads);
  (void)nt;
  /* Each thread fills whole word columns, so no two write the same word. */
HB_OMP(parallel num_threads(nt))
  {
    uint8_t *tmp = malloc((size_t)(n > 0 ? n : 1));
    if (!tmp) {
HB_OMP(atomic write)
      err = 1;
    }
HB_OMP(for schedule(dynamic, 1))
    for (int w = 0; w < stride; w++) {
      if (!tmp) continue;
      for (int i = 0; i < n; i++) out[(size_t)i * stride + w] = 0;
      for (int k = 0; k < 4 && w < nw && 4 * w + k < d->nfeat; k++) {
        hb_dataset_feature_bins(d, 4 * w + k, row0, n, tmp);
        for (int i = 0; i < n; i++) out[(size_t)i * stride + w] |= (uint32_t)tmp[i] << (8 * k);
      }
    }
    free(tmp);
  }
  return err ? hb_error_set(HB_ERR_NOMEM, "out of memory packing rows for the GPU") : HB_OK;
}

/* ------------------------------------------------- data-parallel shards */

/* A failure on any process ends every process's call with an error (the
 * others' message names the cause as another process's): a process that
 * went on alone would wait forever in its next collective operation. */
static int dist_agree(const hb_dist_t *dist, int st) {
  return hb_dist_agree(dist, st, "to bin its rows");
}

/* Features that take one bin on every shard are trivial, and numeric ones
 * with a missing row on some shard have missing values (store_feature), as
 * on the concatenated rows: bin counts summed over the shards. */
/* The rows in each bin of every feature (cnt: total_bins entries, at
 * hist_offset[f]), summed over the shards: every process calls it. *cnt is
 * NULL on an error (agreed). */
static int dist_bin_counts(const hb_dist_t *dist, const hb_dataset_t *d, int nthreads, int64_t **out) {
  int64_t *cnt = hb_calloc((size_t)d->total_bins + 1, sizeof(int64_t));
  *out = NULL;
  int s = dist_agree(dist, cnt ? HB_OK : hb_error_set(HB_ERR_NOMEM, "out of memory counting bins"));
  if (s != HB_OK) { hb_free(cnt); return s; }
  const int nt = hb_threads_use(nthreads);
  (void)nt;
HB_OMP(parallel for num_threads(nt) schedule(dynamic, 1))
  for (int f = 0; f < d->nfeat; f++) {  /* each feature its own counts */
    int64_t *c = cnt + d->hist_offset[f];
    const hb_featstore_t *st = &d->store[f];
    if (st->sparse) {
      c[d->mappers[f].default_bin] += d->nrow - st->nnz;
      for (int k = 0; k < st->nnz; k++) c[st->vals[k]]++;
    } else {
      for (int r = 0; r < d->nrow; r++) c[st->bins[r]]++;
    }
  }
  s = hb_dist_sum_i64(dist, cnt, d->total_bins);
  if (s != HB_OK) { hb_free(cnt); return s; }
  *out = cnt;
  return HB_OK;
}

int hb_dataset_prefilter(const hb_dataset_t *d, const hb_dist_t *dist, int min_data, int nthreads, uint8_t *out) {
  int64_t *cnt;
  int s = dist_bin_counts(dist, d, nthreads, &cnt);
  if (s != HB_OK) return s;
  for (int f = 0; f < d->nfeat; f++) {
    const int64_t *c = cnt + d->hist_offset[f];
    const int nb = d->hist_offset[f + 1] - d->hist_offset[f];
    int64_t total = 0;
    int nonempty = 0;
    for (int b = 0; b < nb; b++) { total += c[b]; nonempty += c[b] > 0; }
    int keep = 0;
    if (d->mappers[f].type == HB_FEAT_CATEGORICAL) {
      /* a factor of two levels or more is not filtered (as lightgbm 4.7.0 did not, run beside it: see
       * dataset.h); of one level, when it or the missing rows are too few */
      int nv = nonempty - (c[nb - 1] > 0);
      keep = nv >= 2;
      for (int b = 0; b < nb && !keep; b++) keep = c[b] > 0 && c[b] >= min_data && total - c[b] >= min_data;
    } else {
      int64_t left = 0;  /* thresholds in bin order, the missing bin last */
      for (int b = 0; b + 1 < nb && !keep; b++) {
        left += c[b];
        keep = left >= min_data && total - left >= min_data;
      }
    }
    out[f] = (uint8_t)!keep;
  }
  hb_free(cnt);
  return HB_OK;
}

static int dist_trivial(const hb_dist_t *dist, hb_dataset_t *d, int nthreads) {
  int64_t *cnt;
  int s = dist_bin_counts(dist, d, nthreads, &cnt);
  if (s == HB_OK)
    for (int f = 0; f < d->nfeat; f++) {
      int nonempty = 0;
      for (int b = d->hist_offset[f]; b < d->hist_offset[f + 1]; b++) nonempty += cnt[b] > 0;
      d->mappers[f].trivial = nonempty <= 1;
      if (d->mappers[f].type == HB_FEAT_NUMERIC && cnt[d->hist_offset[f + 1] - 1] > 0) d->mappers[f].missing = 1;
    }
  hb_free(cnt);
  return s;
}

/* Sparse or dense storage as one process decides it on the concatenated
 * rows (store_bins: most rows in the default bin), from default-bin counts
 * summed over the shards, for every feature that is its column's only one;
 * a shard whose own rows decided otherwise converts its store. The
 * bundler's candidates are the sparse features (bundle.h), so with
 * max_conflict_rate > 0 every shard must see the same ones. (A wide
 * factor's parts keep theirs: they are never bundled.) */
static int dist_storage(const hb_dist_t *dist, hb_dataset_t *d, int64_t N, int nthreads) {
  const int nf = d->nfeat;
  int64_t *cnt = hb_calloc((size_t)(nf > 0 ? nf : 1), sizeof(int64_t));
  int s = dist_agree(dist, cnt ? HB_OK : hb_error_set(HB_ERR_NOMEM, "dataset: out of memory choosing sparse storage"));
  if (s != HB_OK) { hb_free(cnt); return s; }
  const int nt = hb_threads_use(nthreads);
  (void)nt;
HB_OMP(parallel for num_threads(nt) schedule(dynamic, 1))
  for (int f = 0; f < nf; f++) {
    const hb_featstore_t *st = &d->store[f];
    const int db = d->mappers[f].default_bin;
    if (st->sparse) cnt[f] = d->nrow - st->nnz;
    else
      for (int r = 0; r < d->nrow; r++) cnt[f] += st->bins[r] == db;
  }
  s = hb_dist_sum_i64(dist, cnt, nf);
  int nomem = 0;
HB_OMP(parallel for num_threads(nt) schedule(dynamic, 1) if (s == HB_OK))
  for (int f = 0; f < nf; f++) {  /* each feature's store its own */
    const int c = d->feat_col[f];
    if (s != HB_OK || d->col_first[c + 1] - d->col_first[c] != 1) continue;
    hb_featstore_t *st = &d->store[f];
    const int sparse = (long long)SPARSE_DEN * cnt[f] >= (long long)SPARSE_NUM * N;
    const uint8_t db = (uint8_t)d->mappers[f].default_bin;
    if (sparse && !st->sparse) {
      int nnz = 0;
      for (int r = 0; r < d->nrow; r++) nnz += st->bins[r] != db;
      /* worker threads: plain malloc, no message (the error buffer is the main thread's) */
      int *rows = wmalloc(sizeof(int) * (size_t)nnz);
      uint8_t *vals = wmalloc((size_t)nnz);
      if (!rows || !vals) {
        hb_free(rows); hb_free(vals);
HB_OMP(atomic write)
        nomem = 1;
        continue;
      }
      for (int r = 0, k = 0; r < d->nrow; r++)
        if (st->bins[r] != db) { rows[k] = r; vals[k] = st->bins[r]; k++; }
      hb_free(st->bins);
      st->bins = NULL;
      st->rows = rows; st->vals = vals; st->nnz = nnz; st->sparse = 1;
    } else if (!sparse && st->sparse) {
      uint8_t *bins = wmalloc((size_t)d->nrow);
      if (!bins) {
HB_OMP(atomic write)
        nomem = 1;
        continue;
      }
      memset(bins, db, (size_t)d->nrow);
      for (int k = 0; k < st->nnz; k++) bins[st->rows[k]] = st->vals[k];
      hb_free(st->rows); hb_free(st->vals);
      st->rows = NULL; st->vals = NULL; st->nnz = 0; st->sparse = 0;
      st->bins = bins;
    }
  }
  hb_free(cnt);
  if (s == HB_OK && nomem) s = HB_ERR_NOMEM;
  if (s == HB_ERR_NOMEM) return hb_error_set(s, "dataset: out of memory choosing sparse storage");
  return s;
}

/* Each numeric column's values at this shard's rows in the global sample
 * (column-major, ns rows a column; CSC implicit zeros as 0.0). */
static int dist_sample_values(const hb_input_t *in, const hb_binparams_t *bp, int64_t row0, int64_t N,
                              const int *numcol, int nnum, double **vals, int *ns) {
  const int nrow = in->nrow;
  const int all = bp->bin_sample_rows <= 0 || N <= bp->bin_sample_rows;
  const double frac = all ? 1.0 : (double)bp->bin_sample_rows / (double)N;
  int *pos = hb_malloc(sizeof(int) * (size_t)nrow), *rows = NULL, m = 0;
  if (!pos || sample_rows(nrow, row0, frac, bp->seed, hb_threads_use(bp->nthreads), &rows, &m) != HB_OK) {
    hb_free(pos);
    return HB_ERR_NOMEM;
  }
  for (int r = 0; r < nrow; r++) pos[r] = -1;
  for (int k = 0; k < m; k++) pos[rows[k]] = k;
  hb_free(rows);
  double *v = hb_calloc((size_t)m * (size_t)nnum + 1, sizeof(double));
  if (!v) { hb_free(pos); return HB_ERR_NOMEM; }
  const int nt = hb_threads_use(bp->nthreads);
  (void)nt;
HB_OMP(parallel for num_threads(nt) schedule(dynamic, 1))
  for (int j = 0; j < nnum; j++) {  /* each column its own values */
    const int c = numcol[j];
    double *out = v + (size_t)j * m;
    if (in->csc) {
      const hb_csc_t *x = in->csc;
      for (int k = x->p[c]; k < x->p[c + 1]; k++)
        if (pos[x->i[k]] >= 0) out[pos[x->i[k]]] = x->x[k];
    } else {
      for (int r = 0; r < nrow; r++)
        if (pos[r] >= 0) out[pos[r]] = col_value(&in->cols[c], r);
    }
  }
  hb_free(pos);
  *vals = v;
  *ns = m;
  return HB_OK;
}

int hb_dataset_create_dist(const hb_input_t *in, const hb_binparams_t *bp_in, const hb_dataset_t *reference,
                           const hb_dist_t *dist, hb_dataset_t **out) {
  *out = NULL;
  hb_binparams_t bp;
  if (bp_in) bp = *bp_in; else hb_binparams_default(&bp);
  if (!dist || dist->size <= 1) {
    int st = hb_dataset_create(in, &bp, reference, out);
    if (st == HB_OK) { (*out)->dist = dist; (*out)->nrow_global = (*out)->nrow; }
    return st;
  }
  const int P = dist->size;
  /* every shard's rows: the global row index of ours, and none may be empty */
  int64_t mine = in ? in->nrow : 0, *nr = NULL;
  int st = dist->allgather(dist, &mine, sizeof mine, (void **)&nr, NULL);
  if (st != HB_OK) return st;
  int64_t row0 = 0, N = 0;
  int empty = -1;
  for (int r = 0; r < P; r++) {
    if (r < dist->rank) row0 += nr[r];
    N += nr[r];
    if (nr[r] < 1 && empty < 0) empty = r;
  }
  hb_free(nr);
  if (empty >= 0)
    return hb_error_set(HB_ERR_INPUT, "dataset: the shard of process %d (rank %d of %d) has no rows; give every "
                        "process at least one row", empty, empty, P);
  if (N > INT32_MAX)
    return hb_error_set(HB_ERR_INPUT, "dataset: %lld rows over all processes; at most %d are supported",
                        (long long)N, INT32_MAX);
  hb_dataset_t *d = NULL;
  if (reference) {
    st = dist_agree(dist, hb_dataset_create(in, &bp, reference, &d));
    if (st == HB_OK) st = dist_agree(dist, dist_storage(dist, d, N, bp.nthreads));
    if (st != HB_OK) { hb_dataset_free(d); return st; }
    d->dist = dist; d->row0 = row0; d->nrow_global = N;
    *out = d;
    return HB_OK;
  }
  st = validate_input(in, &bp, NULL);
  if ((st = dist_agree(dist, st)) != HB_OK) return st;
  const int ncol = in->ncol;
  /* the global sample of the numeric columns, in rank order */
  int *numcol = hb_malloc(sizeof(int) * (size_t)ncol);
  hb_column_t *scol = hb_calloc((size_t)ncol, sizeof *scol);
  hb_binmapper_t **cm = hb_calloc((size_t)ncol, sizeof *cm);
  int *cn = hb_calloc((size_t)ncol, sizeof *cn);
  int64_t *counts = hb_malloc(sizeof(int64_t) * (size_t)P);
  double *local = NULL, *gath = NULL, *global = NULL;
  int nnum = 0, ns = 0;
  st = numcol && scol && cm && cn && counts ? HB_OK : HB_ERR_NOMEM;
  if (st == HB_OK) {
    for (int c = 0; c < ncol; c++)
      if (!(in->cols && in->cols[c].type == HB_COL_FACTOR)) numcol[nnum++] = c;
    st = dist_sample_values(in, &bp, row0, N, numcol, nnum, &local, &ns);
  }
  if ((st = dist_agree(dist, st)) == HB_OK && nnum > 0)
    st = dist->allgather(dist, local, (int64_t)ns * nnum * (int64_t)sizeof(double), (void **)&gath, counts);
  int64_t S = 0;
  if (st == HB_OK && nnum > 0) {
    for (int r = 0; r < P; r++) S += counts[r] / ((int64_t)sizeof(double) * nnum);
    global = hb_malloc(sizeof(double) * (size_t)(S * nnum + 1));
    if (!global) st = HB_ERR_NOMEM;
    else {
      int64_t at = 0, src = 0;  /* rank r's block: its rows of every column in turn */
      for (int r = 0; r < P; r++) {
        int64_t m = counts[r] / ((int64_t)sizeof(double) * nnum);
        for (int j = 0; j < nnum; j++) memcpy(global + (size_t)(j * S + at), gath + src + j * m, sizeof(double) * (size_t)m);
        src += m * nnum;
        at += m;
      }
    }
  }
  st = dist_agree(dist, st);
  /* the factors' level counts, summed */
  for (int c = 0; c < ncol && st == HB_OK; c++) {
    if (!(in->cols && in->cols[c].type == HB_COL_FACTOR)) continue;
    const hb_column_t *col = &in->cols[c];
    const int nlev = col->nlevels;
    int64_t *lc = hb_calloc((size_t)nlev + 1, sizeof(int64_t));
    int *ic = calloc((size_t)nlev + 1, sizeof(int));
    if ((st = dist_agree(dist, lc && ic ? HB_OK : HB_ERR_NOMEM)) != HB_OK) { hb_free(lc); free(ic); break; }
    for (int r = 0; r < in->nrow; r++) {
      int k = col->i32[r];
      lc[k >= 1 && k <= nlev ? k : 0]++;  /* [0]: missing */
    }
    st = hb_dist_sum_i64(dist, lc, nlev + 1);
    for (int k = 0; k <= nlev; k++) ic[k] = (int)lc[k];
    hb_free(lc);
    hb_binparams_t cbp;
    if (st == HB_OK) st = factor_mappers_from_counts(column_binparams(&bp, c, &cbp), nlev, ic, &cm[c], &cn[c]);
    else free(ic);
    st = dist_agree(dist, st);  /* before the next column's sum */
  }
  /* the numeric columns' mappers from the gathered sample, as from the
   * concatenated rows' sample (the boundaries depend on the sorted values only) */
  if (st == HB_OK && nnum > 0) {
    hb_input_t sin;
    memset(&sin, 0, sizeof sin);
    sin.nrow = (int)S;
    sin.ncol = ncol;
    sin.cols = scol;
    for (int j = 0; j < nnum; j++) {
      scol[numcol[j]].type = HB_COL_DOUBLE;
      scol[numcol[j]].dbl = global + (size_t)j * S;
    }
    sample_t all;
    memset(&all, 0, sizeof all);
    all.all = 1;
    all.n = (int)S;
    /* each column's boundaries on a thread of its own (a pure function of the sample) */
    const int nt = hb_threads_use(bp.nthreads);
    scratch_t *scs = hb_calloc((size_t)nt, sizeof *scs);
    int err_c = -1, err_code = HB_OK;
    if (!scs) st = HB_ERR_NOMEM;
HB_OMP(parallel for num_threads(nt) schedule(dynamic, 1) if (scs != NULL))
    for (int j = 0; j < nnum; j++) {
      if (!scs) continue;
      const int c = numcol[j];
      cm[c] = calloc(1, sizeof **cm);
      if (!cm[c]) { first_error(&err_c, &err_code, c, HB_ERR_NOMEM); continue; }
      cn[c] = 1;
      hb_binparams_t cbp;
      const int s1 = build_numeric_mapper(&sin, column_binparams(&bp, c, &cbp), &all, c, cm[c],
                                          &scs[hb_threads_id()]);
      if (s1 != HB_OK) first_error(&err_c, &err_code, c, s1);
    }
    scratch_free_all(scs, nt);
    if (st == HB_OK && err_c >= 0) st = err_code;
  }
  hb_free(local); hb_free(gath); hb_free(global); hb_free(counts); hb_free(scol);
  /* a reference made of the mappers alone, then our rows binned with it */
  hb_dataset_t ref;
  memset(&ref, 0, sizeof ref);
  ref.ncol = ncol;
  ref.col_first = hb_calloc((size_t)ncol + 1, sizeof(int));
  if (st == HB_OK && !ref.col_first) st = HB_ERR_NOMEM;
  if (st == HB_OK) {
    for (int c = 0; c < ncol; c++) ref.col_first[c + 1] = ref.col_first[c] + cn[c];
    ref.nfeat = ref.col_first[ncol];
    ref.mappers = hb_calloc((size_t)ref.nfeat + 1, sizeof *ref.mappers);
    if (!ref.mappers) st = HB_ERR_NOMEM;
  }
  for (int c = 0; cm && cn && c < ncol; c++) {
    for (int j = 0; j < cn[c]; j++) {
      if (st == HB_OK) ref.mappers[ref.col_first[c] + j] = cm[c][j];  /* moved */
      else hb_binmapper_clear(&cm[c][j]);
    }
    free(cm[c]);
  }
  hb_free(cm); hb_free(cn); hb_free(numcol);
  if ((st = dist_agree(dist, st == HB_ERR_NOMEM ? hb_error_set(st, "dataset: out of memory placing bin boundaries") : st)) == HB_OK)
    st = dist_agree(dist, hb_dataset_create(in, &bp, &ref, &d));
  if (st == HB_OK) st = dist_agree(dist, dist_trivial(dist, d, bp.nthreads));
  if (st == HB_OK) st = dist_agree(dist, dist_storage(dist, d, N, bp.nthreads));
  for (int f = 0; ref.mappers && f < ref.nfeat; f++) hb_binmapper_clear(&ref.mappers[f]);
  hb_free(ref.mappers);
  hb_free(ref.col_first);
  if (st != HB_OK) { hb_dataset_free(d); return st; }
  d->dist = dist; d->row0 = row0; d->nrow_global = N;
  *out = d;
  return HB_OK;
}
