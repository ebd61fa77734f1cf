/* test_dataset.c: engine-only checks of dataset.c (binning, storage, factors,
 * references, thread independence, input errors) against hand-computed values.
 * Build: gcc -std=c11 -Wall -Wextra -g -fsanitize=address,undefined -fopenmp -Isrc/engine
 *   tools/test_dataset.c src/engine/dataset.c src/engine/error.c src/engine/threads.c
 *   src/engine/rng.c -lm */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dataset.h"
#include "error.h"
#include "rng.h"
#include "test_engine.h"

static int n_pass = 0, n_fail = 0;

#define CHECK(cond, ...)                                        \
  do {                                                          \
    if (cond) n_pass++;                                         \
    else {                                                      \
      n_fail++;                                                 \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);    \
      printf(__VA_ARGS__);                                      \
      printf("\n");                                             \
    }                                                           \
  } while (0)

static hb_column_t dcol(const double *x) {
  hb_column_t c = {HB_COL_DOUBLE, x, NULL, 0};
  return c;
}
static hb_column_t icol(const int *x) {
  hb_column_t c = {HB_COL_INT, NULL, x, 0};
  return c;
}
static hb_column_t fcol(const int *x, int nlev) {
  hb_column_t c = {HB_COL_FACTOR, NULL, x, nlev};
  return c;
}

static hb_dataset_t *build(int nrow, int ncol, const hb_column_t *cols, const hb_csc_t *csc,
                           const hb_binparams_t *bp, const hb_dataset_t *ref) {
  hb_input_t in = {nrow, ncol, cols, csc, NULL, NULL, NULL, 0};
  hb_dataset_t *d = NULL;
  int st = hb_dataset_create(&in, bp, ref, &d);
  CHECK(st == HB_OK && d != NULL, "create failed: %d %s", st, hb_error_message());
  return st == HB_OK ? d : NULL;
}

static int mappers_equal(const hb_binmapper_t *a, const hb_binmapper_t *b) {
  if (a->type != b->type || a->num_bin != b->num_bin || a->trivial != b->trivial ||
      a->default_bin != b->default_bin || a->nlevels != b->nlevels)
    return 0;
  if (a->type == HB_FEAT_NUMERIC) {
    for (int i = 0; i < a->num_bin - 1; i++)
      if (memcmp(&a->upper[i], &b->upper[i], sizeof(double)) != 0) return 0;
  } else {
    for (int i = 0; i < a->nlevels; i++) if (a->level_bin[i] != b->level_bin[i]) return 0;
    for (int i = 0; i < a->num_bin - 1; i++) if (a->bin_level[i] != b->bin_level[i]) return 0;
  }
  return 1;
}

/* Same mappers, storage kinds and bins of every row. */
static int datasets_equal(const hb_dataset_t *a, const hb_dataset_t *b) {
  if (a->nrow != b->nrow || a->nfeat != b->nfeat || a->ncol != b->ncol || a->total_bins != b->total_bins) return 0;
  for (int c = 0; c <= a->ncol; c++)
    if (a->col_first[c] != b->col_first[c]) return 0;
  for (int f = 0; f < a->nfeat; f++) {
    if (!mappers_equal(&a->mappers[f], &b->mappers[f])) return 0;
    if (a->store[f].sparse != b->store[f].sparse) return 0;
    if (a->hist_offset[f] != b->hist_offset[f]) return 0;
    for (int r = 0; r < a->nrow; r++)
      if (test_dataset_bin(a, f, r) != test_dataset_bin(b, f, r)) return 0;
  }
  return 1;
}

/* Every structural invariant of a built dataset. */
static void check_invariants(const hb_dataset_t *d, int max_bin, const char *what) {
  int off = 0;
  for (int f = 0; f < d->nfeat; f++) {
    const hb_binmapper_t *m = &d->mappers[f];
    CHECK(d->hist_offset[f] == off, "%s f%d hist_offset", what, f);
    off += m->num_bin;
    CHECK(m->num_bin - 1 <= max_bin, "%s f%d: %d value bins > max_bin %d", what, f, m->num_bin - 1, max_bin);
    if (m->type == HB_FEAT_NUMERIC) {
      int ok = m->num_bin >= 2 && isinf(m->upper[m->num_bin - 2]) && m->upper[m->num_bin - 2] > 0;
      for (int b = 1; b < m->num_bin - 1; b++) ok = ok && m->upper[b - 1] < m->upper[b];
      CHECK(ok, "%s f%d: upper bounds not increasing to +Inf", what, f);
      CHECK(m->default_bin == test_binmapper_bin(m, 0.0), "%s f%d default_bin", what, f);
    }
    const hb_featstore_t *st = &d->store[f];
    if (st->sparse) {
      int ok = 1;
      for (int k = 0; k < st->nnz; k++) {
        ok = ok && st->vals[k] != m->default_bin && st->vals[k] < m->num_bin;
        if (k > 0) ok = ok && st->rows[k] > st->rows[k - 1];
      }
      CHECK(ok, "%s f%d: sparse store malformed", what, f);
      CHECK(5LL * (d->nrow - st->nnz) >= 4LL * d->nrow, "%s f%d sparse but dense enough", what, f);
    } else {
      long long ndef = 0;
      int ok = 1;
      for (int r = 0; r < d->nrow; r++) {
        ndef += st->bins[r] == m->default_bin;
        ok = ok && st->bins[r] < m->num_bin;
      }
      CHECK(ok, "%s f%d: dense bin out of range", what, f);
      CHECK(5 * ndef < 4LL * d->nrow, "%s f%d dense though mostly default", what, f);
    }
    /* The bulk reader agrees with the one-row reader on the whole column and
     * on ranges that start and end inside it. */
    uint8_t *buf = malloc((size_t)d->nrow + 1);
    int starts[3] = { 0, d->nrow / 3, d->nrow - 1 }, ok = buf != NULL;
    for (int k = 0; k < 3 && ok; k++) {
      int r0 = starts[k], n = k == 0 ? d->nrow : (d->nrow - r0 + 1) / 2;
      hb_dataset_feature_bins(d, f, r0, n, buf);
      for (int i = 0; i < n; i++) ok = ok && buf[i] == test_dataset_bin(d, f, r0 + i);
    }
    free(buf);
    CHECK(ok, "%s f%d: hb_dataset_feature_bins differs from test_dataset_bin", what, f);
  }
  CHECK(d->hist_offset[d->nfeat] == off && d->total_bins == off, "%s total_bins", what);
  /* Columns: consecutive runs of features, several only for a factor. */
  int cok = d->ncol >= 1 && d->col_first[0] == 0 && d->col_first[d->ncol] == d->nfeat;
  for (int c = 0; cok && c < d->ncol; c++) {
    int n_c = d->col_first[c + 1] - d->col_first[c];
    cok = n_c >= 1 && n_c <= HB_MAX_COLUMN_FEATURES &&
          (n_c == 1 || d->mappers[d->col_first[c]].type == HB_FEAT_CATEGORICAL);
    for (int f = d->col_first[c]; cok && f < d->col_first[c + 1]; f++) cok = d->feat_col[f] == c;
  }
  CHECK(cok, "%s: col_first / feat_col malformed", what);
  /* Packed rows (the GPU layout): byte f % 4 of word f / 4 holds feature f's
   * bin, padding zero, for a stride with room to spare and a range inside. */
  int nw = (d->nfeat + 3) / 4, stride = nw + 3, r0 = d->nrow / 4, n = d->nrow - r0;
  uint32_t *w = malloc(sizeof(uint32_t) * (size_t)stride * (size_t)(n > 0 ? n : 1));
  int ok = w != NULL && hb_dataset_pack_rows(d, r0, n, stride, w, 2) == HB_OK;
  for (int i = 0; ok && i < n; i++)
    for (int k = 0; k < 4 * stride; k++) {
      int byte = (int)((w[(size_t)i * stride + k / 4] >> (8 * (k % 4))) & 255u);
      ok = ok && byte == (k < d->nfeat ? test_dataset_bin(d, k, r0 + i) : 0);
    }
  free(w);
  CHECK(ok, "%s: hb_dataset_pack_rows differs from test_dataset_bin", what);
  CHECK(hb_dataset_pack_rows(d, 0, 1, nw - 1, NULL, 1) == HB_ERR_INPUT, "%s: a stride too small is refused", what);
}

