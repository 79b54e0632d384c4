// MSKernelBench conv_2d baseline (ours), doing what the published baseline does: a "valid" 2-D
// cross-correlation with no kernel flip, row-major,
//   output[r, c] = sum_{m < kernel_rows} sum_{n < kernel_cols} input[r + m, c + n] * kernel[m, n],
// output (input_rows - kernel_rows + 1) x (input_cols - kernel_cols + 1), one thread per output on
// 16x16 blocks (x -> column, y -> row), m the outer loop, FP32 accumulation. BF16: inputs converted
// to float, FP32 accumulation, one rounding at the store. Indices are 64-bit.
// The BF16 kernel has C linkage, as the published optimized BF16 kernel declares it (`extern "C"
// __global__ void conv_2d_bf16_kernel(...)`) and launches it: a candidate may do the same.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void conv_2d_kernel(const float* input, const float* kernel, float* output, int input_rows, int input_cols, int kernel_rows,
                               int kernel_cols) {
  int out_rows = input_rows - kernel_rows + 1, out_cols = input_cols - kernel_cols + 1;
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < out_rows && c < out_cols) {
    float sum = 0.0f;
    for (int m = 0; m < kernel_rows; ++m)
      for (int n = 0; n < kernel_cols; ++n)
        sum += input[(size_t)(r + m) * input_cols + (c + n)] * kernel[m * kernel_cols + n];
    output[(size_t)r * out_cols + c] = sum;
  }
}

extern "C" __global__ void conv_2d_bf16_kernel(const __nv_bfloat16* input, const __nv_bfloat16* kernel, __nv_bfloat16* output,
                                               int input_rows, int input_cols, int kernel_rows, int kernel_cols) {
  int out_rows = input_rows - kernel_rows + 1, out_cols = input_cols - kernel_cols + 1;
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < out_rows && c < out_cols) {
    float sum = 0.0f;
    for (int m = 0; m < kernel_rows; ++m)
      for (int n = 0; n < kernel_cols; ++n)
        sum += __bfloat162float(input[(size_t)(r + m) * input_cols + (c + n)]) * __bfloat162float(kernel[m * kernel_cols + n]);
    output[(size_t)r * out_cols + c] = __float2bfloat16(sum);
  }
}

extern "C" void conv_2d(const float* input, const float* kernel, float* output, int input_rows, int input_cols, int kernel_rows,
                        int kernel_cols) {
  int out_rows = input_rows - kernel_rows + 1, out_cols = input_cols - kernel_cols + 1;
  dim3 block(16, 16);
  dim3 grid((out_cols + 15) / 16, (out_rows + 15) / 16);  // grid.y <= 65535: out_rows <= 1048560
  if (out_rows > 0 && out_cols > 0) conv_2d_kernel<<<grid, block>>>(input, kernel, output, input_rows, input_cols, kernel_rows, kernel_cols);
  cudaDeviceSynchronize();
}

extern "C" void conv_2d_bf16(const __nv_bfloat16* input, const __nv_bfloat16* kernel, __nv_bfloat16* output, int input_rows,
                             int input_cols, int kernel_rows, int kernel_cols) {
  int out_rows = input_rows - kernel_rows + 1, out_cols = input_cols - kernel_cols + 1;
  dim3 block(16, 16);
  dim3 grid((out_cols + 15) / 16, (out_rows + 15) / 16);
  if (out_rows > 0 && out_cols > 0)
    conv_2d_bf16_kernel<<<grid, block>>>(input, kernel, output, input_rows, input_cols, kernel_rows, kernel_cols);
  cudaDeviceSynchronize();
}
