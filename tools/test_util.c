/* test_util.c: engine-only checks of the shared utilities (error buffer,
 * checked allocation, thread count, counter-based RNG). Run by tools/Makefile. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "error.h"
#include "rng.h"
#include "threads.h"
#include "config.h"
#include "math_rules.h"
#include "objective.h"
#include "split.h"
#include "split_scan.h"

static int failures = 0;
static int checks = 0;

#define CHECK(cond)                                                   \
  do {                                                                \
    checks++;                                                         \
    if (!(cond)) {                                                    \
      failures++;                                                     \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                 \
  } while (0)

static void test_error(void) {
  hb_error_clear();
  CHECK(strcmp(hb_error_message(), "") == 0);
  CHECK(hb_error_set(HB_ERR_INPUT, "`%s` is %d", "x", 3) == HB_ERR_INPUT);
  CHECK(strcmp(hb_error_message(), "`x` is 3") == 0);
  hb_error_clear();
  CHECK(hb_error_message()[0] == '\0');
}

static void test_alloc(void) {
  /* Size 0 must still give a unique, freeable pointer. */
  void *a = hb_malloc(0), *b = hb_calloc(0, 8);
  CHECK(a != NULL && b != NULL && a != b);
  hb_free(a);
  hb_free(b);
  double *v = hb_calloc(10, sizeof *v);
  CHECK(v != NULL);
  if (v) CHECK(v[9] == 0.0);
  double *w = hb_realloc(v, 1000 * sizeof *w);
  CHECK(w != NULL);
  if (w) {
    CHECK(w[9] == 0.0); /* realloc keeps the old contents */
    w[999] = 1.0;
    hb_free(w);
  } else {
    hb_free(v);
  }
}

static void test_threads(void) {
  int d = hb_threads_default();
  CHECK(d >= 1);
  CHECK(d <= hb_threads_cores());
  CHECK(hb_threads_use(0) == d);
  CHECK(hb_threads_use(-3) == d);
  CHECK(hb_threads_use(1) == 1);
  if (!hb_threads_have_openmp()) CHECK(hb_threads_use(8) == 1);
  /* An absurd request is capped at 4 per core (and the OpenMP limit), and a
   * parallel region with it really runs that many threads, not a million. */
  int mx = hb_threads_max();
  CHECK(mx >= 1);
  CHECK(mx <= 4 * hb_threads_cores());
  CHECK(hb_threads_use(1000000) == mx);
  CHECK(hb_threads_use(2147483647) == mx);
  CHECK(hb_threads_use(mx) == mx);
  CHECK(hb_threads_use(mx + 1) == mx);
  if (hb_threads_have_openmp()) CHECK(mx == 4 * hb_threads_cores() || getenv("OMP_THREAD_LIMIT"));
  int team = 0;
#ifdef _OPENMP
HB_OMP(parallel num_threads(hb_threads_use(1000000)))
  {
HB_OMP(atomic)
    team++;
  }
#else
  team = hb_threads_use(1000000);
#endif
  CHECK(team == mx);
}

static void test_rng(void) {
  /* A pure function of its key: same key, same bits; any key change, new bits. */
  CHECK(hb_rng_key(1, HB_RNG_BAGGING, 2, 3) == hb_rng_key(1, HB_RNG_BAGGING, 2, 3));
  CHECK(hb_rng_key(1, HB_RNG_BAGGING, 2, 3) != hb_rng_key(2, HB_RNG_BAGGING, 2, 3));
  CHECK(hb_rng_key(1, HB_RNG_BAGGING, 2, 3) != hb_rng_key(1, HB_RNG_FEATURE, 2, 3));
  CHECK(hb_rng_key(1, HB_RNG_BAGGING, 2, 3) != hb_rng_key(1, HB_RNG_BAGGING, 3, 2));
  enum { N = 100000 };
  static double serial[N], parallel[N];
  double sum = 0.0;
  for (int i = 0; i < N; i++) {
    serial[i] = hb_rng_unif(42, HB_RNG_BAGGING, 7, (uint64_t)i);
    sum += serial[i];
  }
  int in_range = 1;
  for (int i = 0; i < N; i++) in_range &= serial[i] >= 0.0 && serial[i] < 1.0;
  CHECK(in_range);
  /* Mean of N uniforms: sd is 1/sqrt(12 N) ~ 0.0009; 5 sd is a safe bound. */
  CHECK(sum / N > 0.5 - 0.0046 && sum / N < 0.5 + 0.0046);
  /* Draws made in a parallel loop, in any order, are the same numbers. */
HB_OMP(parallel for num_threads(hb_threads_use(2)) schedule(dynamic, 97))
  for (int i = N - 1; i >= 0; i--) parallel[i] = hb_rng_unif(42, HB_RNG_BAGGING, 7, (uint64_t)i);
  CHECK(memcmp(serial, parallel, sizeof serial) == 0);
}

