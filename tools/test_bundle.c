/* test_bundle.c: engine tests of exclusive feature bundling (bundle.h) on a
 * sparse matrix of one-hot fields (one with several values a level, one
 * with NaN entries), a sparse column whose default bin is not bin 0 and
 * that is non-zero only where the first field is absent, a few dense
 * columns, a sparse column that meets every field and one that meets the
 * first field in 0.5% of the rows.
 *  - The greedy bundler against brute force: members never off default in
 *    one row (max_conflict_rate 0), slots and bin counts as the members'
 *    used bins say, every row's bundle bin the one its members' bins give.
 *  - Histograms summed through bundles equal, bit for bit, those summed
 *    without (doubles: whole data, a leaf summed in halves, a small leaf,
 *    sampled features, 1-3 threads, the pairs read from gh or from the
 *    bundle rows), and exactly for quantized integers.
 *  - With max_conflict_rate > 0: fewer bundles, conflicts within the rate.
 *  - Whole trees grown with and without bundling are the same (rows, bag,
 *    sampled features, 1 and 2 threads), their leaves holding the rows
 *    their bins lead to. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bundle.h"
#include "dataset.h"
#include "error.h"
#include "grow.h"
#include "hist.h"
#include "hist_quant.h"
#include "rng.h"
#include "tree.h"
#include "test_common.h"


enum { N = 30000, FIELDS = 3, LEVELS = 60, NONEHOT = FIELDS * LEVELS, C_NEG = NONEHOT, C_DENSE = NONEHOT + 1,
       NDENSE = 3, C_NOISE = C_DENSE + NDENSE, C_NEAR = C_NOISE + 1, NCOL = C_NEAR + 1 };

static int *cp, *ci;
static double *cx, y[N];

/* The columns as a CSC matrix (see the file's comment). */
static void make_data(void) {
  int *lev = malloc(sizeof(int) * N * FIELDS);
  for (int r = 0; r < N; r++)
    for (int f = 0; f < FIELDS; f++) {
      double u = hb_rng_unif(21, 1, (uint64_t)f, (uint64_t)r);
      lev[r * FIELDS + f] = hb_rng_unif(21, 2, (uint64_t)f, (uint64_t)r) < 0.1 ? -1 : (int)(LEVELS * u * u);
    }
  size_t cap = (size_t)N * (FIELDS + NDENSE + 2);
  cp = calloc(NCOL + 1, sizeof(int));
  ci = malloc(sizeof(int) * cap);
  cx = malloc(sizeof(double) * cap);
  int k = 0;
  for (int c = 0; c < NCOL; c++) {
    cp[c] = k;
    for (int r = 0; r < N; r++) {
      double v = 0.0;
      if (c < NONEHOT) {
        int f = c / LEVELS;
        if (lev[r * FIELDS + f] != c % LEVELS) continue;
        double u = hb_rng_unif(21, 3, (uint64_t)f, (uint64_t)r);
        v = f == 1 ? 1.0 + floor(u * 3) : f == 2 && u < 0.1 ? NAN : 1.0;
      } else if (c == C_NEG) {
        if (lev[r * FIELDS] >= 0 || hb_rng_unif(21, 4, 1, (uint64_t)r) < 0.3) continue;   /* where field 0 is absent */
        v = (double)(int)(hb_rng_unif(21, 4, 0, (uint64_t)r) * 3) - 2.0;   /* -2, -1, 0 */
        if (v == 0.0) v = 1.0;
      } else if (c < C_NOISE) {
        v = hb_rng_unif(21, 5, (uint64_t)c, (uint64_t)r);
      } else if (c == C_NOISE) {
        if (hb_rng_unif(21, 6, 0, (uint64_t)r) >= 0.05) continue;
        v = 1.0 + hb_rng_unif(21, 6, 1, (uint64_t)r);
      } else {   /* C_NEAR: where field 0 and the column beside it are absent, and in 0.5% of the rows */
        int near = lev[r * FIELDS] < 0 && hb_rng_unif(21, 4, 1, (uint64_t)r) < 0.3;
        if (!near && hb_rng_unif(21, 8, 0, (uint64_t)r) >= 0.005) continue;
        v = 2.0;
      }
      ci[k] = r;
      cx[k] = v;
      k++;
    }
  }
  cp[NCOL] = k;
  for (int r = 0; r < N; r++) {
    int l0 = lev[r * FIELDS], l1 = lev[r * FIELDS + 1];
    y[r] = (l0 >= 0 && l0 % 3 == 0) + 0.5 * (l1 >= 0 && l1 < 5) + hb_rng_unif(21, 7, 0, (uint64_t)r);
  }
  free(lev);
}

