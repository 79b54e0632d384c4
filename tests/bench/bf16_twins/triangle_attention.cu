// BF16 twin of triangle_attention: one pass of online softmax (running max, rescaled sum and weighted sum) over 8 interleaved key splits per output, the splits merged by a shared-memory tree and divided once at the end (the baseline makes three sequential passes over j <= i and divides every weight).
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kLanes = 32;   // d values per block (threadIdx.x)
constexpr int kSplits = 8;   // key splits per d (threadIdx.y): split s takes j = s, s + 8, ...

struct SoftmaxState {
  float max;  // -inf while no key is unmasked
  float sum;  // sum of exp(score - max)
  float acc;  // sum of exp(score - max) * v
};

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }

__device__ __forceinline__ SoftmaxState merge(SoftmaxState a, SoftmaxState b) {
  float m = fmaxf(a.max, b.max);
  if (m == neg_inf()) return a;  // both empty
  float ca = expf(a.max - m), cb = expf(b.max - m);  // an empty side has max = -inf: factor 0
  return SoftmaxState{m, a.sum * ca + b.sum * cb, a.acc * ca + b.acc * cb};
}

// Block (kLanes, kSplits) on grid (B*H*S rows, ceil(D / kLanes) d-tiles).
__global__ void twin_triangle_attention(const __nv_bfloat16* query, const __nv_bfloat16* key, const __nv_bfloat16* value,
                                        const float* attention_mask, __nv_bfloat16* output, int head_num, int seq_length,
                                        int head_dim) {
  __shared__ SoftmaxState partial[kSplits][kLanes];
  size_t row = blockIdx.x;  // (b*H + h)*S + i
  int d = blockIdx.y * kLanes + threadIdx.x;
  int split = threadIdx.y;
  int i = (int)(row % seq_length);
  size_t bh = row / seq_length;
  int b = (int)(bh / head_num);
  bool active = d < head_dim;
  SoftmaxState st{neg_inf(), 0.0f, 0.0f};
  if (active) {
    const __nv_bfloat16* k = key + bh * seq_length * head_dim + d;
    const __nv_bfloat16* v = value + bh * seq_length * head_dim + d;
    const float* mask = attention_mask + ((size_t)b * seq_length + i) * seq_length;
    float q = __bfloat162float(query[row * head_dim + d]) / sqrtf((float)head_dim);
    for (int j = split; j <= i; j += kSplits) {
      if (mask[j] > 0.5f) continue;
      float s = q * __bfloat162float(k[(size_t)j * head_dim]);
      float vj = __bfloat162float(v[(size_t)j * head_dim]);
      if (s > st.max) {
        float c = expf(st.max - s);  // 0 for the first unmasked key
        st = SoftmaxState{s, fmaf(st.sum, c, 1.0f), fmaf(st.acc, c, vj)};
      } else {
        float e = expf(s - st.max);
        st.sum += e;
        st.acc = fmaf(e, vj, st.acc);
      }
    }
  }
  partial[split][threadIdx.x] = st;
  __syncthreads();
  for (int half = kSplits / 2; half > 0; half /= 2) {
    if (split < half) {
      st = merge(st, partial[split + half][threadIdx.x]);
      partial[split][threadIdx.x] = st;
    }
    __syncthreads();
  }
  if (split == 0 && active) output[row * head_dim + d] = __float2bfloat16(st.sum > 0.0f ? st.acc / st.sum : 0.0f);
}
}  // namespace

extern "C" void triangle_attention_bf16_optimized(const __nv_bfloat16* query, const __nv_bfloat16* key, const __nv_bfloat16* value,
                                                  const float* attention_mask, __nv_bfloat16* output, int batch_size, int head_num,
                                                  int seq_length, int head_dim) {
  if (batch_size <= 0 || head_num <= 0 || seq_length <= 0 || head_dim <= 0) return;
  size_t rows = (size_t)batch_size * head_num * seq_length;
  dim3 block(kLanes, kSplits);
  dim3 grid((unsigned)rows, (unsigned)((head_dim + kLanes - 1) / kLanes));
  twin_triangle_attention<<<grid, block>>>(query, key, value, attention_mask, output, head_num, seq_length, head_dim);
  cudaDeviceSynchronize();
}
