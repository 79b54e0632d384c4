// MSKernelBench conv_1d baseline (ours), doing what the published baseline does: a "valid" 1-D
// cross-correlation with no kernel flip, output[i] = sum_{j < kernel_size} input[i + j] * kernel[j]
// for i in [0, input_size - kernel_size], one thread per output (256 threads per block), a direct
// FP32 loop in increasing j. BF16: inputs converted to float, FP32 accumulation, one rounding at the
// store.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void conv_1d_kernel(const float* input, const float* kernel, float* output, int input_size, int kernel_size) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int out_size = input_size - kernel_size + 1;
  if (i < out_size) {
    float sum = 0.0f;
    for (int j = 0; j < kernel_size; ++j) sum += input[i + j] * kernel[j];
    output[i] = sum;
  }
}

__global__ void conv_1d_bf16_kernel(const __nv_bfloat16* input, const __nv_bfloat16* kernel, __nv_bfloat16* output, int input_size,
                                    int kernel_size) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int out_size = input_size - kernel_size + 1;
  if (i < out_size) {
    float sum = 0.0f;
    for (int j = 0; j < kernel_size; ++j) sum += __bfloat162float(input[i + j]) * __bfloat162float(kernel[j]);
    output[i] = __float2bfloat16(sum);
  }
}

extern "C" void conv_1d(const float* input, const float* kernel, float* output, int input_size, int kernel_size) {
  int out_size = input_size - kernel_size + 1;
  int threads = 256;
  int blocks = (out_size + threads - 1) / threads;
  if (out_size > 0) conv_1d_kernel<<<blocks, threads>>>(input, kernel, output, input_size, kernel_size);
  cudaDeviceSynchronize();
}

extern "C" void conv_1d_bf16(const __nv_bfloat16* input, const __nv_bfloat16* kernel, __nv_bfloat16* output, int input_size,
                             int kernel_size) {
  int out_size = input_size - kernel_size + 1;
  int threads = 256;
  int blocks = (out_size + threads - 1) / threads;
  if (out_size > 0) conv_1d_bf16_kernel<<<blocks, threads>>>(input, kernel, output, input_size, kernel_size);
  cudaDeviceSynchronize();
}
