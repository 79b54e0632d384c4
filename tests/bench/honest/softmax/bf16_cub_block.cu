// Honest softmax, BF16: one block per row, max and sum with cub::BlockReduce (CUB ships with the toolkit;
// issue 29, class 3). FP32 math, one rounding at the store.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cfloat>
#include <cub/cub.cuh>

constexpr int kThreads = 256;

struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

__global__ void softmax_bf16_block(__nv_bfloat16* out, const __nv_bfloat16* in, int cols) {
  using BlockReduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename BlockReduce::TempStorage temp;
  __shared__ float shared_max, shared_sum;
  const __nv_bfloat16* x = in + (size_t)blockIdx.x * cols;
  __nv_bfloat16* y = out + (size_t)blockIdx.x * cols;
  float m = -FLT_MAX;
  for (int j = threadIdx.x; j < cols; j += kThreads) m = fmaxf(m, __bfloat162float(x[j]));
  float block_max = BlockReduce(temp).Reduce(m, MaxOp());
  if (threadIdx.x == 0) shared_max = block_max;
  __syncthreads();  // also before temp is reused
  m = shared_max;
  float s = 0.0f;
  for (int j = threadIdx.x; j < cols; j += kThreads) s += expf(__bfloat162float(x[j]) - m);
  float block_sum = BlockReduce(temp).Sum(s);
  if (threadIdx.x == 0) shared_sum = block_sum;
  __syncthreads();
  float inv = 1.0f / shared_sum;
  for (int j = threadIdx.x; j < cols; j += kThreads) y[j] = __float2bfloat16(expf(__bfloat162float(x[j]) - m) * inv);
}

extern "C" void softmax_bf16_optimized(__nv_bfloat16* out, const __nv_bfloat16* input, int N, int C) {
  if (N > 0 && C > 0) softmax_bf16_block<<<N, kThreads>>>(out, input, C);
}