/* Few distinct values: one bin per value, midpoint bounds; NaN -> missing bin. */
static void test_few_values(void) {
  double x[] = {5, 1, 2, NAN, 2, 1, 5, 10, NAN, 1};
  int n = 10;
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  hb_column_t c = dcol(x);
  hb_dataset_t *d = build(n, 1, &c, NULL, &bp, NULL);
  if (!d) return;
  const hb_binmapper_t *m = &d->mappers[0];
  CHECK(m->type == HB_FEAT_NUMERIC && m->num_bin == 5, "num_bin %d", m->num_bin);
  CHECK(m->upper[0] == 1.5 && m->upper[1] == 3.5 && m->upper[2] == 7.5 && isinf(m->upper[3]),
        "upper %g %g %g %g", m->upper[0], m->upper[1], m->upper[2], m->upper[3]);
  int want[] = {2, 0, 1, 4, 1, 0, 2, 3, 4, 0};
  int ok = 1;
  for (int r = 0; r < n; r++) ok = ok && test_dataset_bin(d, 0, r) == want[r];
  CHECK(ok, "few-values bins");
  CHECK(m->default_bin == 0 && m->trivial == 0, "default %d trivial %d", m->default_bin, m->trivial);
  CHECK(test_binmapper_bin(m, 1.5) == 0 && test_binmapper_bin(m, 1.5000001) == 1, "boundary 1.5");
  CHECK(test_binmapper_bin(m, -100) == 0 && test_binmapper_bin(m, 1e300) == 3, "out of range values");
  CHECK(test_binmapper_bin(m, NAN) == 4, "NaN -> missing bin");
  CHECK(d->total_bins == 5 && d->hist_offset[0] == 0 && d->hist_offset[1] == 5, "offsets");
  check_invariants(d, bp.max_bin, "few");
  hb_dataset_free(d);

  /* Adjacent doubles: the bound must satisfy a <= u < b. */
  double a = 1.0, b = nextafter(1.0, 2.0);
  double y[] = {a, b, a, b};
  c = dcol(y);
  d = build(4, 1, &c, NULL, &bp, NULL);
  if (!d) return;
  m = &d->mappers[0];
  CHECK(m->num_bin == 3 && m->upper[0] >= a && m->upper[0] < b, "adjacent doubles bound %.17g", m->upper[0]);
  CHECK(test_dataset_bin(d, 0, 0) == 0 && test_dataset_bin(d, 0, 1) == 1, "adjacent doubles bins");
  hb_dataset_free(d);

  /* Huge values: midpoints must not overflow. */
  double h[] = {-1.5e308, 1.7e308, 1.0e308};
  c = dcol(h);
  d = build(3, 1, &c, NULL, &bp, NULL);
  if (!d) return;
  m = &d->mappers[0];
  CHECK(m->num_bin == 4 && m->upper[0] == -0.25e308 && m->upper[1] == 1.35e308, "huge %g %g",
        m->upper[0], m->upper[1]);
  hb_dataset_free(d);
}

/* Infinities: -Inf -> bin 0, +Inf -> the last value bin, both with few and many values. */
static void test_infinities(void) {
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  double x[] = {INFINITY, -INFINITY, 0, 1, NAN, 1};
  hb_column_t c = dcol(x);
  hb_dataset_t *d = build(6, 1, &c, NULL, &bp, NULL);
  if (!d) return;
  const hb_binmapper_t *m = &d->mappers[0];
  /* values -Inf, 0, 1, +Inf: bounds -Inf (midpoint of -Inf and 0), 0.5, 1 (no double lies
   * strictly between 1 and +Inf's midpoint), +Inf */
  CHECK(m->num_bin == 5, "num_bin %d", m->num_bin);
  CHECK(m->upper[0] == -INFINITY && m->upper[1] == 0.5 && m->upper[2] == 1.0 && isinf(m->upper[3]),
        "inf bounds %g %g %g %g", m->upper[0], m->upper[1], m->upper[2], m->upper[3]);
  int want[] = {3, 0, 1, 2, 4, 2};
  int ok = 1;
  for (int r = 0; r < 6; r++) ok = ok && test_dataset_bin(d, 0, r) == want[r];
  CHECK(ok, "inf bins");
  hb_dataset_free(d);

  int n = 2000;
  double *y = malloc(n * sizeof *y);
  for (int r = 0; r < n; r++) y[r] = 1.0 + r;
  y[7] = -INFINITY;
  y[9] = INFINITY;
  bp.max_bin = 20;
  c = dcol(y);
  d = build(n, 1, &c, NULL, &bp, NULL);
  if (d) {
    m = &d->mappers[0];
    CHECK(m->num_bin - 1 <= 20 && m->num_bin - 1 >= 15, "value bins %d", m->num_bin - 1);
    CHECK(test_dataset_bin(d, 0, 7) == 0, "-Inf bin %d", test_dataset_bin(d, 0, 7));
    CHECK(test_dataset_bin(d, 0, 9) == m->num_bin - 2, "+Inf bin %d", test_dataset_bin(d, 0, 9));
    check_invariants(d, bp.max_bin, "inf-many");
    hb_dataset_free(d);
  }
  free(y);
}

