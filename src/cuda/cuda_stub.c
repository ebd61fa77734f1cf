/* cuda_stub.c: the CUDA interface for builds without the CUDA toolkit, so
 * the engine and glue can ask for the GPU learner and get a clear "no". */
#include <string.h>
#include "cuda.h"
#include "error.h"

static const char *const NO_CUDA =
    "histboost was built without CUDA (no nvcc was found when it was installed): reinstall it on a "
    "machine with the CUDA toolkit (set NVCC or CUDA_HOME if nvcc is not on the PATH), or use device = \"cpu\"";

static int no_cuda(void) { return hb_error_set(HB_ERR_INPUT, "%s", NO_CUDA); }

int hb_cuda_available(void) { return 0; }
const char *hb_cuda_status(void) { return NO_CUDA; }
int hb_cuda_built(void) { return 0; }

int hb_cuda_device_info(hb_cuda_info_t *out) {
  memset(out, 0, sizeof *out);
  return no_cuda();
}

int hb_cuda_row_stride(int nfeat) { return (nfeat + 3) / 4; }

int hb_cuda_binner_create(int64_t rows, int nlevels, hb_cuda_binner_t **out) {
  (void)rows; (void)nlevels;
  *out = NULL;
  return no_cuda();
}
void hb_cuda_binner_free(hb_cuda_binner_t *B) { (void)B; }
int64_t hb_cuda_binner_rows(const hb_cuda_binner_t *B) { (void)B; return 0; }
void *hb_cuda_binner_in(hb_cuda_binner_t *B, int s) { (void)B; (void)s; return NULL; }
const uint8_t *hb_cuda_binner_out(const hb_cuda_binner_t *B, int s) { (void)B; (void)s; return NULL; }
int hb_cuda_binner_run(hb_cuda_binner_t *B, int s, const hb_cuda_bin_job_t *J, int m) {
  (void)B; (void)s; (void)J; (void)m;
  return no_cuda();
}
int hb_cuda_binner_wait(hb_cuda_binner_t *B, int s, int num_bin, long long *cnt) {
  (void)B; (void)s; (void)num_bin; (void)cnt;
  return no_cuda();
}

int hb_cuda_learner_create(const hb_config_t *cfg, const hb_dataset_t *d, const double *start,
                           hb_cuda_learner_t **out) {
  (void)cfg; (void)d; (void)start;
  *out = NULL;
  return no_cuda();
}
void hb_cuda_learner_free(hb_cuda_learner_t *L) { (void)L; }
int hb_cuda_learner_add_valid(hb_cuda_learner_t *L, int nrow, const double *start, int *data) {
  (void)L; (void)nrow; (void)start; (void)data;
  return no_cuda();
}
int hb_cuda_learner_upload(hb_cuda_learner_t *L, int data, int row0, int n, const uint32_t *words) {
  (void)L; (void)data; (void)row0; (void)n; (void)words;
  return no_cuda();
}
int hb_cuda_learner_round(hb_cuda_learner_t *L, int iter, double rate, const uint8_t *usable, hb_cuda_tree_t *trees) {
  (void)L; (void)iter; (void)rate; (void)usable; (void)trees;
  return no_cuda();
}
int hb_cuda_learner_reserve(hb_cuda_learner_t *L, int iter) {
  (void)L; (void)iter;
  return no_cuda();
}
int hb_cuda_learner_add_tree(hb_cuda_learner_t *L, int data, int tree, int num_leaves, const double *values,
                             double factor) {
  (void)L; (void)data; (void)tree; (void)num_leaves; (void)values; (void)factor;
  return no_cuda();
}
int hb_cuda_learner_set_monotone(hb_cuda_learner_t *L, const int8_t *mono) {
  (void)L; (void)mono;
  return no_cuda();
}
int hb_cuda_learner_set_interactions(hb_cuda_learner_t *L, int ngroups, const uint8_t *grp_feat,
                                     const uint8_t *grp_col, const int *col_first, int ncol) {
  (void)L; (void)ngroups; (void)grp_feat; (void)grp_col; (void)col_first; (void)ncol;
  return no_cuda();
}
int hb_cuda_learner_set_dist(hb_cuda_learner_t *L, const struct hb_dist *dist, int64_t row0, int64_t nglobal) {
  (void)L; (void)dist; (void)row0; (void)nglobal;
  return no_cuda();
}
int hb_cuda_use_device_of(int local_rank) {
  (void)local_rank;
  return no_cuda();
}
int hb_cuda_learner_set_gradients(hb_cuda_learner_t *L, const double *gh) {
  (void)L; (void)gh;
  return no_cuda();
}
int hb_cuda_learner_leaf_rows(hb_cuda_learner_t *L, int *leaf_of_row, uint8_t *inbag) {
  (void)L; (void)leaf_of_row; (void)inbag;
  return no_cuda();
}
int hb_cuda_learner_set_leaf_values(hb_cuda_learner_t *L, const double *values) {
  (void)L; (void)values;
  return no_cuda();
}
int hb_cuda_learner_diverged(const hb_cuda_learner_t *L) {
  (void)L;
  return 0;
}
int hb_cuda_learner_scores(hb_cuda_learner_t *L, int data, double *out) {
  (void)L; (void)data; (void)out;
  return no_cuda();
}
void hb_cuda_learner_profile(hb_cuda_learner_t *L, int on) { (void)L; (void)on; }
void hb_cuda_learner_get_profile(const hb_cuda_learner_t *L, hb_cuda_profile_t *out) {
  (void)L;
  memset(out, 0, sizeof *out);
}
int hb_cuda_hist_check(int nrow, int nfeat, const int *num_bin, const int *hist_offset, int total_bins,
                       const uint32_t *words, const int *rows, int nrows, const double *g, const double *h,
                       int quant_bits, int mode, int smem_limit, int reps, int64_t *out_g, int64_t *out_h,
                       int *exp_g, int *exp_h, double *ms) {
  (void)quant_bits;
  (void)nrow; (void)nfeat; (void)num_bin; (void)hist_offset; (void)total_bins; (void)words; (void)rows;
  (void)nrows; (void)g; (void)h; (void)mode; (void)smem_limit; (void)reps; (void)out_g; (void)out_h;
  (void)exp_g; (void)exp_h; (void)ms;
  return no_cuda();
}
int hb_cuda_copy_bandwidth(double bytes, int reps, double *gbps) {
  (void)bytes; (void)reps;
  *gbps = 0;
  return no_cuda();
}

