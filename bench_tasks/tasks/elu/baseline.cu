// MSKernelBench elu baseline (ours), doing what the published baseline does: ONE block of 1024 threads
// (grid = 1) with a block-stride loop over N. out[i] = alpha * (exp(x[i]) - 1) if x[i] < 0, else x[i];
// alpha defaults to 1.0 (a C++ default argument, kept; the harness passes it). FP32 uses expf(x) - 1.
// BF16: the negative branch converts to float, computes in FP32 and rounds once; the non-negative
// branch copies the input bits.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void elu_kernel(float* output, const float* input, int N, float alpha) {
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    float x = input[i];
    output[i] = x < 0.0f ? alpha * (expf(x) - 1.0f) : x;
  }
}

__global__ void elu_bf16_kernel(__nv_bfloat16* output, const __nv_bfloat16* input, int N, float alpha) {
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    __nv_bfloat16 v = input[i];
    float x = __bfloat162float(v);
    output[i] = x < 0.0f ? __float2bfloat16(alpha * (expf(x) - 1.0f)) : v;
  }
}

extern "C" void elu(float* output, const float* input, const int N, float alpha = 1.0) {
  elu_kernel<<<1, 1024>>>(output, input, N, alpha);
  cudaDeviceSynchronize();
}

extern "C" void elu_bf16(__nv_bfloat16* out, const __nv_bfloat16* input, const int N, float alpha = 1.0) {
  elu_bf16_kernel<<<1, 1024>>>(out, input, N, alpha);
  cudaDeviceSynchronize();
}
