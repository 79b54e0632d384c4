// BF16 twin of sorting: bitonic sorting network on FP32 keys padded with +inf to a power of two (shared-memory tiles
// for the short strides) instead of a bottom-up merge sort.
#include <cmath>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kLocal = 2048;               // keys per shared-memory tile
constexpr int kLocalThreads = kLocal / 2;  // one thread per compare-exchange pair
constexpr int kThreads = 256;

// Ascending where (global index & k) == 0, descending otherwise: the bitonic network's direction at stage k.
__device__ __forceinline__ void compare_exchange(float& a, float& b, bool ascending) {
  if (ascending ? a > b : a < b) {
    float t = a;
    a = b;
    b = t;
  }
}

// Pair t of a step with stride j: the lower index i (its partner is i + j).
__device__ __forceinline__ long long lower_index(long long t, long long j) { return 2 * j * (t / j) + t % j; }
}  // namespace

__global__ void sort_twin_load(float* __restrict__ keys, const __nv_bfloat16* __restrict__ data, int N, long long P) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < P; i += (long long)gridDim.x * blockDim.x)
    keys[i] = i < N ? __bfloat162float(data[i]) : INFINITY;
}

__global__ void sort_twin_store(__nv_bfloat16* __restrict__ data, const float* __restrict__ keys, int N) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) data[i] = __float2bfloat16(keys[i]);
}

// Within each tile of T keys: every stage k = 2 .. T (full_sort) or only the strides j < T of stage k (a merge after global steps).
__global__ void sort_twin_tile(float* keys, int T, long long k_first, long long k_last) {
  __shared__ float s[kLocal];
  long long base = (long long)blockIdx.x * T;
  for (int t = threadIdx.x; t < T; t += blockDim.x) s[t] = keys[base + t];
  __syncthreads();
  for (long long k = k_first; k <= k_last; k <<= 1) {
    long long j_first = k / 2 < T / 2 ? k / 2 : T / 2;
    for (long long j = j_first; j > 0; j >>= 1) {
      for (int t = threadIdx.x; t < T / 2; t += blockDim.x) {
        int i = (int)lower_index(t, j);
        compare_exchange(s[i], s[i + j], ((base + i) & k) == 0);
      }
      __syncthreads();
    }
  }
  for (int t = threadIdx.x; t < T; t += blockDim.x) keys[base + t] = s[t];
}

// One compare-exchange step of stride j >= tile size at stage k, over global memory.
__global__ void sort_twin_global_step(float* keys, long long P, long long k, long long j) {
  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < P / 2; t += (long long)gridDim.x * blockDim.x) {
    long long i = lower_index(t, j);
    float a = keys[i], b = keys[i + j];
    bool ascending = (i & k) == 0;
    if (ascending ? a > b : a < b) {
      keys[i] = b;
      keys[i + j] = a;
    }
  }
}

extern "C" void sorting_bf16_optimized(__nv_bfloat16* data, int N) {
  if (N <= 1) return;
  long long P = 1;
  while (P < N) P <<= 1;
  int T = P < kLocal ? (int)P : kLocal;
  float* keys = nullptr;
  if (cudaMalloc(&keys, P * sizeof(float)) != cudaSuccess) return;
  long long want = (P + kThreads - 1) / kThreads;
  int blocks = (int)(want < 4096 ? want : 4096);
  int tiles = (int)(P / T);
  sort_twin_load<<<blocks, kThreads>>>(keys, data, N, P);
  sort_twin_tile<<<tiles, kLocalThreads>>>(keys, T, 2, T);  // stages k <= T entirely in shared memory
  for (long long k = 2LL * T; k <= P; k <<= 1) {
    for (long long j = k / 2; j >= T; j >>= 1) sort_twin_global_step<<<blocks, kThreads>>>(keys, P, k, j);
    sort_twin_tile<<<tiles, kLocalThreads>>>(keys, T, k, k);  // strides j < T of stage k
  }
  sort_twin_store<<<blocks, kThreads>>>(data, keys, N);
  cudaDeviceSynchronize();
  cudaFree(keys);
}
