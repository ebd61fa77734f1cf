/* test_engine.h: small reads of engine structures that only the C tests
 * need (the package never calls them, so they are not in the engine):
 * a raw value's bin under a mapper, a stored row's bin, a model's metadata
 * value, and histogram subtraction. Written plainly, as references. */
#ifndef HB_TEST_ENGINE_H
#define HB_TEST_ENGINE_H
#include <math.h>
#include <string.h>
#include "dataset.h"
#include "hist.h"
#include "model.h"

/* Bin of a raw value for one feature: numeric, the first b with
 * v <= upper[b] (NaN: the missing bin, num_bin - 1); categorical, v is the
 * level code as a double (NaN, out of range or not whole: the missing bin). */
static inline int test_binmapper_bin(const hb_binmapper_t *m, double v) {
  if (m->type == HB_FEAT_NUMERIC) {
    if (isnan(v) || m->num_bin < 2) return m->num_bin - 1;
    for (int b = 0; b < m->num_bin - 1; b++)
      if (v <= m->upper[b]) return b;
    return m->num_bin - 2;
  }
  if (!(v >= 1.0 && v <= (double)m->nlevels) || v != floor(v)) return m->num_bin - 1;
  return m->level_bin[(int)v - 1];
}

/* Bin of row `row` of feature f as stored: dense, direct; sparse, the stored
 * entry of that row, else the feature's default bin. */
static inline int test_dataset_bin(const hb_dataset_t *d, int f, int row) {
  const hb_featstore_t *st = &d->store[f];
  if (!st->sparse) return st->bins[row];
  for (int i = 0; i < st->nnz; i++)
    if (st->rows[i] == row) return st->vals[i];
  return d->mappers[f].default_bin;
}

/* The value stored with the model for key (borrowed), or NULL when absent. */
static inline const char *test_model_get_meta(const hb_model_t *m, const char *key) {
  for (int i = 0; m && key && i < m->nmeta; i++)
    if (strcmp(m->meta_keys[i], key) == 0) return m->meta_values[i];
  return NULL;
}

/* a -= b over the active features' bins (NULL: all). */
static inline void test_hist_subtract(const hb_dataset_t *d, const uint8_t *active, hb_histbin_t *a,
                                      const hb_histbin_t *b) {
  for (int f = 0; f < d->nfeat; f++) {
    if (active && !active[f]) continue;
    for (int k = d->hist_offset[f]; k < d->hist_offset[f + 1]; k++) {
      a[k].g -= b[k].g;
      a[k].h -= b[k].h;
    }
  }
}

#endif
