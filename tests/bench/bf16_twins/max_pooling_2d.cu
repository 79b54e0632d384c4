// BF16 twin of max_pooling_2d: grid-stride over flat outputs, window clamped to the image and scanned column by column
// (max is exact in any order).
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cfloat>

namespace {
constexpr int kThreads = 256;
}  // namespace

__global__ void max_pool_twin_bf16(const __nv_bfloat16* __restrict__ input, __nv_bfloat16* __restrict__ output, int H, int W, int k,
                                   int stride, int padding, int out_H, int out_W, long long total) {
  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < total; o += (long long)gridDim.x * blockDim.x) {
    int ow = (int)(o % out_W);
    long long rest = o / out_W;
    int oh = (int)(rest % out_H);
    long long plane = rest / out_H;
    const __nv_bfloat16* in = input + plane * (long long)H * W;
    int h0 = oh * stride - padding, w0 = ow * stride - padding;
    int hs = h0 > 0 ? h0 : 0, he = h0 + k < H ? h0 + k : H;
    int ws = w0 > 0 ? w0 : 0, we = w0 + k < W ? w0 + k : W;
    float m = -FLT_MAX;
    for (int w = ws; w < we; ++w)
      for (int h = hs; h < he; ++h) m = fmaxf(m, __bfloat162float(in[(long long)h * W + w]));
    output[o] = __float2bfloat16(m);
  }
}

extern "C" void max_pooling_2d_bf16_optimized(const __nv_bfloat16* input, __nv_bfloat16* output, int N, int C, int H, int W,
                                              int kernel_size, int stride, int padding) {
  int out_H = (H + 2 * padding - kernel_size) / stride + 1;
  int out_W = (W + 2 * padding - kernel_size) / stride + 1;
  if (out_H <= 0 || out_W <= 0 || N <= 0 || C <= 0) return;
  long long total = (long long)N * C * out_H * out_W;
  long long want = (total + kThreads - 1) / kThreads;
  int blocks = (int)(want < 65536 ? want : 65536);
  max_pool_twin_bf16<<<blocks, kThreads>>>(input, output, H, W, kernel_size, stride, padding, out_H, out_W, total);
  cudaDeviceSynchronize();
}
