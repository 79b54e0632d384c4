// BF16 twin of spmm_ell: one block per row (threads over K, coalesced) staging its slots in shared memory, four FP32
// accumulators by slot mod 4 combined as (a0+a1)+(a2+a3).
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kMaxThreads = 128;  // a multiple of 4: chunks keep the slot index mod 4

int threads_for(int K) {
  int t = (K + 31) / 32 * 32;
  return t < kMaxThreads ? t : kMaxThreads;
}

// acc += value * X[col, k] for a real slot; a padding slot (col -1) adds nothing.
__device__ __forceinline__ void add_slot(float& acc, int col, float value, const __nv_bfloat16* X, int K, int k) {
  if (col != -1) acc += value * __bfloat162float(X[(size_t)col * K + k]);
}
}  // namespace

// grid.x = rows, grid.y covers K in blockDim.x-wide strips. Padding slots (col -1) contribute nothing.
__global__ void spmm_ell_twin(int max_nnz_per_row, int K, const __nv_bfloat16* __restrict__ values, const int* __restrict__ col_ids,
                              const __nv_bfloat16* __restrict__ X, __nv_bfloat16* __restrict__ Y) {
  __shared__ int s_col[kMaxThreads];
  __shared__ float s_val[kMaxThreads];
  int row = blockIdx.x;
  int k = blockIdx.y * blockDim.x + threadIdx.x;
  size_t base = (size_t)row * max_nnz_per_row;
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (int c0 = 0; c0 < max_nnz_per_row; c0 += blockDim.x) {
    int n = max_nnz_per_row - c0 < (int)blockDim.x ? max_nnz_per_row - c0 : (int)blockDim.x;
    if ((int)threadIdx.x < n) {
      s_col[threadIdx.x] = col_ids[base + c0 + threadIdx.x];
      s_val[threadIdx.x] = __bfloat162float(values[base + c0 + threadIdx.x]);
    }
    __syncthreads();
    if (k < K) {
      int e = 0;
      for (; e + 4 <= n; e += 4) {
        add_slot(a0, s_col[e], s_val[e], X, K, k);
        add_slot(a1, s_col[e + 1], s_val[e + 1], X, K, k);
        add_slot(a2, s_col[e + 2], s_val[e + 2], X, K, k);
        add_slot(a3, s_col[e + 3], s_val[e + 3], X, K, k);
      }
      if (e < n) add_slot(a0, s_col[e], s_val[e], X, K, k);
      if (e + 1 < n) add_slot(a1, s_col[e + 1], s_val[e + 1], X, K, k);
      if (e + 2 < n) add_slot(a2, s_col[e + 2], s_val[e + 2], X, K, k);
    }
    __syncthreads();
  }
  if (k < K) Y[(size_t)row * K + k] = __float2bfloat16((a0 + a1) + (a2 + a3));
}

extern "C" void spmm_ell_bf16_optimized(int rows, int max_nnz_per_row, int K, const __nv_bfloat16* values, const int* col_ids,
                                        const __nv_bfloat16* X, __nv_bfloat16* Y) {
  if (rows <= 0 || K <= 0) return;
  int threads = threads_for(K);
  dim3 grid(rows, (K + threads - 1) / threads);
  spmm_ell_twin<<<grid, threads>>>(max_nnz_per_row, K, values, col_ids, X, Y);
  cudaDeviceSynchronize();
}
