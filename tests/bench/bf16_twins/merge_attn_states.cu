// BF16 twin of merge_attn_states: one warp per (token, head) with every lane computing the scales itself (no shared
// memory or barrier), LSE = m + log1pf(smaller exp), V = fmaf(V_a, sa, V_b*sb).
#include <cfloat>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kWarpsPerBlock = 4;
}  // namespace

__global__ void merge_twin_warps(__nv_bfloat16* __restrict__ V_out, __nv_bfloat16* __restrict__ LSE_out, const __nv_bfloat16* __restrict__ V_a,
                                 const __nv_bfloat16* __restrict__ lse_a, const __nv_bfloat16* __restrict__ V_b,
                                 const __nv_bfloat16* __restrict__ lse_b, int num_tokens, int num_heads, int head_size) {
  long long pairs = (long long)num_tokens * num_heads;
  int lane = threadIdx.x % 32;
  long long first = (long long)blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  for (long long p = first; p < pairs; p += (long long)gridDim.x * kWarpsPerBlock) {
    int t = (int)(p / num_heads), h = (int)(p % num_heads);  // p = t * num_heads + h: V rows in memory order
    size_t l = (size_t)h * num_tokens + t;
    float pa = __bfloat162float(lse_a[l]), pb = __bfloat162float(lse_b[l]);
    if (isinf(pa)) pa = -FLT_MAX;
    if (isinf(pb)) pb = -FLT_MAX;
    float m = fmaxf(pa, pb);
    float ea = expf(pa - m), eb = expf(pb - m);  // one of them is exactly 1
    float inv = 1.0f / (ea + eb);
    float sa = ea * inv, sb = eb * inv;
    if (lane == 0 && LSE_out != nullptr) LSE_out[l] = __float2bfloat16(m + log1pf(fminf(ea, eb)));
    const size_t row = (size_t)p * head_size;
    for (int e = lane; e < head_size; e += 32)
      V_out[row + e] = __float2bfloat16(fmaf(__bfloat162float(V_a[row + e]), sa, __bfloat162float(V_b[row + e]) * sb));
  }
}

extern "C" void merge_attn_states_bf16_optimized(__nv_bfloat16* V_out, __nv_bfloat16* LSE_out, const __nv_bfloat16* V_a,
                                                 const __nv_bfloat16* lse_a, const __nv_bfloat16* V_b, const __nv_bfloat16* lse_b,
                                                 int num_tokens, int num_heads, int head_size) {
  if (num_tokens <= 0 || num_heads <= 0 || head_size <= 0) return;
  long long pairs = (long long)num_tokens * num_heads;
  long long want = (pairs + kWarpsPerBlock - 1) / kWarpsPerBlock;
  int blocks = (int)(want < 262144 ? want : 262144);
  merge_twin_warps<<<blocks, kWarpsPerBlock * 32>>>(V_out, LSE_out, V_a, lse_a, V_b, lse_b, num_tokens, num_heads, head_size);
  cudaDeviceSynchronize();
}
