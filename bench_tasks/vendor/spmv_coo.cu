// spmv_coo: the task's unsorted COO converted to CSR inside the call (CUB radix sort of the row indices,
// gathers, cusparseXcoo2csr: see cusparse_util.cuh), then cuSPARSE cusparseSpMV on CSR (FP32 compute).
// FP32 adds into y (beta = 1: the harness zeroes y before every call, role accumulate); BF16 overwrites y.
// Timed: the conversion and cusparseSpMV.
#include "cusparse_util.cuh"

namespace {

template <typename T>
void spmv_coo(int rows, int nnz, const T* values, const int* row_indices, const int* col_indices, const T* x, T* y, float beta) {
  if (rows <= 0) return;
  if (nnz <= 0) {
    if (beta == 0.0f) CMV_CUDA(cudaMemsetAsync(y, 0, (size_t)rows * sizeof(T), 0));
    return;
  }
  static cmv::CooToCsr<T> coo;
  static cmv::Workspace buffer;
  cmv::Compressed<T> A = coo.convert(rows, nnz, row_indices, col_indices, values, cmv::kColumnBound);
  cmv::spmv(A, x, y, beta, buffer);
}

}  // namespace

extern "C" void spmv_coo_vendor(int rows, int nnz, const float* values, const int* row_indices, const int* col_indices, const float* x,
                                float* y) {
  spmv_coo<float>(rows, nnz, values, row_indices, col_indices, x, y, 1.0f);
}

extern "C" void spmv_coo_bf16_vendor(int rows, int nnz, const __nv_bfloat16* values, const int* row_indices, const int* col_indices,
                                     const __nv_bfloat16* x, __nv_bfloat16* y) {
  spmv_coo<__nv_bfloat16>(rows, nnz, values, row_indices, col_indices, x, y, 0.0f);
}
