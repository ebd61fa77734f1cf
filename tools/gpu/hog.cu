// tools/gpu/hog.cu: holds all but KEEP_MB of the GPU's free memory until
// stdin closes, so that a training beside it runs out of device memory
// (tools/gpu/check.sh oom). Prints "held <MB>" once the memory is taken.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
int main(int argc, char **argv) {
  size_t keep = (size_t)(argc > 1 ? atol(argv[1]) : 256) << 20, free_b = 0, total = 0;
  if (cudaMemGetInfo(&free_b, &total) != cudaSuccess) return 1;
  size_t want = free_b > keep ? free_b - keep : 0, held = 0;
  while (want >= ((size_t)64 << 20)) {  // in pieces: one allocation that large may fail alone
    size_t piece = want < ((size_t)4 << 30) ? want : ((size_t)4 << 30);
    void *p = nullptr;
    if (cudaMalloc(&p, piece) != cudaSuccess) { cudaGetLastError(); want /= 2; continue; }
    held += piece;
    want -= piece;
  }
  printf("held %zu\n", held >> 20);
  fflush(stdout);
  while (getchar() != EOF) {}
  return 0;
}
