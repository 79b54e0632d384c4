// MSKernelBench dot_product baseline (ours), doing what the published baseline does: a grid-stride
// loop with 256 threads per block and min(ceil(N/256), 1024) blocks; each thread sums its elements
// sequentially in FP32 and issues ONE atomicAdd of its partial sum into *loss (skipped when the partial
// is 0). *loss is accumulated into, not overwritten: the caller zeroes it. The FP32 version skips terms
// with Y[i] == 0, as published (no numerical difference for finite data). BF16 inputs are converted to
// float (their products are exact in FP32); loss is a float in both precisions.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;

int blocks_for(int N) {
  int blocks = (N + kThreads - 1) / kThreads;
  return blocks < kMaxBlocks ? blocks : kMaxBlocks;
}
}  // namespace

__global__ void dot_product_kernel(float* loss, const float* X, const float* Y, int N) {
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x)
    if (Y[i] != 0.0f) sum += X[i] * Y[i];
  if (sum != 0.0f) atomicAdd(loss, sum);
}

__global__ void dot_product_bf16_kernel(float* loss, const __nv_bfloat16* X, const __nv_bfloat16* Y, int N) {
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x)
    sum += __bfloat162float(X[i]) * __bfloat162float(Y[i]);
  if (sum != 0.0f) atomicAdd(loss, sum);
}

extern "C" void dot_product(float* loss, const float* X, const float* Y, const int N) {
  if (N > 0) dot_product_kernel<<<blocks_for(N), kThreads>>>(loss, X, Y, N);
  cudaDeviceSynchronize();
}

extern "C" void dot_product_bf16(float* loss, const __nv_bfloat16* X, const __nv_bfloat16* Y, const int N) {
  if (N > 0) dot_product_bf16_kernel<<<blocks_for(N), kThreads>>>(loss, X, Y, N);
  cudaDeviceSynchronize();
}
