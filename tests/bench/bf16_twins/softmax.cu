// BF16 twin of softmax: one block per row with warp-shuffle tree max and tree sum of the FP32 exps, each output rounded
// once (baseline: one thread per row, sequential sums, two roundings).
#include <cfloat>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;

// Tree reduction over the block (kThreads threads); the result is returned to EVERY thread.
template <bool kMax>
__device__ __forceinline__ float block_reduce_all(float v) {
  __shared__ float warp_vals[kThreads / 32];
  __shared__ float result;
  for (int off = 16; off > 0; off >>= 1) {
    float u = __shfl_down_sync(0xffffffffu, v, off);
    v = kMax ? fmaxf(v, u) : v + u;
  }
  if (threadIdx.x % 32 == 0) warp_vals[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < kThreads / 32 ? warp_vals[threadIdx.x] : (kMax ? -FLT_MAX : 0.0f);
    for (int off = 16; off > 0; off >>= 1) {
      float u = __shfl_down_sync(0xffffffffu, v, off);
      v = kMax ? fmaxf(v, u) : v + u;
    }
    if (threadIdx.x == 0) result = v;
  }
  __syncthreads();
  float r = result;
  __syncthreads();  // result and warp_vals are reused by the next call
  return r;
}
}  // namespace

__global__ void softmax_twin_rows(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ input, int N, int C) {
  for (int row = blockIdx.x; row < N; row += gridDim.x) {
    const __nv_bfloat16* x = input + (size_t)row * C;
    __nv_bfloat16* y = out + (size_t)row * C;
    float m = -FLT_MAX;
    for (int j = threadIdx.x; j < C; j += kThreads) m = fmaxf(m, __bfloat162float(x[j]));
    m = block_reduce_all<true>(m);
    float s = 0.0f;
    for (int j = threadIdx.x; j < C; j += kThreads) s += expf(__bfloat162float(x[j]) - m);
    float inv = 1.0f / block_reduce_all<false>(s);
    for (int j = threadIdx.x; j < C; j += kThreads) y[j] = __float2bfloat16(expf(__bfloat162float(x[j]) - m) * inv);
  }
}

extern "C" void softmax_bf16_optimized(__nv_bfloat16* out, const __nv_bfloat16* input, int N, int C) {
  if (N <= 0 || C <= 0) return;
  int blocks = N < 65535 ? N : 65535;
  softmax_twin_rows<<<blocks, kThreads>>>(out, input, N, C);
  cudaDeviceSynchronize();
}
