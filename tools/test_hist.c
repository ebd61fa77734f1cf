/* test_hist.c: engine tests of the CPU learner's fast paths on data large
 * enough to take them: the row block (row-major bins) against the column
 * store, row-wise histograms against column-wise ones (bit for bit: large
 * leaves as the sum of their two halves' column-wise histograms) and
 * naive sums, for all rows, leaf subsets and sampled features, on 1, 2 and
 * 3 threads; the chunked parallel partition (a wide factor's sparse parts
 * partitioned by its row codes) and the fused subtract-and-scan through
 * whole trees, whose leaves must hold exactly the rows their bins lead to
 * and which must not depend on the thread count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dataset.h"
#include "error.h"
#include "grow.h"
#include "hist.h"
#include "hist_quant.h"
#include "quantize.h"
#include "rng.h"
#include "threads.h"
#include "tree.h"
#include "test_common.h"


/* Enough rows for parallel histograms and partitions (two 16384-row chunks),
 * enough dense features for several 64-column tiles. */
enum { N = 40000, PD = 70, P = PD + 8, WIDE_LEVELS = 700, MID_LEVELS = 300 };

static double *xcol[P];
static int *xfac, *xwide, *xmid;
static double y[N];

/* Dense numeric columns (some with few values, one with NaN), then: two
 * mostly-zero columns (sparse), a factor, a constant column, a NaN-heavy
 * one, a factor of 700 levels (three features at max_bin 255, the last
 * two sparse) whose levels matter, and a column nonzero in 0.5% of the rows
 * (the first and the last among them: stored rows at both ends). */
static void make_data(void) {
  for (int f = 0; f < P; f++) xcol[f] = malloc(sizeof(double) * N);
  xfac = malloc(sizeof(int) * N);
  xwide = malloc(sizeof(int) * N);
  xmid = malloc(sizeof(int) * N);
  for (int i = 0; i < N; i++) {
    for (int f = 0; f < PD; f++) {
      double u = hb_rng_unif(11, 1, (uint64_t)f, (uint64_t)i);
      xcol[f][i] = f % 7 == 3 ? floor(u * 5) : u;
    }
    xcol[5][i] = hb_rng_unif(11, 2, 0, i) < 0.1 ? NAN : xcol[5][i];
    double w = hb_rng_unif(11, 3, 0, i), v = hb_rng_unif(11, 3, 1, i);
    xcol[PD][i] = w < 0.9 ? 0.0 : w;
    xcol[PD + 1][i] = v < 0.97 ? 0.0 : v;
    xfac[i] = (i % 17 == 0) ? HB_NA_INT : 1 + (int)(hb_rng_unif(11, 4, 0, i) * 9);
    xcol[PD + 3][i] = 2.0;
    xcol[PD + 6][i] = i == 0 || i == N - 1 || hb_rng_unif(11, 8, 0, i) < 0.005 ? 1 + hb_rng_unif(11, 8, 1, i) : 0.0;
    xcol[PD + 4][i] = hb_rng_unif(11, 5, 0, i) < 0.5 ? NAN : hb_rng_unif(11, 5, 1, i);
    /* 70% of the rows in 255 levels, 15% in the next 255, 15% in the last
     * 190: the second and third features (by frequency) both sparse; a few NA */
    double z = hb_rng_unif(11, 7, 0, i), zl = hb_rng_unif(11, 7, 1, i);
    xwide[i] = i % 23 == 0 ? HB_NA_INT : z < 0.7 ? 1 + (int)(zl * 255) : z < 0.85 ? 256 + (int)(zl * 255)
                                                                          : 511 + (int)(zl * 190);
    /* 96% of the rows in 255 levels, 4% in the last 45: one sparse part */
    xmid[i] = i % 29 == 0 ? HB_NA_INT : z < 0.96 ? 1 + (int)(zl * 255) : 256 + (int)(zl * 45);
    double wide_effect = xwide[i] == HB_NA_INT ? -1 : xwide[i] > 255 ? (xwide[i] * 7919 % 11) * 0.8 : 0;
    y[i] = wide_effect + sin(6 * xcol[0][i]) + xcol[1][i] * xcol[2][i] + (isnan(xcol[5][i]) ? 1 : xcol[5][i]) +
           3 * xcol[PD][i] + (xfac[i] == HB_NA_INT ? 0 : xfac[i] % 4) * 0.5 +
           0.2 * hb_rng_unif(11, 6, 0, i);
  }
}

static hb_dataset_t *make_dataset(void) {
  hb_column_t cols[P];
  for (int f = 0; f < P; f++) {
    cols[f].type = HB_COL_DOUBLE; cols[f].dbl = xcol[f]; cols[f].i32 = NULL; cols[f].nlevels = 0;
  }
  cols[PD + 2].type = HB_COL_FACTOR; cols[PD + 2].dbl = NULL; cols[PD + 2].i32 = xfac; cols[PD + 2].nlevels = 9;
  cols[PD + 5].type = HB_COL_FACTOR; cols[PD + 5].dbl = NULL; cols[PD + 5].i32 = xwide;
  cols[PD + 5].nlevels = WIDE_LEVELS;
  cols[PD + 7].type = HB_COL_FACTOR; cols[PD + 7].dbl = NULL; cols[PD + 7].i32 = xmid;
  cols[PD + 7].nlevels = MID_LEVELS;
  hb_input_t in = { N, P, cols, NULL, y, NULL, NULL, 0 };
  return bin_input(&in);
}