int hb_cuda_predictor_create(const hb_cuda_forest_t *f, int nrow, int leaf, int has_offset, int sparse,
                             int64_t nnz, int max_row_nnz, hb_cuda_predictor_t **out) {
  (void)f; (void)nrow; (void)leaf; (void)has_offset; (void)sparse; (void)nnz; (void)max_row_nnz;
  *out = NULL;
  return no_cuda();
}
void hb_cuda_predictor_free(hb_cuda_predictor_t *P) { (void)P; }
int hb_cuda_predictor_block_rows(const hb_cuda_predictor_t *P) {
  (void)P;
  return 1;
}
int hb_cuda_predictor_block_nnz(const hb_cuda_predictor_t *P) {
  (void)P;
  return 0;
}
int hb_cuda_predictor_buffers(hb_cuda_predictor_t *P, int s, hb_cuda_pslot_t *out) {
  (void)P; (void)s;
  memset(out, 0, sizeof *out);
  return no_cuda();
}
int hb_cuda_predictor_launch(hb_cuda_predictor_t *P, int s, int nb, int nnz) {
  (void)P; (void)s; (void)nb; (void)nnz;
  return no_cuda();
}
int hb_cuda_predictor_wait(hb_cuda_predictor_t *P, int s) {
  (void)P; (void)s;
  return no_cuda();
}

int hb_cuda_shap_create(const hb_cuda_shap_forest_t *f, int nrow, int sparse, int64_t nnz, int max_row_nnz,
                        hb_cuda_shap_t **out) {
  (void)f; (void)nrow; (void)sparse; (void)nnz; (void)max_row_nnz;
  *out = NULL;
  return no_cuda();
}
void hb_cuda_shap_free(hb_cuda_shap_t *S) { (void)S; }
int hb_cuda_shap_block_rows(const hb_cuda_shap_t *S) {
  (void)S;
  return 1;
}
int hb_cuda_shap_block_nnz(const hb_cuda_shap_t *S) {
  (void)S;
  return 0;
}
int hb_cuda_shap_buffers(hb_cuda_shap_t *S, int s, hb_cuda_sslot_t *out) {
  (void)S; (void)s;
  memset(out, 0, sizeof *out);
  return no_cuda();
}
int hb_cuda_shap_launch(hb_cuda_shap_t *S, int s, int nb, int nnz) {
  (void)S; (void)s; (void)nb; (void)nnz;
  return no_cuda();
}
int hb_cuda_shap_wait(hb_cuda_shap_t *S, int s) {
  (void)S; (void)s;
  return no_cuda();
}
