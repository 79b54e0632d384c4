// Honest conv_2d, FP32: the filter copied into __constant__ memory (device to device, stream-ordered) when it
// has at most 4096 taps, read from global memory otherwise; one thread per output, m outer, n inner.
#include <cuda_runtime.h>

constexpr int kMaxTaps = 4096;  // 16 KB of the 64 KB constant bank
__constant__ float c_filter[kMaxTaps];

template <bool CONSTANT>
__global__ void conv2d_filter(const float* __restrict__ input, const float* __restrict__ kernel, float* __restrict__ output, int input_rows,
                              int input_cols, int kernel_rows, int kernel_cols) {
  int out_rows = input_rows - kernel_rows + 1, out_cols = input_cols - kernel_cols + 1;
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= out_rows || c >= out_cols) return;
  float sum = 0.0f;
  for (int m = 0; m < kernel_rows; ++m) {
    const float* row = input + (size_t)(r + m) * input_cols + c;
    for (int n = 0; n < kernel_cols; ++n) sum += row[n] * (CONSTANT ? c_filter[m * kernel_cols + n] : kernel[m * kernel_cols + n]);
  }
  output[(size_t)r * out_cols + c] = sum;
}

extern "C" void conv_2d_optimized(const float* input, const float* kernel, float* output, int input_rows, int input_cols, int kernel_rows,
                                  int kernel_cols) {
  int out_rows = input_rows - kernel_rows + 1, out_cols = input_cols - kernel_cols + 1;
  if (out_rows <= 0 || out_cols <= 0) return;
  dim3 block(32, 8), grid((out_cols + 31) / 32, (out_rows + 7) / 8);
  size_t taps = (size_t)kernel_rows * kernel_cols;
  if (taps <= (size_t)kMaxTaps &&
      cudaMemcpyToSymbolAsync(c_filter, kernel, taps * sizeof(float), 0, cudaMemcpyDeviceToDevice, 0) == cudaSuccess)
    conv2d_filter<true><<<grid, block>>>(input, kernel, output, input_rows, input_cols, kernel_rows, kernel_cols);
  else
    conv2d_filter<false><<<grid, block>>>(input, kernel, output, input_rows, input_cols, kernel_rows, kernel_cols);
}