/* hb_exp (math_rules.h) is within 2 ulps of the library's exp over the range
 * gradients use, and exact at 0 and at the limits. */
static void test_exp(void) {
  double worst = 0;
  for (int i = -200000; i <= 200000; i++) {
    double x = i * 0.00373;   /* -746 .. 746 */
    double a = hb_exp(x), b = exp(x);
    if (b == 0 || isinf(b)) { CHECK(a == b || (b == 0 && a < 1e-300)); continue; }
    double ulp = nextafter(b, INFINITY) - b;
    double e = fabs(a - b) / ulp;
    if (e > worst) worst = e;
  }
  CHECK(worst <= 2.0);
  CHECK(hb_exp(0.0) == 1.0);
  CHECK(isnan(hb_exp(NAN)));
  CHECK(hb_exp(1000) == HUGE_VAL && hb_exp(-1000) == 0.0);
}

/* The two-lane exp (math_rules.h) gives hb_exp's bits wherever it is
 * allowed, and the binary gradients that use it are the one-row formula's,
 * bit for bit, weighted or not, with scores outside its range mixed in. */
static void test_exp_pair(void) {
#ifdef HB_HAVE_EXP_PAIR
  int bad = 0, n = 0;
  for (int i = -190000; i <= 190000; i++) {
    double x[2] = {i * 0.00372633, -i * 0.0037 + 0.5 * (i & 1)}, y[2];
    if (!hb_exp_pair_ok(_mm_loadu_pd(x))) continue;
    _mm_storeu_pd(y, hb_exp_pair(_mm_loadu_pd(x)));
    for (int k = 0; k < 2; k++) bad += memcmp(&y[k], &(double){hb_exp(x[k])}, sizeof(double)) != 0;
    n++;
  }
  CHECK(n > 300000 && bad == 0);
  double edge[2] = {-708.0, 709.0}, y[2];
  CHECK(hb_exp_pair_ok(_mm_loadu_pd(edge)));
  _mm_storeu_pd(y, hb_exp_pair(_mm_loadu_pd(edge)));
  CHECK(y[0] == hb_exp(-708.0) && y[1] == hb_exp(709.0));
  double out1[2] = {-708.5, 0.0}, out2[2] = {0.0, NAN};
  CHECK(!hb_exp_pair_ok(_mm_loadu_pd(out1)) && !hb_exp_pair_ok(_mm_loadu_pd(out2)));
#endif
  enum { N = 1001 };
  static double score[N], label[N], weight[N], gh[2 * N];
  for (int i = 0; i < N; i++) {
    score[i] = (i % 97 == 0) ? (i % 2 ? 750.0 : -800.0) : (i - 500) * 0.0173 + (i % 7) * 1e-3;
    label[i] = (double)(i % 3 == 0);
    weight[i] = 0.25 + (i % 5) * 0.5;
  }
  hb_config_t cfg;
  hb_config_default(&cfg);
  cfg.objective = HB_OBJ_BINARY;
  for (int wt = 0; wt < 2; wt++) {
    hb_objective_gradients(&cfg, N, label, wt ? weight : NULL, score, gh, 2);
    int mism = 0;
    for (int i = 0; i < N; i++) {
      double w = wt ? weight[i] : 1.0, p = 1.0 / (1.0 + hb_exp(-score[i]));
      double g = w * (p - label[i]), h = w * p * (1.0 - p);
      mism += memcmp(&gh[2 * i], &g, sizeof g) != 0 || memcmp(&gh[2 * i + 1], &h, sizeof h) != 0;
    }
    CHECK(mism == 0);
  }
  /* softmax: 3 and 5 classes (an odd one left over), a class far below the others */
  static double ms[5 * N], ml[N], mgh[2 * 5 * N];
  for (int K = 3; K <= 5; K += 2) {
    for (int i = 0; i < N; i++) {
      ml[i] = (double)(i % K);
      for (int k = 0; k < K; k++) ms[(size_t)k * N + i] = (i % 89 == 0 && k == 1) ? -900.0 : ((i * 7 + k * 13) % 101 - 50) * 0.061;
    }
    cfg.objective = HB_OBJ_MULTICLASS;
    cfg.num_class = K;
    hb_objective_gradients(&cfg, N, ml, weight, ms, mgh, 2);
    int mism = 0;
    for (int i = 0; i < N; i++) {
      double mx = ms[i], sum = 0.0, fac = (double)K / (K - 1);
      for (int k = 1; k < K; k++) mx = ms[(size_t)k * N + i] > mx ? ms[(size_t)k * N + i] : mx;
      for (int k = 0; k < K; k++) sum += hb_exp(ms[(size_t)k * N + i] - mx);
      for (int k = 0; k < K; k++) {
        size_t j = (size_t)k * N + i;
        double p = hb_exp(ms[j] - mx) / sum;
        double g = weight[i] * (p - (k == (int)ml[i] ? 1.0 : 0.0)), h = weight[i] * fac * p * (1.0 - p);
        mism += memcmp(&mgh[2 * j], &g, sizeof g) != 0 || memcmp(&mgh[2 * j + 1], &h, sizeof h) != 0;
      }
    }
    CHECK(mism == 0);
  }
}

