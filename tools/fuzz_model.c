/* fuzz_model.c: a structure-aware fuzzer of the model loader
 * (hb_model_from_string), built and run by `make -C tools fuzz` under
 * ASan/UBSan for a fixed number of cases (tools/fuzz.sh).
 *
 *   fuzz_model ITERATIONS SEED OUTDIR SEEDFILE...
 *
 * Each case takes one seed model text and applies one to three mutations
 * that know the format's shape (model-format.md): a number in a `key=value`
 * line replaced by a boundary value (0, -1, INT_MAX, 1e308, nan, ...), a
 * list token dropped or repeated, a line deleted, duplicated or swapped with
 * another, the text cut short; and, for one case in eight, raw bytes flipped
 * or inserted. The checksum is then recomputed (except for one case in
 * sixteen), so the mutation reaches the parser's structural checks instead
 * of stopping at the checksum.
 *
 * A case passes when the loader returns HB_OK or HB_ERR_FORMAT (nothing
 * else: a damaged count must never cause an out-of-memory), and, when it
 * loads, the model serializes, that text loads again, and it predicts raw
 * scores, responses, leaves and contributions on a few rows of every kind
 * of value without incident. Before each parse the case is written to
 * OUTDIR/current.hbm: if a sanitizer aborts the process, that file is the
 * crashing input (fuzz.sh keeps it). Every 97th rejected case and every
 * 23rd loaded one are also written to OUTDIR/rejected-<n>.hbm and
 * OUTDIR/loaded-<n>.hbm: candidates for the R tests' fixtures, which must
 * load into an R model or fail with histboost_error_format.
 * Exit status: 0 when every case passed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dataset.h"
#include "error.h"
#include "model.h"
#include "model_io.h"
#include "predict.h"

static uint64_t rng_state;
static uint64_t next_u64(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static size_t pick(size_t n) { return n ? (size_t)(next_u64() % n) : 0; }

/* ---- a growable text ----------------------------------------------------- */
typedef struct {
  char *p;
  size_t n, cap;
} buf_t;

static void buf_reserve(buf_t *b, size_t extra) {
  if (b->n + extra + 1 <= b->cap) return;
  size_t cap = (b->n + extra + 1) * 2;
  char *q = realloc(b->p, cap);
  if (!q) {
    fprintf(stderr, "fuzz_model: out of memory\n");
    exit(2);
  }
  b->p = q;
  b->cap = cap;
}
static void buf_put(buf_t *b, const char *s, size_t n) {
  buf_reserve(b, n);
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

/* ---- lines ------------------------------------------------------------------ */
typedef struct {
  char **line; /* without their '\n' */
  size_t n;
} lines_t;

static lines_t split_lines(const char *text, size_t len) {
  lines_t L = {NULL, 0};
  size_t cap = 64;
  L.line = malloc(cap * sizeof(char *));
  size_t start = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i == len || text[i] == '\n') {
      if (i == len && start == len) break; /* the final '\n' ends the last line */
      if (L.n == cap) L.line = realloc(L.line, (cap *= 2) * sizeof(char *));
      size_t k = i - start;
      L.line[L.n] = malloc(k + 1);
      memcpy(L.line[L.n], text + start, k);
      L.line[L.n][k] = '\0';
      L.n++;
      start = i + 1;
    }
  }
  return L;
}
static void free_lines(lines_t *L) {
  for (size_t i = 0; i < L->n; i++) free(L->line[i]);
  free(L->line);
  L->line = NULL;
  L->n = 0;
}
static void join_lines(const lines_t *L, buf_t *out) {
  out->n = 0;
  for (size_t i = 0; i < L->n; i++) {
    buf_put(out, L->line[i], strlen(L->line[i]));
    buf_put(out, "\n", 1);
  }
}

/* ---- mutations ---------------------------------------------------------------- */
static const char *interesting[] = {
    "0", "-1", "1", "2", "3", "7", "8", "31", "32", "64", "255", "256", "65535", "65536", "2147483647",
    "-2147483648", "2147483648", "4294967295", "18446744073709551615", "-9223372036854775808", "1e308",
    "-1e308", "1e-320", "4.9406564584124654e-324", "nan", "inf", "-inf", "-0", "0.5", "1.5", "", "00000000",
    "ffffffff", "80000000", "x", "%00", "%ZZ", "1 2", " "};
#define N_INTERESTING (sizeof interesting / sizeof interesting[0])

