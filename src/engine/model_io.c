/* model_io.c: the model text format: writer, and a reader that validates
 * everything before it is used.
 *
 * Grammar (format_version=1). Lines end with "\n" (no "\r"); the last line
 * may lack it. <int> is a decimal int, <u64> an unsigned decimal, <dbl> a
 * %.17g number or inf, -inf, nan, or nan:<16 hex digits> (a NaN whose bits are
 * not the default quiet NaN 7ff8000000000000); <hex> 8 hex digits; <str> a
 * percent-encoded string (bytes outside [A-Za-z0-9._-] as %XX, possibly empty).
 * A list is its values separated by single spaces (empty for no values).
 * Every key appears in exactly this order.
 *
 *   histboost_model
 *   format_version=1
 *   checksum=<16 lowercase hex: FNV-1a 64 of every byte after this line>
 *   [config]
 *   objective=regression|binary|multiclass|poisson|gamma|tweedie|huber|l1|quantile|lambdarank
 *   num_class=<int>  learning_rate=<dbl>  num_leaves=<int>  max_depth=<int>
 *   min_data_in_leaf=<int>  min_sum_hessian_in_leaf=<dbl>  lambda_l1=<dbl>
 *   lambda_l2=<dbl>  min_gain_to_split=<dbl>  max_cat_threshold=<int>
 *   cat_smooth=<dbl>  cat_l2=<dbl>  min_data_per_group=<int>  max_cat_to_onehot=<int>
 *   (the last only when it is not 4: models from before it have none)
 *   bagging_fraction=<dbl>  bagging_freq=<int>  feature_fraction=<dbl>
 *   boost_from_average=<int>  seed=<u64>  nthreads=<int>     (one per line;
 *   the writer always puts nthreads=0, the reader accepts any int)
 *   then only for its objective: tweedie_variance_power=<dbl> (tweedie),
 *   huber_delta=<dbl> (huber), poisson_max_delta_step=<dbl> (poisson),
 *   quantile_alpha=<dbl> (quantile); rf=1 for a random forest;
 *   lambdarank_truncation_level=<int>  lambdarank_norm=<int>
 *   label_gain=<list of 1..64 dbl> (lambdarank)
 *   [schema]
 *   num_features=<int>
 *   then per feature:  feature=<str>  type=numeric|categorical|ordinal
 *                      num_levels=<int>  and num_levels lines level=<str>
 *                      (0 levels for numeric, >= 1 for ordinal: an ordered
 *                      factor split as numbers, its codes 1..num_levels)
 *   then, only when a feature has one, monotone_constraints=<list of
 *   num_features int: -1, 0 or 1, 0 for categorical features>
 *   [labels]
 *   num_labels=<int>, then num_labels lines label=<str>
 *   [meta]
 *   num_meta=<int>, then num_meta pairs of lines key=<str> value=<str>
 *   [model]
 *   num_class=<int>  trees_per_iter=<int>  num_trees=<int>
 *   best_iteration=<int>  init_score=<list of trees_per_iter dbl>
 *   then num_trees times, i = 0, 1, ...:
 *   [tree i]
 *   num_leaves=<int L>
 *   split_feature threshold_bin (int) threshold (dbl) decision (int)
 *   cat_begin cat_nwords left right (int) split_gain internal_value
 *   internal_hess (dbl) internal_count (int): lists of L-1 values, one line each
 *   leaf_value leaf_hess (dbl) leaf_count leaf_parent leaf_depth (int):
 *   lists of L values, one line each
 *   num_cat_words=<int n>
 *   cat_bits=<list of n hex>
 *   end
 *
 * The reader checks the header, the version (newer ones are refused), the
 * checksum, every count against the text left (so no allocation exceeds a
 * small multiple of the text size), every index, and the tree structure (each
 * node and leaf has exactly one parent and is reachable from the root;
 * leaf_parent and leaf_depth agree with the structure). The writer runs the
 * same checks, so it never writes a model the reader would refuse. The user-facing
 * description of this grammar is inst/model-format.md. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model_io.h"
#include "error.h"
#include "threads.h"

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL
#define CANON_NAN_BITS 0x7ff8000000000000ULL

static uint64_t fnv1a_more(uint64_t h, const char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)p[i];
    h *= FNV_PRIME;
  }
  return h;
}

static uint64_t fnv1a(const char *p, size_t n) { return fnv1a_more(FNV_OFFSET, p, n); }

static uint64_t dbl_bits(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static const char *const OBJ_NAMES[HB_OBJ_COUNT] = {
#define HB_OBJECTIVE(ID, name, task) #name,
#include "codes.def"
};

/* K_GAINS: label_gain, a list of num_label_gain doubles. */
enum { K_INT, K_DBL, K_U64, K_OBJ, K_GAINS };
#define K_FLAG K_INT
#define K_DEV K_INT
/* The [config] keys: params.def's parameters in its order. `obj`: its
 * store column (HB_STORE_*): a key written only for that objective (a
 * parameter of its loss) or when changed (HB_OBJ_COUNT: when changed only),
 * and read when present (models from before it have none: the default); -1:
 * every model has it; HB_STORE_NO: not part of a model (skipped). */
