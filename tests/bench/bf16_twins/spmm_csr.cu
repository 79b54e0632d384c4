// BF16 twin of spmm_csr: one block per row staging its entries in shared memory, four FP32 accumulators by entry index
// mod 4 combined as (a0+a1)+(a2+a3) (baseline: one sequential sum).
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kMaxThreads = 128;  // a multiple of 4: chunks keep the entry index mod 4

// Threads per block: K rounded up to a warp, at most kMaxThreads.
int threads_for(int K) {
  int t = (K + 31) / 32 * 32;
  return t < kMaxThreads ? t : kMaxThreads;
}
}  // namespace

// grid.x = rows, grid.y covers K in blockDim.x-wide strips; thread k of the strip owns Y[row, k].
__global__ void spmm_csr_twin(int K, const __nv_bfloat16* __restrict__ values, const int* __restrict__ col_indices,
                              const int* __restrict__ row_offsets, const __nv_bfloat16* __restrict__ X, __nv_bfloat16* __restrict__ Y) {
  __shared__ int s_col[kMaxThreads];
  __shared__ float s_val[kMaxThreads];
  int row = blockIdx.x;
  int k = blockIdx.y * blockDim.x + threadIdx.x;
  int start = row_offsets[row], end = row_offsets[row + 1];
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (int c0 = start; c0 < end; c0 += blockDim.x) {
    int n = end - c0 < (int)blockDim.x ? end - c0 : (int)blockDim.x;
    if ((int)threadIdx.x < n) {
      s_col[threadIdx.x] = col_indices[c0 + threadIdx.x];
      s_val[threadIdx.x] = __bfloat162float(values[c0 + threadIdx.x]);
    }
    __syncthreads();
    if (k < K) {
      int e = 0;
      for (; e + 4 <= n; e += 4) {
        a0 += s_val[e] * __bfloat162float(X[(size_t)s_col[e] * K + k]);
        a1 += s_val[e + 1] * __bfloat162float(X[(size_t)s_col[e + 1] * K + k]);
        a2 += s_val[e + 2] * __bfloat162float(X[(size_t)s_col[e + 2] * K + k]);
        a3 += s_val[e + 3] * __bfloat162float(X[(size_t)s_col[e + 3] * K + k]);
      }
      if (e < n) a0 += s_val[e] * __bfloat162float(X[(size_t)s_col[e] * K + k]);
      if (e + 1 < n) a1 += s_val[e + 1] * __bfloat162float(X[(size_t)s_col[e + 1] * K + k]);
      if (e + 2 < n) a2 += s_val[e + 2] * __bfloat162float(X[(size_t)s_col[e + 2] * K + k]);
    }
    __syncthreads();
  }
  if (k < K) Y[(size_t)row * K + k] = __float2bfloat16((a0 + a1) + (a2 + a3));
}

extern "C" void spmm_csr_bf16_optimized(int rows, int K, const __nv_bfloat16* values, const int* col_indices, const int* row_offsets,
                                        const __nv_bfloat16* X, __nv_bfloat16* Y) {
  if (rows <= 0 || K <= 0) return;
  int threads = threads_for(K);
  dim3 grid(rows, (K + threads - 1) / threads);
  spmm_csr_twin<<<grid, threads>>>(K, values, col_indices, row_offsets, X, Y);
  cudaDeviceSynchronize();
}
