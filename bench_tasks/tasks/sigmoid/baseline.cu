// MSKernelBench sigmoid baseline (ours), doing what the published baseline does: ONE block of 1024
// threads (grid = 1) with a block-stride loop over N, out[i] = 1 / (1 + exp(-x[i])) with expf and an
// FP32 division. BF16: converted to float, FP32 arithmetic, one rounding at the store.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void sigmoid_kernel(float* out, const float* input, int N) {
  for (int i = threadIdx.x; i < N; i += blockDim.x) out[i] = 1.0f / (1.0f + expf(-input[i]));
}

__global__ void sigmoid_bf16_kernel(__nv_bfloat16* out, const __nv_bfloat16* input, int N) {
  for (int i = threadIdx.x; i < N; i += blockDim.x)
    out[i] = __float2bfloat16(1.0f / (1.0f + expf(-__bfloat162float(input[i]))));
}

extern "C" void sigmoid(float* out, const float* input, const int N) {
  sigmoid_kernel<<<1, 1024>>>(out, input, N);
  cudaDeviceSynchronize();
}

extern "C" void sigmoid_bf16(__nv_bfloat16* out, const __nv_bfloat16* input, const int N) {
  sigmoid_bf16_kernel<<<1, 1024>>>(out, input, N);
  cudaDeviceSynchronize();
}