static void test_rowblock(const hb_dataset_t *d, const hb_rowblock_t *rb) {
  int dense = 0;
  for (int f = 0; f < d->nfeat; f++) dense += !d->store[f].sparse;
  CHECK(rb && rb->ncol == dense && rb->nrow == N, "row block holds every dense feature (%d of %d)",
        rb ? rb->ncol : -1, dense);
  if (!rb) return;
  int bad = 0;
  for (int c = 0; c < rb->ncol; c++) {
    int f = rb->feat[c];
    if (rb->col_of[f] != c || (c > 0 && rb->feat[c - 1] >= f)) bad++;
    for (int r = 0; r < N; r++)
      if (rb->bins[(size_t)r * rb->stride + c] != test_dataset_bin(d, f, r)) bad++;
  }
  for (int f = 0; f < d->nfeat; f++)
    if (d->store[f].sparse && rb->col_of[f] != -1) bad++;
  CHECK(bad == 0, "row block disagrees with the column store in %d places", bad);
  /* the wide factor: its two sparse parts summed from its codes, and row
   * r's code names the part and bin that hold its level (or no part) */
  const int cw = PD + 5, cm = PD + 7, first = d->col_first[cw];
  int wide_ok = rb->nwide == 2 && rb->wide_col[0] == cw && rb->wide_col[1] == cm && rb->wcode && rb->wcode[cw] && d->col_first[cw + 1] == first + 3;
  int nin = 0;
  for (int j = 0; wide_ok && j < 3; j++) {
    wide_ok &= rb->in_wide[first + j] == d->store[first + j].sparse && d->store[first + j].sparse == (j > 0);
    nin += rb->in_wide[first + j];
  }
  CHECK(wide_ok && nin > 0, "the wide factor's sparse parts are summed from its codes (%d wide columns, %d parts)",
        rb->nwide, nin);
  bad = 0;
  int in_parts[4] = { 0, 0, 0, 0 };
  for (int r = 0; r < N && rb->nwide == 2; r++) {
    int code = rb->wcode[cw][r], part = code >> 8, hits = 0;
    in_parts[part < 3 ? part : 3]++;
    for (int j = 0; j < 3; j++) {
      int b = test_dataset_bin(d, first + j, r), miss = d->mappers[first + j].num_bin - 1;
      if (b != miss) hits++;
      if (j == part ? b != (code & 255) || b == miss : b != miss) bad++;
    }
    if (part > 3 || (part == 3 && ((code & 255) != 0 || hits != 0))) bad++;
  }
  CHECK(bad == 0 && in_parts[0] > 0 && in_parts[1] > 0 && in_parts[2] > 0 && in_parts[3] > 0,
        "wide codes disagree with the column store in %d places (rows by part %d %d %d, none %d)", bad,
        in_parts[0], in_parts[1], in_parts[2], in_parts[3]);
  /* both wide factors have slots in the rows after the bins: the 700-level
   * one (two sparse parts) its code in two bytes, the 300-level one (one
   * sparse part, storing 4% of the rows: summed from its codes all the
   * same) that part's bin in one */
  const int fm = d->col_first[cm];
  int slot_ok = rb->nwslot == 2 && rb->wslot_col[0] == cw && rb->wslot_col[1] == cm && rb->wslot_off[0] == rb->ncol &&
                rb->wslot_part[0] == -1 && rb->wslot_off[1] == rb->ncol + 2 && rb->wslot_part[1] == 1 &&
                rb->stride >= rb->ncol + 3 && d->col_first[cm + 1] == fm + 2 && !d->store[fm].sparse &&
                d->store[fm + 1].sparse && rb->in_wide[fm + 1] && !rb->in_wide[fm];
  CHECK(slot_ok, "wide slots: %d, parts %d %d", rb->nwslot, rb->nwslot > 0 ? rb->wslot_part[0] : -9,
        rb->nwslot > 1 ? rb->wslot_part[1] : -9);
  bad = 0;
  int in_mid = 0;
  for (int r = 0; r < N && slot_ok; r++) {
    const uint8_t *row = rb->bins + (size_t)r * rb->stride;
    if ((row[rb->ncol] | row[rb->ncol + 1] << 8) != rb->wcode[cw][r]) bad++;
    int b = test_dataset_bin(d, fm + 1, r);
    if (row[rb->ncol + 2] != b) bad++;
    in_mid += b != d->mappers[fm + 1].num_bin - 1;
  }
  CHECK(bad == 0 && in_mid > N / 50 && in_mid < N / 10, "wide slots disagree with the column store in %d places "
        "(%d rows in the sparse part)", bad, in_mid);
  /* the sparse part: row r's entries are its off-default bins of the sparse
   * features (but the wide factor's), in feature order, and nothing else */
  int nsp = 0;
  for (int f = 0; f < d->nfeat; f++) nsp += d->store[f].sparse && d->feat_col[f] != cw && d->feat_col[f] != cm;
  CHECK(nsp > 0 && rb->nsparse == nsp, "row block holds every other sparse feature (%d of %d)", rb->nsparse, nsp);
  bad = 0;
  for (int r = 0; r < N && rb->nsparse > 0; r++) {
    int64_t k = rb->sp_ptr[r], e = rb->sp_ptr[r + 1];
    for (int f = 0; f < d->nfeat; f++) {
      if (!d->store[f].sparse || d->feat_col[f] == cw || d->feat_col[f] == cm) continue;
      int b = test_dataset_bin(d, f, r);
      if (b == d->mappers[f].default_bin) continue;
      if (k >= e || rb->sp_ent[k] != ((uint32_t)f << 8 | (uint32_t)b)) bad++;
      else k++;
    }
    if (k != e) bad++;
  }
  CHECK(bad == 0, "row-wise sparse entries disagree with the column store in %d rows", bad);
  /* one column is not worth a row block */
  uint8_t *use = calloc((size_t)d->nfeat, 1);
  use[0] = 1;
  hb_rowblock_t *one = NULL;
  CHECK(hb_rowblock_create(d, use, 0, 2, &one) == HB_OK && one == NULL, "a single column gives no row block");
  free(use);
}

/* A leaf of random rows: each i of 0..n-1 with hb_rng_unif(seed, stream,
 * q, i) < frac (every row when frac >= 1), increasing, into rows; their
 * gradient and hessian sums into *G, *H. Returns how many. */
static int pick_leaf(int n, double frac, uint64_t seed, uint64_t stream, uint64_t q, const double *gh, int *rows,
                     double *G, double *H) {
  int m = 0;
  *G = *H = 0;
  for (int i = 0; i < n; i++)
    if (frac >= 1.0 || hb_rng_unif(seed, stream, q, (uint64_t)i) < frac) {
      rows[m++] = i; *G += gh[2 * i]; *H += gh[2 * i + 1];
    }
  return m;
}