static hb_dataset_t *make_dataset(void) {
  hb_csc_t x = { cp, ci, cx };
  hb_input_t in = { N, NCOL, NULL, &x, y, NULL, NULL, 0 };
  return bin_input(&in);
}

/* The bundles against brute force: membership, bins, slots and every row's bundle bin. */
static void check_bundles(const hb_dataset_t *d, const hb_bundles_t *b, double rate, const char *what) {
  int bad_member = 0, bad_slots = 0, bad_rows = 0, bundled = 0;
  int64_t conflicts = 0;
  uint8_t used[HB_MAX_NUM_BIN];
  for (int f = 0; f < d->nfeat; f++) bundled += b->bundle_of[f] >= 0;
  for (int j = 0; j < b->nbundle; j++) {
    int nslot = 0;
    if (b->first[j + 1] - b->first[j] < 2) bad_member++;
    for (int m = b->first[j]; m < b->first[j + 1]; m++) {
      int f = b->feat[m];
      if (b->bundle_of[f] != j || !d->store[f].sparse || (m > b->first[j] && f <= b->feat[m - 1])) bad_member++;
      memset(used, 0, sizeof used);
      for (int r = 0; r < N; r++) used[test_dataset_bin(d, f, r)] = 1;
      for (int bin = 0; bin < d->mappers[f].num_bin; bin++) {
        if (!used[bin] || bin == d->mappers[f].default_bin) continue;
        /* this (feature, bin) has exactly one slot */
        int found = 0;
        for (int k = 1; k < b->num_bin[j]; k++)
          found += b->slot_feat[b->slot_off[j] + k] == f && b->slot_bin[b->slot_off[j] + k] == bin;
        bad_slots += found != 1;
        nslot++;
      }
    }
    if (b->num_bin[j] != 1 + nslot || b->num_bin[j] > HB_BUNDLE_MAX_BIN ||
        b->slot_off[j + 1] - b->slot_off[j] != b->num_bin[j] || b->slot_feat[b->slot_off[j]] != -1)
      bad_slots++;
    /* each row: the first member off default gives the bundle bin */
    int64_t conf = 0;
    for (int r = 0; r < N; r++) {
      int want = 0, off = 0;
      for (int m = b->first[j]; m < b->first[j + 1]; m++) {
        int f = b->feat[m], bin = test_dataset_bin(d, f, r);
        if (bin == d->mappers[f].default_bin) continue;
        off++;
        if (want) continue;
        for (int k = 1; k < b->num_bin[j]; k++)
          if (b->slot_feat[b->slot_off[j] + k] == f && b->slot_bin[b->slot_off[j] + k] == bin) want = k;
      }
      conf += off > 1 ? off - 1 : 0;
      bad_rows += b->col[(size_t)j * N + (size_t)r] != want;
    }
    if (conf != b->conflicts[j]) bad_slots++;
    conflicts += conf;
  }
  CHECK(b->nbundle > 0 && bad_member == 0, "%s: %d bundles, %d misplaced members", what, b->nbundle, bad_member);
  CHECK(bad_slots == 0, "%s: %d (feature, bin) slots or bin counts wrong", what, bad_slots);
  CHECK(bad_rows == 0, "%s: %d rows' bundle bins differ from their members' bins", what, bad_rows);
  CHECK(conflicts <= (int64_t)floor(rate * N) * b->nbundle, "%s: %lld conflicts at rate %g", what,
        (long long)conflicts, rate);
  if (rate == 0) {
    /* the one-hot fields (and the column beside the first) all bundle; the
     * dense columns and the column meeting every field do not */
    int want = 0;
    for (int c = 0; c <= C_NEG; c++) want += b->bundle_of[d->col_first[c]] >= 0;
    CHECK(conflicts == 0 && want == C_NEG + 1 && b->bundle_of[d->col_first[C_NOISE]] < 0 &&
          b->bundle_of[d->col_first[C_NEAR]] < 0 &&
          b->bundle_of[d->col_first[C_DENSE]] < 0,
          "%s: exclusive bundles (%lld conflicts, %d of %d sparse columns bundled)", what, (long long)conflicts,
          want, C_NEG + 1);
    /* greedy: each field's features fill few bundles */
    CHECK(b->nbundle <= FIELDS + 2, "%s: %d bundles for %d fields", what, b->nbundle, FIELDS);
  }
  (void)bundled;
}

