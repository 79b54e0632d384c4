// MSKernelBench MSE_loss baseline (ours), doing what the published baseline does: a grid-stride loop
// with 256 threads per block and min(ceil(N/256), 1024) blocks; each thread sums (X[i] - Y[i])^2 over
// its elements sequentially in FP32 and issues ONE atomicAdd of its partial into *loss; then a
// <<<1, 1>>> kernel divides *loss by N. So loss <- (loss_in + sum d^2) / N: the wrapper does not zero
// *loss (the harness zeroes it before every call: role accumulate). BF16 inputs are converted to float;
// loss is a float in both precisions.
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

__global__ void MSE_loss_kernel(float* loss, const float* X, const float* Y, int N) {
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x) {
    float d = X[i] - Y[i];
    sum += d * d;
  }
  atomicAdd(loss, sum);
}

__global__ void MSE_loss_bf16_kernel(float* loss, const __nv_bfloat16* X, const __nv_bfloat16* Y, int N) {
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x) {
    float d = __bfloat162float(X[i]) - __bfloat162float(Y[i]);
    sum += d * d;
  }
  atomicAdd(loss, sum);
}

__global__ void MSE_loss_divide_kernel(float* loss, int N) { *loss /= (float)N; }

extern "C" void MSE_loss(float* loss, const float* X, const float* Y, int N) {
  if (N > 0) {
    MSE_loss_kernel<<<blocks_for(N), kThreads>>>(loss, X, Y, N);
    MSE_loss_divide_kernel<<<1, 1>>>(loss, N);
  }
  cudaDeviceSynchronize();
}

extern "C" void MSE_loss_bf16(float* loss, const __nv_bfloat16* X, const __nv_bfloat16* Y, const int N) {
  if (N > 0) {
    MSE_loss_bf16_kernel<<<blocks_for(N), kThreads>>>(loss, X, Y, N);
    MSE_loss_divide_kernel<<<1, 1>>>(loss, N);
  }
  cudaDeviceSynchronize();
}
