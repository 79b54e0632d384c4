// MSKernelBench hinge_loss baseline (ours): a per-sample loss, not a reduction,
//   y = +1 if targets[i] == 1 else -1,  loss[i] = max(0, 1 - y * predictions[i]),
// one thread per element on ceil(N/1024) blocks of 1024 threads, as the published FP32 baseline does.
// BF16: prediction converted to float, FP32 arithmetic, one rounding at the store.
// Deviation (BF16): the published BF16 baseline launches ONE block of 1024 threads with no loop, so it
// writes only loss[0 .. min(N, 1024) - 1] (into a 2-byte buffer in the published harness, which compares
// element 0 only). Ours computes all N with the FP32 launch shape, and the harness checks all N.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 1024;
}

__global__ void hinge_loss_kernel(float* loss, const float* predictions, const int* targets, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) {
    float y = targets[i] == 1 ? 1.0f : -1.0f;
    loss[i] = fmaxf(0.0f, 1.0f - y * predictions[i]);
  }
}

__global__ void hinge_loss_bf16_kernel(__nv_bfloat16* loss, const __nv_bfloat16* predictions, const int* targets, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) {
    float y = targets[i] == 1 ? 1.0f : -1.0f;
    loss[i] = __float2bfloat16(fmaxf(0.0f, 1.0f - y * __bfloat162float(predictions[i])));
  }
}

extern "C" void hinge_loss(float* loss, const float* predictions, const int* targets, int N) {
  if (N > 0) hinge_loss_kernel<<<(N + kThreads - 1) / kThreads, kThreads>>>(loss, predictions, targets, N);
  cudaDeviceSynchronize();
}

extern "C" void hinge_loss_bf16(__nv_bfloat16* loss, const __nv_bfloat16* predictions, const int* targets, int N) {
  if (N > 0) hinge_loss_bf16_kernel<<<(N + kThreads - 1) / kThreads, kThreads>>>(loss, predictions, targets, N);
  cudaDeviceSynchronize();
}
