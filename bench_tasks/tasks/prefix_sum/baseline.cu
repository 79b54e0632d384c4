// MSKernelBench prefix_sum baseline (ours), doing what the published baseline does: an O(N^2)
// inclusive scan, one thread per output (256 threads per block), thread i summing input[0..i]
// serially in FP32 from index 0 (so output[i] is exactly the sequential FP32 running sum). BF16:
// inputs converted to float, FP32 accumulation, one rounding per output.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void prefix_sum_kernel(float* output, const float* input, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) {
    float sum = 0.0f;
    for (int j = 0; j <= i; ++j) sum += input[j];
    output[i] = sum;
  }
}

__global__ void prefix_sum_bf16_kernel(__nv_bfloat16* output, const __nv_bfloat16* input, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) {
    float sum = 0.0f;
    for (int j = 0; j <= i; ++j) sum += __bfloat162float(input[j]);
    output[i] = __float2bfloat16(sum);
  }
}

extern "C" void prefix_sum(float* output, const float* input, const int N) {
  int threads = 256;
  int blocks = (N + threads - 1) / threads;
  if (N > 0) prefix_sum_kernel<<<blocks, threads>>>(output, input, N);
  cudaDeviceSynchronize();
}

extern "C" void prefix_sum_bf16(__nv_bfloat16* output, const __nv_bfloat16* input, const int N) {
  int threads = 256;
  int blocks = (N + threads - 1) / threads;
  if (N > 0) prefix_sum_bf16_kernel<<<blocks, threads>>>(output, input, N);
  cudaDeviceSynchronize();
}
