/* quantize.c: the CPU's per-tree rounding of gradients and hessians
 * (quantize.h holds the rules it shares with the GPU, src/cuda/gradient.cu). */
#include <math.h>
#include "quantize.h"
#include "error.h"
#include "threads.h"

/* The largest e with m * 2^e * rows <= 2^bits (0 for m == 0), as the GPU. */
static int fixed_exponent(double m, double rows, int bits) {
  if (!(m > 0)) return 0;
  return ilogb(ldexp(1.0, bits) / (m * rows));
}

int hb_quantize_tree(const hb_config_t *cfg, uint64_t tree, int n, const double *gh, int32_t *q, hb_qtree_t *out,
                     int nthreads) {
  double mg = 0, mh = 0, lh = INFINITY;
  int nan = 0, nth = hb_threads_use(nthreads);
  (void)nth;
  /* max and min do not depend on the order: the same scales for any thread count */
#pragma omp parallel for num_threads(nth) schedule(static) reduction(max : mg, mh) reduction(min : lh) \
    reduction(| : nan) if (n > 65536)
  for (int i = 0; i < n; i++) {
    double ag = fabs(gh[2 * (size_t)i]), ah = fabs(gh[2 * (size_t)i + 1]);
    if (ag != ag || ah != ah) { nan = 1; continue; }
    if (ag > mg) mg = ag;
    if (ah > mh) mh = ah;
    if (ah < lh) lh = ah;
  }
  if (nan) mg = INFINITY;  /* NaN counts as infinite */
  if (!(mg <= 1e300) || !(mh <= 1e300))
    return hb_error_set(HB_ERR_INPUT, "gradients or hessians are not finite: training diverged");
  const int lg = hb_quant_grad_levels(cfg->grad_bits);
  const int lhl = lh == mh ? 0 : hb_quant_hess_levels(cfg->grad_bits);  /* a constant hessian stays exact */
  const double sg = hb_quant_scale(mg, lg), sh = lhl ? hb_quant_scale(mh, lhl) : (mh > 0 ? mh : 1.0);
  const int stoch = cfg->stochastic_rounding;
  const uint64_t head = hb_quant_head(cfg->seed, tree);
#pragma omp parallel for num_threads(nth) schedule(static) if (n > 65536)
  for (int i = 0; i < n; i++) {
    int g = hb_quant_round(gh[2 * (size_t)i], sg, hb_quant_uniform_from(head, (uint64_t)i, 0), stoch, -lg, lg);
    int h = lhl ? hb_quant_round(gh[2 * (size_t)i + 1], sh, hb_quant_uniform_from(head, (uint64_t)i, 1), stoch, 0,
                                 lhl)
                : 1;
    q[i] = g * 65536 + h;
  }
  out->q = q;
  out->sg = sg;
  out->sh = sh;
  out->rows16 = hb_quant_rows16(lg, lhl ? lhl : 1);
  out->refit = cfg->refit_leaves;
  out->fg = fixed_exponent(mg, (double)n, 62);
  out->fh = fixed_exponent(mh, (double)n, 62);
  return HB_OK;
}