static void test_bundler(const hb_dataset_t *d) {
  hb_bundles_t *b0 = NULL, *b1 = NULL;
  CHECK(hb_bundle_create(d, NULL, 0.0, 2, &b0) == HB_OK && b0, "bundling at rate 0: %s", hb_error_message());
  if (b0) check_bundles(d, b0, 0.0, "rate 0");
  CHECK(hb_bundle_create(d, NULL, 0.02, 3, &b1) == HB_OK && b1, "bundling at rate 0.02: %s", hb_error_message());
  if (b1) {
    check_bundles(d, b1, 0.02, "rate 0.02");
    int64_t conf = 0;
    for (int j = 0; j < b1->nbundle; j++) conf += b1->conflicts[j];
    /* the column meeting field 0 in a few rows bundles only when conflicts are allowed */
    const int near = d->col_first[C_NEAR];
    CHECK(b0 && b0->bundle_of[near] < 0 && b1->bundle_of[near] >= 0 && conf > 0,
          "conflicts allowed: the nearly exclusive column bundled at rate 0 (%d) or not at 0.02 (%d); %lld conflicts",
          b0 ? b0->bundle_of[near] : -2, b1->bundle_of[near], (long long)conf);
  }
  /* a feature left out by `use` is not bundled */
  uint8_t *use = malloc((size_t)d->nfeat);
  for (int f = 0; f < d->nfeat; f++) use[f] = f != d->col_first[3];
  hb_bundles_t *b2 = NULL;
  CHECK(hb_bundle_create(d, use, 0.0, 1, &b2) == HB_OK && b2 && b2->bundle_of[d->col_first[3]] < 0,
        "unused feature bundled");
  hb_bundle_free(b2);
  b2 = NULL;
  CHECK(hb_bundle_create(d, NULL, 1.0, 1, &b2) != HB_OK && b2 == NULL, "rate 1 accepted");
  hb_bundle_free(b0);
  hb_bundle_free(b1);
  hb_bundle_free(b2);
  free(use);
}

