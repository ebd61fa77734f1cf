/* test_bin_gpu.c: the host side of binning on the GPU (dataset.c's
 * device_bin_jobs and bin_features_device: every feature's values staged a
 * chunk at a time in two slots, each chunk's bins and counts collected, the
 * features then stored as the CPU stores them) against hb_dataset_create on
 * the CPU, byte for byte: mappers (bounds, level tables, trivial flags) and
 * every feature's storage (dense bins, or sparse rows and bins). No GPU
 * here: this file defines cuda.h's hb_cuda_binner_* as a host emulation of
 * cuda/bin.cu (the same lower-bound search and factor lookup), with chunks
 * of a few dozen rows, so that a feature spans many chunks and the slots'
 * hand-over is exercised. The emulation bins a chunk only when the engine
 * waits for it, from a copy of what was staged when it was launched, and
 * hands out buffers full of garbage: an engine that reads bins early,
 * restages a slot in flight or relies on zeroed buffers fails here. (Its
 * symbols replace the stub's binner; dataset.c calls nothing else of
 * cuda.h.) */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../src/cuda/cuda.h"
#include "dataset.h"
#include "error.h"
#include "interrupt.h"
#include "test_check.h"

/* ---- the emulated device ---- */

#define EMU_CHUNK 37

struct hb_cuda_binner {
  int64_t rows;
  int nlev;
  double in[2][EMU_CHUNK];        /* the staging buffers the engine fills */
  double flight[2][EMU_CHUNK];    /* what a run took from them */
  uint8_t out[2][EMU_CHUNK];
  hb_cuda_bin_job_t job[2];       /* the run's kind, num_bin and table (copied) */
  double upper[2][HB_MAX_NUM_BIN];
  uint8_t *lev[2];
  int m[2], busy[2];
};
static int runs = 0, creates = 0, frees = 0;

int hb_cuda_binner_create(int64_t rows, int nlevels, hb_cuda_binner_t **out) {
  hb_cuda_binner_t *B = malloc(sizeof *B);
  if (!B) return HB_ERR_NOMEM;
  memset(B, 0xA5, sizeof *B);  /* garbage everywhere */
  B->rows = rows < 1 ? 1 : rows < EMU_CHUNK ? rows : EMU_CHUNK;
  B->nlev = nlevels < 1 ? 1 : nlevels;
  for (int s = 0; s < 2; s++) {
    B->lev[s] = malloc((size_t)B->nlev);
    B->busy[s] = 0;
    if (!B->lev[s]) return HB_ERR_NOMEM;  /* (a test machine out of memory: leak and fail) */
  }
  creates++;
  *out = B;
  return HB_OK;
}

void hb_cuda_binner_free(hb_cuda_binner_t *B) {
  if (!B) return;
  free(B->lev[0]);
  free(B->lev[1]);
  free(B);
  frees++;
}

int64_t hb_cuda_binner_rows(const hb_cuda_binner_t *B) { return B->rows; }
void *hb_cuda_binner_in(hb_cuda_binner_t *B, int s) {
  CHECK(!B->busy[s], "slot %d handed out for staging while in flight", s);
  return B->in[s];
}
const uint8_t *hb_cuda_binner_out(const hb_cuda_binner_t *B, int s) {
  CHECK(!B->busy[s], "slot %d's bins read before waiting for them", s);
  return B->out[s];
}

int hb_cuda_binner_run(hb_cuda_binner_t *B, int s, const hb_cuda_bin_job_t *J, int m) {
  CHECK(!B->busy[s], "slot %d launched while in flight", s);
  CHECK(m >= 1 && m <= B->rows, "a chunk of %d rows (at most %lld)", m, (long long)B->rows);
  if (m < 1 || m > B->rows) return hb_error_set(HB_ERR_INTERNAL, "bad chunk");
  memcpy(B->flight[s], B->in[s], sizeof(double) * (size_t)m);
  memset(B->in[s], 0x5A, sizeof B->in[s]);  /* the device has it: the host may restage */
  B->job[s] = *J;
  if (J->kind == HB_CUDA_BIN_FACTOR) {
    CHECK(J->nlevels <= B->nlev, "a table of %d levels (at most %d)", J->nlevels, B->nlev);
    memcpy(B->lev[s], J->level_bin, (size_t)J->nlevels);
  } else if (J->num_bin > 1) {
    memcpy(B->upper[s], J->upper, sizeof(double) * (size_t)(J->num_bin - 1));
  }
  B->m[s] = m;
  B->busy[s] = 1;
  runs++;
  return HB_OK;
}