/* Bins of active features equal bit for bit (a, b) and within tol of the naive sums. */
static int compare(const hb_dataset_t *d, const uint8_t *active, const hb_histbin_t *a,
                   const hb_histbin_t *b, const hb_histbin_t *naive, double *err) {
  int differ = 0;
  *err = 0;
  for (int f = 0; f < d->nfeat; f++) {
    if (active && !active[f]) continue;
    for (int k = d->hist_offset[f]; k < d->hist_offset[f + 1]; k++) {
      if (memcmp(&a[k], &b[k], sizeof a[k]) != 0) differ++;
      *err = fmax(*err, fabs(a[k].g - naive[k].g) + fabs(a[k].h - naive[k].h));
    }
  }
  return differ;
}

static void test_hist(const hb_dataset_t *d, const hb_rowblock_t *rb) {
  double *gh = random_gh(N, 12);
  int *rows = malloc(sizeof(int) * N);
  uint8_t *half = some_features(d, 9);
  size_t hb = sizeof(hb_histbin_t) * (size_t)d->total_bins;
  hb_histbin_t *col = malloc(hb), *row = malloc(hb), *naive = malloc(hb);
  double fracs[3] = { 1.0, 0.3, 0.002 };
  for (int q = 0; q < 3; q++) {
    double G, H;
    int m = pick_leaf(N, fracs[q], 12, 2, (uint64_t)q, gh, rows, &G, &H);
    const int *rr = fracs[q] == 1.0 ? NULL : rows;
    for (int a = 0; a < 2; a++) {
      const uint8_t *active = a ? half : NULL;
      naive_hist(d, rr, m, gh, active, naive);
      hb_hist_build(d, NULL, rr, m, gh, G, H, active, col, 1);
      if (m >= HB_HIST_HALF_ROWS) {
        /* Summed in two halves of the rows, then added, for any leaf (the
         * root included): the row block's dense columns, and its sparse part
         * (whose default bin then comes from the leaf's totals less the added
         * bins); other features all rows at once. */
        hb_histbin_t *h2 = malloc(hb), *all = malloc(hb);
        int *ident = malloc(sizeof(int) * (size_t)m);
        for (int i = 0; i < m; i++) ident[i] = i;
        const int *base = rr ? rr : ident;
        int mid = m / 2;
        hb_hist_build(d, NULL, rr, m, gh, G, H, active, all, 1);
        hb_hist_build(d, NULL, base, mid, gh, G, H, active, col, 1);
        hb_hist_build(d, NULL, base + mid, m - mid, gh, G, H, active, h2, 1);
        for (int f = 0; f < d->nfeat; f++) {
          if (active && !active[f]) continue;
          int lo = d->hist_offset[f], hi = d->hist_offset[f + 1], db = lo + d->mappers[f].default_bin;
          if (rb->col_of[f] >= 0) {
            for (int k = lo; k < hi; k++) { col[k].g += h2[k].g; col[k].h += h2[k].h; }
          } else if ((rb->nsparse > 0 && rb->in_sp[f]) || (rb->nwide > 0 && rb->in_wide[f])) {
            double g = G, hh = H;
            for (int k = lo; k < hi; k++) {
              if (k == db) continue;
              col[k].g += h2[k].g; col[k].h += h2[k].h;
              g -= col[k].g; hh -= col[k].h;
            }
            col[db].g = g; col[db].h = hh;
          } else {
            for (int k = lo; k < hi; k++) col[k] = all[k];
          }
        }
        free(h2); free(all); free(ident);
      }
      for (int th = 1; th <= 3; th++) {
        memset(row, 0xff, hb);   /* stale contents must be overwritten */
        hb_hist_build(d, rb, rr, m, gh, G, H, active, row, th);
        double err;
        int differ = compare(d, active, row, col, naive, &err);
        CHECK(differ == 0, "row-wise histogram differs from column-wise in %d bins (rows %d, active %d, %d threads)",
              differ, m, a, th);
        CHECK(err < 1e-8, "row-wise histogram off the naive sums by %g (rows %d, active %d, %d threads)",
              err, m, a, th);
      }
    }
  }
  free(col); free(row); free(naive); free(gh); free(rows); free(half);
}

/* A row block of at most 16 bytes a row carries each row's (gradient,
 * hessian) pair (32-byte rows): histograms read from the pairs in the rows
 * equal bit for bit those read from the gh array (a copy: the rows are used
 * only for the array last copied in), and follow the pairs when they are
 * copied again; on 1-3 threads, for leaf subsets and sampled features. */
static void test_hist_gh_rows(const hb_dataset_t *d) {
  uint8_t *use = calloc((size_t)d->nfeat, 1);
  for (int f = 0; f < 10; f++) use[f] = 1;
  for (int c = PD + 5; c <= PD + 7; c += 2)
    for (int f = d->col_first[c]; f < d->col_first[c + 1]; f++) use[f] = 1;
  hb_rowblock_t *rb = NULL;
  CHECK(hb_rowblock_create(d, use, 0, 3, &rb) == HB_OK && rb, "narrow row block: %s", hb_error_message());
  if (!rb) { free(use); return; }
  CHECK(rb->ncol == 12 && rb->nwslot == 2 && rb->goff == 16 && rb->stride == 32 && rb->gh_src == NULL,
        "narrow rows carry their pair (%d columns, %d slots, pair at %d, stride %d)", rb->ncol, rb->nwslot,
        rb->goff, rb->stride);
  double *gh = malloc(2 * sizeof(double) * N), *copy = malloc(2 * sizeof(double) * N);
  int *rows = malloc(sizeof(int) * N);
  uint8_t *some = malloc((size_t)d->nfeat);
  for (int f = 0; f < d->nfeat; f++) some[f] = (uint8_t)(f % 3 != 1);
  size_t hb = sizeof(hb_histbin_t) * (size_t)d->total_bins;
  hb_histbin_t *a = malloc(hb), *b = malloc(hb), *naive = malloc(hb);
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < N; i++) {
      gh[2 * i] = hb_rng_unif(15, (uint64_t)pass, 0, i) - 0.5;
      gh[2 * i + 1] = 0.05 + hb_rng_unif(15, (uint64_t)pass, 1, i);
    }
    memcpy(copy, gh, 2 * sizeof(double) * N);
    hb_rowblock_set_gh(rb, gh, 2);
    int bad = 0;
    for (int r = 0; r < N; r++) bad += memcmp(rb->bins + (size_t)r * rb->stride + rb->goff, gh + 2 * r, 16) != 0;
    CHECK(bad == 0 && rb->gh_src == gh, "pairs in the rows differ from gh in %d rows", bad);
    double fracs[2] = { 0.3, 0.05 };
    for (int q = 0; q < 2; q++) {
      int m = 0;
      double G = 0, H = 0;
      for (int i = 0; i < N; i++)
        if (hb_rng_unif(15, 9, (uint64_t)q, i) < fracs[q]) { rows[m++] = i; G += gh[2 * i]; H += gh[2 * i + 1]; }
      for (int act = 0; act < 2; act++) {
        const uint8_t *active = act ? some : NULL;
        naive_hist(d, rows, m, gh, active, naive);
        hb_hist_build(d, rb, rows, m, copy, G, H, active, b, 1);
        for (int th = 1; th <= 3; th++) {
          memset(a, 0xff, hb);
          hb_hist_build(d, rb, rows, m, gh, G, H, active, a, th);
          double err;
          int differ = compare(d, active, a, b, naive, &err);
          CHECK(differ == 0 && err < 1e-8, "pairs in the rows: %d bins differ from the array's, off the naive "
                "sums by %g (pass %d, rows %d, active %d, %d threads)", differ, err, pass, m, act, th);
        }
      }
    }
  }
  free(a); free(b); free(naive); free(gh); free(copy); free(rows); free(some); free(use);
  hb_rowblock_free(rb);
}

