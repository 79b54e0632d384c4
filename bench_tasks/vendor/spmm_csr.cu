// spmm_csr: cuSPARSE cusparseSpMM on a CSR descriptor with row-major dense X (cols x K) and Y (rows x K),
// CUSPARSE_SPMM_ALG_DEFAULT, FP32 compute, Y overwritten (beta = 0). nnz is read from row_offsets[rows] and
// the column count found as max(col_indices) + 1 (see cusparse_util.cuh; both timed).
// Timed: those two reads and cusparseSpMM.
#include "cusparse_util.cuh"

namespace {

template <typename T>
void spmm_csr(int rows, int K, const T* values, const int* col_indices, const int* row_offsets, const T* X, T* Y) {
  if (rows <= 0 || K <= 0) return;
  static cmv::Workspace buffer, temp;
  cmv::Compressed<T> A;
  A.rows = rows, A.nnz = cmv::read_int(row_offsets + rows);
  A.cols = A.nnz > 0 ? cmv::column_count(col_indices, A.nnz, temp) : 1;
  A.offsets = row_offsets, A.indices = col_indices, A.values = values;
  cmv::spmm(A, K, X, Y, 0.0f, buffer);
}

}  // namespace

extern "C" void spmm_csr_vendor(int rows, int K, const float* values, const int* col_indices, const int* row_offsets, const float* X,
                                float* Y) {
  spmm_csr<float>(rows, K, values, col_indices, row_offsets, X, Y);
}

extern "C" void spmm_csr_bf16_vendor(int rows, int K, const __nv_bfloat16* values, const int* col_indices, const int* row_offsets,
                                     const __nv_bfloat16* X, __nv_bfloat16* Y) {
  spmm_csr<__nv_bfloat16>(rows, K, values, col_indices, row_offsets, X, Y);
}