/* Many distinct values with zeros: 0.0 sits alone in its bin (bounds just below zero and zero). */
static void test_zero_bin(void) {
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.max_bin = 32;
  int n = 10000;
  double *x = malloc(n * sizeof *x);
  for (int nz = 0; nz < 2; nz++) {
    int zero_every = nz == 0 ? 3 : 2000;  /* many zeros, then only 5 */
    for (int r = 0; r < n; r++)
      x[r] = (r % zero_every == 0) ? 0.0 : 2.0 * hb_rng_unif(7, 1, 0, r) - 0.8;
    hb_column_t c = dcol(x);
    hb_dataset_t *d = build(n, 1, &c, NULL, &bp, NULL);
    if (!d) continue;
    const hb_binmapper_t *m = &d->mappers[0];
    int zb = m->default_bin;
    CHECK(zb > 0 && m->upper[zb] == 0.0 && m->upper[zb - 1] < 0.0 && m->upper[zb - 1] > -1e-300,
          "zero bin %d bounds %g %g", zb, zb > 0 ? m->upper[zb - 1] : 0, m->upper[zb]);
    int ok = 1;
    for (int r = 0; r < n; r++) ok = ok && ((test_dataset_bin(d, 0, r) == zb) == (x[r] == 0.0));
    CHECK(ok, "only zeros in the zero bin (zero_every %d)", zero_every);
    CHECK(test_binmapper_bin(m, -0.0) == zb && test_binmapper_bin(m, -1e-300) == zb - 1 &&
          test_binmapper_bin(m, 1e-300) == zb + 1, "values around zero");
    CHECK(m->num_bin - 1 <= 32 && m->num_bin - 1 >= 24, "value bins %d", m->num_bin - 1);
    check_invariants(d, bp.max_bin, "zero");
    hb_dataset_free(d);
  }
  /* Only zeros and positives, max_bin 2: the zero bin then everything else. */
  for (int r = 0; r < n; r++) x[r] = (r % 2) ? 0.0 : 1.0 + r;
  bp.max_bin = 2;
  hb_column_t c = dcol(x);
  hb_dataset_t *d = build(n, 1, &c, NULL, &bp, NULL);
  if (d) {
    const hb_binmapper_t *m = &d->mappers[0];
    CHECK(m->num_bin == 3 && m->upper[0] == 0.0, "max_bin 2 with zeros: %d %g", m->num_bin, m->upper[0]);
    hb_dataset_free(d);
  }
  free(x);
}

/* Equal-frequency bins on 100000 uniform values with max_bin 16: about 6250 rows each. */
static void test_equal_frequency(void) {
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.max_bin = 16;
  int n = 100000;
  double *x = malloc(n * sizeof *x);
  for (int r = 0; r < n; r++) x[r] = 0.5 + hb_rng_unif(3, 2, 0, r);
  hb_column_t c = dcol(x);
  hb_dataset_t *d = build(n, 1, &c, NULL, &bp, NULL);
  if (d) {
    const hb_binmapper_t *m = &d->mappers[0];
    CHECK(m->num_bin == 17, "num_bin %d", m->num_bin);
    long long cnt[17] = {0};
    for (int r = 0; r < n; r++) cnt[test_dataset_bin(d, 0, r)]++;
    int ok = 1;
    for (int b = 0; b < 16; b++) ok = ok && cnt[b] >= 0.9 * 6250 && cnt[b] <= 1.1 * 6250;
    CHECK(ok, "bins balanced: first %lld last %lld", cnt[0], cnt[15]);
    CHECK(cnt[16] == 0, "no missing rows");
    /* Bounds sit between the sorted values at the cut points. */
    CHECK(fabs(m->upper[7] - 1.0) < 0.01, "median bound %g", m->upper[7]);
    check_invariants(d, bp.max_bin, "eqfreq");
    hb_dataset_free(d);
  }
  /* A heavy value gets a bin of its own. */
  for (int r = 0; r < n; r++) x[r] = (r % 4 == 0) ? 0.75 : 0.5 + hb_rng_unif(3, 2, 0, r);
  d = build(n, 1, &c, NULL, &bp, NULL);
  if (d) {
    const hb_binmapper_t *m = &d->mappers[0];
    int b = test_binmapper_bin(m, 0.75);
    long long in_b = 0;
    for (int r = 0; r < n; r++) in_b += test_dataset_bin(d, 0, r) == b;
    CHECK(in_b == n / 4, "heavy value alone in its bin: %lld rows", in_b);
    check_invariants(d, bp.max_bin, "heavy");
    hb_dataset_free(d);
  }
  /* min_data_in_bin caps the number of bins: 40 distinct values x 1 row, max_bin 20, 3 per bin. */
  double y[40];
  for (int r = 0; r < 40; r++) y[r] = r + 1;
  bp.max_bin = 20;
  bp.min_data_in_bin = 3;
  c = dcol(y);
  d = build(40, 1, &c, NULL, &bp, NULL);
  if (d) {
    CHECK(d->mappers[0].num_bin - 1 <= 13, "min_data_in_bin: %d bins", d->mappers[0].num_bin - 1);
    hb_dataset_free(d);
  }
  free(x);
}

/* Build a CSC from a dense column-major matrix (keeping explicit zeros where keep_zero says). */
typedef struct { int *p, *i; double *x; hb_csc_t csc; } csc_buf_t;
static void to_csc(const double *dense, int nrow, int ncol, csc_buf_t *o) {
  o->p = malloc((ncol + 1) * sizeof(int));
  o->i = malloc((size_t)nrow * ncol * sizeof(int));
  o->x = malloc((size_t)nrow * ncol * sizeof(double));
  int k = 0;
  o->p[0] = 0;
  for (int j = 0; j < ncol; j++) {
    for (int r = 0; r < nrow; r++) {
      double v = dense[(size_t)j * nrow + r];
      if (v != 0.0 || (r % 97 == 0)) {  /* a few explicit zeros */
        o->i[k] = r;
        o->x[k] = v;
        k++;
      }
    }
    o->p[j + 1] = k;
  }
  o->csc.p = o->p;
  o->csc.i = o->i;
  o->csc.x = o->x;
}
static void free_csc(csc_buf_t *o) { free(o->p); free(o->i); free(o->x); }