/* Quantized histograms: the row block with each row's packed value in its
 * stride (one cache line a row) against the column store and the plain
 * integer sums, for all rows, two leaf subsets and sampled features, on 1-3
 * threads; rows16 small enough that the 16-bit accumulators flush often. */
/* hb_hist_build_then / hb_qhist_build_then: the caller's work runs on
 * every thread of the histogram's team once the histogram is whole (each
 * thread finds it equal to hb_hist_build's), an orphaned loop in it shares
 * its items over that team (each item once), and it runs exactly when the
 * histogram takes more than one thread; the histogram is the same. */
enum { TEAM_ITEMS = 97 };
typedef struct {
  const void *hist, *ref;
  size_t bytes;
  int calls, nth, bad, items[TEAM_ITEMS];
} team_probe_t;

static void team_probe(void *arg, int nth) {
  team_probe_t *p = arg;
  const int bad = memcmp(p->hist, p->ref, p->bytes) != 0;
HB_OMP(atomic)
  p->calls++;
  if (bad) {
HB_OMP(atomic)
    p->bad++;
  }
  if (hb_threads_id() == 0) p->nth = nth;
HB_OMP(for schedule(dynamic, 1) nowait)
  for (int w = 0; w < TEAM_ITEMS; w++) p->items[w]++;
}

/* The probe's findings after a build that returned ran, on a team of want threads. */
static void check_probe(const team_probe_t *p, int ran, int want, const void *hist, const char *what, int m, int th) {
  int once = 0;
  for (int w = 0; w < TEAM_ITEMS; w++) once += p->items[w] == (ran ? 1 : 0);
  CHECK(ran == (want > 1) && p->calls == (ran ? want : 0) && (!ran || p->nth == want),
        "%s then: %d rows on %d threads ran %d (want %d threads): %d calls, nth %d", what, m, th, ran, want, p->calls,
        p->nth);
  CHECK(p->bad == 0 && once == TEAM_ITEMS,
        "%s then: %d of %d calls saw a partial histogram, %d of %d items not run exactly once", what, p->bad,
        p->calls, TEAM_ITEMS - once, TEAM_ITEMS);
  CHECK(memcmp(hist, p->ref, p->bytes) == 0, "%s then: %d rows on %d threads differ from hb_hist_build's", what, m,
        th);
}

static void test_hist_then(const hb_dataset_t *d, const hb_rowblock_t *rb) {
  double *gh = random_gh(N, 15);
  int *rows = malloc(sizeof(int) * N);
  uint8_t *half = some_features(d, 7);
  const size_t hb = sizeof(hb_histbin_t) * (size_t)d->total_bins;
  hb_histbin_t *ref = malloc(hb), *out = malloc(hb);
  const double fracs[3] = { 1.0, 0.3, 0.002 };
  int ran_any = 0;
  for (int q = 0; q < 3; q++) {
    double G, H;
    const int m = pick_leaf(N, fracs[q], 15, 2, (uint64_t)q, gh, rows, &G, &H);
    const int *rr = fracs[q] == 1.0 ? NULL : rows;
    for (int a = 0; a < 2; a++)
      for (int th = 1; th <= 3; th++) {
        const uint8_t *active = a ? half : NULL;
        memset(ref, 0xff, hb);  /* bins left unwritten (features not active) alike in both */
        hb_hist_build(d, rb, rr, m, gh, G, H, active, ref, th);
        team_probe_t p;
        memset(&p, 0, sizeof p);
        p.hist = out; p.ref = ref; p.bytes = hb;
        memset(out, 0xff, hb);
        const int ran = hb_hist_build_then(d, rb, rr, m, gh, G, H, active, out, th, team_probe, &p);
        check_probe(&p, ran, hb_hist_threads(d, rb, m, active, th), out, "full precision", m, th);
        ran_any += ran;
      }
  }
  CHECK(ran_any > 0 || !hb_threads_have_openmp(), "full precision then: never ran on a team");
  free(ref); free(out); free(rows); free(gh); free(half);
}