/* Replace token t (0-based, space-separated) of a `key=value` line's value. */
static void mutate_value(lines_t *L) {
  for (int tries = 0; tries < 16; tries++) {
    size_t i = 3 + pick(L->n > 3 ? L->n - 3 : 1); /* never the header */
    if (i >= L->n) return;
    char *eq = strchr(L->line[i], '=');
    if (!eq) continue;
    /* token boundaries in the value */
    const char *v = eq + 1;
    size_t ntok = 1;
    for (const char *c = v; *c; c++) ntok += *c == ' ';
    size_t t = pick(ntok), cur = 0;
    const char *b = v;
    while (cur < t) {
      b = strchr(b, ' ') + 1;
      cur++;
    }
    const char *e = strchr(b, ' ');
    if (!e) e = b + strlen(b);
    const char *rep = interesting[pick(N_INTERESTING)];
    int op = (int)pick(4);
    buf_t o = {NULL, 0, 0};
    buf_put(&o, L->line[i], (size_t)(b - L->line[i]));
    if (op == 0 || op == 1) buf_put(&o, rep, strlen(rep)); /* replace */
    else if (op == 2) {                                     /* drop the token */
      if (*e == ' ') e++;
    } else {                                                /* repeat it */
      buf_put(&o, b, (size_t)(e - b));
      buf_put(&o, " ", 1);
      buf_put(&o, b, (size_t)(e - b));
    }
    buf_put(&o, e, strlen(e));
    free(L->line[i]);
    L->line[i] = o.p ? o.p : calloc(1, 1);
    return;
  }
}

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static void mutate_lines(lines_t *L) {
  if (L->n < 5) return;
  size_t i = 3 + pick(L->n - 3), j = 3 + pick(L->n - 3);
  switch (pick(4)) {
    case 0: /* delete line i */
      free(L->line[i]);
      memmove(L->line + i, L->line + i + 1, (L->n - i - 1) * sizeof(char *));
      L->n--;
      break;
    case 1: { /* duplicate line i after itself */
      L->line = realloc(L->line, (L->n + 1) * sizeof(char *));
      memmove(L->line + i + 1, L->line + i, (L->n - i) * sizeof(char *));
      L->line[i + 1] = dupstr(L->line[i]);
      L->n++;
      break;
    }
    case 2: { /* swap lines i and j */
      char *t = L->line[i];
      L->line[i] = L->line[j];
      L->line[j] = t;
      break;
    }
    default: /* cut the text after line i */
      for (size_t k = i + 1; k < L->n; k++) free(L->line[k]);
      L->n = i + 1;
  }
}

static void mutate_bytes(buf_t *t) {
  if (t->n < 2) return;
  int k = 1 + (int)pick(4);
  for (int r = 0; r < k; r++) {
    size_t pos = pick(t->n);
    if (pick(2)) {
      t->p[pos] = (char)next_u64();
    } else { /* insert a byte */
      buf_reserve(t, 1);
      memmove(t->p + pos + 1, t->p + pos, t->n - pos + 1);
      t->p[pos] = (char)next_u64();
      t->n++;
    }
  }
}

static uint64_t fnv1a64(const char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

/* The checksum line made right for the body after it (if the header survived). */
static void rechecksum(buf_t *t) {
  char *c = strstr(t->p, "\nchecksum=");
  if (!c) return;
  c++;
  char *nl = strchr(c, '\n');
  if (!nl || nl - c != 9 + 16) return;
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)fnv1a64(nl + 1, t->n - (size_t)(nl + 1 - t->p)));
  memcpy(c + 9, hex, 16);
}

/* ---- using a model that loaded -------------------------------------------------- */
#define NROW 7

/* Predict every type on NROW rows built from the schema: values, NaN,
 * infinities, factor codes in range and out of it. 1 when nothing failed
 * unexpectedly. */
static int exercise(const hb_model_t *m) {
  int nf = m->schema.nfeat, ok = 1;
  hb_column_t *cols = calloc((size_t)(nf > 0 ? nf : 1), sizeof *cols);
  double *dv = malloc(sizeof(double) * NROW * (size_t)(nf > 0 ? nf : 1));
  int *iv = malloc(sizeof(int) * NROW * (size_t)(nf > 0 ? nf : 1));
  static const double vals[NROW] = {-1.5, 0.0, 2.25, NAN, INFINITY, -INFINITY, 1e300};
  for (int f = 0; f < nf; f++) {
    for (int r = 0; r < NROW; r++) {
      dv[f * NROW + r] = vals[(r + f) % NROW];
      iv[f * NROW + r] = r == 3 ? HB_NA_INT : r - 1; /* 0 and -1 are outside 1..nlevels */
    }
    if (m->schema.types[f] == HB_FEAT_CATEGORICAL) {
      cols[f].type = HB_COL_FACTOR;
      cols[f].i32 = iv + f * NROW;
      cols[f].nlevels = m->schema.nlevels[f];
    } else {
      cols[f].type = HB_COL_DOUBLE;
      cols[f].dbl = dv + f * NROW;
    }
  }
  hb_input_t in;
  memset(&in, 0, sizeof in);
  in.nrow = NROW;
  in.ncol = nf;
  in.cols = cols;
  int K = m->trees_per_iter > 0 ? m->trees_per_iter : 1;
  size_t cells = (size_t)NROW * (size_t)K * (size_t)(nf + 1);
  size_t leaf_cells = (size_t)NROW * (size_t)(m->num_trees > 0 ? m->num_trees : 1);
  double *out = malloc(sizeof(double) * (cells > leaf_cells ? cells : leaf_cells));
  for (int type = HB_PRED_RAW; type <= HB_PRED_CONTRIB && ok; type++) {
    int st = hb_predict(m, &in, 0, 0, type, 1, out);
    if (st != HB_OK && st != HB_ERR_INPUT) {
      printf("  predict type %d: status %d: %s\n", type, st, hb_error_message());
      ok = 0;
    }
  }
  free(out);
  free(iv);
  free(dv);
  free(cols);
  return ok;
}

