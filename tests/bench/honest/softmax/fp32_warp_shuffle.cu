// Honest softmax, FP32: one warp per row, max and sum reduced with warp shuffles (__shfl_xor_sync).
#include <cuda_runtime.h>
#include <cfloat>

static __device__ __forceinline__ float warp_max(float v) {
  for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}
static __device__ __forceinline__ float warp_sum(float v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

__global__ void softmax_warp_rows(float* __restrict__ out, const float* __restrict__ in, int rows, int cols) {
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;  // whole warps leave together
  const float* x = in + (size_t)row * cols;
  float* y = out + (size_t)row * cols;
  float m = -FLT_MAX;
  for (int j = lane; j < cols; j += 32) m = fmaxf(m, x[j]);
  m = warp_max(m);
  float s = 0.0f;
  for (int j = lane; j < cols; j += 32) s += expf(x[j] - m);
  s = warp_sum(s);
  float inv = 1.0f / s;
  for (int j = lane; j < cols; j += 32) y[j] = expf(x[j] - m) * inv;
}

extern "C" void softmax_optimized(float* out, const float* input, int N, int C) {
  if (N <= 0 || C <= 0) return;
  constexpr int kWarps = 8;
  softmax_warp_rows<<<(N + kWarps - 1) / kWarps, kWarps * 32>>>(out, input, N, C);
}