static void test_qhist(const hb_dataset_t *d) {
  hb_rowblock_t *rb = NULL;
  CHECK(hb_rowblock_create(d, NULL, 1, 3, &rb) == HB_OK && rb, "row block with q: %s", hb_error_message());
  if (!rb) return;
  CHECK(rb->qoff >= rb->ncol && rb->qoff % 4 == 0 && rb->stride >= rb->qoff + 4 &&
        rb->stride % 4 == 0 && (uintptr_t)rb->bins % 64 == 0,
        "q slot %d after %d bins in a %d-byte stride, rows aligned", rb->qoff, rb->ncol, rb->stride);
  int32_t *q = malloc(sizeof(int32_t) * N);
  int *rows = malloc(sizeof(int) * N);
  uint8_t *half = malloc((size_t)d->nfeat);
  for (int i = 0; i < N; i++)  /* gradient level -7..7, hessian 0..15 */
    q[i] = ((int32_t)(hb_rng_unif(14, 1, 0, i) * 15) - 7) * 65536 + (int32_t)(hb_rng_unif(14, 1, 1, i) * 16);
  hb_rowblock_set_q(rb, q, 2);
  int bad = 0;
  for (int r = 0; r < N; r++) {
    int32_t v;
    memcpy(&v, rb->bins + (size_t)r * rb->stride + rb->qoff, sizeof v);
    bad += v != q[r];
  }
  CHECK(bad == 0, "row block's q slots differ from q in %d rows", bad);
  for (int f = 0; f < d->nfeat; f++) half[f] = (uint8_t)(f % 2 == 0 || f % 9 == 1);
  size_t hb = sizeof(hb_qbin_t) * (size_t)d->total_bins;
  hb_qbin_t *col = malloc(hb), *row = malloc(hb), *naive = malloc(hb);
  /* all rows, a large leaf (threads split its rows), a small one (threads
   * split its columns: fewer than HB_HIST_HALF_ROWS rows) */
  double fracs[3] = { 1.0, 0.3, 0.05 };
  for (int k = 0; k < 3; k++) {
    int m = 0;
    int64_t G = 0, H = 0;
    for (int i = 0; i < N; i++)
      if (fracs[k] == 1.0 || hb_rng_unif(14, 2, (uint64_t)k, i) < fracs[k]) {
        rows[m++] = i; G += hb_qpack_g(q[i]); H += hb_qpack_h(q[i]);
      }
    const int *rr = fracs[k] == 1.0 ? NULL : rows;
    for (int a = 0; a < 2; a++) {
      const uint8_t *active = a ? half : NULL;
      naive_qhist(d, rows, m, q, active, naive);
      hb_qhist_build(d, NULL, rr, m, q, 100, G, H, active, col, 1);
      check_qhist_threads(d, rb, rr, m, q, G, H, active, col, naive, row, "row-wise against column-wise:");
      for (int th = 1; th <= 3; th++) {
        memset(col, 0xff, hb);
        hb_qhist_build(d, rb, rr, m, q, 100, G, H, active, col, th);
        team_probe_t p;
        memset(&p, 0, sizeof p);
        p.hist = row; p.ref = col; p.bytes = hb;
        memset(row, 0xff, hb);
        const int ran = hb_qhist_build_then(d, rb, rr, m, q, 100, G, H, active, row, th, team_probe, &p);
        /* the team: the threads given, when the leaf is large enough to share */
        const int want = ran ? hb_threads_use(th) : 1;
        check_probe(&p, ran, want, row, "quantized", m, th);
        CHECK(ran || th == 1 || k == 2 || !hb_threads_have_openmp(), "quantized then: %d rows on %d threads: one thread",
              m, th);
      }
    }
  }
  free(col); free(row); free(naive); free(q); free(rows); free(half);
  hb_rowblock_free(rb);
}

/* Grow one tree; copy each leaf's rows into leafrows (leaf-major) and the
 * leaf of every row into leaf_of. */
static hb_tree_t *grow(const hb_dataset_t *d, int nthreads, const int *bag, int bag_n,
                       const uint8_t *active, int *leaf_of, int *leafrows) {
  hb_config_t cfg;
  hb_config_default(&cfg);
  cfg.num_leaves = 63;
  cfg.min_data_in_leaf = 20;
  cfg.min_data_per_group = 20;
  cfg.nthreads = nthreads;
  double *gh = malloc(2 * sizeof(double) * N);
  for (int i = 0; i < N; i++) { gh[2 * i] = -y[i] + 1.5; gh[2 * i + 1] = 0.5 + hb_rng_unif(13, 1, 0, i); }
  hb_tree_t *t = grow_tree(d, &cfg, gh, bag, bag_n, active, leaf_of, leafrows);
  free(gh);
  return t;
}

static void test_trees(const hb_dataset_t *d) {
  int *bag = malloc(sizeof(int) * N), bag_n = 0;
  for (int i = 0; i < N; i++) if (hb_rng_unif(14, 1, 0, i) < 0.8) bag[bag_n++] = i;
  uint8_t *active = malloc((size_t)d->nfeat);
  for (int f = 0; f < d->nfeat; f++) active[f] = (uint8_t)(hb_rng_unif(14, 2, 0, f) < 0.6);
  active[0] = active[PD] = active[PD + 2] = 1;
  int *leaf_of[3], *leafrows[3];
  for (int v = 0; v < 3; v++) {   /* all rows and features; a bag; sampled features */
    const int *bg = v == 1 ? bag : NULL;
    int n = v == 1 ? bag_n : N;
    const uint8_t *act = v == 2 ? active : NULL;
    hb_tree_t *t[3];
    for (int th = 0; th < 3; th++) {
      leaf_of[th] = malloc(sizeof(int) * N);
      leafrows[th] = malloc(sizeof(int) * N);
      t[th] = grow(d, th + 1, bg, n, act, leaf_of[th], leafrows[th]);
    }
    CHECK(t[0] && t[0]->num_leaves == 63, "tree of 63 leaves (variant %d, got %d)", v, t[0] ? t[0]->num_leaves : -1);
    if (t[0]) {
      /* every in-bag row in exactly one leaf, the one its bins lead to; leaves' rows increasing */
      int bad = 0, at = 0;
      for (int i = 0, k = 0; i < N; i++) {
        int in = bg ? (k < n && bg[k] == i) : 1;
        if (in) k++;
        if (in ? leaf_of[0][i] != hb_tree_leaf_binned(t[0], d, i) : leaf_of[0][i] != -1) bad++;
      }
      for (int l = 0; l < t[0]->num_leaves; l++) {
        for (int k = 1; k < t[0]->leaf_count[l]; k++)
          if (leafrows[0][at + k] <= leafrows[0][at + k - 1]) bad++;
        at += t[0]->leaf_count[l];
      }
      CHECK(bad == 0 && at == n, "partition: %d rows misplaced or out of order (variant %d)", bad, v);
      /* the wide factor's sparse parts were split on (partitions by its row
       * codes): a split whose level set parts the levels outside the first
       * feature (which share that feature's missing bin) */
      int wide_sparse = 0, c = PD + 5;
      const hb_binmapper_t *m0 = &d->mappers[d->col_first[c]];
      for (int k = 0; k < t[0]->num_leaves - 1; k++) {
        if (t[0]->split_feature[k] != c) continue;
        int seen[2] = { 0, 0 };
        for (int lv = 1; lv <= WIDE_LEVELS; lv++)
          if (m0->level_bin[lv - 1] == m0->num_bin - 1) seen[hb_tree_goes_left(t[0], k, (double)lv)]++;
        wide_sparse += seen[0] > 0 && seen[1] > 0;
      }
      CHECK(d->col_first[c + 1] - d->col_first[c] == 3 && wide_sparse > 0,
            "no split on a sparse part of the wide factor (variant %d: %d parts, %d splits)", v,
            d->col_first[c + 1] - d->col_first[c], wide_sparse);
      if (act) {
        int off = 0;
        for (int k = 0; k < t[0]->num_leaves - 1; k++) {   /* trees name columns: one of its features drawn */
          int col = t[0]->split_feature[k], drawn = 0;
          for (int f = d->col_first[col]; f < d->col_first[col + 1]; f++) drawn |= act[f];
          off += !drawn;
        }
        CHECK(off == 0, "%d splits on features outside the sample", off);
      }
    }
    for (int th = 1; th < 3; th++) {
      CHECK(t[0] && t[th] && same_tree(t[0], t[th]) &&
            memcmp(leafrows[0], leafrows[th], sizeof(int) * (size_t)n) == 0,
            "1 and %d threads grew different trees or partitions (variant %d)", th + 1, v);
    }
    for (int th = 0; th < 3; th++) { hb_tree_free(t[th]); free(leaf_of[th]); free(leafrows[th]); }
  }
  free(bag); free(active);
}