/* Dense and CSC input of the same data: identical mappers and bins (with and without sampling);
 * sparse storage where zeros dominate; test_dataset_bin agrees with binning raw values. */
static void test_dense_vs_csc(void) {
  int nrow = 6000, ncol = 5;
  double *x = malloc((size_t)nrow * ncol * sizeof *x);
  double zero_share[] = {0.95, 0.5, 0.0, 0.85, 1.0};
  for (int j = 0; j < ncol; j++)
    for (int r = 0; r < nrow; r++) {
      double u = hb_rng_unif(11, 3, j, r), v = hb_rng_unif(11, 4, j, r);
      double val = u < zero_share[j] ? 0.0 : (v - 0.3) * 100;
      if (j == 1 && r % 50 == 0) val = NAN;
      if (j == 3 && r % 7 == 0) val = floor(v * 5);  /* few values mixed in */
      if (j == 2 && r == 5) val = -INFINITY;
      x[(size_t)j * nrow + r] = val;
    }
  csc_buf_t cb;
  to_csc(x, nrow, ncol, &cb);
  hb_column_t cols[5];
  for (int j = 0; j < ncol; j++) cols[j] = dcol(x + (size_t)j * nrow);
  for (int s = 0; s < 2; s++) {
    hb_binparams_t bp;
    hb_binparams_default(&bp);
    bp.max_bin = 63;
    if (s == 1) bp.bin_sample_rows = 1500;  /* sampled boundaries */
    hb_dataset_t *dd = build(nrow, ncol, cols, NULL, &bp, NULL);
    hb_dataset_t *ds = build(nrow, ncol, NULL, &cb.csc, &bp, NULL);
    if (dd && ds) {
      CHECK(datasets_equal(dd, ds), "dense and CSC differ (sample %d)", s);
      CHECK(dd->store[0].sparse && ds->store[0].sparse, "95%% zeros -> sparse");
      CHECK(!dd->store[1].sparse && !ds->store[1].sparse, "50%% zeros -> dense");
      CHECK(!dd->store[2].sparse, "no zeros -> dense");
      CHECK(dd->store[4].sparse && dd->store[4].nnz == 0 && dd->mappers[4].trivial == 1,
            "all-zero column: sparse, empty, trivial");
      for (int j = 0; j < 4; j++) CHECK(dd->mappers[j].trivial == 0, "column %d not trivial", j);
      int ok = 1;
      for (int j = 0; j < ncol; j++)
        for (int r = 0; r < nrow; r++) {
          int want = test_binmapper_bin(&dd->mappers[j], x[(size_t)j * nrow + r]);
          ok = ok && test_dataset_bin(dd, j, r) == want && test_dataset_bin(ds, j, r) == want;
        }
      CHECK(ok, "test_dataset_bin agrees with binning raw values (sample %d)", s);
      CHECK(test_dataset_bin(dd, 1, 0) == dd->mappers[1].num_bin - 1, "NaN in CSC -> missing bin");
      CHECK(test_dataset_bin(dd, 2, 5) == 0, "-Inf -> bin 0");
      check_invariants(dd, bp.max_bin, "dense");
      check_invariants(ds, bp.max_bin, "csc");
    }
    hb_dataset_free(dd);
    hb_dataset_free(ds);
  }
  /* Sampling depends on the seed: another seed, other bounds (with many distinct values). */
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.max_bin = 63;
  bp.bin_sample_rows = 1500;
  hb_dataset_t *d1 = build(nrow, ncol, cols, NULL, &bp, NULL);
  bp.seed = 99;
  hb_dataset_t *d2 = build(nrow, ncol, cols, NULL, &bp, NULL);
  if (d1 && d2) CHECK(!mappers_equal(&d1->mappers[2], &d2->mappers[2]), "seed changes the sample");
  hb_dataset_free(d1);
  hb_dataset_free(d2);
  free_csc(&cb);
  free(x);
}

/* INT columns bin exactly like the same values as doubles; HB_NA_INT is missing. */
static void test_int_columns(void) {
  int n = 3000;
  int *xi = malloc(n * sizeof *xi);
  double *xd = malloc(n * sizeof *xd);
  for (int r = 0; r < n; r++) {
    xi[r] = (int)(hb_rng_unif(5, 1, 0, r) * 1000) - 300;
    if (r % 10 == 0) xi[r] = HB_NA_INT;
    xd[r] = xi[r] == HB_NA_INT ? NAN : xi[r];
  }
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.max_bin = 100;
  hb_column_t cols[2] = {icol(xi), dcol(xd)};
  hb_dataset_t *d = build(n, 2, cols, NULL, &bp, NULL);
  if (d) {
    CHECK(mappers_equal(&d->mappers[0], &d->mappers[1]), "int and double mappers differ");
    int ok = 1;
    for (int r = 0; r < n; r++) ok = ok && test_dataset_bin(d, 0, r) == test_dataset_bin(d, 1, r);
    CHECK(ok, "int and double bins differ");
    CHECK(test_dataset_bin(d, 0, 0) == d->mappers[0].num_bin - 1, "NA int -> missing bin");
    CHECK(d->hist_offset[1] == d->mappers[0].num_bin, "hist_offset[1]");
    check_invariants(d, bp.max_bin, "int");
    hb_dataset_free(d);
  }
  free(xi);
  free(xd);
}

