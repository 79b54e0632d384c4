// MSKernelBench RELU baseline (ours), doing what the published baseline does: ONE block of 1024 threads
// (grid = 1) with a block-stride loop over N, so the whole array goes through a single SM.
// out[i] = max(0, x[i]). BF16: each element converted to float, FP32 max, one rounding at the store
// (exact: the result is one of the inputs or 0).
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void RELU_kernel(float* output, const float* input, int N) {
  for (int i = threadIdx.x; i < N; i += blockDim.x) output[i] = fmaxf(0.0f, input[i]);
}

__global__ void RELU_bf16_kernel(__nv_bfloat16* output, const __nv_bfloat16* input, int N) {
  for (int i = threadIdx.x; i < N; i += blockDim.x) output[i] = __float2bfloat16(fmaxf(0.0f, __bfloat162float(input[i])));
}

extern "C" void RELU(float* output, const float* input, int N) {
  RELU_kernel<<<1, 1024>>>(output, input, N);
  cudaDeviceSynchronize();
}

extern "C" void RELU_bf16(__nv_bfloat16* output, const __nv_bfloat16* input, int N) {
  RELU_bf16_kernel<<<1, 1024>>>(output, input, N);
  cudaDeviceSynchronize();
}
