// MSKernelBench spmm_ell baseline (ours), doing what the published baseline does: one thread per
// output element Y[row, k] on 16x16 blocks with x over ROWS and y over K (a warp spans 16 rows x 2 k:
// uncoalesced X reads and Y stores), walking the row's max_nnz_per_row slots in order, skipping
// padding slots (col == -1), accumulating in FP32 and storing once (Y overwritten). BF16: inputs
// converted to float, FP32 accumulation, one rounding at the store. Indices are 64-bit.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void spmm_ell_kernel(int rows, int max_nnz_per_row, int K, const float* values, const int* col_ids,
                                const float* X, float* Y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  int k = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < rows && k < K) {
    float sum = 0.0f;
    size_t base = (size_t)row * max_nnz_per_row;
    for (int e = 0; e < max_nnz_per_row; ++e) {
      int col = col_ids[base + e];
      if (col != -1) sum += values[base + e] * X[(size_t)col * K + k];
    }
    Y[(size_t)row * K + k] = sum;
  }
}

__global__ void spmm_ell_bf16_kernel(int rows, int max_nnz_per_row, int K, const __nv_bfloat16* values, const int* col_ids,
                                     const __nv_bfloat16* X, __nv_bfloat16* Y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  int k = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < rows && k < K) {
    float sum = 0.0f;
    size_t base = (size_t)row * max_nnz_per_row;
    for (int e = 0; e < max_nnz_per_row; ++e) {
      int col = col_ids[base + e];
      if (col != -1) sum += __bfloat162float(values[base + e]) * __bfloat162float(X[(size_t)col * K + k]);
    }
    Y[(size_t)row * K + k] = __float2bfloat16(sum);
  }
}

extern "C" void spmm_ell(int rows, int max_nnz_per_row, int K, const float* values, const int* col_ids, const float* X,
                         float* Y) {
  dim3 block(16, 16);
  dim3 grid((rows + 15) / 16, (K + 15) / 16);
  if (rows > 0 && K > 0) spmm_ell_kernel<<<grid, block>>>(rows, max_nnz_per_row, K, values, col_ids, X, Y);
  cudaDeviceSynchronize();
}

extern "C" void spmm_ell_bf16(int rows, int max_nnz_per_row, int K, const __nv_bfloat16* values, const int* col_ids,
                              const __nv_bfloat16* X, __nv_bfloat16* Y) {
  dim3 block(16, 16);
  dim3 grid((rows + 15) / 16, (K + 15) / 16);
  if (rows > 0 && K > 0) spmm_ell_bf16_kernel<<<grid, block>>>(rows, max_nnz_per_row, K, values, col_ids, X, Y);
  cudaDeviceSynchronize();
}