/* qsort's comparison for hb_cat_key_t: by key, ties by bin. */
static int cat_cmp(const void *x, const void *y) {
  const hb_cat_key_t *a = x, *b = y;
  if (a->key < b->key) return -1;
  if (b->key < a->key) return 1;
  return (a->bin > b->bin) - (a->bin < b->bin);
}

/* hb_cat_sort against qsort; hb_cat_sort_ends: the first and the last k of the sorted order, as a
 * full sort has them, for random keys with ties (broken by bin), k from 1
 * to n. */
static void test_cat_sort_ends(void) {
  hb_cat_key_t a[256], b[256];
  uint64_t s = 12345;
  for (int rep = 0; rep < 4000; rep++) {
    int n = 1 + (int)((s = s * 6364136223846793005ULL + 1442695040888963407ULL) >> 56);  /* 1..256 */
    for (int i = 0; i < n; i++) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      a[i].key = (double)((s >> 40) % (rep % 3 == 0 ? 5 : 100000)) - 2.0;  /* many ties in a third */
      /* hb_cat_sort_ends' buckets: bunched keys with outliers, signed
       * zeros, infinities, a subnormal range */
      switch (rep % 11) {
      case 4: if ((s >> 20) % 8) a[i].key = 1.0 + (double)((s >> 30) % 3) * 1e-15; break;
      case 5: a[i].key = (s >> 20) % 2 ? 0.0 : -0.0; if ((s >> 24) % 5 == 0) a[i].key = (double)((s >> 30) % 7) - 3; break;
      case 7: if ((s >> 20) % 50 == 0) a[i].key = (s >> 26) % 2 ? HUGE_VAL : -HUGE_VAL; break;
      case 8: a[i].key = (double)((s >> 40) % 1000) * 4.9e-324; break;
      case 10: if ((s >> 20) % 9 == 0) a[i].key *= 1e300; break;
      default: break;
      }
      a[i].bin = (int)((i * 37 + rep) % 256);
    }
    for (int i = 0; i < n; i++)   /* distinct bins, as a histogram's */
      a[i].bin = i;
    for (int i = n - 1; i > 0; i--) {   /* shuffle the bins */
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      int j = (int)((s >> 33) % (uint64_t)(i + 1));
      int t = a[i].bin; a[i].bin = a[j].bin; a[j].bin = t;
    }
    memcpy(b, a, sizeof(hb_cat_key_t) * (size_t)n);
    hb_cat_sort(b, n);
    {  /* the same order as qsort's */
      hb_cat_key_t q[256];
      memcpy(q, a, sizeof(hb_cat_key_t) * (size_t)n);
      qsort(q, (size_t)n, sizeof q[0], cat_cmp);
      int off = 0;
      for (int i = 0; i < n; i++) off += q[i].bin != b[i].bin;
      CHECK(off == 0);
    }
    int k = rep % 2 ? 1 + rep % n : (n < 32 ? n : 32);  /* max_cat_threshold's default in half */
    hb_cat_key_t c[256];
    memcpy(c, a, sizeof(hb_cat_key_t) * (size_t)n);
    hb_cat_sort_ends(c, n, k < (n + 1) / 2 ? k : (n + 1) / 2);
    int kk = k < (n + 1) / 2 ? k : (n + 1) / 2;
    int bad = 0;
    for (int i = 0; i < kk; i++)
      bad += c[i].bin != b[i].bin || c[i].key != b[i].key || c[n - 1 - i].bin != b[n - 1 - i].bin;
    CHECK(bad == 0);
    /* and the array is still a permutation of the keys (the middle keeps the rest) */
    int seen[256] = {0};
    for (int i = 0; i < n; i++) seen[c[i].bin]++;
    int missing = 0;
    for (int i = 0; i < n; i++) missing += seen[i] != 1;
    CHECK(missing == 0);
  }
}

