// bin.cu: binning on the device (hb_dataset(device = "cuda")): each
// feature's values go up once, in chunks the host stages in pinned memory
// (engine/dataset.c, on its threads), and come back as bins with their
// counts. The bin boundaries and level tables are the host's (dataset.c
// places them from its row sample), and the rules are the CPU's: the first
// value bin whose upper bound is at least the value (the same lower-bound
// search as dataset.c's numeric_bin), NaN and NA to the missing bin, a
// factor's codes through its level table, codes outside 1..nlevels to the
// missing bin. So the bins are the CPU's, byte for byte.
#include <climits>
#include <cmath>
#include <new>
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

// Two slots, each a pinned host buffer the engine stages a chunk of values
// in, the device's copies, and pinned buffers for the bins and counts coming
// back: the device bins one slot's chunk while the host stages the other's.
struct hb_cuda_binner {
  int64_t rows;               // values a chunk holds at most
  int nlev;                   // levels a factor table holds at most
  cudaStream_t st[2];
  double *h_in[2], *d_in[2];  // staged values (doubles, or int32 in the same bytes)
  double *h_tab[2], *d_tab[2];  // the chunk's bounds (doubles) or level table (bytes)
  uint8_t *h_out[2], *d_out[2];
  unsigned long long *h_cnt[2], *d_cnt[2];
  int sms;
};

extern "C" void hb_cuda_binner_free(hb_cuda_binner_t *B) {
  if (!B) return;
  for (int s = 0; s < 2; s++) {
    if (B->st[s]) cudaStreamSynchronize(B->st[s]);
    cudaFreeHost(B->h_in[s]);
    cudaFreeHost(B->h_tab[s]);
    cudaFreeHost(B->h_out[s]);
    cudaFreeHost(B->h_cnt[s]);
    cudaFree(B->d_in[s]);
    cudaFree(B->d_tab[s]);
    cudaFree(B->d_out[s]);
    cudaFree(B->d_cnt[s]);
    if (B->st[s]) cudaStreamDestroy(B->st[s]);
  }
  delete B;
}

extern "C" int hb_cuda_binner_create(int64_t rows, int nlevels, hb_cuda_binner_t **out) {
  *out = NULL;
  if (!hb_cuda_available()) return hb_error_set(HB_ERR_INPUT, "%s", hb_cuda_status());
  hb_cuda_binner_t *B = new (std::nothrow) hb_cuda_binner();
  if (!B) return hb_error_set(HB_ERR_NOMEM, "out of memory for GPU binning");
  int st = HB_OK;
  B->rows = rows < 1 ? 1 : rows < kBinChunk ? rows : kBinChunk;
  B->nlev = nlevels < 1 ? 1 : nlevels;
  // a table slot: HB_MAX_NUM_BIN bounds, or nlev bytes of levels, in doubles
  const size_t tab = ((size_t)B->nlev + 7) / 8 > HB_MAX_NUM_BIN ? ((size_t)B->nlev + 7) / 8 : HB_MAX_NUM_BIN;
  {
    size_t fr = 0, tot = 0;
    int dev = 0;
    HB_CUDA_TRY_FAIL(cudaMemGetInfo(&fr, &tot), "cudaMemGetInfo");
    const double need = 2.0 * ((double)B->rows * (sizeof(double) + 1) + (double)tab * sizeof(double)) + 65536.0;
    if (need > 0.9 * (double)fr) {
      st = hb_error_set(HB_ERR_NOMEM,
                        "binning on the GPU needs %.0f MB, but %.0f MB of the GPU's %.0f MB are free; use device = "
                        "\"cpu\"",
                        need / 1e6 + 0.5, (double)fr / 1e6, (double)tot / 1e6);
      goto fail;
    }
    HB_CUDA_TRY_FAIL(cudaGetDevice(&dev), "cudaGetDevice");
    HB_CUDA_TRY_FAIL(cudaDeviceGetAttribute(&B->sms, cudaDevAttrMultiProcessorCount, dev), "querying the GPU");
  }
  for (int s = 0; s < 2; s++) {
    HB_CUDA_TRY_FAIL(cudaStreamCreateWithFlags(&B->st[s], cudaStreamNonBlocking), "creating a stream");
    HB_CUDA_HALLOC1(B->h_in[s], B->rows, "binning's staged values");
    HB_CUDA_DALLOC1(B->d_in[s], B->rows, "binning's values");
    HB_CUDA_HALLOC1(B->h_tab[s], tab, "binning's staged table");
    HB_CUDA_DALLOC1(B->d_tab[s], tab, "binning's table");
    HB_CUDA_HALLOC1(B->h_out[s], B->rows, "binning's bins");
    HB_CUDA_DALLOC1(B->d_out[s], B->rows, "binning's bins");
    HB_CUDA_HALLOC1(B->h_cnt[s], HB_MAX_NUM_BIN, "binning's counts");
    HB_CUDA_DALLOC1(B->d_cnt[s], HB_MAX_NUM_BIN, "binning's counts");
  }
  *out = B;
  return HB_OK;
fail:
  hb_cuda_binner_free(B);
  return st;
}

