// spmm_ell: the task's row-major ELLPACK read as CSR with max_nnz_per_row slots per row (offsets built once
// per shape, padding columns -1 mapped to 0 with their zero values by one CUB transform inside the call:
// see cusparse_util.cuh), the column count found as max(col_ids) + 1, then cuSPARSE cusparseSpMM on CSR
// with row-major X and Y (FP32 compute), Y overwritten. cuSPARSE's Blocked-ELL SpMM needs a blocked
// layout with one column index per block; with 1 x 1 blocks it is this same CSR walk plus a conversion.
// Timed: the transform, the column count and cusparseSpMM.
#include "cusparse_util.cuh"

namespace {

template <typename T>
void spmm_ell(int rows, int m, int K, const T* values, const int* col_ids, const T* X, T* Y) {
  if (rows <= 0 || K <= 0) return;
  if (m <= 0) {
    CMV_CUDA(cudaMemsetAsync(Y, 0, (size_t)rows * K * sizeof(T), 0));
    return;
  }
  static cmv::EllToCsr<T> ell;
  static cmv::Workspace buffer, temp;
  const int64_t cols = cmv::column_count(col_ids, (int64_t)rows * m, temp);
  cmv::Compressed<T> A = ell.convert(rows, m, col_ids, values, cols);
  cmv::spmm(A, K, X, Y, 0.0f, buffer);
}

}  // namespace

extern "C" void spmm_ell_vendor(int rows, int max_nnz_per_row, int K, const float* values, const int* col_ids, const float* X, float* Y) {
  spmm_ell<float>(rows, max_nnz_per_row, K, values, col_ids, X, Y);
}

extern "C" void spmm_ell_bf16_vendor(int rows, int max_nnz_per_row, int K, const __nv_bfloat16* values, const int* col_ids,
                                     const __nv_bfloat16* X, __nv_bfloat16* Y) {
  spmm_ell<__nv_bfloat16>(rows, max_nnz_per_row, K, values, col_ids, X, Y);
}