/* The numeric scan's winner (split_scan.h: the largest gains, then the
 * candidate with them) against LightGBM's two scans read literally: first
 * gr[T - 1], gr[T - 2], ..., gr[0] and gz (from the top), then, with gf, gf[0],
 * ..., gf[T - 1] and g3 (from the bottom), a candidate winning only with a
 * strictly larger gain than every earlier one and 0. Gains drawn from a few
 * values so that ties are common, with NaN, negatives, zeros and -0.0;
 * lengths around the SSE2 loop's blocks of 4. */
static void test_numeric_pick(void) {
  const double vals[] = {-1.0, 0.0, -0.0, 0.5, 1.0, 2.0, 2.0, 3.0, NAN, 1e300};
  uint64_t key = 12345;
  double gr[40], gf[40];
  for (int it = 0; it < 20000; it++) {
    const int T = (int)(hb_rng_bits_pick(hb_rng_key_tail(key, (uint64_t)(it * 200 + 199)), 23));
    const int bottom = it & 1, M = T + 1;
    const int nv = (it % 3 == 0) ? 10 : 4;  /* sometimes only -1, 0, -0 and 0.5 */
    for (int t = 0; t < T; t++) {
      gr[t] = vals[hb_rng_bits_pick(hb_rng_key_tail(key, (uint64_t)(it * 200 + t)), nv)];
      gf[t] = vals[hb_rng_bits_pick(hb_rng_key_tail(key, (uint64_t)(it * 200 + 50 + t)), nv)];
    }
    const double g3 = vals[hb_rng_bits_pick(hb_rng_key_tail(key, (uint64_t)(it * 200 + 150)), nv)];
    const double gz = it % 5 < 2 ? vals[hb_rng_bits_pick(hb_rng_key_tail(key, (uint64_t)(it * 200 + 151)), nv)] : -1.0;
    double best = 0.0;
    int bt = -1, kind = 0;
    for (int t = T - 1; t >= 0; t--)
      if (gr[t] > best) { best = gr[t]; bt = t; kind = 0; }
    if (gz > best) { best = gz; bt = M - 1; kind = 3; }
    for (int t = 0; bottom && t < T; t++)
      if (gf[t] > best) { best = gf[t]; bt = t; kind = 1; }
    if (bottom && g3 > best) { best = g3; bt = M - 1; kind = 2; }
    int pbt, pkind;
    const double pg = hb_scan_numeric_pick(gr, gz, bottom ? gf : NULL, g3, T, M, &pbt, &pkind);
    CHECK(pbt == bt);
    if (bt >= 0) CHECK(pg == best && pkind == kind);
    else CHECK(pg == 0.0 && pkind == 0);
  }
}

int main(void) {
  test_cat_sort_ends();
  test_numeric_pick();
  test_error();
  test_alloc();
  test_exp();
  test_exp_pair();
  test_threads();
  test_rng();
  printf("test_util: %d checks, %d failed\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
