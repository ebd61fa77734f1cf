// bin.cu: binning on the device (hb_dataset(device = "cuda")): each
// feature's values go up once, in chunks, and come back as bins with their
// counts. The bin boundaries and level tables are the host's (dataset.c
// places them from its row sample), and the rules are the CPU's: the first
// value bin whose upper bound is at least the value (the same lower-bound
// search as dataset.c's numeric_bin), NaN and NA to the missing bin, a
// factor's codes through its level table, codes outside 1..nlevels to the
// missing bin. So the bins are the CPU's, byte for byte.
#include <climits>
#include <cmath>
#include <cuda_runtime.h>
#include "learner.cuh"

namespace {

constexpr int kBinThreads = 256;
constexpr int64_t kBinChunk = (int64_t)1 << 22;  // rows a chunk: 32 MB of doubles

// Bins of n values of one feature (kind: cuda.h's HB_CUDA_BIN_*) into out,
// their counts added to cnt[0..num_bin).
__global__ void k_bin(int kind, const double *dbl, const int *i32, int n, const double *upper,
                      const uint8_t *level_bin, int nlevels, int num_bin, uint8_t *out, unsigned long long *cnt) {
  __shared__ double su[HB_MAX_NUM_BIN];
  __shared__ unsigned int sc[HB_MAX_NUM_BIN];
  for (int k = threadIdx.x; k < HB_MAX_NUM_BIN; k += blockDim.x) {
    sc[k] = 0;
    if (kind != HB_CUDA_BIN_FACTOR && k < num_bin - 1) su[k] = upper[k];
  }
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    int b;
    if (kind == HB_CUDA_BIN_FACTOR) {
      const int c = i32[i];
      b = c < 1 || c > nlevels ? num_bin - 1 : level_bin[c - 1];
    } else {
      double v;
      if (kind == HB_CUDA_BIN_DOUBLE) {
        v = dbl[i];
      } else {
        const int x = i32[i];
        v = x == HB_NA_INT ? (double)NAN : (double)x;
      }
      if (isnan(v) || num_bin < 2) {
        b = num_bin - 1;
      } else {  // upper[num_bin - 2] is +Inf, so some bound always qualifies
        int idx = 0, len = num_bin - 1;
        while (len > 1) {
          const int half = len >> 1;
          idx += su[idx + half - 1] < v ? half : 0;
          len -= half;
        }
        b = idx;
      }
    }
    out[i] = (uint8_t)b;
    atomicAdd(&sc[b], 1u);
  }
  __syncthreads();
  for (int k = threadIdx.x; k < num_bin; k += blockDim.x)
    if (sc[k]) atomicAdd(&cnt[k], (unsigned long long)sc[k]);
}

}  // namespace