/* Factors: bins by count (ties: lower code), rare levels and odd codes -> missing bin. */
static void test_factor(void) {
  /* counts: level 3 x6, level 1 x3, level 5 x3, level 2 x1, level 4 x0; plus NA, 0, 7 */
  int x[] = {3, 1, 3, 5, 3, 2, 1, 5, 3, HB_NA_INT, 3, 0, 5, 1, 7, 3};
  int n = 16;
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.min_data_per_level = 2;
  hb_column_t c = fcol(x, 5);
  hb_dataset_t *d = build(n, 1, &c, NULL, &bp, NULL);
  if (d) {
    const hb_binmapper_t *m = &d->mappers[0];
    CHECK(m->type == HB_FEAT_CATEGORICAL && m->num_bin == 4 && m->nlevels == 5, "num_bin %d", m->num_bin);
    int lb[] = {1, 3, 0, 3, 2}, bl[] = {3, 1, 5};
    int ok = 1;
    for (int i = 0; i < 5; i++) ok = ok && m->level_bin[i] == lb[i];
    for (int i = 0; i < 3; i++) ok = ok && m->bin_level[i] == bl[i];
    CHECK(ok, "level_bin/bin_level");
    CHECK(m->default_bin == 0 && m->trivial == 0, "factor default_bin");
    int want[] = {0, 1, 0, 2, 0, 3, 1, 2, 0, 3, 0, 3, 2, 1, 3, 0};
    ok = 1;
    for (int r = 0; r < n; r++) ok = ok && test_dataset_bin(d, 0, r) == want[r];
    CHECK(ok, "factor bins");
    CHECK(test_binmapper_bin(m, 3.0) == 0 && test_binmapper_bin(m, 2.5) == 3 && test_binmapper_bin(m, NAN) == 3 &&
          test_binmapper_bin(m, 0.0) == 3 && test_binmapper_bin(m, 6.0) == 3 && test_binmapper_bin(m, 4.0) == 3,
          "test_binmapper_bin on codes");
    check_invariants(d, 255, "factor");
    hb_dataset_free(d);
  }
  /* min_data_per_level 1 keeps level 2; max_bin 2 keeps only the two most frequent levels. */
  bp.min_data_per_level = 1;
  d = build(n, 1, &c, NULL, &bp, NULL);
  if (d) {
    CHECK(d->mappers[0].num_bin == 5 && d->mappers[0].bin_level[3] == 2 && d->mappers[0].level_bin[3] == 4,
          "level 2 kept, level 4 (count 0) missing");
    hb_dataset_free(d);
  }
  bp.max_bin = 2;
  d = build(n, 1, &c, NULL, &bp, NULL);
  if (d) {
    const hb_binmapper_t *m = &d->mappers[0];
    CHECK(m->num_bin == 3 && m->bin_level[0] == 3 && m->bin_level[1] == 1 && m->level_bin[4] == 2,
          "max_bin 2 factor");
    hb_dataset_free(d);
  }
  /* A single-level factor is trivial; a factor with NA is not. */
  int y1[] = {2, 2, 2, 2}, y2[] = {2, HB_NA_INT, 2, 2};
  hb_binparams_default(&bp);
  hb_column_t cc[2] = {fcol(y1, 3), fcol(y2, 3)};
  d = build(4, 2, cc, NULL, &bp, NULL);
  if (d) {
    CHECK(d->mappers[0].trivial == 1 && d->mappers[1].trivial == 0, "factor trivial flags");
    CHECK(d->store[0].sparse && d->store[0].nnz == 0, "constant factor stored sparse");
    hb_dataset_free(d);
  }
}

/* Trivial numeric features: constant, constant + NaN, all NaN. */
/* The level a row's bins name across the features of column c: -1 when
 * every one of them holds its missing bin, -2 when more than one names a
 * level (never allowed). */
static int row_level(const hb_dataset_t *d, int c, int r) {
  int lev = -1;
  for (int f = d->col_first[c]; f < d->col_first[c + 1]; f++) {
    const hb_binmapper_t *m = &d->mappers[f];
    int b = test_dataset_bin(d, f, r);
    if (b < m->num_bin - 1) lev = lev == -1 ? m->bin_level[b] : -2;
  }
  return lev;
}

/* A factor with more levels than max_bin spans several features: its kept
 * levels, most frequent first (ties: lower code), max_bin to a feature; the
 * further features default to (and store sparse around) their missing bin;
 * every row's level sits in exactly one of them. Checked against counts and
 * an ordering computed here, for training data, data binned with it as the
 * reference, and the cap of HB_MAX_COLUMN_FEATURES features. */
static void test_wide_factor(void) {
  enum { N = 6000, NLEV = 700, USED = 650 };
  int *x = malloc(sizeof(int) * N), *cnt = calloc(NLEV + 1, sizeof(int)), *order = malloc(sizeof(int) * NLEV);
  double *num = malloc(sizeof(double) * N);
  if (!x || !cnt || !order || !num) { CHECK(0, "out of memory"); free(x); free(cnt); free(order); free(num); return; }
  /* levels 1..650 in a scrambled order, counts around 9 (many ties); 651..700 unused; every 97th row NA */
  for (int r = 0; r < N; r++) {
    x[r] = r % 97 == 0 ? HB_NA_INT : 1 + (int)((((unsigned)r * 2654435761u) >> 9) % USED);
    num[r] = r % 13;
    if (x[r] != HB_NA_INT) cnt[x[r]]++;
  }
  int nkept = 0;
  for (int c = 1; c <= NLEV; c++)
    if (cnt[c] > 0) order[nkept++] = c;
  for (int i = 1; i < nkept; i++)  /* insertion sort: count down, code up */
    for (int j = i; j > 0 && (cnt[order[j]] > cnt[order[j - 1]] ||
                              (cnt[order[j]] == cnt[order[j - 1]] && order[j] < order[j - 1])); j--) {
      int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
    }
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  hb_column_t cols[2] = {dcol(num), fcol(x, NLEV)};
  hb_dataset_t *d = build(N, 2, cols, NULL, &bp, NULL);
  if (d) {
    int want_nf = (nkept + 254) / 255;
    CHECK(d->ncol == 2 && d->nfeat == 1 + want_nf && d->col_first[1] == 1 && d->feat_col[d->nfeat - 1] == 1,
          "wide factor: %d levels over %d features (want %d)", nkept, d->nfeat - 1, want_nf);
    int ok = 1, k = 0;
    for (int f = 1; f < d->nfeat; f++) {
      const hb_binmapper_t *m = &d->mappers[f];
      ok = ok && m->type == HB_FEAT_CATEGORICAL && m->nlevels == NLEV && m->trivial == 0 &&
           m->default_bin == (f == 1 ? 0 : m->num_bin - 1);
      for (int b = 0; b < m->num_bin - 1; b++, k++) ok = ok && m->bin_level[b] == order[k];
      for (int c = 1; c <= NLEV; c++) {  /* level_bin inverts bin_level; other levels -> missing bin */
        int b = m->level_bin[c - 1];
        ok = ok && (b == m->num_bin - 1 || m->bin_level[b] == c);
      }
    }
    CHECK(ok && k == nkept, "wide factor: bins in frequency order (%d of %d levels)", k, nkept);
    ok = 1;
    for (int r = 0; r < N; r++) ok = ok && row_level(d, 1, r) == (x[r] == HB_NA_INT ? -1 : x[r]);
    CHECK(ok, "wide factor: every row's level in exactly one feature");
    check_invariants(d, 255, "wide factor");
    /* binned with d as reference: same features, unseen levels and NA nowhere */
    int vx[5] = {order[0], order[300], order[nkept - 1], NLEV, HB_NA_INT};
    double vn[5] = {0, 1, 2, 3, 4};
    hb_column_t vc[2] = {dcol(vn), fcol(vx, NLEV)};
    hb_dataset_t *v = build(5, 2, vc, NULL, &bp, d);
    if (v) {
      CHECK(v->nfeat == d->nfeat && v->ncol == 2 && v->col_first[2] == d->nfeat, "wide factor reference: features");
      int want[5] = {order[0], order[300], order[nkept - 1], -1, -1};
      ok = 1;
      for (int r = 0; r < 5; r++) ok = ok && row_level(v, 1, r) == want[r];
      CHECK(ok, "wide factor reference: levels routed as in training (%d kept)", nkept);
      hb_dataset_free(v);
    }
    hb_dataset_free(d);
  }
  /* The cap: at max_bin 4, 650 levels would need 163 features; the 64 x 4 most frequent keep bins. */
  bp.max_bin = 4;
  d = build(N, 2, cols, NULL, &bp, NULL);
  if (d) {
    CHECK(d->nfeat == 1 + HB_MAX_COLUMN_FEATURES, "wide factor cap: %d features", d->nfeat - 1);
    int ok = 1;
    for (int r = 0; r < N; r++) {
      int rank = -1;
      for (int k = 0; k < nkept; k++) if (order[k] == x[r]) rank = k;
      int want = rank < 0 || rank >= 4 * HB_MAX_COLUMN_FEATURES ? -1 : x[r];
      ok = ok && row_level(d, 1, r) == want;
    }
    CHECK(ok, "wide factor cap: the rarer levels share the missing bins");
    check_invariants(d, 4, "wide factor cap");
    hb_dataset_free(d);
  }
  free(x); free(cnt); free(order); free(num);
}

