/* model.c: the feature schema and the trained model's container (trees, init
 * scores, label levels, free-form metadata). */
#include <string.h>
#include "model.h"
#include "error.h"

/* A copy of s from hb_malloc, or NULL (NULL input gives NULL without error). */
static char *dup_str(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s);
  char *d = hb_malloc(n + 1);
  if (d) memcpy(d, s, n + 1);
  return d;
}

/* An empty schema (no features). */
void hb_schema_init(hb_schema_t *s) {
  s->nfeat = 0;
  s->names = NULL;
  s->types = NULL;
  s->nlevels = NULL;
  s->levels = NULL;
  s->monotone = NULL;
}

/* Free everything s holds (NULL entries allowed, so a half-built schema clears) and re-init it. */
void hb_schema_clear(hb_schema_t *s) {
  if (!s) return;
  for (int f = 0; f < s->nfeat; f++) {
    if (s->names) hb_free(s->names[f]);
    if (s->levels && s->levels[f]) {
      int nl = s->nlevels ? s->nlevels[f] : 0;
      for (int j = 0; j < nl; j++) hb_free(s->levels[f][j]);
      hb_free(s->levels[f]);
    }
  }
  hb_free(s->names);
  hb_free(s->types);
  hb_free(s->nlevels);
  hb_free(s->levels);
  hb_free(s->monotone);
  hb_schema_init(s);
}

/* Deep copy src into dst. dst is overwritten without being freed (clear it first if it
 * holds data); on failure dst is left empty and the status returned. */
int hb_schema_copy(const hb_schema_t *src, hb_schema_t *dst) {
  hb_schema_t s;
  hb_schema_init(&s);
  hb_schema_init(dst);
  int n = src->nfeat;
  if (n < 0) return hb_error_set(HB_ERR_INPUT, "schema has a negative feature count");
  s.names = hb_calloc((size_t)n, sizeof(char *));
  s.types = hb_calloc((size_t)n, sizeof(int));
  s.nlevels = hb_calloc((size_t)n, sizeof(int));
  s.levels = hb_calloc((size_t)n, sizeof(char **));
  if (!s.names || !s.types || !s.nlevels || !s.levels) goto nomem;
  s.nfeat = n;
  if (src->monotone) {
    if (!(s.monotone = hb_malloc((size_t)(n > 0 ? n : 1) * sizeof(int)))) goto nomem;
    if (n > 0) memcpy(s.monotone, src->monotone, (size_t)n * sizeof(int));
  }
  for (int f = 0; f < n; f++) {
    s.types[f] = src->types[f];
    if (src->names && src->names[f] && !(s.names[f] = dup_str(src->names[f]))) goto nomem;
    int nl = src->nlevels ? src->nlevels[f] : 0;
    if (nl > 0 && src->levels && src->levels[f]) {
      s.levels[f] = hb_calloc((size_t)nl, sizeof(char *));
      if (!s.levels[f]) goto nomem;
      s.nlevels[f] = nl;
      for (int j = 0; j < nl; j++)
        if (src->levels[f][j] && !(s.levels[f][j] = dup_str(src->levels[f][j]))) goto nomem;
    }
  }
  *dst = s;
  return HB_OK;
nomem:
  hb_schema_clear(&s);
  return HB_ERR_NOMEM;
}

/* An empty model: default config, no features, one class, no trees. init_score is NULL
 * (read as zeros) until the booster or the reader stores trees_per_iter values from
 * hb_malloc/hb_calloc there. NULL on failure. */
hb_model_t *hb_model_create(void) {
  hb_model_t *m = hb_calloc(1, sizeof *m);
  if (!m) return NULL;
  hb_config_default(&m->config);
  hb_schema_init(&m->schema);
  m->num_class = 1;
  m->trees_per_iter = 1;
  m->init_score = NULL;
  return m;
}

/* Free m and everything it owns (NULL-safe; tolerates a half-built model). */
void hb_model_free(hb_model_t *m) {
  if (!m) return;
  hb_schema_clear(&m->schema);
  hb_free(m->init_score);
  if (m->trees)
    for (int i = 0; i < m->num_trees; i++) hb_tree_free(m->trees[i]);
  hb_free(m->trees);
  if (m->label_levels)
    for (int i = 0; i < m->nlabel_levels; i++) hb_free(m->label_levels[i]);
  hb_free(m->label_levels);
  for (int i = 0; i < m->nmeta; i++) {
    if (m->meta_keys) hb_free(m->meta_keys[i]);
    if (m->meta_values) hb_free(m->meta_values[i]);
  }
  hb_free(m->meta_keys);
  hb_free(m->meta_values);
  hb_free(m);
}

/* Append t (the model owns it from then on). On failure the caller still owns t. */
int hb_model_push_tree(hb_model_t *m, hb_tree_t *t) {
  if (!m || !t) return hb_error_set(HB_ERR_INPUT, "no model or tree given");
  if (m->num_trees == m->cap_trees) {
    if (m->cap_trees > (1 << 29)) return hb_error_set(HB_ERR_NOMEM, "too many trees");
    int cap = m->cap_trees ? 2 * m->cap_trees : 16;
    hb_tree_t **p = hb_realloc(m->trees, (size_t)cap * sizeof *p);
    if (!p) return HB_ERR_NOMEM;
    m->trees = p;
    m->cap_trees = cap;
  }
  m->trees[m->num_trees++] = t;
  return HB_OK;
}

