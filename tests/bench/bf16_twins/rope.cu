// BF16 twin of rope: rows on grid.y, __nv_bfloat162 pair loads on x, theta = exp2f(-(2p/D)*log2f(base)) and sincosf
// instead of powf, cosf, sinf.
#include <cstdint>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;
constexpr int kMaxRowBlocks = 65535;

__device__ __forceinline__ float2 rotate(float x0, float x1, int m, int p, int D, float log2_base) {
  float theta = exp2f(-(2.0f * p / D) * log2_base);
  float s, c;
  sincosf(m * theta, &s, &c);
  return make_float2(x0 * c - x1 * s, x0 * s + x1 * c);
}
}  // namespace

// Pair p of row m sits at element m*D + 2p: an even offset (D is even), so one __nv_bfloat162 when the buffers are 4-byte aligned.
__global__ void rope_twin_pairs(__nv_bfloat16* __restrict__ output, const __nv_bfloat16* __restrict__ input, int M, int D, float log2_base) {
  int half = D / 2;
  for (int m = blockIdx.y; m < M; m += gridDim.y) {
    const __nv_bfloat162* in2 = reinterpret_cast<const __nv_bfloat162*>(input + (size_t)m * D);
    __nv_bfloat162* out2 = reinterpret_cast<__nv_bfloat162*>(output + (size_t)m * D);
    for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < half; p += gridDim.x * blockDim.x) {
      float2 x = __bfloat1622float2(in2[p]);
      float2 r = rotate(x.x, x.y, m, p, D, log2_base);
      out2[p] = __floats2bfloat162_rn(r.x, r.y);
    }
  }
}

__global__ void rope_twin_scalar(__nv_bfloat16* __restrict__ output, const __nv_bfloat16* __restrict__ input, int M, int D, float log2_base) {
  int half = D / 2;
  for (int m = blockIdx.y; m < M; m += gridDim.y) {
    for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < half; p += gridDim.x * blockDim.x) {
      size_t i = (size_t)m * D + 2 * (size_t)p;
      float2 r = rotate(__bfloat162float(input[i]), __bfloat162float(input[i + 1]), m, p, D, log2_base);
      output[i] = __float2bfloat16(r.x);
      output[i + 1] = __float2bfloat16(r.y);
    }
  }
}

extern "C" void rope_bf16_optimized(__nv_bfloat16* output, const __nv_bfloat16* input, int M, int D, float base) {
  if (M <= 0 || D <= 1) return;
  float log2_base = log2f(base);
  int half = D / 2;
  int xblocks = (half + kThreads - 1) / kThreads;
  dim3 grid(xblocks < 256 ? xblocks : 256, M < kMaxRowBlocks ? M : kMaxRowBlocks);
  bool aligned = ((reinterpret_cast<uintptr_t>(output) | reinterpret_cast<uintptr_t>(input)) & 3) == 0;
  if (aligned && D % 2 == 0) rope_twin_pairs<<<grid, kThreads>>>(output, input, M, D, log2_base);
  else rope_twin_scalar<<<grid, kThreads>>>(output, input, M, D, log2_base);
  cudaDeviceSynchronize();
}
