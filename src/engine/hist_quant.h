/* hist_quant.h: integer histograms of quantized gradients (CPU). A row's
 * quantized gradient g and hessian h travel packed in one int32, g * 65536
 * + h (h in [0, 65535]); a histogram bin holds the integer sums as an
 * hb_qbin_t pair (split_quant.h). */
#ifndef HB_HIST_QUANT_H
#define HB_HIST_QUANT_H
#include <stdint.h>
#include "dataset.h"
#include "hist.h"
#include "split_quant.h"

/* The halves of a packed row value, or of a sum of at most rows16 of them
 * (quantize.h): exact, negative gradients included. */
static inline int32_t hb_qpack_h(int32_t p) { return p & 0xffff; }
static inline int32_t hb_qpack_g(int32_t p) { return (p - (p & 0xffff)) / 65536; }

/* Histogram of the rows rows[0..nrows) (increasing; NULL: 0..nrows-1) with
 * packed values q[r] into hist (total_bins pairs), for the features with
 * active[f] != 0. Accumulators hold 16-bit halves for at most rows16 rows
 * before they are added into the pairs. tot_g, tot_h are the rows' sums
 * (a sparse feature's default bin is derived from them). Integer sums: the
 * result does not depend on the thread count or the order of additions. */
void hb_qhist_build(const hb_dataset_t *d, const hb_rowblock_t *rb, const int *rows, int nrows,
                    const int32_t *q, int rows16, int64_t tot_g, int64_t tot_h, const uint8_t *active,
                    hb_qbin_t *hist, int nthreads);

/* hb_qhist_build, then (when it takes more than one thread) then(arg, nth)
 * on the same team once the histogram is whole; returns whether then ran
 * (hb_hist_build_then). */
int hb_qhist_build_then(const hb_dataset_t *d, const hb_rowblock_t *rb, const int *rows, int nrows,
                        const int32_t *q, int rows16, int64_t tot_g, int64_t tot_h, const uint8_t *active,
                        hb_qbin_t *hist, int nthreads, hb_team_fn then, void *arg);

#endif
