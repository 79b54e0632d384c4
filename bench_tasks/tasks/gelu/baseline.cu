// MSKernelBench gelu baseline (ours), doing what the published baseline does: ONE block of 1024 threads
// (grid = 1) with a block-stride loop over N, the exact erf form out = 0.5 * x * (1 + erf(x / sqrt(2))).
// FP32: the 0.5 is a double literal, as published, so the product is formed in double and rounded to
// float at the store. BF16: converted to float, FP32 arithmetic, one rounding at the store.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr float kInvSqrt2 = 0.70710678118654752f;
}

__global__ void gelu_kernel(float* output, const float* input, int N) {
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    float x = input[i];
    output[i] = 0.5 * x * (1.0f + erff(x * kInvSqrt2));
  }
}

__global__ void gelu_bf16_kernel(__nv_bfloat16* output, const __nv_bfloat16* input, int N) {
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    float x = __bfloat162float(input[i]);
    output[i] = __float2bfloat16(0.5f * x * (1.0f + erff(x * kInvSqrt2)));
  }
}

extern "C" void gelu(float* output, const float* input, const int N) {
  gelu_kernel<<<1, 1024>>>(output, input, N);
  cudaDeviceSynchronize();
}

extern "C" void gelu_bf16(__nv_bfloat16* out, const __nv_bfloat16* input, const int N) {
  gelu_bf16_kernel<<<1, 1024>>>(out, input, N);
  cudaDeviceSynchronize();
}