static void test_trivial(void) {
  double a[] = {4, 4, 4, 4, 4}, b[] = {4, 4, NAN, 4, 4}, c[] = {NAN, NAN, NAN, NAN, NAN};
  hb_column_t cols[3] = {dcol(a), dcol(b), dcol(c)};
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  hb_dataset_t *d = build(5, 3, cols, NULL, &bp, NULL);
  if (!d) return;
  CHECK(d->mappers[0].trivial == 1 && d->mappers[1].trivial == 0 && d->mappers[2].trivial == 1,
        "trivial %d %d %d", d->mappers[0].trivial, d->mappers[1].trivial, d->mappers[2].trivial);
  CHECK(d->mappers[0].num_bin == 2 && d->mappers[2].num_bin == 2 && test_dataset_bin(d, 2, 0) == 1,
        "all-NaN: one value bin plus missing");
  CHECK(d->total_bins == 6 && d->hist_offset[2] == 4, "offsets include trivial features");
  hb_dataset_free(d);
}

/* Reference binning: new data use the training mappers, values never seen included. */
static void test_reference(void) {
  double tx[] = {1, 2, 3, 4, 5, 6, NAN, 2};
  int tf[] = {1, 2, 2, 3, 3, 3, 1, 2};
  double wt[8] = {1, 1, 1, 1, 2, 2, 2, 2}, lab[8] = {0, 1, 0, 1, 0, 1, 0, 1};
  hb_column_t tc[2] = {dcol(tx), fcol(tf, 4)};
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  hb_input_t tin = {8, 2, tc, NULL, lab, wt, NULL, 0};
  hb_dataset_t *train = NULL;
  int st = hb_dataset_create(&tin, &bp, NULL, &train);
  CHECK(st == HB_OK, "train create %s", hb_error_message());
  if (st != HB_OK) return;
  CHECK(train->label && train->label != lab && train->label[3] == 1 && train->weight[5] == 2,
        "labels and weights copied");
  /* levels 2 and 3 x3 (tie: 2 first) -> bins 0, 1; level 1 x2 -> bin 2; level 4 unseen -> missing bin 3 */
  CHECK(train->mappers[1].level_bin[0] == 2 && train->mappers[1].level_bin[3] == 3, "train factor map");

  double vx[] = {0, 100, 2.5, NAN, 3.5, -5};
  int vf[] = {4, 1, HB_NA_INT, 3, 9, 2};
  hb_column_t vc[2] = {dcol(vx), fcol(vf, 4)};
  hb_binparams_t bp2 = bp;
  bp2.max_bin = 7;  /* ignored with a reference */
  hb_dataset_t *valid = build(6, 2, vc, NULL, &bp2, train);
  if (valid) {
    CHECK(mappers_equal(&valid->mappers[0], &train->mappers[0]) &&
          mappers_equal(&valid->mappers[1], &train->mappers[1]), "reference mappers copied");
    CHECK(valid->mappers[0].upper != train->mappers[0].upper, "deep copy");
    int w0[] = {0, 5, 1, 6, 2, 0}, w1[] = {3, 2, 3, 1, 3, 0};
    int ok = 1;
    for (int r = 0; r < 6; r++) ok = ok && test_dataset_bin(valid, 0, r) == w0[r] && test_dataset_bin(valid, 1, r) == w1[r];
    CHECK(ok, "reference bins");
    CHECK(valid->label == NULL && valid->weight == NULL, "no labels");
    CHECK(valid->total_bins == train->total_bins, "same total_bins");
    hb_dataset_free(valid);
  }
  /* Constant validation data keep the training mapper's trivial flag (0). */
  double cx[] = {1, 1, 1};
  int cf[] = {1, 1, 1};
  hb_column_t cc[2] = {dcol(cx), fcol(cf, 4)};
  valid = build(3, 2, cc, NULL, &bp, train);
  if (valid) {
    CHECK(valid->mappers[0].trivial == 0 && valid->mappers[1].trivial == 0, "trivial from reference");
    hb_dataset_free(valid);
  }

  /* A CSC reference binning of numeric-only training data. */
  double nx[] = {0, 0, 1.5, 0, -2, 0, 0, 0, 0, 0, 0, 3};
  hb_column_t nc = dcol(nx);
  hb_dataset_t *tr2 = build(12, 1, &nc, NULL, &bp, NULL);
  int p[] = {0, 3}, ii[] = {1, 4, 7};
  double xx[] = {1.5, 2.2, NAN};
  hb_csc_t csc = {p, ii, xx};
  hb_dataset_t *v2 = tr2 ? build(20, 1, NULL, &csc, &bp, tr2) : NULL;
  if (v2) {
    const hb_binmapper_t *m = &tr2->mappers[0];
    int ok = 1;
    for (int r = 0; r < 20; r++) {
      double v = r == 1 ? 1.5 : r == 4 ? 2.2 : r == 7 ? NAN : 0.0;
      ok = ok && test_dataset_bin(v2, 0, r) == test_binmapper_bin(m, v);
    }
    CHECK(ok, "CSC against a reference");
    CHECK(v2->store[0].sparse && v2->store[0].nnz == 3, "CSC reference sparse (17 of 20 rows at zero)");
  }
  hb_dataset_free(v2);

  /* Mismatches with the reference. */
  struct { int ncol; hb_column_t c[2]; const hb_csc_t *csc; const char *what; } bad[4];
  bad[0].ncol = 1; bad[0].c[0] = dcol(vx); bad[0].csc = NULL; bad[0].what = "ncol";
  bad[1].ncol = 2; bad[1].c[0] = fcol(vf, 4); bad[1].c[1] = fcol(vf, 4); bad[1].csc = NULL; bad[1].what = "factor vs numeric";
  bad[2].ncol = 2; bad[2].c[0] = dcol(vx); bad[2].c[1] = icol(vf); bad[2].csc = NULL; bad[2].what = "int vs factor";
  bad[3].ncol = 2; bad[3].c[0] = dcol(vx); bad[3].c[1] = fcol(vf, 5); bad[3].csc = NULL; bad[3].what = "nlevels";
  const char *needle[] = {"reference", "column 1", "column 2", "column 2"};
  for (int k = 0; k < 4; k++) {
    hb_input_t in = {6, bad[k].ncol, bad[k].c, bad[k].csc, NULL, NULL, NULL, 0};
    hb_dataset_t *o = (hb_dataset_t *)1;
    hb_error_clear();
    int s2 = hb_dataset_create(&in, &bp, train, &o);
    CHECK(s2 == HB_ERR_INPUT && o == NULL && strstr(hb_error_message(), needle[k]),
          "reference mismatch %s: %d '%s'", bad[k].what, s2, hb_error_message());
  }
  int p2[] = {0, 0, 0};
  hb_csc_t csc2 = {p2, NULL, NULL};
  hb_input_t in = {6, 2, NULL, &csc2, NULL, NULL, NULL, 0};
  hb_dataset_t *o = NULL;
  hb_error_clear();
  st = hb_dataset_create(&in, &bp, train, &o);
  CHECK(st == HB_ERR_INPUT && o == NULL && strstr(hb_error_message(), "column 2"), "CSC vs factor reference: '%s'",
        hb_error_message());
  hb_dataset_free(tr2);
  hb_dataset_free(train);
}