/* A wide factor whose FIRST part is stored sparse (its top level in 90% of
 * the rows, NA in 2%): the part's rows come from the row codes, and what they
 * leave over is the part's missing bin (rows of the other part and NA), not
 * its default bin. Row-wise histograms against the naive sums, whole data
 * and a leaf, 1-3 and 8 threads (bit-identical across thread counts). Before the
 * fix the missing bin stayed empty and bin 0 took its rows. */
static void test_wide_sparse_first(void) {
  enum { LV = 300, NC = 5 };
  int *xt = malloc(sizeof(int) * N);
  for (int i = 0; i < N; i++) {
    double u = hb_rng_unif(13, 1, 0, i);
    xt[i] = u < 0.02 ? HB_NA_INT : u < 0.92 ? 1 : 1 + (int)(hb_rng_unif(13, 1, 1, i) * LV) % LV;
  }
  hb_column_t cols[NC];
  for (int f = 0; f < NC - 1; f++) {
    cols[f].type = HB_COL_DOUBLE; cols[f].dbl = xcol[f]; cols[f].i32 = NULL; cols[f].nlevels = 0;
  }
  cols[NC - 1].type = HB_COL_FACTOR; cols[NC - 1].dbl = NULL; cols[NC - 1].i32 = xt; cols[NC - 1].nlevels = LV;
  hb_input_t in = { N, NC, cols, NULL, y, NULL, NULL, 0 };
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  hb_dataset_t *d = NULL;
  hb_rowblock_t *rb = NULL;
  double *gh = malloc(2 * sizeof(double) * N);
  int *rows = malloc(sizeof(int) * N);
  if (hb_dataset_create(&in, &bp, NULL, &d) != HB_OK || hb_rowblock_create(d, NULL, 0, 8, &rb) != HB_OK) {
    CHECK(0, "sparse first part: %s", hb_error_message());
  } else {
    const int first = d->col_first[NC - 1];
    CHECK(d->col_first[NC] - first == 2 && d->store[first].sparse && rb->nwide > 0 && rb->in_wide[first],
          "the 300-level factor: two parts (%d), the first stored sparse (%d) and summed from codes (%d)",
          d->col_first[NC] - first, d->store[first].sparse, rb->nwide > 0 && rb->in_wide[first]);
    for (int i = 0; i < N; i++) {
      gh[2 * i] = hb_rng_unif(13, 2, 0, i) - 0.3;
      gh[2 * i + 1] = 0.05 + hb_rng_unif(13, 2, 1, i);
    }
    /* rows of at most 8 bytes (four bins and a slot) carry their pair in one
     * 32-byte line too, and the sums below read it from there */
    CHECK(rb->ncol + 2 <= 8 && rb->goff == 8 && rb->stride == 32, "8-byte rows: pair at %d, stride %d", rb->goff,
          rb->stride);
    hb_rowblock_set_gh(rb, gh, 2);
    size_t hb = sizeof(hb_histbin_t) * (size_t)d->total_bins;
    hb_histbin_t *naive = malloc(hb), *row = malloc(hb), *one = malloc(hb);
    for (int q = 0; q < 2; q++) {
      int m = 0;
      double G = 0, H = 0;
      for (int i = 0; i < N; i++)
        if (q == 0 || hb_rng_unif(13, 3, 0, i) < 0.4) { rows[m++] = i; G += gh[2 * i]; H += gh[2 * i + 1]; }
      const int *rr = q == 0 ? NULL : rows;
      naive_hist(d, rr, m, gh, NULL, naive);
      /* 8 threads: the 16000-row leaf's 4 column tiles a half read its rows
       * (the wide slot and the pair in them too) gathered (hist.h) */
      static const int ths[4] = { 1, 2, 3, 8 };
      for (int ti = 0; ti < 4; ti++) {
        const int th = ths[ti];
        memset(row, 0xff, hb);
        hb_hist_build(d, rb, rr, m, gh, G, H, NULL, row, th);
        double err = 0;
        for (int k = 0; k < d->total_bins; k++)
          err = fmax(err, fabs(row[k].g - naive[k].g) + fabs(row[k].h - naive[k].h));
        const int miss = d->hist_offset[first + 1] - 1;
        CHECK(err < 1e-8 && naive[miss].h > 100, "sparse first part: off the naive sums by %g (missing bin %g, "
              "rows %d, %d threads)", err, naive[miss].h, m, th);
        if (th == 1) memcpy(one, row, hb);
        else CHECK(memcmp(one, row, hb) == 0, "sparse first part: %d threads differ from 1 (rows %d)", th, m);
      }
    }
    free(naive); free(row); free(one);
  }
  hb_rowblock_free(rb);
  hb_dataset_free(d);
  free(gh); free(rows); free(xt);
}

