// exchange.cu: sums over the processes' GPUs, peer to peer (learner.cuh
// says how an exchange goes): the exchange buffers exported and mapped
// through CUDA IPC when every process has its own GPU on one machine and
// each GPU can read the others, and the histogram exchange of a split.
// Elsewhere the learner sums through MPI via host memory (learner.cu).
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include "learner.cuh"

namespace hbc {

struct Exchange {
  int rank, size;
  long long len;
  XHead *mine;      // this process's buffer (exported)
  XHead **peer;     // host: every process's mapped buffer (this one's is `mine`)
  XHead **d_peers;  // the same, in device memory
};

namespace {
// What a process tells the others: its machine, its GPU, its buffer.
struct XInfo {
  char host[64];
  char bus[32];
  cudaIpcMemHandle_t handle;
};
constexpr int kXBlocks = 32;  // few enough to be resident at once: their waits cannot starve one another
constexpr int kXThreads = 256;
}  // namespace

void exchange_close(Exchange *x) {
  if (!x) return;
  if (x->peer)
    for (int p = 0; p < x->size; p++)
      if (x->peer[p] && x->peer[p] != x->mine) cudaIpcCloseMemHandle(x->peer[p]);
  cudaFree(x->mine);
  cudaFree(x->d_peers);
  hb_free(x->peer);
  hb_free(x);
  cudaGetLastError();
}

XArgs exchange_args(const Exchange *x) {
  XArgs a;
  a.peers = x->d_peers;
  a.rank = x->rank;
  a.size = x->size;
  a.len = x->len;
  return a;
}

int exchange_timed_out(const Exchange *x, int *out) {
  XHead h;
  HB_CUDA_TRY(cudaMemcpy(&h, x->mine, sizeof h, cudaMemcpyDeviceToHost), "reading the exchange state");
  *out = h.timeout;
  return HB_OK;
}

// Every process answers alike: 1 on all when `ok` is 1 on all.
static int all_ok(const hb_dist_t *dist, int ok, int *out) {
  int64_t bad = !ok;
  const int st = hb_dist_sum_i64(dist, &bad, 1);
  *out = st == HB_OK && bad == 0;
  return st;
}

int exchange_open(const hb_dist_t *dist, long long len, Exchange **out) {
  *out = NULL;
  const char *env = getenv("HISTBOOST_GPU_P2P");
  int st = HB_OK, ok = !(env && strcmp(env, "0") == 0), dev = 0;  // asked for on every process, or on none
  XInfo mine, *all = NULL;
  memset(&mine, 0, sizeof mine);
  Exchange *x = (Exchange *)hb_calloc(1, sizeof *x);
  const size_t bytes = kXHeadBytes + 2 * sizeof(long long) * (size_t)(len > 0 ? len : 1);
  if (!x) ok = 0;
  if (ok) {
    x->rank = dist->rank;
    x->size = dist->size;
    x->len = len;
    ok = cudaGetDevice(&dev) == cudaSuccess && cudaMalloc((void **)&x->mine, bytes) == cudaSuccess &&
         cudaMemset(x->mine, 0, bytes) == cudaSuccess && cudaIpcGetMemHandle(&mine.handle, x->mine) == cudaSuccess &&
         cudaDeviceGetPCIBusId(mine.bus, (int)sizeof mine.bus, dev) == cudaSuccess &&
         gethostname(mine.host, sizeof mine.host - 1) == 0;
    cudaGetLastError();
  }
  // every process's machine, GPU and buffer (a collective: every process calls it)
  st = dist->allgather(dist, &mine, (int64_t)sizeof mine, (void **)&all, NULL);
  if (st != HB_OK) goto fail;
  for (int p = 0; ok && p < dist->size; p++) {
    if (p == dist->rank) continue;
    int pd = -1, can = 0;
    ok = strcmp(all[p].host, mine.host) == 0 && strcmp(all[p].bus, mine.bus) != 0 &&
         cudaDeviceGetByPCIBusId(&pd, all[p].bus) == cudaSuccess && pd != dev &&
         cudaDeviceCanAccessPeer(&can, dev, pd) == cudaSuccess && can;
    for (int q = 0; ok && q < p; q++) ok = strcmp(all[p].bus, all[q].bus) != 0;  // one process a GPU
    cudaGetLastError();
  }
  if ((st = all_ok(dist, ok, &ok)) != HB_OK || !ok) goto fail;
  // map the others' buffers
  x->peer = (XHead **)hb_calloc((size_t)dist->size, sizeof(XHead *));
  ok = x->peer != NULL;
  for (int p = 0; ok && p < dist->size; p++) {
    if (p == dist->rank) {
      x->peer[p] = x->mine;
      continue;
    }
    void *ptr = NULL;
    ok = cudaIpcOpenMemHandle(&ptr, all[p].handle, cudaIpcMemLazyEnablePeerAccess) == cudaSuccess;
    x->peer[p] = (XHead *)ptr;
  }
  ok = ok && cudaMalloc((void **)&x->d_peers, sizeof(XHead *) * (size_t)dist->size) == cudaSuccess &&
       cudaMemcpy(x->d_peers, x->peer, sizeof(XHead *) * (size_t)dist->size, cudaMemcpyHostToDevice) == cudaSuccess;
  cudaGetLastError();
  if ((st = all_ok(dist, ok, &ok)) != HB_OK || !ok) goto fail;
  hb_free(all);
  *out = x;
  return HB_OK;
fail:
  hb_free(all);
  exchange_close(x);
  return st;  // HB_OK: no peer-to-peer exchange, the learner sums through MPI
}

// The smaller child's histogram (slot ctl->small_slot) summed over the
// processes, in place. Skipped on every process alike when there is none
// (the tree is finished, or neither child may split).
__global__ void __launch_bounds__(kXThreads) k_exchange_hist(TreeArgs a) {
  const XArgs &x = a.x;
  const Ctl *c = a.ctl;
  const int done = c->done, build = c->build, slot = c->small_slot;
  if (done || !build) return;
  XHead *me = x.peers[x.rank];
  const unsigned long long epoch = me->seq + 1;
  long long *h = (long long *)(a.hist + (size_t)slot * a.total_bins);
  const long long n = 2 * (long long)a.total_bins;
  long long *out = xvalues(me, x.len, epoch);
  const long long i0 = (long long)blockIdx.x * blockDim.x + threadIdx.x, step = (long long)gridDim.x * blockDim.x;
  for (long long i = i0; i < n; i += step) out[i] = h[i];
  __syncthreads();  // the block's values, then one fence for them (cumulative: after the barrier)
  __shared__ int last;
  if (threadIdx.x == 0) {
    __threadfence_system();
    last = atomicAdd(&me->ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {  // every block's share is posted
    me->ticket = 0;
    xpost(me, epoch);
  }
  if (threadIdx.x == 0) xwait(x, epoch);
  __syncthreads();
  for (long long i = i0; i < n; i += step) {
    long long s = 0;
    for (int p = 0; p < x.size; p++) s += *(volatile const long long *)(xvalues(x.peers[p], x.len, epoch) + i);
    h[i] = s;
  }
}

int exchange_hist_launch(const TreeArgs &a, cudaStream_t st) {
  k_exchange_hist<<<kXBlocks, kXThreads, 0, st>>>(a);
  HB_CUDA_TRY(cudaGetLastError(), "the histogram exchange kernel");
  return HB_OK;
}

}  // namespace hbc