/* cuda/bin.cu's k_bin on the host */
static int emu_bin(const hb_cuda_binner_t *B, int s, int i) {
  const hb_cuda_bin_job_t *J = &B->job[s];
  if (J->kind == HB_CUDA_BIN_FACTOR) {
    int c;
    memcpy(&c, (const char *)B->flight[s] + sizeof(int) * (size_t)i, sizeof c);
    return c < 1 || c > J->nlevels ? J->num_bin - 1 : B->lev[s][c - 1];
  }
  double v;
  if (J->kind == HB_CUDA_BIN_DOUBLE) {
    v = B->flight[s][i];
  } else {
    int x;
    memcpy(&x, (const char *)B->flight[s] + sizeof(int) * (size_t)i, sizeof x);
    v = x == HB_NA_INT ? NAN : (double)x;
  }
  if (isnan(v) || J->num_bin < 2) return J->num_bin - 1;
  int idx = 0, len = J->num_bin - 1;
  while (len > 1) {
    const int half = len >> 1;
    idx += B->upper[s][idx + half - 1] < v ? half : 0;
    len -= half;
  }
  return idx;
}

int hb_cuda_binner_wait(hb_cuda_binner_t *B, int s, int num_bin, long long *cnt) {
  CHECK(B->busy[s], "waiting for slot %d, which is not in flight", s);
  CHECK(num_bin == B->job[s].num_bin, "waiting with %d bins for a run of %d", num_bin, B->job[s].num_bin);
  for (int i = 0; i < B->m[s]; i++) {
    const int b = emu_bin(B, s, i);
    B->out[s][i] = (uint8_t)b;
    cnt[b]++;
  }
  B->busy[s] = 0;
  return HB_OK;
}

/* ---- the comparison ---- */

static void same_dataset(const hb_dataset_t *a, const hb_dataset_t *b, const char *what) {
  CHECK(a->nrow == b->nrow && a->nfeat == b->nfeat && a->total_bins == b->total_bins, "%s: shape", what);
  if (a->nfeat != b->nfeat || a->nrow != b->nrow) return;
  uint8_t *ba = malloc((size_t)a->nrow), *bb = malloc((size_t)a->nrow);
  for (int f = 0; f < a->nfeat; f++) {
    const hb_binmapper_t *ma = &a->mappers[f], *mb = &b->mappers[f];
    int same = ma->type == mb->type && ma->num_bin == mb->num_bin && ma->trivial == mb->trivial &&
               ma->default_bin == mb->default_bin && ma->nlevels == mb->nlevels;
    if (same && ma->type == HB_FEAT_NUMERIC)
      same = memcmp(ma->upper, mb->upper, sizeof(double) * (size_t)(ma->num_bin - 1)) == 0;
    if (same && ma->type == HB_FEAT_CATEGORICAL) same = memcmp(ma->level_bin, mb->level_bin, (size_t)ma->nlevels) == 0;
    CHECK(same, "%s: feature %d's mapper", what, f);
    const hb_featstore_t *sa = &a->store[f], *sb = &b->store[f];
    CHECK(sa->sparse == sb->sparse, "%s: feature %d stored %s on the CPU", what, f, sa->sparse ? "sparse" : "dense");
    if (sa->sparse && sb->sparse) {
      CHECK(sa->nnz == sb->nnz && memcmp(sa->rows, sb->rows, sizeof(int) * (size_t)sa->nnz) == 0 &&
                memcmp(sa->vals, sb->vals, (size_t)sa->nnz) == 0,
            "%s: feature %d's sparse entries", what, f);
    }
    hb_dataset_feature_bins(a, f, 0, a->nrow, ba);
    hb_dataset_feature_bins(b, f, 0, b->nrow, bb);
    CHECK(memcmp(ba, bb, (size_t)a->nrow) == 0, "%s: feature %d's bins", what, f);
  }
  free(ba);
  free(bb);
}