static const struct {
  const char *key;
  int type;
  size_t off;
  int obj;
} CFG_KEYS[] = {
#define HB_PARAM(name, type, def, lo, lo_open, hi, hi_open, store, gpu, r, aliases, doc) \
  {#name, K_##type, offsetof(hb_config_t, name), HB_STORE_##store},
#define HB_RPARAM(name, aliases, doc)
#include "params.def"
#undef HB_PARAM
#undef HB_RPARAM
};
#define N_CFG_KEYS ((int)(sizeof CFG_KEYS / sizeof CFG_KEYS[0]))

/* ------------------------------------------------------------------ */
/* Structure checks shared by writer and reader.                       */

/* 0 when tree t (tree number ti) is well formed over schema s, else records
 * "<where>tree ti: what is wrong" with `code` and returns it. */
static int check_tree(const hb_tree_t *t, const hb_schema_t *s, int ti, const char *where, int code) {
  int L = t->num_leaves, ni = L - 1;
  if (L < 1 || L > t->max_leaves)
    return hb_error_set(code, "%stree %d: num_leaves %d is out of range", where, ti, L);
  if (t->cat_nbits_words < 0)
    return hb_error_set(code, "%stree %d: negative categorical word count", where, ti);
  int *pnode = hb_malloc((size_t)ni * sizeof(int));   /* parent of each internal node */
  int *pleaf = hb_malloc((size_t)L * sizeof(int));    /* parent of each leaf */
  int *depth = hb_malloc((size_t)ni * sizeof(int));   /* depth of each internal node */
  int *stack = hb_malloc((size_t)ni * sizeof(int));
  int st = HB_OK;
  if (!pnode || !pleaf || !depth || !stack) {
    st = HB_ERR_NOMEM;
    goto done;
  }
  for (int i = 0; i < ni; i++) pnode[i] = -1;
  for (int j = 0; j < L; j++) pleaf[j] = -1;
  for (int i = 0; i < ni && !st; i++) {
    int f = t->split_feature[i];
    unsigned dec = t->decision[i];
    if (f < 0 || f >= s->nfeat) {
      st = hb_error_set(code, "%stree %d, node %d: split_feature %d is not a feature index (0..%d)",
                        where, ti, i, f, s->nfeat - 1);
      break;
    }
    if (dec & ~(HB_DECISION_DEFAULT_LEFT | HB_DECISION_CATEGORICAL)) {
      st = hb_error_set(code, "%stree %d, node %d: decision %u has unknown bits", where, ti, i, dec);
      break;
    }
    int is_cat = (dec & HB_DECISION_CATEGORICAL) != 0;
    if (is_cat != (s->types[f] == HB_FEAT_CATEGORICAL)) {
      st = hb_error_set(code, "%stree %d, node %d: a %s split on %s feature %d", where, ti, i,
                        is_cat ? "categorical" : "numeric", is_cat ? "numeric" : "categorical", f);
      break;
    }
    if (is_cat) {
      int b = t->cat_begin[i], nw = t->cat_nwords[i];
      if (nw < 1 || b < 0 || b > t->cat_nbits_words - nw) {
        st = hb_error_set(code, "%stree %d, node %d: categorical bitset [%d, %d words) outside cat_bits (%d words)",
                          where, ti, i, b, nw, t->cat_nbits_words);
        break;
      }
    } else if (t->threshold_bin[i] < 0 || t->threshold_bin[i] >= HB_MAX_NUM_BIN) {
      st = hb_error_set(code, "%stree %d, node %d: threshold_bin %d out of range", where, ti, i,
                        t->threshold_bin[i]);
      break;
    }
    if (t->internal_count[i] < 0) {
      st = hb_error_set(code, "%stree %d, node %d: negative internal_count", where, ti, i);
      break;
    }
    for (int side = 0; side < 2; side++) {
      int c = side ? t->right[i] : t->left[i];
      const char *nm = side ? "right" : "left";
      if (c >= 0) {
        if (c == 0 || c >= ni) {
          st = hb_error_set(code, "%stree %d, node %d: %s child %d is not a non-root internal node (1..%d)",
                            where, ti, i, nm, c, ni - 1);
          break;
        }
        if (pnode[c] >= 0) {
          st = hb_error_set(code, "%stree %d: internal node %d has two parents (%d and %d)", where, ti, c,
                            pnode[c], i);
          break;
        }
        pnode[c] = i;
      } else {
        int j = ~c;
        if (j >= L) {
          st = hb_error_set(code, "%stree %d, node %d: %s child is leaf %d but the tree has %d leaves",
                            where, ti, i, nm, j, L);
          break;
        }
        if (pleaf[j] >= 0) {
          st = hb_error_set(code, "%stree %d: leaf %d has two parents (%d and %d)", where, ti, j, pleaf[j], i);
          break;
        }
        pleaf[j] = i;
      }
    }
  }
  if (st) goto done;
  /* Each node has at most one parent and the root none, so a walk from the root
   * visits each node once; fewer than ni visits means a detached cycle. */
  int visited = 0, top = 0;
  if (ni > 0) {
    stack[top++] = 0;
    depth[0] = 0;
  }
  while (top > 0) {
    int i = stack[--top];
    visited++;
    for (int side = 0; side < 2; side++) {
      int c = side ? t->right[i] : t->left[i];
      if (c >= 0) {
        depth[c] = depth[i] + 1;
        stack[top++] = c;
      } else if (t->leaf_depth[~c] != depth[i] + 1) {
        st = hb_error_set(code, "%stree %d: leaf %d has leaf_depth %d, but its depth is %d", where, ti, ~c,
                          t->leaf_depth[~c], depth[i] + 1);
        goto done;
      }
    }
  }
  if (visited != ni) {
    st = hb_error_set(code, "%stree %d: %d internal nodes are not reachable from the root", where, ti,
                      ni - visited);
    goto done;
  }
  for (int j = 0; j < L; j++) {
    if (t->leaf_parent[j] != pleaf[j]) {
      st = hb_error_set(code, "%stree %d: leaf %d has leaf_parent %d, but its parent is node %d", where, ti, j,
                        t->leaf_parent[j], pleaf[j]);
      goto done;
    }
    if (t->leaf_count[j] < 0) {
      st = hb_error_set(code, "%stree %d: leaf %d has a negative leaf_count", where, ti, j);
      goto done;
    }
  }
  if (L == 1 && t->leaf_depth[0] != 0) {
    st = hb_error_set(code, "%stree %d: a lone root leaf must have leaf_depth 0", where, ti);
    goto done;
  }
done:
  hb_free(pnode);
  hb_free(pleaf);
  hb_free(depth);
  hb_free(stack);
  return st;
}

/* 0 when the model's counts agree with each other and every tree is well formed. */
static int check_model(const hb_model_t *m, const char *where, int code) {
  int st = hb_config_check(&m->config);
  if (st) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", hb_error_message());
    return hb_error_set(code, "%sconfig: %s", where, msg);
  }
  const hb_schema_t *s = &m->schema;
  if (s->nfeat < 0) return hb_error_set(code, "%snegative feature count", where);
  for (int f = 0; f < s->nfeat; f++) {
    if (s->types[f] != HB_FEAT_NUMERIC && s->types[f] != HB_FEAT_CATEGORICAL && s->types[f] != HB_FEAT_ORDINAL)
      return hb_error_set(code, "%sfeature %d has unknown type %d", where, f, s->types[f]);
    int nl = s->nlevels ? s->nlevels[f] : 0;
    if (nl < 0 || (s->types[f] == HB_FEAT_NUMERIC && nl != 0) || (s->types[f] == HB_FEAT_ORDINAL && nl < 1))
      return hb_error_set(code, "%sfeature %d has %d levels", where, f, nl);
    int mc = s->monotone ? s->monotone[f] : 0;
    if (mc < -1 || mc > 1 || (mc != 0 && s->types[f] == HB_FEAT_CATEGORICAL))
      return hb_error_set(code, "%sfeature %d: monotone constraint %d (must be -1, 0 or 1, and 0 for a categorical "
                          "feature)", where, f, mc);
  }
  if (m->num_class != m->config.num_class)
    return hb_error_set(code, "%snum_class %d differs from the config's %d", where, m->num_class,
                        m->config.num_class);
  if (m->trees_per_iter != m->num_class)
    return hb_error_set(code, "%strees_per_iter %d differs from num_class %d", where, m->trees_per_iter,
                        m->num_class);
  if (m->num_trees < 0) return hb_error_set(code, "%snegative tree count", where);
  int nit = m->num_trees / m->trees_per_iter;
  if (m->best_iteration < 0 || m->best_iteration > nit)
    return hb_error_set(code, "%sbest_iteration %d is not in 0..%d", where, m->best_iteration, nit);
  if (m->nlabel_levels < 0 || m->nmeta < 0) return hb_error_set(code, "%snegative count", where);
  for (int i = 0; i < m->num_trees; i++)
    if ((st = check_tree(m->trees[i], s, i, where, code))) return st;
  return HB_OK;
}