extern "C" int64_t hb_cuda_binner_rows(const hb_cuda_binner_t *B) { return B ? B->rows : 0; }
extern "C" void *hb_cuda_binner_in(hb_cuda_binner_t *B, int s) { return B && s >= 0 && s < 2 ? B->h_in[s] : NULL; }
extern "C" const uint8_t *hb_cuda_binner_out(const hb_cuda_binner_t *B, int s) {
  return B && s >= 0 && s < 2 ? B->h_out[s] : NULL;
}

extern "C" int hb_cuda_binner_run(hb_cuda_binner_t *B, int s, const hb_cuda_bin_job_t *J, int m) {
  if (!B || s < 0 || s > 1 || m < 0 || m > B->rows || J->num_bin < 1 || J->num_bin > HB_MAX_NUM_BIN ||
      (J->kind == HB_CUDA_BIN_FACTOR && J->nlevels > B->nlev))
    return hb_error_set(HB_ERR_INTERNAL, "GPU binning: a chunk the binner cannot take");
  cudaStream_t st = B->st[s];
  size_t tab = 0;
  if (J->kind == HB_CUDA_BIN_FACTOR) {
    tab = (size_t)J->nlevels;
    if (tab) memcpy(B->h_tab[s], J->level_bin, tab);
  } else if (J->num_bin > 1) {
    tab = sizeof(double) * (size_t)(J->num_bin - 1);
    memcpy(B->h_tab[s], J->upper, tab);
  }
  if (tab) HB_CUDA_TRY(cudaMemcpyAsync(B->d_tab[s], B->h_tab[s], tab, cudaMemcpyHostToDevice, st), "copying a table to the GPU");
  const size_t width = J->kind == HB_CUDA_BIN_DOUBLE ? sizeof(double) : sizeof(int);
  HB_CUDA_TRY(cudaMemsetAsync(B->d_cnt[s], 0, sizeof(unsigned long long) * HB_MAX_NUM_BIN, st), "clearing counts");
  if (m > 0) {
    HB_CUDA_TRY(cudaMemcpyAsync(B->d_in[s], B->h_in[s], width * (size_t)m, cudaMemcpyHostToDevice, st),
                "copying values to the GPU");
    int grid = (m + kBinThreads - 1) / kBinThreads;
    if (grid > 8 * B->sms) grid = 8 * B->sms;
    k_bin<<<grid, kBinThreads, 0, st>>>(J->kind, B->d_in[s], (const int *)B->d_in[s], m, B->d_tab[s],
                                        (const uint8_t *)B->d_tab[s], J->nlevels, J->num_bin, B->d_out[s], B->d_cnt[s]);
    HB_CUDA_TRY(cudaGetLastError(), "the binning kernel");
    HB_CUDA_TRY(cudaMemcpyAsync(B->h_out[s], B->d_out[s], (size_t)m, cudaMemcpyDeviceToHost, st),
                "copying bins from the GPU");
  }
  HB_CUDA_TRY(cudaMemcpyAsync(B->h_cnt[s], B->d_cnt[s], sizeof(unsigned long long) * HB_MAX_NUM_BIN,
                              cudaMemcpyDeviceToHost, st),
              "copying bin counts from the GPU");
  return HB_OK;
}

extern "C" int hb_cuda_binner_wait(hb_cuda_binner_t *B, int s, int num_bin, long long *cnt) {
  if (!B || s < 0 || s > 1) return hb_error_set(HB_ERR_INTERNAL, "GPU binning: no slot %d", s);
  HB_CUDA_TRY(cudaStreamSynchronize(B->st[s]), "binning on the GPU");
  for (int b = 0; b < num_bin && b < HB_MAX_NUM_BIN; b++) cnt[b] += (long long)B->h_cnt[s][b];
  return HB_OK;
}
