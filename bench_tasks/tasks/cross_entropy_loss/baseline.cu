// MSKernelBench cross_entropy_loss baseline (ours), doing what the published baseline does: a
// grid-stride loop with 256 threads per block and min(ceil(C/256), 1024) blocks; each thread sums
//   -Y[i] * logf(fmaxf(X[i], 1e-8f))   over its i with Y[i] != 0
// sequentially in FP32 and issues ONE atomicAdd of its partial into *loss (none if the partial is 0).
// A sum over the C classes, not a mean; the wrapper does not zero *loss (the harness zeroes it before
// every call: role accumulate). BF16 inputs are converted to float; loss is a float in both precisions.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;
constexpr float kMinProb = 1e-8f;

int blocks_for(int C) {
  int blocks = (C + kThreads - 1) / kThreads;
  return blocks < kMaxBlocks ? blocks : kMaxBlocks;
}
}  // namespace

__global__ void cross_entropy_loss_kernel(float* loss, const float* X, const float* Y, int C) {
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < C; i += blockDim.x * gridDim.x)
    if (Y[i] != 0.0f) sum += -Y[i] * logf(fmaxf(X[i], kMinProb));
  if (sum != 0.0f) atomicAdd(loss, sum);
}

__global__ void cross_entropy_loss_bf16_kernel(float* loss, const __nv_bfloat16* X, const __nv_bfloat16* Y, int C) {
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < C; i += blockDim.x * gridDim.x) {
    float y = __bfloat162float(Y[i]);
    if (y != 0.0f) sum += -y * logf(fmaxf(__bfloat162float(X[i]), kMinProb));
  }
  if (sum != 0.0f) atomicAdd(loss, sum);
}

extern "C" void cross_entropy_loss(float* loss, const float* X, const float* Y, const int C) {
  if (C > 0) cross_entropy_loss_kernel<<<blocks_for(C), kThreads>>>(loss, X, Y, C);
  cudaDeviceSynchronize();
}

extern "C" void cross_entropy_loss_bf16(float* loss, const __nv_bfloat16* X, const __nv_bfloat16* Y, const int C) {
  if (C > 0) cross_entropy_loss_bf16_kernel<<<blocks_for(C), kThreads>>>(loss, X, Y, C);
  cudaDeviceSynchronize();
}