/* ------------------------------------------------------------------ */
/* Writer                                                              */

typedef struct {
  char *buf;
  size_t len, cap;
  int failed;
} sbuf_t;

static void sb_put(sbuf_t *b, const char *s, size_t n) {
  if (b->failed) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n + 1) cap *= 2;
    char *p = realloc(b->buf, cap);  /* not hb_realloc: it may run on a worker thread (the caller reports) */
    if (!p) {
      b->failed = 1;
      return;
    }
    b->buf = p;
    b->cap = cap;
  }
  memcpy(b->buf + b->len, s, n);
  b->len += n;
  b->buf[b->len] = '\0';
}

static void sb_puts(sbuf_t *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_printf(sbuf_t *b, const char *fmt, ...) HB_PRINTF_FMT(2, 3);
static void sb_printf(sbuf_t *b, const char *fmt, ...) {
  char tmp[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof tmp) {
    b->failed = 1;  /* only short, fixed-shape fragments are formatted here */
    return;
  }
  sb_put(b, tmp, (size_t)n);
}

/* v in decimal, as "%d" writes it (these lists are most of a model's text,
 * and vsnprintf per value dominated writing it). */
static void sb_int(sbuf_t *b, int v) {
  char tmp[12];
  int k = (int)sizeof tmp;
  unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
  do {
    tmp[--k] = (char)('0' + u % 10u);
    u /= 10u;
  } while (u);
  if (v < 0) tmp[--k] = '-';
  sb_put(b, tmp + k, sizeof tmp - (size_t)k);
}

/* s percent-encoded (NULL written as the empty string). */
static void sb_str(sbuf_t *b, const char *s) {
  static const char hex[] = "0123456789ABCDEF";
  if (!s) return;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    unsigned c = *p;
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
        c == '_' || c == '-') {
      char ch = (char)c;
      sb_put(b, &ch, 1);
    } else {
      char e[3] = {'%', hex[c >> 4], hex[c & 15]};
      sb_put(b, e, 3);
    }
  }
}

static void sb_double(sbuf_t *b, double x) {
  if (isnan(x)) {
    uint64_t u = dbl_bits(x);
    if (u == CANON_NAN_BITS) sb_puts(b, "nan");
    else sb_printf(b, "nan:%016llx", (unsigned long long)u);
  } else if (isinf(x)) {
    sb_puts(b, x > 0 ? "inf" : "-inf");
  } else {
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%.17g", x);
    if (n < 0 || (size_t)n >= sizeof tmp) b->failed = 1;
    else sb_put(b, tmp, (size_t)n);
  }
}

static void sb_kv_str(sbuf_t *b, const char *key, const char *s) {
  sb_puts(b, key);
  sb_put(b, "=", 1);
  sb_str(b, s);
  sb_put(b, "\n", 1);
}

static void sb_kv_int(sbuf_t *b, const char *key, int v) {
  sb_puts(b, key);
  sb_put(b, "=", 1);
  sb_int(b, v);
  sb_put(b, "\n", 1);
}

static void sb_ints(sbuf_t *b, const char *key, const int *a, int n) {
  sb_puts(b, key);
  sb_put(b, "=", 1);
  for (int i = 0; i < n; i++) {
    if (i) sb_put(b, " ", 1);
    sb_int(b, a[i]);
  }
  sb_put(b, "\n", 1);
}

static void sb_u8s(sbuf_t *b, const char *key, const uint8_t *a, int n) {
  sb_puts(b, key);
  sb_put(b, "=", 1);
  for (int i = 0; i < n; i++) {
    if (i) sb_put(b, " ", 1);
    sb_int(b, a[i]);
  }
  sb_put(b, "\n", 1);
}

static void sb_doubles(sbuf_t *b, const char *key, const double *a, int n) {
  sb_puts(b, key);
  sb_put(b, "=", 1);
  for (int i = 0; i < n; i++) {
    if (i) sb_put(b, " ", 1);
    sb_double(b, a[i]);
  }
  sb_put(b, "\n", 1);
}

static void sb_hex32s(sbuf_t *b, const char *key, const uint32_t *a, int n) {
  sb_puts(b, key);
  sb_put(b, "=", 1);
  for (int i = 0; i < n; i++) sb_printf(b, i ? " %08lx" : "%08lx", (unsigned long)a[i]);
  sb_put(b, "\n", 1);
}

/* 1 when two configurations have the same label_gain. */
static int same_gains(const hb_config_t *a, const hb_config_t *b) {
  if (a->num_label_gain != b->num_label_gain) return 0;
  for (int i = 0; i < a->num_label_gain; i++)
    if (dbl_bits(a->label_gain[i]) != dbl_bits(b->label_gain[i])) return 0;
  return 1;
}

