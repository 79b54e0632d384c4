// MSKernelBench spmv_ell baseline (ours), doing what the published baseline does: one thread per row
// (256 per block) walking the row's max_nnz_per_row slots of the row-major ELL arrays in order,
// skipping padding slots (col == -1), accumulating in FP32 and storing once (y overwritten).
// Neighbouring threads read slots max_nnz_per_row apart: uncoalesced. BF16: inputs converted to
// float, FP32 accumulation, one rounding at the store.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void spmv_ell_kernel(int rows, int max_nnz_per_row, const float* values, const int* col_ids, const float* x,
                                float* y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float sum = 0.0f;
    size_t base = (size_t)row * max_nnz_per_row;
    for (int e = 0; e < max_nnz_per_row; ++e) {
      int col = col_ids[base + e];
      if (col != -1) sum += values[base + e] * x[col];
    }
    y[row] = sum;
  }
}

__global__ void spmv_ell_bf16_kernel(int rows, int max_nnz_per_row, const __nv_bfloat16* values, const int* col_ids,
                                     const __nv_bfloat16* x, __nv_bfloat16* y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float sum = 0.0f;
    size_t base = (size_t)row * max_nnz_per_row;
    for (int e = 0; e < max_nnz_per_row; ++e) {
      int col = col_ids[base + e];
      if (col != -1) sum += __bfloat162float(values[base + e]) * __bfloat162float(x[col]);
    }
    y[row] = __float2bfloat16(sum);
  }
}

extern "C" void spmv_ell(int rows, int max_nnz_per_row, const float* values, const int* col_ids, const float* x, float* y) {
  if (rows > 0) spmv_ell_kernel<<<(rows + 255) / 256, 256>>>(rows, max_nnz_per_row, values, col_ids, x, y);
  cudaDeviceSynchronize();
}

extern "C" void spmv_ell_bf16(int rows, int max_nnz_per_row, const __nv_bfloat16* values, const int* col_ids,
                              const __nv_bfloat16* x, __nv_bfloat16* y) {
  if (rows > 0) spmv_ell_bf16_kernel<<<(rows + 255) / 256, 256>>>(rows, max_nnz_per_row, values, col_ids, x, y);
  cudaDeviceSynchronize();
}