/* Histograms through bundles against those without, bit for bit (and the naive sums). */
static void test_hist(const hb_dataset_t *d) {
  hb_rowblock_t *plain = NULL, *bund[3] = { NULL, NULL, NULL };
  CHECK(hb_rowblock_create(d, NULL, 0, 3, &plain) == HB_OK && plain && !plain->bundles, "plain row block");
  for (int th = 0; th < 3; th++)
    CHECK(hb_rowblock_create_bundled(d, NULL, 0, 0.0, th + 1, &bund[th]) == HB_OK && bund[th] && bund[th]->bundles,
          "bundled row block: %s", hb_error_message());
  double *gh = random_gh(N, 22);
  int *rows = malloc(sizeof(int) * N);
  uint8_t *half = some_features(d, 7);
  /* the 2-thread row block reads the pairs from its bundle rows, the others from gh */
  if (bund[1]) {
    hb_rowblock_set_gh(bund[1], gh, 2);
    CHECK(bund[1]->bb_goff >= bund[1]->bundles->nbundle && bund[1]->gh_src == gh, "pairs in the bundle rows");
  }
  size_t hb = sizeof(hb_histbin_t) * (size_t)d->total_bins;
  hb_histbin_t *want = malloc(hb), *got = malloc(hb), *naive = malloc(hb);
  double fracs[3] = { 1.0, 0.4, 0.05 };   /* whole data, a leaf in halves, a small leaf */
  for (int q = 0; q < 3 && plain && bund[2]; q++) {
    const int m = pick_rows(N, fracs[q], 22, (uint64_t)q, rows);
    const int *rr = fracs[q] == 1.0 ? NULL : rows;
    double G = 0, H = 0;   /* in row order, as the learner sums a leaf */
    for (int k = 0; k < m; k++) G += gh[2 * rows[k]], H += gh[2 * rows[k] + 1];
    naive_hist(d, rr, m, gh, NULL, naive);
    for (int a = 0; a < 2; a++) {
      const uint8_t *active = a ? half : NULL;
      hb_hist_build(d, plain, rr, m, gh, G, H, active, want, 2);
      for (int th = 0; th < 3; th++) {
        memset(got, 0xff, hb);   /* stale contents must be overwritten */
        hb_hist_build(d, bund[th], rr, m, gh, G, H, active, got, th + 1);
        int differ = 0;
        double err = 0;
        for (int f = 0; f < d->nfeat; f++) {
          if (active && !active[f]) continue;
          for (int k = d->hist_offset[f]; k < d->hist_offset[f + 1]; k++) {
            differ += memcmp(&got[k], &want[k], sizeof got[k]) != 0;
            err = fmax(err, fabs(got[k].g - naive[k].g) + fabs(got[k].h - naive[k].h));
          }
        }
        CHECK(differ == 0, "bundled histogram differs from the plain one in %d bins (rows %d, active %d, %d threads)",
              differ, m, a, th + 1);
        CHECK(err < 1e-8, "bundled histogram off the naive sums by %g (rows %d, active %d, %d threads)", err, m, a,
              th + 1);
      }
    }
  }
  free(want); free(got); free(naive);
  /* quantized: integer sums, exactly the plain row block's and the naive sums */
  hb_rowblock_t *qplain = NULL, *qbund = NULL;
  CHECK(hb_rowblock_create(d, NULL, 1, 3, &qplain) == HB_OK && qplain, "plain quantized row block");
  CHECK(hb_rowblock_create_bundled(d, NULL, 1, 0.0, 3, &qbund) == HB_OK && qbund && qbund->bundles,
        "bundled quantized row block");
  int32_t *qv = malloc(sizeof(int32_t) * N);
  for (int i = 0; i < N; i++)
    qv[i] = ((int32_t)(hb_rng_unif(22, 3, 0, i) * 15) - 7) * 65536 + (int32_t)(hb_rng_unif(22, 3, 1, i) * 16);
  if (qplain) hb_rowblock_set_q(qplain, qv, 2);
  if (qbund) hb_rowblock_set_q(qbund, qv, 2);
  size_t qb = sizeof(hb_qbin_t) * (size_t)d->total_bins;
  hb_qbin_t *qw = malloc(qb), *qg = malloc(qb), *qn = malloc(qb);
  for (int q = 0; q < 3 && qplain && qbund; q++) {
    const int m = pick_rows(N, fracs[q], 23, (uint64_t)q, rows);
    const int *rr = fracs[q] == 1.0 ? NULL : rows;
    int64_t G = 0, H = 0;
    for (int k = 0; k < m; k++) G += hb_qpack_g(qv[rows[k]]), H += hb_qpack_h(qv[rows[k]]);
    naive_qhist(d, rows, m, qv, NULL, qn);
    for (int a = 0; a < 2; a++) {
      const uint8_t *active = a ? half : NULL;
      hb_qhist_build(d, qplain, rr, m, qv, 100, G, H, active, qw, 2);
      check_qhist_threads(d, qbund, rr, m, qv, G, H, active, qw, qn, qg, "bundled against plain:");
    }
  }
  free(qw); free(qg); free(qn); free(qv);
  hb_rowblock_free(qplain);
  hb_rowblock_free(qbund);
  /* with conflicts: every member's bins still add up to the leaf's totals */
  hb_rowblock_t *rc = NULL;
  CHECK(hb_rowblock_create_bundled(d, NULL, 0, 0.02, 2, &rc) == HB_OK && rc && rc->bundles, "row block at rate 0.02");
  if (rc) {
    hb_histbin_t *h = malloc(hb);
    double G = 0, H = 0;
    for (int i = 0; i < N; i++) { G += gh[2 * i]; H += gh[2 * i + 1]; }
    hb_hist_build(d, rc, NULL, N, gh, G, H, NULL, h, 2);
    double err = 0;
    for (int f = 0; f < d->nfeat; f++) {
      double sg = 0, sh = 0;
      for (int k = d->hist_offset[f]; k < d->hist_offset[f + 1]; k++) { sg += h[k].g; sh += h[k].h; }
      err = fmax(err, fabs(sg - G) + fabs(sh - H));
    }
    CHECK(err < 1e-8, "conflicting bundles: a feature's bins off the totals by %g", err);
    free(h);
  }
  hb_rowblock_free(rc);
  for (int th = 0; th < 3; th++) hb_rowblock_free(bund[th]);
  hb_rowblock_free(plain);
  free(gh); free(rows); free(half);
}