/* Everything before the trees. */
static void write_head(sbuf_t *b, const hb_model_t *m) {
  hb_config_t dflt;
  hb_config_default(&dflt);
  sb_puts(b, "[config]\n");
  for (int k = 0; k < N_CFG_KEYS; k++) {
    if (CFG_KEYS[k].obj == HB_STORE_NO) continue;
    const char *p = (const char *)&m->config + CFG_KEYS[k].off;
    /* a loss's parameter: written for its objective, or when changed (a
     * metric of that loss on another objective's model reads it) */
    if (CFG_KEYS[k].obj >= 0 && CFG_KEYS[k].obj != m->config.objective &&
        (CFG_KEYS[k].type == K_GAINS ? same_gains(&m->config, &dflt)
                                     : memcmp(p, (const char *)&dflt + CFG_KEYS[k].off,
                                              CFG_KEYS[k].type == K_DBL ? sizeof(double) : sizeof(int)) == 0))
      continue;
    switch (CFG_KEYS[k].type) {
      case K_GAINS:
        sb_doubles(b, CFG_KEYS[k].key, m->config.label_gain, m->config.num_label_gain);
        break;
      case K_OBJ: {
        int o;
        memcpy(&o, p, sizeof o);
        sb_printf(b, "%s=%s\n", CFG_KEYS[k].key, OBJ_NAMES[o]);
        break;
      }
      case K_INT: {
        int v;
        memcpy(&v, p, sizeof v);
        /* The thread count does not change the model: always the default, so
         * identical models have identical text and checksum. */
        if (CFG_KEYS[k].off == offsetof(hb_config_t, nthreads)) v = 0;
        sb_kv_int(b, CFG_KEYS[k].key, v);
        break;
      }
      case K_DBL: {
        double v;
        memcpy(&v, p, sizeof v);
        sb_puts(b, CFG_KEYS[k].key);
        sb_put(b, "=", 1);
        sb_double(b, v);
        sb_put(b, "\n", 1);
        break;
      }
      default: {
        uint64_t v;
        memcpy(&v, p, sizeof v);
        sb_printf(b, "%s=%llu\n", CFG_KEYS[k].key, (unsigned long long)v);
      }
    }
  }
  const hb_schema_t *s = &m->schema;
  sb_puts(b, "[schema]\n");
  sb_kv_int(b, "num_features", s->nfeat);
  for (int f = 0; f < s->nfeat; f++) {
    int nl = s->nlevels ? s->nlevels[f] : 0;
    sb_kv_str(b, "feature", s->names ? s->names[f] : NULL);
    sb_printf(b, "type=%s\n", s->types[f] == HB_FEAT_CATEGORICAL ? "categorical"
                              : s->types[f] == HB_FEAT_ORDINAL   ? "ordinal"
                                                                 : "numeric");
    sb_kv_int(b, "num_levels", nl);
    for (int j = 0; j < nl; j++)
      sb_kv_str(b, "level", (s->levels && s->levels[f]) ? s->levels[f][j] : NULL);
  }
  /* only when a constraint is set, so other models' text is as before */
  int any_mono = 0;
  for (int f = 0; s->monotone && f < s->nfeat; f++) any_mono |= s->monotone[f] != 0;
  if (any_mono) sb_ints(b, "monotone_constraints", s->monotone, s->nfeat);
  sb_puts(b, "[labels]\n");
  sb_kv_int(b, "num_labels", m->nlabel_levels);
  for (int i = 0; i < m->nlabel_levels; i++) sb_kv_str(b, "label", m->label_levels[i]);
  sb_puts(b, "[meta]\n");
  sb_kv_int(b, "num_meta", m->nmeta);
  for (int i = 0; i < m->nmeta; i++) {
    sb_kv_str(b, "key", m->meta_keys[i]);
    sb_kv_str(b, "value", m->meta_values[i]);
  }
  sb_puts(b, "[model]\n");
  sb_kv_int(b, "num_class", m->num_class);
  sb_kv_int(b, "trees_per_iter", m->trees_per_iter);
  sb_kv_int(b, "num_trees", m->num_trees);
  sb_kv_int(b, "best_iteration", m->best_iteration);
  if (m->init_score) {
    sb_doubles(b, "init_score", m->init_score, m->trees_per_iter);
  } else { /* NULL init scores read as zeros */
    sb_puts(b, "init_score=");
    for (int k = 0; k < m->trees_per_iter; k++) sb_puts(b, k ? " 0" : "0");
    sb_put(b, "\n", 1);
  }
}

/* Tree i's section. */
static void write_tree(sbuf_t *b, const hb_tree_t *t, int i) {
  int L = t->num_leaves, ni = L - 1;
  sb_puts(b, "[tree ");
  sb_int(b, i);
  sb_puts(b, "]\n");
  sb_kv_int(b, "num_leaves", L);
  sb_ints(b, "split_feature", t->split_feature, ni);
  sb_ints(b, "threshold_bin", t->threshold_bin, ni);
  sb_doubles(b, "threshold", t->threshold, ni);
  sb_u8s(b, "decision", t->decision, ni);
  sb_ints(b, "cat_begin", t->cat_begin, ni);
  sb_ints(b, "cat_nwords", t->cat_nwords, ni);
  sb_ints(b, "left", t->left, ni);
  sb_ints(b, "right", t->right, ni);
  sb_doubles(b, "split_gain", t->split_gain, ni);
  sb_doubles(b, "internal_value", t->internal_value, ni);
  sb_doubles(b, "internal_hess", t->internal_hess, ni);
  sb_ints(b, "internal_count", t->internal_count, ni);
  sb_doubles(b, "leaf_value", t->leaf_value, L);
  sb_doubles(b, "leaf_hess", t->leaf_hess, L);
  sb_ints(b, "leaf_count", t->leaf_count, L);
  sb_ints(b, "leaf_parent", t->leaf_parent, L);
  sb_ints(b, "leaf_depth", t->leaf_depth, L);
  sb_kv_int(b, "num_cat_words", t->cat_nbits_words);
  sb_hex32s(b, "cat_bits", t->cat_bits, t->cat_nbits_words);
}

/* Serialize m (validated first: an inconsistent model is HB_ERR_INTERNAL,
 * never written). The trees, most of the text, are written in parallel, in
 * chunks of consecutive trees joined in order: the text is the same whatever
 * the thread count. */
int hb_model_to_string(const hb_model_t *m, char **out, size_t *len) {
  if (!out || !len) return hb_error_set(HB_ERR_INPUT, "no output given");
  *out = NULL;
  *len = 0;
  if (!m) return hb_error_set(HB_ERR_INPUT, "no model given");
  int st = check_model(m, "cannot save an inconsistent model: ", HB_ERR_INTERNAL);
  if (st) return st;
  enum { TREES_PER_CHUNK = 16 };
  const int nt = m->num_trees, nchunk = (nt + TREES_PER_CHUNK - 1) / TREES_PER_CHUNK;
  sbuf_t head = {0}, all = {0};
  sbuf_t *parts = hb_calloc((size_t)(nchunk > 0 ? nchunk : 1), sizeof *parts);
  if (!parts) return hb_error_set(HB_ERR_NOMEM, "out of memory writing the model text");
  write_head(&head, m);
  int nth = hb_threads_use(m->config.nthreads);
  if (nth > nchunk) nth = nchunk > 0 ? nchunk : 1;
#ifdef _OPENMP
HB_OMP(parallel for num_threads(nth) schedule(dynamic))
#endif
  for (int c = 0; c < nchunk; c++) {
    const int i1 = (c + 1) * TREES_PER_CHUNK < nt ? (c + 1) * TREES_PER_CHUNK : nt;
    for (int i = c * TREES_PER_CHUNK; i < i1; i++) write_tree(&parts[c], m->trees[i], i);
  }
  static const char end[] = "end\n";
  int failed = head.failed;
  size_t body = head.len + sizeof end - 1;
  for (int c = 0; c < nchunk; c++) {
    failed |= parts[c].failed;
    body += parts[c].len;
  }
  if (!failed) {
    uint64_t h = fnv1a_more(FNV_OFFSET, head.buf, head.len);
    for (int c = 0; c < nchunk; c++) h = fnv1a_more(h, parts[c].buf, parts[c].len);
    h = fnv1a_more(h, end, sizeof end - 1);
    sb_printf(&all, "histboost_model\nformat_version=%d\nchecksum=%016llx\n", HB_MODEL_FORMAT_VERSION,
              (unsigned long long)h);
    /* one allocation for the whole text, then the pieces */
    char *p = all.failed ? NULL : realloc(all.buf, all.len + body + 1);
    if (!p) {
      failed = 1;
    } else {
      all.buf = p;
      all.cap = all.len + body + 1;
      sb_put(&all, head.buf, head.len);
      for (int c = 0; c < nchunk; c++) sb_put(&all, parts[c].buf, parts[c].len);
      sb_put(&all, end, sizeof end - 1);
      failed = all.failed;
    }
  }
  hb_free(head.buf);
  for (int c = 0; c < nchunk; c++) hb_free(parts[c].buf);
  hb_free(parts);
  if (failed) {
    hb_free(all.buf);
    return hb_error_set(HB_ERR_NOMEM, "out of memory writing the model text");
  }
  *out = all.buf;
  *len = all.len;
  return HB_OK;
}