static int write_file(const char *path, const char *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  int ok = fwrite(p, 1, n, f) == n;
  ok = (fclose(f) == 0) && ok;
  return ok;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  buf_t b = {NULL, 0, 0};
  char chunk[4096];
  size_t k;
  while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) buf_put(&b, chunk, k);
  fclose(f);
  *len = b.n;
  return b.p ? b.p : calloc(1, 1);
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: fuzz_model ITERATIONS SEED OUTDIR SEEDFILE...\n");
    return 2;
  }
  long iters = atol(argv[1]);
  rng_state = (uint64_t)strtoull(argv[2], NULL, 10);
  const char *outdir = argv[3];
  int nseed = argc - 4;
  char **seed = calloc((size_t)nseed, sizeof(char *));
  size_t *seed_len = calloc((size_t)nseed, sizeof(size_t));
  for (int s = 0; s < nseed; s++) {
    seed[s] = read_file(argv[4 + s], &seed_len[s]);
    hb_model_t *m = NULL;
    if (!seed[s] || hb_model_from_string(seed[s], seed_len[s], &m) != HB_OK) {
      fprintf(stderr, "fuzz_model: seed %s does not load: %s\n", argv[4 + s], hb_error_message());
      return 2;
    }
    hb_model_free(m);
  }
  char current[4096], saved[4096];
  snprintf(current, sizeof current, "%s/current.hbm", outdir);
  long loaded = 0, rejected = 0, failed = 0, kept = 0, kept_loaded = 0;
  for (long it = 0; it < iters; it++) {
    int s = (int)pick((size_t)nseed);
    lines_t L = split_lines(seed[s], seed_len[s]);
    int nmut = 1 + (int)pick(3);
    for (int k = 0; k < nmut; k++) {
      if (pick(3)) mutate_value(&L);
      else mutate_lines(&L);
    }
    buf_t t = {NULL, 0, 0};
    join_lines(&L, &t);
    free_lines(&L);
    if (!t.p) buf_put(&t, "", 0);
    if (pick(8) == 0) mutate_bytes(&t);
    if (pick(16) != 0) rechecksum(&t);
    if (!write_file(current, t.p, t.n)) {
      fprintf(stderr, "fuzz_model: cannot write %s\n", current);
      return 2;
    }
    hb_error_clear();
    hb_model_t *m = NULL;
    int st = hb_model_from_string(t.p, t.n, &m);
    if (st == HB_OK && m) {
      loaded++;
      char *w = NULL;
      size_t wn = 0;
      hb_model_t *again = NULL;
      int ok = hb_model_to_string(m, &w, &wn) == HB_OK && hb_model_from_string(w, wn, &again) == HB_OK;
      if (!ok) printf("case %ld: a loaded model did not round-trip: %s\n", it, hb_error_message());
      ok = ok && exercise(m);
      if (ok && loaded % 23 == 1) {
        snprintf(saved, sizeof saved, "%s/loaded-%ld.hbm", outdir, kept_loaded++);
        write_file(saved, t.p, t.n);
      }
      if (!ok) {
        failed++;
        snprintf(saved, sizeof saved, "%s/failed-%ld.hbm", outdir, it);
        write_file(saved, t.p, t.n);
      }
      hb_free(w);
      hb_model_free(again);
      hb_model_free(m);
    } else if (st == HB_ERR_FORMAT && !m) {
      rejected++;
      if (rejected % 97 == 1) {
        snprintf(saved, sizeof saved, "%s/rejected-%ld.hbm", outdir, kept++);
        write_file(saved, t.p, t.n);
      }
    } else {
      failed++;
      printf("case %ld: loader returned status %d (%s)%s\n", it, st, hb_error_message(),
             m ? " and a model" : "");
      hb_model_free(m);
      snprintf(saved, sizeof saved, "%s/failed-%ld.hbm", outdir, it);
      write_file(saved, t.p, t.n);
    }
    free(t.p);
  }
  remove(current);
  for (int s = 0; s < nseed; s++) free(seed[s]);
  free(seed);
  free(seed_len);
  printf("fuzz_model: %ld cases: %ld loaded, %ld rejected, %ld failed\n", iters, loaded, rejected, failed);
  return failed ? 1 : 0;
}
