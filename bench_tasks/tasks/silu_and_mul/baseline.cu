// MSKernelBench silu_and_mul baseline (ours), doing what the published baseline does (vLLM's
// silu_and_mul): in is [B][2D], row b holding x = in[b*2D + d] (first half) and g = in[b*2D + D + d]
// (second half); out[b*D + d] = silu(x) * g with silu(x) = x / (1 + exp(-x)). min(256, B) blocks of
// 128 threads: blocks stride over rows, threads stride over d. BF16: inputs converted to float, FP32
// arithmetic, one rounding at the store.
#include <cstdint>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 128;
constexpr int kMaxBlocks = 256;
}  // namespace

__global__ void silu_and_mul_kernel(const float* in, float* out, int32_t B, int32_t D) {
  for (int32_t b = blockIdx.x; b < B; b += gridDim.x) {
    const float* row = in + (size_t)b * 2 * D;
    for (int32_t d = threadIdx.x; d < D; d += blockDim.x) {
      float x = row[d];
      float g = row[D + d];
      out[(size_t)b * D + d] = x / (1.0f + expf(-x)) * g;
    }
  }
}

__global__ void silu_and_mul_bf16_kernel(const __nv_bfloat16* in, __nv_bfloat16* out, int32_t B, int32_t D) {
  for (int32_t b = blockIdx.x; b < B; b += gridDim.x) {
    const __nv_bfloat16* row = in + (size_t)b * 2 * D;
    for (int32_t d = threadIdx.x; d < D; d += blockDim.x) {
      float x = __bfloat162float(row[d]);
      float g = __bfloat162float(row[D + d]);
      out[(size_t)b * D + d] = __float2bfloat16(x / (1.0f + expf(-x)) * g);
    }
  }
}

extern "C" void silu_and_mul(const float* in, float* out, int32_t B, int32_t D) {
  int blocks = B < kMaxBlocks ? B : kMaxBlocks;
  if (B > 0 && D > 0) silu_and_mul_kernel<<<blocks, kThreads>>>(in, out, B, D);
  cudaDeviceSynchronize();
}

extern "C" void silu_and_mul_bf16(const __nv_bfloat16* in, __nv_bfloat16* out, int32_t B, int32_t D) {
  int blocks = B < kMaxBlocks ? B : kMaxBlocks;
  if (B > 0 && D > 0) silu_and_mul_bf16_kernel<<<blocks, kThreads>>>(in, out, B, D);
  cudaDeviceSynchronize();
}
