// BF16 twin of hinge_loss: grid-stride, two elements per thread step, computed as fmaxf(0, 1 - pred) or
// fmaxf(0, 1 + pred) by the target (the baseline multiplies by y = +-1), FP32, one rounding; no reduction.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

static __global__ void hinge_twin(__nv_bfloat16* loss, const __nv_bfloat16* predictions, const int* targets, int N) {
  for (int i = 2 * (blockIdx.x * blockDim.x + threadIdx.x); i < N; i += 2 * blockDim.x * gridDim.x) {
    for (int k = i; k < i + 2 && k < N; ++k) {
      float p = __bfloat162float(predictions[k]);
      loss[k] = __float2bfloat16(fmaxf(0.0f, targets[k] == 1 ? 1.0f - p : 1.0f + p));
    }
  }
}

extern "C" void hinge_loss_bf16_optimized(__nv_bfloat16* loss, const __nv_bfloat16* predictions, const int* targets, int N) {
  if (N <= 0) return;
  int blocks = (N / 2 + 256) / 256;
  hinge_twin<<<blocks < 2048 ? blocks : 2048, 256>>>(loss, predictions, targets, N);
}
