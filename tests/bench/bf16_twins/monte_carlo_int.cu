// BF16 twin of monte_carlo_int: deterministic two-level tree (per-block warp-shuffle + shared-memory sums, then one
// block reducing the partials) instead of per-thread atomicAdd.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;

// Tree sum over the block (kThreads threads); the total is valid in thread 0.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float warp_sums[kThreads / 32];
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < kThreads / 32 ? warp_sums[threadIdx.x] : 0.0f;
  if (threadIdx.x < 32)
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  return v;
}
}  // namespace

// Block b sums the contiguous chunk [b*chunk, min((b+1)*chunk, N)), each thread striding by kThreads inside it.
__global__ void mc_twin_partials(const __nv_bfloat16* __restrict__ y, float* __restrict__ partials, int N, int chunk) {
  long long begin = (long long)blockIdx.x * chunk;
  long long end = begin + chunk < N ? begin + chunk : N;
  float s = 0.0f;
  for (long long i = begin + threadIdx.x; i < end; i += kThreads) s += __bfloat162float(y[i]);
  s = block_sum(s);
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

__global__ void mc_twin_finish(const float* __restrict__ partials, int count, __nv_bfloat16* result, float a, float b, int N) {
  float s = 0.0f;
  for (int i = threadIdx.x; i < count; i += kThreads) s += partials[i];
  s = block_sum(s);
  if (threadIdx.x == 0) *result = __float2bfloat16((b - a) * (s / N));
}

extern "C" void monte_carlo_int_bf16_optimized(const __nv_bfloat16* y_samples, __nv_bfloat16* result, float a, float b, int N) {
  if (N <= 0) return;
  int blocks = (N + kThreads * 4 - 1) / (kThreads * 4);
  blocks = blocks < kMaxBlocks ? blocks : kMaxBlocks;
  int chunk = (int)(((long long)N + blocks - 1) / blocks);
  float* partials = nullptr;
  if (cudaMalloc(&partials, blocks * sizeof(float)) != cudaSuccess) return;
  mc_twin_partials<<<blocks, kThreads>>>(y_samples, partials, N, chunk);
  mc_twin_finish<<<1, kThreads>>>(partials, blocks, result, a, b, N);
  cudaDeviceSynchronize();
  cudaFree(partials);
}
