// BF16 twin of softmax_attention: shared-memory 16x16 tiled products summed per tile then added (blocked k order), FP32
// scores and probabilities, block-tree row softmax (baseline: sequential k, bf16 S and P).
#include <cfloat>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kTile = 16;
constexpr int kRowThreads = 256;

// Tree reduction over the block (kRowThreads threads); the result is returned to EVERY thread.
template <bool kMax>
__device__ __forceinline__ float block_reduce_all(float v) {
  __shared__ float warp_vals[kRowThreads / 32];
  __shared__ float result;
  for (int off = 16; off > 0; off >>= 1) {
    float u = __shfl_down_sync(0xffffffffu, v, off);
    v = kMax ? fmaxf(v, u) : v + u;
  }
  if (threadIdx.x % 32 == 0) warp_vals[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < kRowThreads / 32 ? warp_vals[threadIdx.x] : (kMax ? -FLT_MAX : 0.0f);
    for (int off = 16; off > 0; off >>= 1) {
      float u = __shfl_down_sync(0xffffffffu, v, off);
      v = kMax ? fmaxf(v, u) : v + u;
    }
    if (threadIdx.x == 0) result = v;
  }
  __syncthreads();
  float r = result;
  __syncthreads();
  return r;
}
}  // namespace

// S[i][j] = scale * sum_k Q[i][k] K[j][k]; x -> key j, y -> query i. Each 16-wide k tile is summed on its own, then added.
__global__ void attn_twin_scores(float* __restrict__ S, const __nv_bfloat16* __restrict__ Q, const __nv_bfloat16* __restrict__ K, int q_len,
                                 int kv_len, int dim_qk, float scale) {
  __shared__ float q_tile[kTile][kTile];
  __shared__ float k_tile[kTile][kTile + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int i = blockIdx.y * kTile + ty;
  int j = blockIdx.x * kTile + tx;
  int kj = blockIdx.x * kTile + ty;  // the key row this thread loads
  float acc = 0.0f;
  for (int k0 = 0; k0 < dim_qk; k0 += kTile) {
    int k = k0 + tx;
    q_tile[ty][tx] = (i < q_len && k < dim_qk) ? __bfloat162float(Q[(size_t)i * dim_qk + k]) : 0.0f;
    k_tile[ty][tx] = (kj < kv_len && k < dim_qk) ? __bfloat162float(K[(size_t)kj * dim_qk + k]) : 0.0f;
    __syncthreads();
    float part = 0.0f;
    for (int kk = 0; kk < kTile; ++kk) part = fmaf(q_tile[ty][kk], k_tile[tx][kk], part);
    acc += part;
    __syncthreads();
  }
  if (i < q_len && j < kv_len) S[(size_t)i * kv_len + j] = acc * scale;
}

// In place: row i of S becomes its softmax (FP32), one block per row.
__global__ void attn_twin_softmax(float* S, int q_len, int kv_len) {
  for (int i = blockIdx.x; i < q_len; i += gridDim.x) {
    float* s = S + (size_t)i * kv_len;
    float m = -FLT_MAX;
    for (int j = threadIdx.x; j < kv_len; j += kRowThreads) m = fmaxf(m, s[j]);
    m = block_reduce_all<true>(m);
    float sum = 0.0f;
    for (int j = threadIdx.x; j < kv_len; j += kRowThreads) sum += expf(s[j] - m);
    float inv = 1.0f / block_reduce_all<false>(sum);
    for (int j = threadIdx.x; j < kv_len; j += kRowThreads) s[j] = expf(s[j] - m) * inv;
  }
}

// Y[i][e] = sum_j P[i][j] V[j][e]; x -> feature e, y -> query i. Blocked over j like the scores.
__global__ void attn_twin_pv(__nv_bfloat16* __restrict__ Y, const float* __restrict__ P, const __nv_bfloat16* __restrict__ V, int q_len,
                             int kv_len, int dim_v) {
  __shared__ float p_tile[kTile][kTile];
  __shared__ float v_tile[kTile][kTile];
  int tx = threadIdx.x, ty = threadIdx.y;
  int i = blockIdx.y * kTile + ty;
  int e = blockIdx.x * kTile + tx;
  float acc = 0.0f;
  for (int j0 = 0; j0 < kv_len; j0 += kTile) {
    int pj = j0 + tx, vj = j0 + ty;
    p_tile[ty][tx] = (i < q_len && pj < kv_len) ? P[(size_t)i * kv_len + pj] : 0.0f;
    v_tile[ty][tx] = (vj < kv_len && e < dim_v) ? __bfloat162float(V[(size_t)vj * dim_v + e]) : 0.0f;
    __syncthreads();
    float part = 0.0f;
    for (int jj = 0; jj < kTile; ++jj) part = fmaf(p_tile[ty][jj], v_tile[jj][tx], part);
    acc += part;
    __syncthreads();
  }
  if (i < q_len && e < dim_v) Y[(size_t)i * dim_v + e] = __float2bfloat16(acc);
}

extern "C" void softmax_attention_bf16_optimized(__nv_bfloat16* Y, const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
                                                 int q_seq_len, int kv_seq_len, int dim_qk, int dim_v) {
  if (q_seq_len <= 0 || kv_seq_len <= 0 || dim_v <= 0) return;
  float* S = nullptr;
  if (cudaMalloc(&S, (size_t)q_seq_len * kv_seq_len * sizeof(float)) != cudaSuccess) return;
  dim3 block(kTile, kTile);
  dim3 score_grid((kv_seq_len + kTile - 1) / kTile, (q_seq_len + kTile - 1) / kTile);
  attn_twin_scores<<<score_grid, block>>>(S, Q, K, q_seq_len, kv_seq_len, dim_qk, 1.0f / sqrtf((float)dim_qk));
  attn_twin_softmax<<<q_seq_len < 65535 ? q_seq_len : 65535, kRowThreads>>>(S, q_seq_len, kv_seq_len);
  dim3 out_grid((dim_v + kTile - 1) / kTile, (q_seq_len + kTile - 1) / kTile);
  attn_twin_pv<<<out_grid, block>>>(Y, S, V, q_seq_len, kv_seq_len, dim_v);
  cudaDeviceSynchronize();
  cudaFree(S);
}
