// MSKernelBench triangle_attention baseline (ours), doing what the published baseline does: per-FEATURE
// causal attention on [B][H][S][D] data with a float mask [B][S][S] shared by the heads. One thread per
// output element (b, h, i, d), 256 per block, with three serial passes over the keys j <= i, the score
// recomputed in each: s_j = q[b,h,i,d] * k[b,h,j,d] / sqrtf(D), or -FLT_MAX (weight exactly 0) where
// mask[b,i,j] > 0.5; pass 1 takes the max, pass 2 sums expf(s_j - max) over the unmasked keys, pass 3
// accumulates expf(s_j - max) / sum * v[b,h,j,d]. A row with every key masked (sum = 0) gives 0.
// BF16: q, k, v converted to float (the mask is float in both), FP32 arithmetic, one rounding at the store.
#include <cfloat>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }

// One output element: idx is its flat index in [B][H][S][D].
template <typename T>
__device__ void triangle_attention_element(const T* query, const T* key, const T* value, const float* attention_mask, T* output,
                                           int head_num, int seq_length, int head_dim, size_t idx) {
  int d = (int)(idx % head_dim);
  size_t row = idx / head_dim;  // (b*H + h)*S + i
  int i = (int)(row % seq_length);
  size_t bh = row / seq_length;
  int b = (int)(bh / head_num);
  const T* k = key + bh * seq_length * head_dim + d;  // k[b,h,j,d] = k[j * head_dim]
  const T* v = value + bh * seq_length * head_dim + d;
  const float* mask = attention_mask + ((size_t)b * seq_length + i) * seq_length;
  float q = to_float(query[idx]);
  float scale = sqrtf((float)head_dim);

  float mx = -FLT_MAX;
  for (int j = 0; j <= i; ++j) {
    float s = mask[j] > 0.5f ? -FLT_MAX : q * to_float(k[(size_t)j * head_dim]) / scale;
    mx = fmaxf(mx, s);
  }
  float sum = 0.0f;
  for (int j = 0; j <= i; ++j)
    if (!(mask[j] > 0.5f)) sum += expf(q * to_float(k[(size_t)j * head_dim]) / scale - mx);
  float acc = 0.0f;
  if (sum > 0.0f)
    for (int j = 0; j <= i; ++j)
      if (!(mask[j] > 0.5f)) acc += expf(q * to_float(k[(size_t)j * head_dim]) / scale - mx) / sum * to_float(v[(size_t)j * head_dim]);
  store(output + idx, acc);
}
}  // namespace

__global__ void triangle_attention_kernel(const float* query, const float* key, const float* value, const float* attention_mask,
                                          float* output, size_t total, int head_num, int seq_length, int head_dim) {
  size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < total) triangle_attention_element(query, key, value, attention_mask, output, head_num, seq_length, head_dim, idx);
}

__global__ void triangle_attention_bf16_kernel(const __nv_bfloat16* query, const __nv_bfloat16* key, const __nv_bfloat16* value,
                                               const float* attention_mask, __nv_bfloat16* output, size_t total, int head_num,
                                               int seq_length, int head_dim) {
  size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < total) triangle_attention_element(query, key, value, attention_mask, output, head_num, seq_length, head_dim, idx);
}

extern "C" void triangle_attention(const float* query, const float* key, const float* value, const float* attention_mask, float* output, int batch_size, int head_num, int seq_length, int head_dim) {
  size_t total = (size_t)batch_size * head_num * seq_length * head_dim;
  if (batch_size > 0 && head_num > 0 && seq_length > 0 && head_dim > 0)
    triangle_attention_kernel<<<(unsigned)((total + kThreads - 1) / kThreads), kThreads>>>(query, key, value, attention_mask, output, total,
                                                                                          head_num, seq_length, head_dim);
  cudaDeviceSynchronize();
}

extern "C" void triangle_attention_bf16(const __nv_bfloat16* query, const __nv_bfloat16* key, const __nv_bfloat16* value, const float* attention_mask, __nv_bfloat16* output, int batch_size, int head_num, int seq_length, int head_dim) {
  size_t total = (size_t)batch_size * head_num * seq_length * head_dim;
  if (batch_size > 0 && head_num > 0 && seq_length > 0 && head_dim > 0)
    triangle_attention_bf16_kernel<<<(unsigned)((total + kThreads - 1) / kThreads), kThreads>>>(query, key, value, attention_mask, output,
                                                                                               total, head_num, seq_length, head_dim);
  cudaDeviceSynchronize();
}