/* the features of fewer values are binned on the host (bp.device_min_rows) */
static int min_rows = 1;

static hb_dataset_t *build(const hb_input_t *in, int device, int max_bin, const hb_dataset_t *ref) {
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.max_bin = max_bin;
  bp.nthreads = 3;
  bp.device = device;
  bp.device_min_rows = min_rows;
  hb_dataset_t *d = NULL;
  const int st = hb_dataset_create(in, &bp, ref, &d);
  CHECK(st == HB_OK && d, "hb_dataset_create (device %d): %s", device, hb_error_message());
  return d;
}

/* An interrupt hook that says stop at its `*left`-th call. */
static int stop_after(void *data) {
  int *left = data;
  return --*left <= 0;
}

static double unif(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / 9007199254740992.0;
}

int main(void) {
  uint64_t seed = 7;
  /* dense columns: wide-range doubles with NaN and infinities, ties, a
   * constant, all NaN, integers with NA, mostly zero (sparse storage), a
   * factor with NA and codes out of range, a factor of 600 levels (several
   * features at max_bin 255) */
  const int n = 2000, ncol = 8;
  double *wide = malloc(sizeof(double) * n), *ties = malloc(sizeof(double) * n), *cnst = malloc(sizeof(double) * n),
         *nan = malloc(sizeof(double) * n), *zeros = malloc(sizeof(double) * n);
  int *ints = malloc(sizeof(int) * n), *fac = malloc(sizeof(int) * n), *many = malloc(sizeof(int) * n);
  for (int i = 0; i < n; i++) {
    const double u = unif(&seed);
    wide[i] = u < 0.05 ? NAN : (unif(&seed) - 0.5) * 1e4;
    ties[i] = (double)((int)(unif(&seed) * 4)) - 1.5;
    cnst[i] = 2.5;
    nan[i] = NAN;
    zeros[i] = unif(&seed) < 0.93 ? 0.0 : unif(&seed);
    ints[i] = unif(&seed) < 0.1 ? HB_NA_INT : (int)(unif(&seed) * 50) - 10;
    fac[i] = unif(&seed) < 0.1 ? HB_NA_INT : (int)(unif(&seed) * 12);  /* 0 and 11: out of 1..10 */
    many[i] = 1 + (int)(unif(&seed) * 600);
  }
  wide[0] = INFINITY;
  wide[1] = -INFINITY;
  wide[2] = -0.0;
  hb_column_t cols[8] = {
      {HB_COL_DOUBLE, wide, NULL, 0},  {HB_COL_DOUBLE, ties, NULL, 0}, {HB_COL_DOUBLE, cnst, NULL, 0},
      {HB_COL_DOUBLE, nan, NULL, 0},   {HB_COL_INT, NULL, ints, 0},    {HB_COL_DOUBLE, zeros, NULL, 0},
      {HB_COL_FACTOR, NULL, fac, 10},  {HB_COL_FACTOR, NULL, many, 600}};
  hb_input_t in = {n, ncol, cols, NULL, NULL, NULL, NULL, 0};
  const int max_bins[3] = {255, 63, 15};
  for (int k = 0; k < 3; k++) {
    hb_dataset_t *c = build(&in, 0, max_bins[k], NULL), *g = build(&in, 1, max_bins[k], NULL);
    if (c && g) {
      char what[64];
      snprintf(what, sizeof what, "dense columns, max_bin %d", max_bins[k]);
      same_dataset(c, g, what);
      /* the data reach the rules: a factor over several features, sparse storage, a trivial feature */
      int sparse = 0, trivial = 0;
      for (int f = 0; f < c->nfeat; f++) {
        sparse += c->store[f].sparse;
        trivial += c->mappers[f].trivial;
      }
      CHECK(c->nfeat > ncol && sparse > 0 && trivial > 0, "%s: %d features, %d sparse, %d trivial", what, c->nfeat,
            sparse, trivial);
      /* a validation set binned with these mappers (fewer rows: another chunking) */
      hb_input_t vin = in;
      vin.nrow = 555;
      hb_dataset_t *vc = build(&vin, 0, max_bins[k], c), *vg = build(&vin, 1, max_bins[k], c);
      if (vc && vg) same_dataset(vc, vg, "validation rows");
      hb_dataset_free(vc);
      hb_dataset_free(vg);
    }
    hb_dataset_free(c);
    hb_dataset_free(g);
  }
  /* a CSC matrix: explicit zeros and NaN, an empty column, a dense one */
  const int sn = 1500, sc = 4;
  int *p = malloc(sizeof(int) * (sc + 1)), *ri = malloc(sizeof(int) * sn * sc);
  double *sx = malloc(sizeof(double) * sn * sc);
  int nz = 0;
  p[0] = 0;
  for (int j = 0; j < sc; j++) {
    for (int i = 0; i < sn; i++) {
      const double dens = j == 0 ? 0.1 : j == 1 ? 0.0 : j == 2 ? 1.0 : 0.3;
      if (unif(&seed) < dens) {
        ri[nz] = i;
        const double u = unif(&seed);
        sx[nz++] = u < 0.05 ? 0.0 : u < 0.1 ? NAN : (u - 0.5) * 10;
      }
    }
    p[j + 1] = nz;
  }
  hb_csc_t csc = {p, ri, sx};
  hb_input_t sin = {sn, sc, NULL, &csc, NULL, NULL, NULL, 0};
  /* every column on the device, then the sparse ones (150 entries and none) on the host beside the others */
  for (int k = 0; k < 2; k++) {
    min_rows = k == 0 ? 1 : 200;
    const int runs0 = runs;
    hb_dataset_t *c = build(&sin, 0, 255, NULL), *g = build(&sin, 1, 255, NULL);
    if (c && g) same_dataset(c, g, k == 0 ? "CSC matrix" : "CSC matrix, small columns on the host");
    CHECK(k == 0 || (runs - runs0 > 0 && runs - runs0 < (p[3] - p[2] + p[4] - p[3]) / EMU_CHUNK + 3),
          "only the two larger columns went to the device: %d chunks", runs - runs0);
    hb_dataset_free(c);
    hb_dataset_free(g);
  }
  min_rows = 1;
  /* Ctrl-C between chunks: the call unwinds with HB_ERR_INTERRUPT, its binner freed, nothing made; the next works */
  {
    int left = 25;
    const int runs0 = runs;
    hb_interrupt_set(stop_after, &left);
    hb_binparams_t bp;
    hb_binparams_default(&bp);
    bp.device = 1;
    bp.device_min_rows = 1;
    hb_dataset_t *d = NULL;
    const int st = hb_dataset_create(&in, &bp, NULL, &d);
    hb_interrupt_set(NULL, NULL);
    CHECK(st == HB_ERR_INTERRUPT && d == NULL, "an interrupted binning: status %d, dataset %p", st, (void *)d);
    CHECK(runs - runs0 < 30 && runs - runs0 >= 20, "the interrupt came after %d chunks (the 25th check)", runs - runs0);
    hb_dataset_t *again = build(&in, 1, 255, NULL), *cpu = build(&in, 0, 255, NULL);
    if (again && cpu) same_dataset(cpu, again, "after an interrupt");
    hb_dataset_free(again);
    hb_dataset_free(cpu);
  }
  CHECK(runs > 1000 && creates == frees && creates > 0, "%d chunks binned; %d binners made, %d freed", runs, creates,
        frees);
  free(wide); free(ties); free(cnst); free(nan); free(zeros); free(ints); free(fac); free(many);
  free(p); free(ri); free(sx);
  printf("test_bin_gpu: %d checks, %d failures (%d chunks through the emulated binner)\n", checks, failures, runs);
  return failures ? 1 : 0;
}
