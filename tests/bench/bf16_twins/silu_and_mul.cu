// BF16 twin of silu_and_mul: 2-D grid (rows on y, __nv_bfloat162 column pairs on x when D is even, scalar otherwise),
// x*g/(1 + __expf(-x)) in FP32.
#include <cstdint>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;
constexpr int kMaxRowBlocks = 65535;

__device__ __forceinline__ float silu_mul(float x, float g) { return x * g / (1.0f + __expf(-x)); }
}  // namespace

// D even: row b's x half starts at b*2D and its g half at b*2D + D, both even element offsets.
__global__ void silu_and_mul_twin_pairs(const __nv_bfloat16* __restrict__ in, __nv_bfloat16* __restrict__ out, int B, int D) {
  int half_pairs = D / 2;
  for (int b = blockIdx.y; b < B; b += gridDim.y) {
    const __nv_bfloat162* x2 = reinterpret_cast<const __nv_bfloat162*>(in + (size_t)b * 2 * D);
    const __nv_bfloat162* g2 = reinterpret_cast<const __nv_bfloat162*>(in + (size_t)b * 2 * D + D);
    __nv_bfloat162* o2 = reinterpret_cast<__nv_bfloat162*>(out + (size_t)b * D);
    for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < half_pairs; p += gridDim.x * blockDim.x) {
      float2 x = __bfloat1622float2(x2[p]), g = __bfloat1622float2(g2[p]);
      o2[p] = __floats2bfloat162_rn(silu_mul(x.x, g.x), silu_mul(x.y, g.y));
    }
  }
}

__global__ void silu_and_mul_twin_scalar(const __nv_bfloat16* __restrict__ in, __nv_bfloat16* __restrict__ out, int B, int D) {
  for (int b = blockIdx.y; b < B; b += gridDim.y) {
    const __nv_bfloat16* row = in + (size_t)b * 2 * D;
    for (int d = blockIdx.x * blockDim.x + threadIdx.x; d < D; d += gridDim.x * blockDim.x)
      out[(size_t)b * D + d] = __float2bfloat16(silu_mul(__bfloat162float(row[d]), __bfloat162float(row[D + d])));
  }
}

extern "C" void silu_and_mul_bf16_optimized(const __nv_bfloat16* in, __nv_bfloat16* out, int32_t B, int32_t D) {
  if (B <= 0 || D <= 0) return;
  bool aligned = ((reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(out)) & 3) == 0;
  bool pairs = aligned && D % 2 == 0;
  int work = pairs ? D / 2 : D;
  int xblocks = (work + kThreads - 1) / kThreads;
  dim3 grid(xblocks < 64 ? xblocks : 64, B < kMaxRowBlocks ? B : kMaxRowBlocks);
  if (pairs) silu_and_mul_twin_pairs<<<grid, kThreads>>>(in, out, B, D);
  else silu_and_mul_twin_scalar<<<grid, kThreads>>>(in, out, B, D);
  cudaDeviceSynchronize();
}
