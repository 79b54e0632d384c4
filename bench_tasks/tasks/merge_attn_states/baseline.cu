// MSKernelBench merge_attn_states baseline (ours), doing what the published baseline does: merge two
// partial attention results (V_a, lse_a) and (V_b, lse_b) per token t and head h. V arrays are
// [num_tokens][num_heads][head_size]; the log-sum-exps are [num_heads][num_tokens] (head-major).
// Grid (num_tokens, num_heads), one block of head_size threads per (t, h): thread 0 replaces an infinite
// lse (either sign) by -FLT_MAX, computes m = max(pa, pb), ea = expf(pa - m), eb = expf(pb - m),
// s = ea + eb, the two scales ea/s and eb/s into shared memory and LSE_out = logf(s) + m (skipped when
// LSE_out is null); after a barrier each thread writes one element V_out = V_a*ea/s + V_b*eb/s.
// BF16: inputs converted to float, FP32 arithmetic, one rounding per stored element.
#include <cfloat>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }

template <typename T>
__device__ void merge_block(T* V_out, T* LSE_out, const T* V_a, const T* lse_a, const T* V_b, const T* lse_b, int num_tokens,
                            int num_heads, int head_size) {
  __shared__ float scale_a, scale_b;
  int t = blockIdx.x, h = blockIdx.y;
  if (threadIdx.x == 0) {
    size_t l = (size_t)h * num_tokens + t;
    float pa = to_float(lse_a[l]), pb = to_float(lse_b[l]);
    if (isinf(pa)) pa = -FLT_MAX;
    if (isinf(pb)) pb = -FLT_MAX;
    float m = fmaxf(pa, pb);
    float ea = expf(pa - m), eb = expf(pb - m);
    float s = ea + eb;
    scale_a = ea / s;
    scale_b = eb / s;
    if (LSE_out != nullptr) store(LSE_out + l, logf(s) + m);
  }
  __syncthreads();
  int e = threadIdx.x;
  if (e < head_size) {
    size_t i = ((size_t)t * num_heads + h) * head_size + e;
    store(V_out + i, to_float(V_a[i]) * scale_a + to_float(V_b[i]) * scale_b);
  }
}
}  // namespace

__global__ void merge_attn_states_kernel(float* V_out, float* LSE_out, const float* V_a, const float* lse_a, const float* V_b,
                                         const float* lse_b, int num_tokens, int num_heads, int head_size) {
  merge_block(V_out, LSE_out, V_a, lse_a, V_b, lse_b, num_tokens, num_heads, head_size);
}

__global__ void merge_attn_states_bf16_kernel(__nv_bfloat16* V_out, __nv_bfloat16* LSE_out, const __nv_bfloat16* V_a,
                                              const __nv_bfloat16* lse_a, const __nv_bfloat16* V_b, const __nv_bfloat16* lse_b,
                                              int num_tokens, int num_heads, int head_size) {
  merge_block(V_out, LSE_out, V_a, lse_a, V_b, lse_b, num_tokens, num_heads, head_size);
}

extern "C" void merge_attn_states(float* V_out, float* LSE_out, const float* V_a, const float* lse_a, const float* V_b, const float* lse_b, int num_tokens, int num_heads, int head_size) {
  if (num_tokens > 0 && num_heads > 0 && head_size > 0)
    merge_attn_states_kernel<<<dim3(num_tokens, num_heads), head_size>>>(V_out, LSE_out, V_a, lse_a, V_b, lse_b, num_tokens, num_heads,
                                                                          head_size);
  cudaDeviceSynchronize();
}

extern "C" void merge_attn_states_bf16(__nv_bfloat16* V_out, __nv_bfloat16* LSE_out, const __nv_bfloat16* V_a, const __nv_bfloat16* lse_a, const __nv_bfloat16* V_b, const __nv_bfloat16* lse_b, int num_tokens, int num_heads, int head_size) {
  if (num_tokens > 0 && num_heads > 0 && head_size > 0)
    merge_attn_states_bf16_kernel<<<dim3(num_tokens, num_heads), head_size>>>(V_out, LSE_out, V_a, lse_a, V_b, lse_b, num_tokens,
                                                                               num_heads, head_size);
  cudaDeviceSynchronize();
}