static int same_str(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

/* Whether two schemas describe the same features (names, types, levels). */
static int same_schema(const hb_schema_t *a, const hb_schema_t *b) {
  if (a->nfeat != b->nfeat) return 0;
  for (int f = 0; f < a->nfeat; f++) {
    int na = a->nlevels ? a->nlevels[f] : 0, nb = b->nlevels ? b->nlevels[f] : 0;
    if (!same_str(a->names[f], b->names[f]) || a->types[f] != b->types[f] || na != nb) return 0;
    for (int j = 0; j < na; j++)
      if (!same_str(a->levels[f][j], b->levels[f][j])) return 0;
    if ((a->monotone ? a->monotone[f] : 0) != (b->monotone ? b->monotone[f] : 0)) return 0;
  }
  return 1;
}

int hb_model_prepend(hb_model_t *m, hb_model_t *base, int base_iter) {
  if (!m || !base) return hb_error_set(HB_ERR_INPUT, "no model given");
  if (base_iter < 0 || base_iter > hb_model_num_iterations(base))
    return hb_error_set(HB_ERR_INPUT, "the base model has %d iterations, not %d", hb_model_num_iterations(base),
                        base_iter);
  if (m->trees_per_iter != base->trees_per_iter || m->num_class != base->num_class ||
      m->config.objective != base->config.objective)
    return hb_error_set(HB_ERR_INPUT, "the models differ in objective or classes");
  if (m->config.rf || base->config.rf)
    return hb_error_set(HB_ERR_INPUT, "a random forest cannot be continued (its trees are averaged)");
  if (!same_schema(&m->schema, &base->schema))
    return hb_error_set(HB_ERR_INPUT, "the models' features or monotone constraints differ");
  /* only the base's first base_iter iterations */
  for (int t = base_iter * base->trees_per_iter; t < base->num_trees; t++) hb_tree_free(base->trees[t]);
  base->num_trees = base_iter * base->trees_per_iter;
  int n = base->num_trees + m->num_trees;
  if (n > m->cap_trees) {
    hb_tree_t **p = hb_realloc(m->trees, (size_t)n * sizeof *p);
    if (!p) return HB_ERR_NOMEM;
    m->trees = p;
    m->cap_trees = n;
  }
  memmove(m->trees + base->num_trees, m->trees, (size_t)m->num_trees * sizeof *m->trees);
  memcpy(m->trees, base->trees, (size_t)base->num_trees * sizeof *m->trees);
  m->num_trees = n;
  base->num_trees = 0;  /* m owns them now */
  double *is = m->init_score;
  m->init_score = base->init_score;
  base->init_score = is;
  return HB_OK;
}

/* Set (or replace) key's value; both strings are copied. */
int hb_model_set_meta(hb_model_t *m, const char *key, const char *value) {
  if (!m || !key || !value) return hb_error_set(HB_ERR_INPUT, "meta key and value must be strings");
  char *v = dup_str(value);
  if (!v) return HB_ERR_NOMEM;
  for (int i = 0; i < m->nmeta; i++) {
    if (strcmp(m->meta_keys[i], key) == 0) {
      hb_free(m->meta_values[i]);
      m->meta_values[i] = v;
      return HB_OK;
    }
  }
  char *k = dup_str(key);
  char **nk = k ? hb_realloc(m->meta_keys, (size_t)(m->nmeta + 1) * sizeof(char *)) : NULL;
  if (nk) m->meta_keys = nk;
  char **nv = nk ? hb_realloc(m->meta_values, (size_t)(m->nmeta + 1) * sizeof(char *)) : NULL;
  if (nv) m->meta_values = nv;
  if (!nv) {
    hb_free(k);
    hb_free(v);
    return HB_ERR_NOMEM;
  }
  m->meta_keys[m->nmeta] = k;
  m->meta_values[m->nmeta] = v;
  m->nmeta++;
  return HB_OK;
}

/* Replace the class labels with copies of levels[0..n-1]; on failure the old ones stay. */
int hb_model_set_label_levels(hb_model_t *m, int n, const char *const *levels) {
  if (!m || n < 0 || (n > 0 && !levels)) return hb_error_set(HB_ERR_INPUT, "invalid label levels");
  char **L = hb_calloc((size_t)n, sizeof(char *));
  if (!L) return HB_ERR_NOMEM;
  for (int i = 0; i < n; i++) {
    if (!(L[i] = dup_str(levels[i] ? levels[i] : ""))) {
      for (int j = 0; j < i; j++) hb_free(L[j]);
      hb_free(L);
      return HB_ERR_NOMEM;
    }
  }
  for (int i = 0; i < m->nlabel_levels; i++) hb_free(m->label_levels[i]);
  hb_free(m->label_levels);
  m->label_levels = L;
  m->nlabel_levels = n;
  return HB_OK;
}

/* Complete iterations: num_trees / trees_per_iter (0 for a NULL model). */
int hb_model_num_iterations(const hb_model_t *m) {
  if (!m || m->trees_per_iter < 1) return 0;
  return m->num_trees / m->trees_per_iter;
}
