// MSKernelBench max_pooling_2d baseline (ours), doing what the published baseline does: NCHW max
// pooling, one thread per output on 16x16 blocks over (w_out, h_out) with grid.z = N*C. The window
// of output (h_out, w_out) covers rows [h0, h0 + k) and columns [w0, w0 + k), h0 = h_out*stride -
// padding; positions outside the image are skipped (padding acts as -inf), and the max starts at
// -FLT_MAX. out_H = (H + 2*padding - k)/stride + 1 (likewise out_W); nothing is done if either is
// <= 0. BF16 compares as float and stores the max, which is exact. Indices are 64-bit.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cfloat>

__global__ void max_pooling_2d_kernel(const float* input, float* output, int H, int W, int kernel_size, int stride, int padding,
                                      int out_H, int out_W) {
  int ow = blockIdx.x * blockDim.x + threadIdx.x;
  int oh = blockIdx.y * blockDim.y + threadIdx.y;
  size_t plane = blockIdx.z;  // n * C + c
  if (oh >= out_H || ow >= out_W) return;
  const float* in = input + plane * H * W;
  int h0 = oh * stride - padding, w0 = ow * stride - padding;
  float m = -FLT_MAX;
  for (int i = 0; i < kernel_size; ++i) {
    int h = h0 + i;
    if (h < 0 || h >= H) continue;
    for (int j = 0; j < kernel_size; ++j) {
      int w = w0 + j;
      if (w < 0 || w >= W) continue;
      m = fmaxf(m, in[(size_t)h * W + w]);
    }
  }
  output[(plane * out_H + oh) * out_W + ow] = m;
}

__global__ void max_pooling_2d_bf16_kernel(const __nv_bfloat16* input, __nv_bfloat16* output, int H, int W, int kernel_size, int stride,
                                           int padding, int out_H, int out_W) {
  int ow = blockIdx.x * blockDim.x + threadIdx.x;
  int oh = blockIdx.y * blockDim.y + threadIdx.y;
  size_t plane = blockIdx.z;
  if (oh >= out_H || ow >= out_W) return;
  const __nv_bfloat16* in = input + plane * H * W;
  int h0 = oh * stride - padding, w0 = ow * stride - padding;
  float m = -FLT_MAX;
  for (int i = 0; i < kernel_size; ++i) {
    int h = h0 + i;
    if (h < 0 || h >= H) continue;
    for (int j = 0; j < kernel_size; ++j) {
      int w = w0 + j;
      if (w < 0 || w >= W) continue;
      m = fmaxf(m, __bfloat162float(in[(size_t)h * W + w]));
    }
  }
  output[(plane * out_H + oh) * out_W + ow] = __float2bfloat16(m);
}

extern "C" void max_pooling_2d(const float* input, float* output, int N, int C, int H, int W, int kernel_size, int stride, int padding) {
  int out_H = (H + 2 * padding - kernel_size) / stride + 1;
  int out_W = (W + 2 * padding - kernel_size) / stride + 1;
  if (out_H <= 0 || out_W <= 0 || N * C <= 0) return;
  dim3 block(16, 16);
  dim3 grid((out_W + 15) / 16, (out_H + 15) / 16, N * C);  // grid.y, grid.z <= 65535
  max_pooling_2d_kernel<<<grid, block>>>(input, output, H, W, kernel_size, stride, padding, out_H, out_W);
  cudaDeviceSynchronize();
}

extern "C" void max_pooling_2d_bf16(const __nv_bfloat16* input, __nv_bfloat16* output, int N, int C, int H, int W, int kernel_size,
                                    int stride, int padding) {
  int out_H = (H + 2 * padding - kernel_size) / stride + 1;
  int out_W = (W + 2 * padding - kernel_size) / stride + 1;
  if (out_H <= 0 || out_W <= 0 || N * C <= 0) return;
  dim3 block(16, 16);
  dim3 grid((out_W + 15) / 16, (out_H + 15) / 16, N * C);
  max_pooling_2d_bf16_kernel<<<grid, block>>>(input, output, H, W, kernel_size, stride, padding, out_H, out_W);
  cudaDeviceSynchronize();
}
