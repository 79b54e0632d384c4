// Honest leaky_RELU, BF16, whose entry point omits the trailing `float alpha = 0.01` the task's prototype
// defaults (issue 29, class 5); the kernel uses 0.01.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void leaky_relu_bf16(__nv_bfloat16* out, const __nv_bfloat16* in, int n, float alpha) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float x = __bfloat162float(in[i]);
    out[i] = __float2bfloat16(x > 0.0f ? x : alpha * x);
  }
}

extern "C" void leaky_RELU_bf16_optimized(__nv_bfloat16* output, const __nv_bfloat16* input, const int N) {
  if (N <= 0) return;
  int blocks = (N + 255) / 256;
  leaky_relu_bf16<<<blocks < 2048 ? blocks : 2048, 256>>>(output, input, N, 0.01f);
}
