// BF16 twin of conv_2d: the taps staged in shared memory as floats and summed column by column (n outer,
// m inner), where the baseline runs m (kernel row) outer and n inner; FP32 accumulation, one rounding.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

static __global__ void conv2d_twin(const __nv_bfloat16* input, const __nv_bfloat16* kernel, __nv_bfloat16* output, int input_rows,
                                   int input_cols, int kernel_rows, int kernel_cols) {
  extern __shared__ float taps[];
  int count = kernel_rows * kernel_cols;
  for (int t = threadIdx.y * blockDim.x + threadIdx.x; t < count; t += blockDim.x * blockDim.y) taps[t] = __bfloat162float(kernel[t]);
  __syncthreads();
  int out_rows = input_rows - kernel_rows + 1, out_cols = input_cols - kernel_cols + 1;
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= out_rows || c >= out_cols) return;
  float sum = 0.0f;
  for (int n = 0; n < kernel_cols; ++n)
    for (int m = 0; m < kernel_rows; ++m)
      sum = fmaf(__bfloat162float(input[(size_t)(r + m) * input_cols + (c + n)]), taps[m * kernel_cols + n], sum);
  output[(size_t)r * out_cols + c] = __float2bfloat16(sum);
}

extern "C" void conv_2d_bf16_optimized(const __nv_bfloat16* input, const __nv_bfloat16* kernel, __nv_bfloat16* output, int input_rows,
                                       int input_cols, int kernel_rows, int kernel_cols) {
  int out_rows = input_rows - kernel_rows + 1, out_cols = input_cols - kernel_cols + 1;
  if (out_rows <= 0 || out_cols <= 0) return;
  size_t smem = (size_t)kernel_rows * kernel_cols * sizeof(float);
  if (smem > 48 * 1024) cudaFuncSetAttribute(conv2d_twin, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  dim3 block(32, 8);
  dim3 grid((out_cols + 31) / 32, (out_rows + 7) / 8);
  conv2d_twin<<<grid, block, smem>>>(input, kernel, output, input_rows, input_cols, kernel_rows, kernel_cols);
}