/* ------------------------------------------------------------------ */
/* Reader                                                              */

typedef struct {
  const char *text;
  size_t len, pos;
  long lineno;          /* 1-based number of the line last read */
  long total_lines;
  const char *line;     /* the line last read, without its "\n" */
  size_t llen;
} reader_t;

/* Read the next line; 0 at the end of the text. */
static int rd_next(reader_t *r) {
  if (r->pos >= r->len) return 0;
  const char *start = r->text + r->pos;
  const char *nl = memchr(start, '\n', r->len - r->pos);
  r->line = start;
  r->llen = nl ? (size_t)(nl - start) : r->len - r->pos;
  r->pos += r->llen + (nl ? 1 : 0);
  r->lineno++;
  return 1;
}

static long rd_lines_left(const reader_t *r) { return r->total_lines - r->lineno; }

/* Up to 40 bytes of s, non-printable bytes as '?', for messages. */
static const char *snip(const char *s, size_t n, char *buf) {
  size_t k = n < 40 ? n : 40;
  for (size_t i = 0; i < k; i++) {
    unsigned char c = (unsigned char)s[i];
    buf[i] = (c >= 32 && c < 127) ? (char)c : '?';
  }
  if (n > k) {
    memcpy(buf + k, "...", 3);
    k += 3;
  }
  buf[k] = '\0';
  return buf;
}

/* Record "model text, line N: <message>" and return HB_ERR_FORMAT. */
static int rd_err(const reader_t *r, const char *fmt, ...) HB_PRINTF_FMT(2, 3);
static int rd_err(const reader_t *r, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return hb_error_set(HB_ERR_FORMAT, "invalid model text, line %ld: %s", r->lineno, msg);
}

/* Next line must be exactly `want`. */
static int rd_exact(reader_t *r, const char *want) {
  char sb[48];
  if (!rd_next(r)) return rd_err(r, "the text ends where '%s' was expected", want);
  size_t n = strlen(want);
  if (r->llen != n || memcmp(r->line, want, n) != 0)
    return rd_err(r, "expected '%s', found '%s'", want, snip(r->line, r->llen, sb));
  return HB_OK;
}

/* Next line must be "key=value"; *v, *vn point at the value. */
static int rd_key(reader_t *r, const char *key, const char **v, size_t *vn) {
  char sb[48];
  if (!rd_next(r)) return rd_err(r, "the text ends where '%s=' was expected", key);
  size_t n = strlen(key);
  if (r->llen <= n || memcmp(r->line, key, n) != 0 || r->line[n] != '=')
    return rd_err(r, "expected '%s=', found '%s'", key, snip(r->line, r->llen, sb));
  *v = r->line + n + 1;
  *vn = r->llen - n - 1;
  return HB_OK;
}

/* Strict decimal int in [lo, hi]: optional '-', 1..10 digits, nothing else. */
static int parse_int(const char *s, size_t n, long lo, long hi, int *out) {
  char buf[16];
  size_t i = (n > 0 && s[0] == '-') ? 1 : 0;
  if (n <= i || n - i > 10) return -1;
  for (size_t k = i; k < n; k++)
    if (s[k] < '0' || s[k] > '9') return -1;
  memcpy(buf, s, n);
  buf[n] = '\0';
  char *end;
  errno = 0;
  long v = strtol(buf, &end, 10);
  if (errno || *end || v < lo || v > hi) return -1;
  *out = (int)v;
  return 0;
}

