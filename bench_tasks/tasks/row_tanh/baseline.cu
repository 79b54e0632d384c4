// MSKernelBench row_tanh baseline (ours), doing what the published baseline does: ONE block of 1024
// threads (grid = 1) with a block-stride loop over the flat array (no row structure, despite the name),
// out[i] = tanhf(x[i]). BF16: converted to float, tanhf, one rounding at the store.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void row_tanh_kernel(float* out, const float* input, int N) {
  for (int i = threadIdx.x; i < N; i += blockDim.x) out[i] = tanhf(input[i]);
}

__global__ void row_tanh_bf16_kernel(__nv_bfloat16* out, const __nv_bfloat16* input, int N) {
  for (int i = threadIdx.x; i < N; i += blockDim.x) out[i] = __float2bfloat16(tanhf(__bfloat162float(input[i])));
}

extern "C" void row_tanh(float* out, const float* input, const int N) {
  row_tanh_kernel<<<1, 1024>>>(out, input, N);
  cudaDeviceSynchronize();
}

extern "C" void row_tanh_bf16(__nv_bfloat16* out, const __nv_bfloat16* input, const int N) {
  row_tanh_bf16_kernel<<<1, 1024>>>(out, input, N);
  cudaDeviceSynchronize();
}