/* A leaf's dense columns summed in 2, 4 and 8 parts of its rows (the parts
 * from its row count alone, HB_HIST_PART_ROWS each): the row block's sums
 * equal, bit for bit, column-wise sums of each part added in part order,
 * on 1, 2, 3 and 8 threads, and the naive sums to 1e-8. */
static void test_hist_parts(void) {
  enum { NR = 140000, NC = 6 };
  double *xc[NC], *yy = malloc(sizeof(double) * NR);
  hb_column_t cols[NC];
  for (int f = 0; f < NC; f++) {
    xc[f] = malloc(sizeof(double) * NR);
    for (int i = 0; i < NR; i++) {
      double u = hb_rng_unif(14, 1, (uint64_t)f, (uint64_t)i);
      xc[f][i] = f == 2 && hb_rng_unif(14, 2, 0, i) < 0.1 ? NAN : f == 4 ? floor(u * 6) : u;
    }
    cols[f].type = HB_COL_DOUBLE; cols[f].dbl = xc[f]; cols[f].i32 = NULL; cols[f].nlevels = 0;
  }
  for (int i = 0; i < NR; i++) yy[i] = hb_rng_unif(14, 3, 0, i);
  hb_input_t in = { NR, NC, cols, NULL, yy, NULL, NULL, 0 };
  hb_dataset_t *d = bin_input(&in);
  hb_rowblock_t *rb = NULL;
  CHECK(d && hb_rowblock_create(d, NULL, 0, 8, &rb) == HB_OK && rb, "parts: row block: %s", hb_error_message());
  double *gh = random_gh(NR, 15);
  int *rows = malloc(sizeof(int) * NR);
  size_t hb = d ? sizeof(hb_histbin_t) * (size_t)d->total_bins : 0;
  hb_histbin_t *ref = malloc(hb), *part = malloc(hb), *row = malloc(hb), *naive = malloc(hb);
  /* at 8 threads the row block gathers a scattered leaf's rows (hist.h)
   * when 4 tiles read each row: the 28000- and 2800-row leaves (6 columns
   * in 4 and 8 tiles); each is also summed with that turned off */
  const int gwant = hb_threads_use(8) >= HB_GATHER_MIN_TILES ? NR : 0;  /* none without OpenMP */
  CHECK(!rb || rb->grows == gwant, "parts: the gathered rows' block holds %d rows, not %d", rb ? rb->grows : -1, gwant);
  const double fracs[4] = { 1.0, 0.5, 0.2, 0.02 };
  const int want[4] = { 8, 4, 2, 1 };  /* 140000, about 70000, 28000 and 2800 rows */
  for (int q = 0; rb && q < 4; q++) {
    double G, H;
    int m = pick_leaf(NR, fracs[q], 14, 4, (uint64_t)q, gh, rows, &G, &H);
    const int np = hb_hist_parts(rb, m, 1);
    CHECK(np == want[q], "parts: %d rows in %d parts, not %d", m, np, want[q]);
    naive_hist(d, rows, m, gh, NULL, naive);
    for (int s = 0; s < np; s++) {
      int lo = (int)((long long)s * m / np), hi = (int)((long long)(s + 1) * m / np);
      hb_hist_build(d, NULL, rows + lo, hi - lo, gh, 0, 0, NULL, s ? part : ref, 1);
      for (int k = 0; s && k < d->total_bins; k++) { ref[k].g += part[k].g; ref[k].h += part[k].h; }
    }
    const int ths[5] = { 1, 2, 3, 8, 8 };
    for (int t = 0; t < 5; t++) {
      const int grows = rb->grows;
      if (t == 4) rb->grows = 0;  /* no gathering */
      memset(row, 0xff, hb);
      hb_hist_build(d, rb, fracs[q] == 1.0 ? NULL : rows, m, gh, G, H, NULL, row, ths[t]);
      rb->grows = grows;
      double err;
      int differ = compare(d, NULL, row, ref, naive, &err);
      CHECK(differ == 0, "parts: %d rows in %d parts differ from the parts' column-wise sums in %d bins (%d threads%s)",
            m, np, differ, ths[t], t == 4 ? ", not gathered" : "");
      CHECK(err < 1e-8, "parts: %d rows off the naive sums by %g (%d threads)", m, err, ths[t]);
    }
  }
  /* hb_hist_threads: one thread while a leaf's bin updates (a row: its six
   * dense columns) plus two for each bin of its features (cleared and
   * copied out whatever the rows) stay under 16384, then the threads given
   * (the accumulator sets' cap: test_hist_threads_cap). The bins bring the
   * bound down from 2731 rows; with feature 4 alone active, only its bins
   * count. The leaf at the bound is summed by the threads, equal to the
   * column-wise sums bit for bit (plain doubles, before the grid below). */
  if (rb && d) {
    const int t8 = hb_threads_use(8) < 8 ? hb_threads_use(8) : 8;  /* 1 without OpenMP */
    const int bound = (int)((16384 - 2LL * d->total_bins + NC - 1) / NC);
    CHECK(bound > 1 && bound < 2731 && bound <= NR / 60, "threads: %d bins put the bound at %d rows", d->total_bins,
          bound);
    CHECK(hb_hist_threads(d, rb, bound - 1, NULL, 8) == 1, "threads: %d rows take %d threads, not 1", bound - 1,
          hb_hist_threads(d, rb, bound - 1, NULL, 8));
    CHECK(hb_hist_threads(d, rb, bound, NULL, 8) == t8, "threads: %d rows take %d threads, not %d", bound,
          hb_hist_threads(d, rb, bound, NULL, 8), t8);
    uint8_t one[NC] = {0, 0, 0, 0, 1, 0};  /* feature 4 alone: its bins, one update a row */
    const int b4 = 16384 - 2 * d->mappers[4].num_bin;
    CHECK(hb_hist_threads(d, rb, b4 - 1, one, 8) == 1 && hb_hist_threads(d, rb, b4, one, 8) == t8,
          "threads: feature 4 alone takes the threads from %d rows (%d at %d, %d at %d)", b4,
          hb_hist_threads(d, rb, b4 - 1, one, 8), b4 - 1, hb_hist_threads(d, rb, b4, one, 8), b4);
    double G, H;
    pick_leaf(NR, 0.02, 14, 6, 0, gh, rows, &G, &H);  /* its first `bound` rows, ascending */
    naive_hist(d, rows, bound, gh, NULL, naive);
    hb_hist_build(d, NULL, rows, bound, gh, 0, 0, NULL, ref, 1);
    memset(row, 0xff, hb);
    hb_hist_build(d, rb, rows, bound, gh, 0, 0, NULL, row, 8);
    double err;
    const int differ = compare(d, NULL, row, ref, naive, &err);
    CHECK(differ == 0 && err < 1e-8, "threads: %d rows on %d threads differ from the column-wise sums in %d bins (%g)",
          bound, t8, differ, err);
  }
  /* On exact_sums' grid (rb->exact) the parts follow the thread count from
   * 8 threads, up to one for every two of at least HB_HIST_EXACT_PART_ROWS rows;
   * every sum is then exact: each bin equals the naive row-order sum,
   * exactly, on every thread count. */
  if (rb && d) {
    CHECK(hb_exact_sums_dist(NR, gh, 1, NULL, NR) == HB_OK, "parts on the grid: %s", hb_error_message());
    rb->exact = 1;
    const double gfracs[5] = { 1.0, 0.5, 0.2, 0.04, 0.02 };  /* 140000, ~70000, ~28000, ~5600, ~2800 rows */
    const int gths[6] = { 1, 2, 3, 4, 8, 8 };
    /* the parts expected: the row count's (1-4 threads), then up to nth / 2 of >= 1024 rows (8 at most);
     * the last column 16 threads (counted only: the row block has accumulators for 8) */
    const int pwant[5][7] = { { 8, 8, 8, 8, 8, 8, 8 }, { 4, 4, 4, 4, 4, 4, 8 }, { 2, 2, 2, 2, 4, 4, 8 },
                              { 2, 2, 2, 2, 4, 4, 4 }, { 1, 1, 1, 1, 1, 1, 1 } };
    CHECK(HB_HIST_EXACT_PART_ROWS == 1024 && HB_HIST_PART_ROWS == 16384 && HB_HIST_MAX_PARTS == 8,
          "parts on the grid: the expected counts are for 1024 / 16384 rows a part, 8 at most");
    for (int q = 0; q < 5; q++) {
      double G, H;
      const int m = pick_leaf(NR, gfracs[q], 14, 5, (uint64_t)q, gh, rows, &G, &H);
      naive_hist(d, rows, m, gh, NULL, naive);
      CHECK(hb_hist_parts(rb, m, 16) == pwant[q][6], "parts on the grid: %d rows on 16 threads in %d parts, not %d",
            m, hb_hist_parts(rb, m, 16), pwant[q][6]);
      for (int t = 0; t < 6; t++) {
        const int np = hb_hist_parts(rb, m, gths[t]);
        CHECK(np == pwant[q][t], "parts on the grid: %d rows on %d threads in %d parts, not %d", m, gths[t], np,
              pwant[q][t]);
        const int grows = rb->grows;
        if (t == 5) rb->grows = 0;  /* no gathering */
        memset(row, 0xff, hb);
        hb_hist_build(d, rb, gfracs[q] == 1.0 ? NULL : rows, m, gh, G, H, NULL, row, gths[t]);
        rb->grows = grows;
        int differ = 0;
        for (int k = 0; k < d->total_bins; k++) differ += row[k].g != naive[k].g || row[k].h != naive[k].h;
        CHECK(differ == 0, "parts on the grid: %d rows on %d threads%s differ from the naive sums in %d bins", m,
              gths[t], t == 5 ? " (not gathered)" : "", differ);
      }
    }
    rb->exact = 0;
  }
  free(ref); free(part); free(row); free(naive); free(rows); free(gh);
  hb_rowblock_free(rb);
  hb_dataset_free(d);
  for (int f = 0; f < NC; f++) free(xc[f]);
  free(yy);
}