static int parse_u64(const char *s, size_t n, uint64_t *out) {
  char buf[24];
  if (n < 1 || n > 20) return -1;
  for (size_t k = 0; k < n; k++)
    if (s[k] < '0' || s[k] > '9') return -1;
  memcpy(buf, s, n);
  buf[n] = '\0';
  char *end;
  errno = 0;
  unsigned long long v = strtoull(buf, &end, 10);
  if (errno || *end) return -1;
  *out = (uint64_t)v;
  return 0;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Exactly `digits` hex digits. */
static int parse_hex(const char *s, size_t n, size_t digits, uint64_t *out) {
  if (n != digits) return -1;
  uint64_t v = 0;
  for (size_t k = 0; k < n; k++) {
    int h = hexval(s[k]);
    if (h < 0) return -1;
    v = (v << 4) | (uint64_t)h;
  }
  *out = v;
  return 0;
}

/* A double as the writer spells it: inf, -inf, nan, nan:<16 hex>, or a finite decimal. */
static int parse_double(const char *s, size_t n, double *out) {
  char buf[48];
  if (n == 3 && memcmp(s, "inf", 3) == 0) {
    *out = HUGE_VAL;
    return 0;
  }
  if (n == 4 && memcmp(s, "-inf", 4) == 0) {
    *out = -HUGE_VAL;
    return 0;
  }
  if (n == 3 && memcmp(s, "nan", 3) == 0) {
    uint64_t u = CANON_NAN_BITS;
    memcpy(out, &u, sizeof u);
    return 0;
  }
  if (n == 20 && memcmp(s, "nan:", 4) == 0) {
    uint64_t u;
    double d;
    if (parse_hex(s + 4, 16, 16, &u)) return -1;
    memcpy(&d, &u, sizeof d);
    if (!isnan(d)) return -1;
    *out = d;
    return 0;
  }
  if (n < 1 || n >= sizeof buf) return -1;
  for (size_t k = 0; k < n; k++) {
    char c = s[k];
    if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E')) return -1;
  }
  memcpy(buf, s, n);
  buf[n] = '\0';
  char *end;
  errno = 0;
  double v = strtod(buf, &end);
  /* ERANGE alone is fine (subnormals); overflow to infinity is not how the writer spells inf. */
  if (end != buf + n || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

/* "key=<int in [lo, hi]>". */
static int rd_int(reader_t *r, const char *key, long lo, long hi, int *out) {
  const char *v;
  size_t vn;
  char sb[48];
  int st = rd_key(r, key, &v, &vn);
  if (st) return st;
  if (parse_int(v, vn, lo, hi, out))
    return rd_err(r, "%s must be an integer in %ld..%ld, found '%s'", key, lo, hi, snip(v, vn, sb));
  return HB_OK;
}

/* Decode a percent-encoded string into a new buffer. */
static int rd_decode(reader_t *r, const char *key, const char *v, size_t vn, char **out) {
  char *d = hb_malloc(vn + 1);
  if (!d) return HB_ERR_NOMEM;
  size_t k = 0;
  for (size_t i = 0; i < vn; i++) {
    unsigned char c = (unsigned char)v[i];
    if (c == '%') {
      int h1 = i + 2 < vn ? hexval(v[i + 1]) : -1;
      int h2 = i + 2 < vn ? hexval(v[i + 2]) : -1;
      if (h1 < 0 || h2 < 0 || (h1 == 0 && h2 == 0)) {
        hb_free(d);
        return rd_err(r, "%s: bad percent escape at byte %zu", key, i + 1);
      }
      d[k++] = (char)(h1 * 16 + h2);
      i += 2;
    } else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
               c == '_' || c == '-') {
      d[k++] = (char)c;
    } else {
      hb_free(d);
      return rd_err(r, "%s: byte %zu (code %u) must be percent-encoded", key, i + 1, (unsigned)c);
    }
  }
  d[k] = '\0';
  *out = d;
  return HB_OK;
}

/* "key=<str>" into a new string. */
static int rd_str(reader_t *r, const char *key, char **out) {
  const char *v;
  size_t vn;
  int st = rd_key(r, key, &v, &vn);
  if (st) return st;
  return rd_decode(r, key, v, vn, out);
}

enum { L_INT, L_U8, L_DBL, L_HEX };

/* "key=<list of n values>" into dst (an int, uint8_t, double or uint32_t array).
 * The number of values is checked before any is parsed. */
static int rd_list(reader_t *r, const char *key, int kind, int n, void *dst) {
  const char *v;
  size_t vn;
  char sb[48];
  int st = rd_key(r, key, &v, &vn);
  if (st) return st;
  size_t count = 0;
  if (vn > 0) {
    count = 1;
    for (size_t i = 0; i < vn; i++) count += v[i] == ' ';
  }
  if (count != (size_t)n) return rd_err(r, "%s has %zu values, expected %d", key, count, n);
  size_t i = 0;
  for (int k = 0; k < n; k++) {
    size_t j = i;
    while (j < vn && v[j] != ' ') j++;
    const char *tok = v + i;
    size_t tn = j - i;
    int bad;
    switch (kind) {
      case L_INT:
        bad = parse_int(tok, tn, -2147483647L - 1, 2147483647L, (int *)dst + k);
        break;
      case L_U8: {
        int x = 0;
        bad = parse_int(tok, tn, 0, 255, &x);
        ((uint8_t *)dst)[k] = (uint8_t)x;
        break;
      }
      case L_DBL:
        bad = parse_double(tok, tn, (double *)dst + k);
        break;
      default: {
        uint64_t x = 0;
        bad = parse_hex(tok, tn, 8, &x);
        ((uint32_t *)dst)[k] = (uint32_t)x;
      }
    }
    if (bad) return rd_err(r, "%s: value %d ('%s') is not valid", key, k + 1, snip(tok, tn, sb));
    i = j + 1;
  }
  return HB_OK;
}

/* "label_gain=<list of 1..HB_RANK_MAX_GAIN dbl>" into c. */
static int rd_gains(reader_t *r, const char *key, hb_config_t *c) {
  const char *v;
  size_t vn;
  const reader_t save = *r;  /* the line is read twice: to count its values, then to parse them */
  int st = rd_key(r, key, &v, &vn);
  if (st) return st;
  int n = vn > 0 ? 1 : 0;
  for (size_t i = 0; i < vn && n <= HB_RANK_MAX_GAIN; i++) n += v[i] == ' ';
  if (n < 1 || n > HB_RANK_MAX_GAIN) return rd_err(r, "%s must have 1 to %d values", key, HB_RANK_MAX_GAIN);
  *r = save;
  double g[HB_RANK_MAX_GAIN];
  if ((st = rd_list(r, key, L_DBL, n, g))) return st;
  c->num_label_gain = n;
  for (int i = 0; i < HB_RANK_MAX_GAIN; i++) c->label_gain[i] = i < n ? g[i] : 0.0;
  return HB_OK;
}

static int rd_config(reader_t *r, hb_config_t *c) {
  char sb[48];
  int st = rd_exact(r, "[config]");
  if (st) return st;
  for (int k = 0; k < N_CFG_KEYS; k++) {
    if (CFG_KEYS[k].obj == HB_STORE_NO) continue;
    const char *key = CFG_KEYS[k].key, *v;
    size_t vn;
    char *p = (char *)c + CFG_KEYS[k].off;
    if (CFG_KEYS[k].obj >= 0) {  /* present only for its objective: absent, it keeps its default */
      const size_t kn = strlen(key);
      reader_t save = *r;
      if (!rd_next(r) || r->llen <= kn || memcmp(r->line, key, kn) != 0 || r->line[kn] != '=') {
        *r = save;
        continue;
      }
      *r = save;
    }
    if (CFG_KEYS[k].type == K_GAINS) {
      if ((st = rd_gains(r, key, c))) return st;
      continue;
    }
    if ((st = rd_key(r, key, &v, &vn))) return st;
    int bad = 0;
    switch (CFG_KEYS[k].type) {
      case K_OBJ: {
        int o = -1;
        for (int i = 0; i < HB_OBJ_COUNT; i++)
          if (vn == strlen(OBJ_NAMES[i]) && memcmp(v, OBJ_NAMES[i], vn) == 0) o = i;
        bad = o < 0;
        memcpy(p, &o, sizeof o);
        break;
      }
      case K_INT: {
        int x = 0;
        bad = parse_int(v, vn, -2147483647L - 1, 2147483647L, &x);
        memcpy(p, &x, sizeof x);
        break;
      }
      case K_DBL: {
        double x = 0;
        bad = parse_double(v, vn, &x);
        memcpy(p, &x, sizeof x);
        break;
      }
      default: {
        uint64_t x = 0;
        bad = parse_u64(v, vn, &x);
        memcpy(p, &x, sizeof x);
      }
    }
    if (bad) return rd_err(r, "%s has an invalid value '%s'", key, snip(v, vn, sb));
  }
  if (hb_config_check(c)) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", hb_error_message());
    return rd_err(r, "[config] is invalid: %s", msg);
  }
  return HB_OK;
}

/* 1 when the next line is "key=...", without consuming it. */
static int rd_peek_key(const reader_t *r, const char *key) {
  reader_t t = *r;
  size_t kn = strlen(key);
  return rd_next(&t) && t.llen > kn && memcmp(t.line, key, kn) == 0 && t.line[kn] == '=';
}

static int rd_schema(reader_t *r, hb_schema_t *s) {
  int n, st;
  char sb[48];
  if ((st = rd_exact(r, "[schema]"))) return st;
  /* Each feature takes at least 3 lines, so n is bounded by the text before anything is allocated. */
  if ((st = rd_int(r, "num_features", 0, rd_lines_left(r) / 3, &n))) return st;
  s->names = hb_calloc((size_t)n, sizeof(char *));
  s->types = hb_calloc((size_t)n, sizeof(int));
  s->nlevels = hb_calloc((size_t)n, sizeof(int));
  s->levels = hb_calloc((size_t)n, sizeof(char **));
  if (!s->names || !s->types || !s->nlevels || !s->levels) return HB_ERR_NOMEM;
  s->nfeat = n;
  for (int f = 0; f < n; f++) {
    const char *v;
    size_t vn;
    int nl;
    if ((st = rd_str(r, "feature", &s->names[f]))) return st;
    if ((st = rd_key(r, "type", &v, &vn))) return st;
    if (vn == 7 && memcmp(v, "numeric", 7) == 0) s->types[f] = HB_FEAT_NUMERIC;
    else if (vn == 11 && memcmp(v, "categorical", 11) == 0) s->types[f] = HB_FEAT_CATEGORICAL;
    else if (vn == 7 && memcmp(v, "ordinal", 7) == 0) s->types[f] = HB_FEAT_ORDINAL;
    else return rd_err(r, "feature %d: type must be numeric, categorical or ordinal, found '%s'", f,
                       snip(v, vn, sb));
    long hi = s->types[f] == HB_FEAT_NUMERIC ? 0 : rd_lines_left(r) - 1;
    if ((st = rd_int(r, "num_levels", 0, hi < 0 ? 0 : hi, &nl))) return st;
    if (nl > 0) {
      if (!(s->levels[f] = hb_calloc((size_t)nl, sizeof(char *)))) return HB_ERR_NOMEM;
      s->nlevels[f] = nl;
      for (int j = 0; j < nl; j++)
        if ((st = rd_str(r, "level", &s->levels[f][j]))) return st;
    }
  }
  if (rd_peek_key(r, "monotone_constraints")) {  /* optional: models without constraints lack it */
    if (!(s->monotone = hb_malloc((size_t)(n > 0 ? n : 1) * sizeof(int)))) return HB_ERR_NOMEM;
    if ((st = rd_list(r, "monotone_constraints", L_INT, n, s->monotone))) return st;
    for (int f = 0; f < n; f++)
      if (s->monotone[f] < -1 || s->monotone[f] > 1 || (s->monotone[f] != 0 && s->types[f] == HB_FEAT_CATEGORICAL))
        return rd_err(r, "monotone_constraints: value %d of feature %d must be -1, 0 or 1, and 0 for a categorical "
                      "feature", s->monotone[f], f + 1);
  }
  return HB_OK;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int rd_labels_meta(reader_t *r, hb_model_t *m) {
  int n, st;
  if ((st = rd_exact(r, "[labels]"))) return st;
  if ((st = rd_int(r, "num_labels", 0, rd_lines_left(r), &n))) return st;
  if (!(m->label_levels = hb_calloc((size_t)n, sizeof(char *)))) return HB_ERR_NOMEM;
  m->nlabel_levels = n;
  for (int i = 0; i < n; i++)
    if ((st = rd_str(r, "label", &m->label_levels[i]))) return st;
  if ((st = rd_exact(r, "[meta]"))) return st;
  if ((st = rd_int(r, "num_meta", 0, rd_lines_left(r) / 2, &n))) return st;
  m->meta_keys = hb_calloc((size_t)n, sizeof(char *));
  m->meta_values = hb_calloc((size_t)n, sizeof(char *));
  if (!m->meta_keys || !m->meta_values) return HB_ERR_NOMEM;
  m->nmeta = n;
  for (int i = 0; i < n; i++) {
    if ((st = rd_str(r, "key", &m->meta_keys[i]))) return st;
    if ((st = rd_str(r, "value", &m->meta_values[i]))) return st;
  }
  /* Keys are unique in a model (hb_model_set_meta replaces); a sorted copy finds repeats. */
  char **sorted = hb_malloc((size_t)n * sizeof(char *));
  if (!sorted) return HB_ERR_NOMEM;
  if (n > 0) memcpy(sorted, m->meta_keys, (size_t)n * sizeof(char *));
  qsort(sorted, (size_t)n, sizeof(char *), cmp_str);
  for (int i = 1; i < n; i++) {
    if (strcmp(sorted[i - 1], sorted[i]) == 0) {
      char sb[48];
      st = rd_err(r, "[meta] has the key '%s' twice", snip(sorted[i], strlen(sorted[i]), sb));
      break;
    }
  }
  hb_free(sorted);
  return st;
}

static int rd_tree(reader_t *r, hb_model_t *m, int ti) {
  char want[32];
  int st, L;
  snprintf(want, sizeof want, "[tree %d]", ti);
  if ((st = rd_exact(r, want))) return st;
  long header_line = r->lineno;
  /* An L-value list takes at least 2L-1 bytes, so L is bounded by the bytes left. */
  long maxL = (long)((r->len - r->pos) / 2 + 1);
  if (maxL > 1L << 30) maxL = 1L << 30;
  if ((st = rd_int(r, "num_leaves", 1, maxL, &L))) return st;
  hb_tree_t *t = hb_tree_create(L);
  if (!t) return HB_ERR_NOMEM;
  if ((st = hb_model_push_tree(m, t))) {
    hb_tree_free(t);
    return st;
  }
  t->num_leaves = L;
  int ni = L - 1;
  if ((st = rd_list(r, "split_feature", L_INT, ni, t->split_feature)) ||
      (st = rd_list(r, "threshold_bin", L_INT, ni, t->threshold_bin)) ||
      (st = rd_list(r, "threshold", L_DBL, ni, t->threshold)) ||
      (st = rd_list(r, "decision", L_U8, ni, t->decision)) ||
      (st = rd_list(r, "cat_begin", L_INT, ni, t->cat_begin)) ||
      (st = rd_list(r, "cat_nwords", L_INT, ni, t->cat_nwords)) ||
      (st = rd_list(r, "left", L_INT, ni, t->left)) || (st = rd_list(r, "right", L_INT, ni, t->right)) ||
      (st = rd_list(r, "split_gain", L_DBL, ni, t->split_gain)) ||
      (st = rd_list(r, "internal_value", L_DBL, ni, t->internal_value)) ||
      (st = rd_list(r, "internal_hess", L_DBL, ni, t->internal_hess)) ||
      (st = rd_list(r, "internal_count", L_INT, ni, t->internal_count)) ||
      (st = rd_list(r, "leaf_value", L_DBL, L, t->leaf_value)) ||
      (st = rd_list(r, "leaf_hess", L_DBL, L, t->leaf_hess)) ||
      (st = rd_list(r, "leaf_count", L_INT, L, t->leaf_count)) ||
      (st = rd_list(r, "leaf_parent", L_INT, L, t->leaf_parent)) ||
      (st = rd_list(r, "leaf_depth", L_INT, L, t->leaf_depth)))
    return st;
  int nw;
  long maxw = (long)((r->len - r->pos) / 9 + 1);
  if (maxw > 1L << 28) maxw = 1L << 28;
  if ((st = rd_int(r, "num_cat_words", 0, maxw, &nw))) return st;
  if (nw > 0) {
    if (!(t->cat_bits = hb_malloc((size_t)nw * sizeof(uint32_t)))) return HB_ERR_NOMEM;
    t->cat_cap_words = nw;
  }
  t->cat_nbits_words = nw;
  if ((st = rd_list(r, "cat_bits", L_HEX, nw, t->cat_bits))) return st;
  char where[64];
  snprintf(where, sizeof where, "invalid model text, line %ld: ", header_line);
  return check_tree(t, &m->schema, ti, where, HB_ERR_FORMAT);
}

static int rd_body(reader_t *r, hb_model_t *m) {
  int st, k, ntrees;
  if ((st = rd_config(r, &m->config))) return st;
  if ((st = rd_schema(r, &m->schema))) return st;
  if ((st = rd_labels_meta(r, m))) return st;
  if ((st = rd_exact(r, "[model]"))) return st;
  if ((st = rd_int(r, "num_class", 1, 1000000, &k))) return st;
  if (k != m->config.num_class) return rd_err(r, "num_class %d differs from the config's %d", k, m->config.num_class);
  m->num_class = k;
  if ((st = rd_int(r, "trees_per_iter", k, k, &m->trees_per_iter))) return st;
  /* Each tree takes at least 20 lines. */
  if ((st = rd_int(r, "num_trees", 0, rd_lines_left(r) / 20, &ntrees))) return st;
  if ((st = rd_int(r, "best_iteration", 0, ntrees / k, &m->best_iteration))) return st;
  /* init_score: k values need at least 2k-1 bytes of this line, checked by rd_list before parsing;
   * bound k by the bytes left before allocating. */
  if ((size_t)k > (r->len - r->pos) / 2 + 1) return rd_err(r, "num_class %d is larger than the text allows", k);
  if (!(m->init_score = hb_calloc((size_t)k, sizeof(double)))) return HB_ERR_NOMEM;
  if ((st = rd_list(r, "init_score", L_DBL, k, m->init_score))) return st;
  if (ntrees > 0) {
    if (!(m->trees = hb_calloc((size_t)ntrees, sizeof(hb_tree_t *)))) return HB_ERR_NOMEM;
    m->cap_trees = ntrees;
  }
  for (int i = 0; i < ntrees; i++)
    if ((st = rd_tree(r, m, i))) return st;
  if ((st = rd_exact(r, "end"))) return st;
  if (rd_next(r)) return rd_err(r, "unexpected text after 'end'");
  return HB_OK;
}

/* Parse and validate a model text; *out is the new model, or NULL with a message. */
int hb_model_from_string(const char *text, size_t len, hb_model_t **out) {
  if (!out) return hb_error_set(HB_ERR_INPUT, "no output given");
  *out = NULL;
  if (!text || len == 0) return hb_error_set(HB_ERR_FORMAT, "invalid model text: it is empty");
  reader_t r = {text, len, 0, 0, 0, NULL, 0};
  /* One pass for line count, NUL bytes and CRLF line ends, so later steps can assume neither. */
  long line = 1;
  for (size_t i = 0; i < len; i++) {
    if (text[i] == '\0')
      return hb_error_set(HB_ERR_FORMAT, "invalid model text, line %ld: contains a NUL byte (not a model text?)", line);
    if (text[i] == '\r')
      return hb_error_set(HB_ERR_FORMAT,
                          "invalid model text, line %ld: contains a carriage return; the format uses \\n line "
                          "ends (was the file converted to CRLF, e.g. by a text-mode transfer?)",
                          line);
    if (text[i] == '\n') line++;
  }
  r.total_lines = text[len - 1] == '\n' ? line - 1 : line;
  int st, ver;
  const char *v;
  size_t vn;
  char sb[48];
  if (!rd_next(&r) || r.llen != 15 || memcmp(r.line, "histboost_model", 15) != 0)
    return hb_error_set(HB_ERR_FORMAT, "not a histboost model text: the first line must be 'histboost_model'");
  if ((st = rd_key(&r, "format_version", &v, &vn))) return st;
  if (parse_int(v, vn, 1, 2147483647L, &ver))
    return rd_err(&r, "format_version must be a positive integer, found '%s'", snip(v, vn, sb));
  if (ver > HB_MODEL_FORMAT_VERSION)
    return rd_err(&r, "the model uses format version %d, newer than this histboost reads (%d): update histboost",
                  ver, HB_MODEL_FORMAT_VERSION);
  uint64_t want;
  if ((st = rd_key(&r, "checksum", &v, &vn))) return st;
  if (parse_hex(v, vn, 16, &want))
    return rd_err(&r, "checksum must be 16 hex digits, found '%s'", snip(v, vn, sb));
  uint64_t got = fnv1a(text + r.pos, len - r.pos);
  if (got != want)
    return rd_err(&r, "checksum mismatch (stored %016llx, computed %016llx): the text was modified or damaged",
                  (unsigned long long)want, (unsigned long long)got);
  hb_model_t *m = hb_model_create();
  if (!m) return HB_ERR_NOMEM;
  if ((st = rd_body(&r, m))) {
    hb_model_free(m);
    return st;
  }
  if ((st = check_model(m, "invalid model text: ", HB_ERR_FORMAT))) {
    hb_model_free(m);
    return st;
  }
  *out = m;
  return HB_OK;
}
