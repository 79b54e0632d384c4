// spmv_ell: the task's row-major ELLPACK read as CSR with max_nnz_per_row slots per row (offsets built once
// per shape, padding columns -1 mapped to 0 with their zero values by one CUB transform inside the call:
// see cusparse_util.cuh), then cuSPARSE cusparseSpMV on CSR (FP32 compute), y overwritten. cuSPARSE's own
// ELL formats do not fit: Blocked-ELL has no SpMV, and Sliced-ELL stores each slice column-major (a full
// transposition of the task's layout). Timed: the transform and cusparseSpMV.
#include "cusparse_util.cuh"

namespace {

template <typename T>
void spmv_ell(int rows, int m, const T* values, const int* col_ids, const T* x, T* y) {
  if (rows <= 0) return;
  if (m <= 0) {
    CMV_CUDA(cudaMemsetAsync(y, 0, (size_t)rows * sizeof(T), 0));
    return;
  }
  static cmv::EllToCsr<T> ell;
  static cmv::Workspace buffer;
  cmv::Compressed<T> A = ell.convert(rows, m, col_ids, values, cmv::kColumnBound);
  cmv::spmv(A, x, y, 0.0f, buffer);
}

}  // namespace

extern "C" void spmv_ell_vendor(int rows, int max_nnz_per_row, const float* values, const int* col_ids, const float* x, float* y) {
  spmv_ell<float>(rows, max_nnz_per_row, values, col_ids, x, y);
}

extern "C" void spmv_ell_bf16_vendor(int rows, int max_nnz_per_row, const __nv_bfloat16* values, const int* col_ids, const __nv_bfloat16* x,
                                     __nv_bfloat16* y) {
  spmv_ell<__nv_bfloat16>(rows, max_nnz_per_row, values, col_ids, x, y);
}