extern "C" int hb_cuda_bin(const hb_cuda_bin_job_t *jobs, int njobs) {
  if (njobs <= 0) return HB_OK;
  if (!hb_cuda_available()) return hb_error_set(HB_ERR_INPUT, "%s", hb_cuda_status());
  int64_t most = 0;
  int nlev = 1;
  for (int j = 0; j < njobs; j++) {
    if (jobs[j].n > most) most = jobs[j].n;
    if (jobs[j].kind == HB_CUDA_BIN_FACTOR && jobs[j].nlevels > nlev) nlev = jobs[j].nlevels;
  }
  const int64_t chunk = most < kBinChunk ? (most > 0 ? most : 1) : kBinChunk;
  int st = HB_OK;
  cudaStream_t s = NULL;
  double *d_in = NULL, *d_upper = NULL;
  uint8_t *d_out = NULL, *d_lev = NULL;
  unsigned long long *d_cnt = NULL, h_cnt[HB_MAX_NUM_BIN];
  int sms = 1, dev = 0;
  {
    size_t fr = 0, tot = 0;
    HB_CUDA_TRY_FAIL(cudaMemGetInfo(&fr, &tot), "cudaMemGetInfo");
    const double need = (double)chunk * (sizeof(double) + 1) + (double)nlev + 4096.0;
    if (need > 0.9 * (double)fr) {
      st = hb_error_set(HB_ERR_NOMEM,
                        "binning on the GPU needs %.0f MB, but %.0f MB of the GPU's %.0f MB are free; use device = "
                        "\"cpu\"",
                        need / 1e6 + 0.5, (double)fr / 1e6, (double)tot / 1e6);
      goto fail;
    }
    HB_CUDA_TRY_FAIL(cudaGetDevice(&dev), "cudaGetDevice");
    HB_CUDA_TRY_FAIL(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "querying the GPU");
  }
  HB_CUDA_TRY_FAIL(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "creating a stream");
  HB_CUDA_DALLOC1(d_in, chunk, "binning's values");
  HB_CUDA_DALLOC1(d_out, chunk, "binning's bins");
  HB_CUDA_DALLOC1(d_upper, HB_MAX_NUM_BIN, "binning's bounds");
  HB_CUDA_DALLOC1(d_lev, nlev, "binning's level table");
  HB_CUDA_DALLOC1(d_cnt, HB_MAX_NUM_BIN, "binning's counts");
  for (int j = 0; j < njobs; j++) {
    const hb_cuda_bin_job_t *J = &jobs[j];
    if (J->num_bin < 1 || J->num_bin > HB_MAX_NUM_BIN) {
      st = hb_error_set(HB_ERR_INTERNAL, "GPU binning: feature %d has %d bins", j + 1, J->num_bin);
      goto fail;
    }
    HB_CUDA_TRY_FAIL(cudaMemsetAsync(d_cnt, 0, sizeof(unsigned long long) * HB_MAX_NUM_BIN, s), "clearing counts");
    if (J->kind == HB_CUDA_BIN_FACTOR) {
      if (J->nlevels > 0)
        HB_CUDA_TRY_FAIL(cudaMemcpyAsync(d_lev, J->level_bin, (size_t)J->nlevels, cudaMemcpyHostToDevice, s),
                         "copying a level table to the GPU");
    } else if (J->num_bin > 1) {
      HB_CUDA_TRY_FAIL(cudaMemcpyAsync(d_upper, J->upper, sizeof(double) * (size_t)(J->num_bin - 1),
                                       cudaMemcpyHostToDevice, s),
                       "copying bin bounds to the GPU");
    }
    const size_t width = J->kind == HB_CUDA_BIN_DOUBLE ? sizeof(double) : sizeof(int);
    for (int64_t r0 = 0; r0 < J->n; r0 += chunk) {
      const int m = (int)(J->n - r0 < chunk ? J->n - r0 : chunk);
      const void *src = J->kind == HB_CUDA_BIN_DOUBLE ? (const void *)(J->dbl + r0) : (const void *)(J->i32 + r0);
      HB_CUDA_TRY_FAIL(cudaMemcpyAsync(d_in, src, width * (size_t)m, cudaMemcpyHostToDevice, s),
                       "copying values to the GPU");
      int grid = (m + kBinThreads - 1) / kBinThreads;
      if (grid > 8 * sms) grid = 8 * sms;
      k_bin<<<grid, kBinThreads, 0, s>>>(J->kind, (const double *)d_in, (const int *)d_in, m, d_upper, d_lev,
                                         J->nlevels, J->num_bin, d_out, d_cnt);
      HB_CUDA_TRY_FAIL(cudaGetLastError(), "the binning kernel");
      HB_CUDA_TRY_FAIL(cudaMemcpyAsync(J->bins + r0, d_out, (size_t)m, cudaMemcpyDeviceToHost, s),
                       "copying bins from the GPU");
    }
    HB_CUDA_TRY_FAIL(cudaMemcpyAsync(h_cnt, d_cnt, sizeof(unsigned long long) * (size_t)J->num_bin,
                                     cudaMemcpyDeviceToHost, s),
                     "copying bin counts from the GPU");
    HB_CUDA_TRY_FAIL(cudaStreamSynchronize(s), "binning on the GPU");
    for (int b = 0; b < J->num_bin; b++) J->cnt[b] += (long long)h_cnt[b];
  }
fail:
  if (s) cudaStreamSynchronize(s);
  cudaFree(d_in);
  cudaFree(d_out);
  cudaFree(d_upper);
  cudaFree(d_lev);
  cudaFree(d_cnt);
  if (s) cudaStreamDestroy(s);
  return st;
}
