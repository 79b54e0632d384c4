// spmv_csr: cuSPARSE cusparseSpMV on a CSR descriptor (32-bit indices, base 0, CUSPARSE_SPMV_ALG_DEFAULT,
// FP32 compute; BF16 values and vectors with CUDA_R_32F compute), y = A x with beta = 0 (y overwritten).
// nnz is read from row_offsets[rows] (4-byte copy + sync, timed); the column count is the declared bound
// (see cusparse_util.cuh). Timed: that read and cusparseSpMV (its buffer is a reused workspace).
#include "cusparse_util.cuh"

namespace {

template <typename T>
void spmv_csr(int rows, const T* values, const int* col_indices, const int* row_offsets, const T* x, T* y) {
  if (rows <= 0) return;
  static cmv::Workspace buffer;
  cmv::Compressed<T> A;
  A.rows = rows, A.cols = cmv::kColumnBound, A.nnz = cmv::read_int(row_offsets + rows);
  A.offsets = row_offsets, A.indices = col_indices, A.values = values;
  cmv::spmv(A, x, y, 0.0f, buffer);
}

}  // namespace

extern "C" void spmv_csr_vendor(int rows, const float* values, const int* col_indices, const int* row_offsets, const float* x, float* y) {
  spmv_csr<float>(rows, values, col_indices, row_offsets, x, y);
}

extern "C" void spmv_csr_bf16_vendor(int rows, const __nv_bfloat16* values, const int* col_indices, const int* row_offsets,
                                     const __nv_bfloat16* x, __nv_bfloat16* y) {
  spmv_csr<__nv_bfloat16>(rows, values, col_indices, row_offsets, x, y);
}
