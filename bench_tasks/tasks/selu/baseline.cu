// MSKernelBench selu baseline (ours), doing what the published baseline does: ONE block of 1024 threads
// (grid = 1) with a block-stride loop over N. out[i] = lambda * alpha * (exp(x[i]) - 1) if x[i] < 0, else
// lambda * x[i], with the published defaults alpha = 1.67 and lambda = 1.0 (NOT the canonical
// 1.6733 / 1.0507; C++ default arguments, kept; the harness passes them). BF16: converted to float, FP32
// arithmetic, one rounding at the store. (The published BF16 __global__ kernel declares its own default
// lambda = 1.05, which is never used because the wrapper always passes its lambda; ours has no default.)
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void selu_kernel(float* output, const float* input, int N, float alpha, float lambda) {
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    float x = input[i];
    output[i] = x < 0.0f ? lambda * alpha * (expf(x) - 1.0f) : lambda * x;
  }
}

__global__ void selu_bf16_kernel(__nv_bfloat16* output, const __nv_bfloat16* input, int N, float alpha, float lambda) {
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    float x = __bfloat162float(input[i]);
    output[i] = __float2bfloat16(x < 0.0f ? lambda * alpha * (expf(x) - 1.0f) : lambda * x);
  }
}

extern "C" void selu(float* output, const float* input, const int N, float alpha = 1.67, float lambda = 1.0) {
  selu_kernel<<<1, 1024>>>(output, input, N, alpha, lambda);
  cudaDeviceSynchronize();
}

extern "C" void selu_bf16(__nv_bfloat16* output, const __nv_bfloat16* input, const int N, float alpha = 1.67, float lambda = 1.0) {
  selu_bf16_kernel<<<1, 1024>>>(output, input, N, alpha, lambda);
  cudaDeviceSynchronize();
}