/* One thread and two threads build identical datasets. */
static void test_threads(void) {
  int nrow = 20000, ncol = 8;
  double *x = malloc((size_t)nrow * ncol * sizeof *x);
  int *fx = malloc((size_t)nrow * sizeof *fx);
  hb_column_t cols[9];
  for (int j = 0; j < ncol; j++) {
    for (int r = 0; r < nrow; r++) {
      double u = hb_rng_unif(21, j, 0, r);
      x[(size_t)j * nrow + r] = (j % 3 == 0 && u < 0.6) ? 0.0 : (j % 2 ? floor(u * 40) : u * u * 50 - 3);
      if (j == 5 && r % 13 == 0) x[(size_t)j * nrow + r] = NAN;
    }
    cols[j] = dcol(x + (size_t)j * nrow);
  }
  for (int r = 0; r < nrow; r++) fx[r] = 1 + (int)(hb_rng_unif(21, 99, 0, r) * hb_rng_unif(21, 98, 0, r) * 300);
  cols[8] = fcol(fx, 300);
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.bin_sample_rows = 5000;
  bp.max_bin = 200;
  bp.min_data_per_level = 5;
  bp.nthreads = 1;
  hb_dataset_t *d1 = build(nrow, ncol + 1, cols, NULL, &bp, NULL);
  bp.nthreads = 2;
  hb_dataset_t *d2 = build(nrow, ncol + 1, cols, NULL, &bp, NULL);
  if (d1 && d2) {
    CHECK(datasets_equal(d1, d2), "1 vs 2 threads differ");
    check_invariants(d2, bp.max_bin, "threads");
    CHECK(d2->mappers[8].num_bin - 1 <= 200, "factor capped");
  }
  hb_dataset_free(d1);
  hb_dataset_free(d2);
  free(x);
  free(fx);
}

/* The boundary sample over many chunks of rows, drawn on several threads,
 * is its definition: the rows whose draw for (seed, HB_RNG_BINNING, 0, row)
 * falls below bin_sample_rows / nrow. Binning just those rows, all of them
 * sampled, gives the same boundaries; and one thread the same as three. */
static void test_sample_chunks(void) {
  const int nrow = 300000;  /* several of dataset.c's 65536-row chunks */
  double *x = malloc((size_t)nrow * sizeof *x), *xs = malloc((size_t)nrow * sizeof *xs);
  for (int r = 0; r < nrow; r++) x[r] = floor(hb_rng_unif(31, 7, 0, r) * 5000) / 7;
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.bin_sample_rows = 4000;
  bp.seed = 12;
  int ns = 0;
  for (int r = 0; r < nrow; r++)
    if (hb_rng_unif(bp.seed, HB_RNG_BINNING, 0, (uint64_t)r) < (double)bp.bin_sample_rows / nrow) xs[ns++] = x[r];
  hb_column_t col = dcol(x), cols = dcol(xs);
  bp.nthreads = 3;
  hb_dataset_t *d3 = build(nrow, 1, &col, NULL, &bp, NULL);
  bp.nthreads = 1;
  hb_dataset_t *d1 = build(nrow, 1, &col, NULL, &bp, NULL);
  hb_binparams_t all = bp;
  all.bin_sample_rows = 0;
  hb_dataset_t *ds = build(ns, 1, &cols, NULL, &all, NULL);
  if (d1 && d3 && ds) {
    CHECK(ns > 3500 && ns < 4500, "%d rows drawn for a sample of 4000", ns);
    CHECK(mappers_equal(&d3->mappers[0], &ds->mappers[0]), "the sample is not the rows its draws pick");
    CHECK(datasets_equal(d1, d3), "1 vs 3 threads differ");
  }
  hb_dataset_free(d1);
  hb_dataset_free(d3);
  hb_dataset_free(ds);
  free(x);
  free(xs);
}