/* Trees of 63 leaves with and without bundles: the same splits, leaf
 * values and leaf rows, for all rows and features, a bag, sampled features,
 * on 1 and 2 threads; the bundled one splits on one-hot features and every
 * row sits in the leaf its bins lead to. */
static void test_trees(const hb_dataset_t *d) {
  hb_config_t cfg;
  hb_config_default(&cfg);
  cfg.num_leaves = 63;
  cfg.min_data_in_leaf = 10;
  double *gh = malloc(2 * sizeof(double) * N);
  int *bag = malloc(sizeof(int) * N), bag_n = 0;
  uint8_t *active = malloc((size_t)d->nfeat);
  int *lo[2] = { malloc(sizeof(int) * N), malloc(sizeof(int) * N) };
  for (int i = 0; i < N; i++) {
    gh[2 * i] = 1.0 - y[i];
    gh[2 * i + 1] = 0.5 + hb_rng_unif(23, 1, 0, i);
    if (hb_rng_unif(24, 1, 0, i) < 0.7) bag[bag_n++] = i;
  }
  for (int f = 0; f < d->nfeat; f++) active[f] = (uint8_t)(hb_rng_unif(24, 2, 0, f) < 0.6);
  for (int v = 0; v < 6; v++) {
    const int *bg = v % 3 == 1 ? bag : NULL;
    const uint8_t *act = v % 3 == 2 ? active : NULL;
    const int n = bg ? bag_n : N;
    cfg.nthreads = 1 + v / 3;
    hb_tree_t *t[2];
    for (int b = 0; b < 2; b++) {
      cfg.enable_bundle = b;
      t[b] = grow_tree(d, &cfg, gh, bg, n, act, lo[b], NULL);
    }
    CHECK(t[0] && t[1] && t[0]->num_leaves == 63 && same_tree(t[0], t[1]) && memcmp(lo[0], lo[1], sizeof(int) * N) == 0,
          "trees with and without bundles differ (variant %d, %d threads)", v % 3, cfg.nthreads);
    int onehot = 0, bad = 0;
    for (int k = 0; t[1] && k < t[1]->num_leaves - 1; k++) onehot += t[1]->split_feature[k] <= C_NEG;
    for (int i = 0, k = 0; t[1] && i < N; i++) {
      const int in = bg ? (k < n && bg[k] == i) : 1;
      k += in;
      bad += in ? lo[1][i] != hb_tree_leaf_binned(t[1], d, i) : lo[1][i] != -1;
    }
    CHECK(onehot > 0 && bad == 0, "bundled tree: %d one-hot splits, %d rows misplaced (variant %d)", onehot, bad,
          v % 3);
    hb_tree_free(t[0]);
    hb_tree_free(t[1]);
  }
  free(gh); free(bag); free(active); free(lo[0]); free(lo[1]);
}

int main(void) {
  make_data();
  hb_dataset_t *d = make_dataset();
  CHECK(d != NULL, "dataset creation failed");
  if (d) {
    const hb_binmapper_t *neg = &d->mappers[d->col_first[C_NEG]];
    CHECK(d->store[d->col_first[C_NEG]].sparse && neg->default_bin > 0 && d->store[0].sparse &&
          !d->store[d->col_first[C_DENSE]].sparse,
          "columns stored as planned (non-zero default bin %d)", neg->default_bin);
    test_bundler(d);
    test_hist(d);
    test_trees(d);
  }
  hb_dataset_free(d);
  free(cp); free(ci); free(cx);
  printf("%d passed, %d failed\n", checks - failures, failures);
  return failures != 0;
}
