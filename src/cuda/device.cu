// device.cu: is there a usable GPU, what is it, and how fast can it copy?
// (CUDA builds; cuda_stub.c stands in otherwise.)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include "learner.cuh"

static char hb_cuda_status_buf[320];

extern "C" int hb_cuda_built(void) { return 1; }

// 1 when a CUDA device can be used. The runtime is linked statically, so a
// machine without the NVIDIA driver answers cudaErrorInsufficientDriver or
// cudaErrorNoDevice here instead of failing to load the package.
extern "C" int hb_cuda_available(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    snprintf(hb_cuda_status_buf, sizeof hb_cuda_status_buf,
             "histboost was built with CUDA %d.%d, but no usable GPU was found (%s)", CUDART_VERSION / 1000,
             (CUDART_VERSION % 1000) / 10, cudaGetErrorString(e));
    cudaGetLastError();
    return 0;
  }
  if (n < 1) {
    snprintf(hb_cuda_status_buf, sizeof hb_cuda_status_buf, "histboost was built with CUDA, but no GPU was found");
    return 0;
  }
  int dev = 0;
  cudaDeviceProp p;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
    cudaGetLastError();
    snprintf(hb_cuda_status_buf, sizeof hb_cuda_status_buf, "histboost was built with CUDA, but GPU %d cannot be queried",
             dev);
    return 0;
  }
  snprintf(hb_cuda_status_buf, sizeof hb_cuda_status_buf, "CUDA %d.%d: GPU %d of %d, %s (compute %d.%d, %d SMs, %.1f GiB)",
           CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10, dev, n, p.name, p.major, p.minor,
           p.multiProcessorCount, p.totalGlobalMem / 1073741824.0);
  return 1;
}

extern "C" int hb_cuda_use_device_of(int local_rank) {
  int n = 0;
  HB_CUDA_TRY(cudaGetDeviceCount(&n), "counting the GPUs");
  if (n < 1) return hb_error_set(HB_ERR_INPUT, "histboost was built with CUDA, but no GPU was found");
  HB_CUDA_TRY(cudaSetDevice((local_rank > 0 ? local_rank : 0) % n), "choosing this process's GPU");
  return HB_OK;
}

extern "C" const char *hb_cuda_status(void) {
  hb_cuda_available();
  return hb_cuda_status_buf;
}

extern "C" int hb_cuda_device_info(hb_cuda_info_t *out) {
  memset(out, 0, sizeof *out);
  if (!hb_cuda_available()) return hb_error_set(HB_ERR_INPUT, "%s", hb_cuda_status_buf);
  int dev = 0;
  cudaDeviceProp p;
  size_t fr = 0, tot = 0;
  HB_CUDA_TRY(cudaGetDevice(&dev), "cudaGetDevice");
  HB_CUDA_TRY(cudaGetDeviceProperties(&p, dev), "cudaGetDeviceProperties");
  HB_CUDA_TRY(cudaMemGetInfo(&fr, &tot), "cudaMemGetInfo");
  snprintf(out->name, sizeof out->name, "%s", p.name);
  out->major = p.major;
  out->minor = p.minor;
  out->sms = p.multiProcessorCount;
  out->total_mem = (double)tot;
  out->free_mem = (double)fr;
  HB_CUDA_TRY(cudaRuntimeGetVersion(&out->runtime_version), "cudaRuntimeGetVersion");
  HB_CUDA_TRY(cudaDriverGetVersion(&out->driver_version), "cudaDriverGetVersion");
  return HB_OK;
}

namespace hbc {
int pdl_supported() {
  static int known = -1;
  if (known < 0) {
    int dev = 0, major = 0;
    known = cudaGetDevice(&dev) == cudaSuccess &&
            cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess && major >= 9;
    cudaGetLastError();
  }
  return known;
}
}  // namespace hbc

static int cmp_float(const void *x, const void *y) {
  const float a = *(const float *)x, b = *(const float *)y;
  return (a > b) - (a < b);
}

extern "C" int hb_cuda_copy_bandwidth(double bytes, int reps, double *gbps) {
  *gbps = 0;
  if (!hb_cuda_available()) return hb_error_set(HB_ERR_INPUT, "%s", hb_cuda_status_buf);
  if (reps < 1) reps = 1;
  size_t nb = (size_t)bytes;
  void *a = NULL, *b = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  float *t = (float *)hb_malloc(sizeof(float) * (size_t)reps);
  int st = HB_OK;
  cudaError_t e;
  if (!t) return HB_ERR_NOMEM;
  if ((e = cudaMalloc(&a, nb)) != cudaSuccess || (e = cudaMalloc(&b, nb)) != cudaSuccess ||
      (e = cudaMemset(a, 1, nb)) != cudaSuccess || (e = cudaEventCreate(&e0)) != cudaSuccess ||
      (e = cudaEventCreate(&e1)) != cudaSuccess || (e = cudaMemcpy(b, a, nb, cudaMemcpyDeviceToDevice)) != cudaSuccess) {
    st = hb_cuda_fail(e, "the copy bandwidth probe");
  }
  for (int r = 0; r < reps && st == HB_OK; r++) {
    if ((e = cudaEventRecord(e0)) != cudaSuccess || (e = cudaMemcpyAsync(b, a, nb, cudaMemcpyDeviceToDevice)) != cudaSuccess ||
        (e = cudaEventRecord(e1)) != cudaSuccess || (e = cudaEventSynchronize(e1)) != cudaSuccess ||
        (e = cudaEventElapsedTime(&t[r], e0, e1)) != cudaSuccess)
      st = hb_cuda_fail(e, "the copy bandwidth probe");
  }
  if (st == HB_OK) {
    qsort(t, (size_t)reps, sizeof(float), cmp_float);
    *gbps = 2.0 * (double)nb / (t[reps / 2] * 1e-3) / 1e9;  // bytes read plus written
  }
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  cudaFree(a);
  cudaFree(b);
  hb_free(t);
  cudaGetLastError();
  return st;
}