/* Every invalid input: HB_ERR_INPUT, a message, *out NULL, nothing leaked. */
static void test_errors(void) {
  double x[] = {1, 2, 3};
  int xi[] = {1, 2, 3};
  hb_column_t good = dcol(x);
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  int p_ok[] = {0, 2}, i_ok[] = {0, 2};
  double x_ok[] = {1, 2};
  hb_csc_t csc_ok = {p_ok, i_ok, x_ok};

  struct { hb_input_t in; hb_binparams_t bp; const char *needle; } cases[32];
  int nc = 0;
#define ADD(NROW, NCOL, COLS, CSC, W, BP, NEEDLE)                      \
  do {                                                                 \
    hb_input_t in_ = {NROW, NCOL, COLS, CSC, NULL, W, NULL, 0};                 \
    cases[nc].in = in_; cases[nc].bp = BP; cases[nc].needle = NEEDLE;  \
    nc++;                                                              \
  } while (0)
  ADD(0, 1, &good, NULL, NULL, bp, "nrow");
  ADD(3, 0, &good, NULL, NULL, bp, "ncol");
  ADD(3, 1, &good, &csc_ok, NULL, bp, "exactly one");
  ADD(3, 1, NULL, NULL, NULL, bp, "exactly one");
  hb_column_t nulld = {HB_COL_DOUBLE, NULL, NULL, 0};
  ADD(3, 1, &nulld, NULL, NULL, bp, "column 1");
  hb_column_t nulli = {HB_COL_INT, NULL, NULL, 0};
  hb_column_t two_null[2] = {good, nulli};
  ADD(3, 2, two_null, NULL, NULL, bp, "column 2");
  hb_column_t badtype = {7, NULL, NULL, 0};
  ADD(3, 1, &badtype, NULL, NULL, bp, "type");
  hb_column_t f0 = fcol(xi, 0), fbig = fcol(xi, (1 << 30) + 1);
  ADD(3, 1, &f0, NULL, NULL, bp, "levels");
  ADD(3, 1, &fbig, NULL, NULL, bp, "levels");
  hb_binparams_t b1 = bp, b256 = bp;
  b1.max_bin = 1;
  b256.max_bin = 256;
  ADD(3, 1, &good, NULL, NULL, b1, "max_bin");
  ADD(3, 1, &good, NULL, NULL, b256, "max_bin");
  double wneg[] = {1, -1, 1}, wnan[] = {1, 1, NAN};
  ADD(3, 1, &good, NULL, wneg, bp, "weight");
  ADD(3, 1, &good, NULL, wnan, bp, "weight");
  hb_csc_t csc_nop = {NULL, i_ok, x_ok};
  ADD(3, 1, NULL, &csc_nop, NULL, bp, "pointers");
  int p_dec[] = {0, 2, 1}, p_start[] = {1, 2};
  hb_csc_t csc_dec = {p_dec, i_ok, x_ok}, csc_start = {p_start, i_ok, x_ok};
  ADD(3, 2, NULL, &csc_dec, NULL, bp, "decrease");
  ADD(3, 1, NULL, &csc_start, NULL, bp, "start");
  int i_range[] = {0, 3}, i_neg[] = {-1, 1}, i_dup[] = {1, 1}, i_dec[] = {2, 0};
  hb_csc_t csc_range = {p_ok, i_range, x_ok}, csc_neg = {p_ok, i_neg, x_ok},
                  csc_dup = {p_ok, i_dup, x_ok}, csc_idec = {p_ok, i_dec, x_ok},
                  csc_noi = {p_ok, NULL, x_ok};
  ADD(3, 1, NULL, &csc_range, NULL, bp, "out of range");
  ADD(3, 1, NULL, &csc_neg, NULL, bp, "out of range");
  ADD(3, 1, NULL, &csc_dup, NULL, bp, "increasing");
  ADD(3, 1, NULL, &csc_idec, NULL, bp, "increasing");
  ADD(3, 1, NULL, &csc_noi, NULL, bp, "row indices");
#undef ADD
  for (int k = 0; k < nc; k++) {
    hb_dataset_t *o = (hb_dataset_t *)&good;  /* must be reset to NULL */
    hb_error_clear();
    int st = hb_dataset_create(&cases[k].in, &cases[k].bp, NULL, &o);
    CHECK(st == HB_ERR_INPUT && o == NULL && hb_error_message()[0] != '\0' &&
          strstr(hb_error_message(), cases[k].needle) != NULL,
          "error case %d (%s): status %d, message '%s'", k, cases[k].needle, st, hb_error_message());
  }
  hb_error_clear();
  CHECK(hb_dataset_create(NULL, &bp, NULL, NULL) == HB_ERR_INPUT, "NULL out");
  hb_dataset_t *o = NULL;
  CHECK(hb_dataset_create(NULL, &bp, NULL, &o) == HB_ERR_INPUT && o == NULL, "NULL input");
  /* The same valid inputs succeed (so the failures above are about what they say). */
  hb_dataset_t *d = build(3, 1, NULL, &csc_ok, &bp, NULL);
  hb_dataset_free(d);
  hb_dataset_free(NULL);
}

/* hb_binmapper_copy / clear round trip. */
static void test_copy(void) {
  int x[] = {1, 2, 2, 3, 3, 3};
  hb_column_t c = fcol(x, 3);
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  hb_dataset_t *d = build(6, 1, &c, NULL, &bp, NULL);
  if (!d) return;
  hb_binmapper_t m;
  CHECK(hb_binmapper_copy(&d->mappers[0], &m) == HB_OK && mappers_equal(&m, &d->mappers[0]) &&
        m.level_bin != d->mappers[0].level_bin, "copy");
  hb_binmapper_clear(&m);
  CHECK(m.level_bin == NULL && m.bin_level == NULL && m.num_bin == 0, "clear");
  hb_binmapper_clear(&m);
  hb_dataset_free(d);
}

int main(void) {
  test_few_values();
  test_infinities();
  test_zero_bin();
  test_equal_frequency();
  test_dense_vs_csc();
  test_int_columns();
  test_factor();
  test_wide_factor();
  test_trivial();
  test_reference();
  test_threads();
  test_sample_chunks();
  test_errors();
  test_copy();
  printf("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail != 0;
}
