// BF16 twin of rms_norm: deterministic tree sum of squares (per-block warp-shuffle partials, each apply block
// reducing them again) and x * rsqrtf(...) instead of per-thread atomicAdd and x / sqrtf(...).
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;

// Tree sum over the block (kThreads threads); the total is returned to EVERY thread.
__device__ __forceinline__ float block_sum_all(float v) {
  __shared__ float warp_sums[kThreads / 32];
  __shared__ float total;
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < kThreads / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (threadIdx.x == 0) total = v;
  }
  __syncthreads();
  return total;
}
}  // namespace

__global__ void rms_twin_partials(const __nv_bfloat16* __restrict__ x, float* __restrict__ partials, int N) {
  float s = 0.0f;
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < N; i += gridDim.x * kThreads) {
    float v = __bfloat162float(x[i]);
    s = fmaf(v, v, s);
  }
  s = block_sum_all(s);
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

__global__ void rms_twin_apply(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                               const __nv_bfloat16* __restrict__ bias, const float* __restrict__ partials, int count, float eps, int N) {
  float s = 0.0f;
  for (int i = threadIdx.x; i < count; i += kThreads) s += partials[i];
  float inv_rms = rsqrtf(block_sum_all(s) / (float)N + eps);
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < N; i += gridDim.x * kThreads)
    out[i] = __float2bfloat16(fmaf(__bfloat162float(w[i]) * __bfloat162float(x[i]), inv_rms, __bfloat162float(bias[i])));
}

extern "C" void rms_norm_bf16_optimized(__nv_bfloat16* output, const __nv_bfloat16* input, const __nv_bfloat16* weight,
                                        const __nv_bfloat16* bias, const float epsilon, const int N) {
  if (N <= 0) return;
  int blocks = (N + kThreads - 1) / kThreads;
  blocks = blocks < kMaxBlocks ? blocks : kMaxBlocks;
  float* partials = nullptr;
  if (cudaMalloc(&partials, blocks * sizeof(float)) != cudaSuccess) return;
  rms_twin_partials<<<blocks, kThreads>>>(input, partials, N);
  rms_twin_apply<<<blocks, kThreads>>>(output, input, weight, bias, partials, blocks, epsilon, N);
  cudaDeviceSynchronize();
  cudaFree(partials);
}