/* The threads a large leaf takes stop at the row block's accumulator sets
 * (made for 3 threads; 1 without OpenMP), whatever the threads given. */
static void test_hist_threads_cap(const hb_dataset_t *d, const hb_rowblock_t *rb) {
  const int t = hb_threads_use(8), want = t < rb->nscratch ? t : rb->nscratch;
  CHECK(t == 1 || (rb->nscratch == 3 && t > 3), "threads: the cap is not tested (%d threads, %d sets)", t,
        rb->nscratch);
  CHECK(hb_hist_threads(d, rb, N, NULL, 8) == want, "threads: %d accumulator sets let %d threads build, not %d",
        rb->nscratch, hb_hist_threads(d, rb, N, NULL, 8), want);
}

int main(void) {
  make_data();
  hb_dataset_t *d = make_dataset();
  CHECK(d != NULL, "dataset creation failed");
  if (d) {
    CHECK(d->store[PD].sparse && d->store[PD + 1].sparse && !d->store[PD + 4].sparse,
          "columns stored as planned (sparse %d %d, dense %d)", d->store[PD].sparse,
          d->store[PD + 1].sparse, !d->store[PD + 4].sparse);
    hb_rowblock_t *rb = NULL;
    CHECK(hb_rowblock_create(d, NULL, 0, 3, &rb) == HB_OK, "row block: %s", hb_error_message());
    test_rowblock(d, rb);
    if (rb) test_hist(d, rb);
    if (rb) test_hist_threads_cap(d, rb);
    if (rb) test_hist_then(d, rb);
    hb_rowblock_free(rb);
    test_hist_gh_rows(d);
    test_qhist(d);
    test_trees(d);
  }
  hb_dataset_free(d);
  test_wide_sparse_first();
  test_hist_parts();
  for (int f = 0; f < P; f++) free(xcol[f]);
  free(xfac);
  free(xwide);
  free(xmid);
  printf("%d passed, %d failed\n", checks - failures, failures);
  return failures != 0;
}
