// matrix_transpose: cuBLAS. Row-major A (M x N) is column-major N x M (ld N); row-major B (N x M) is
// column-major M x N (ld M), so B = A^T in either view. FP32: cublasSgeam with op(A) = T, alpha = 1,
// beta = 0. BF16: cuBLASLt's matrix transform with TRANSA = T. Timed: the one library call.
#include "cublas_util.cuh"

extern "C" void matrix_transpose_vendor(const float* A, float* B, int M, int N) {
  if (M <= 0 || N <= 0) return;
  const float one = 1.0f, zero = 0.0f;
  CMV_CUBLAS(cublasSgeam(cmv::blas(), CUBLAS_OP_T, CUBLAS_OP_N, M, N, &one, A, N, &zero, B, M, B, M));
}

extern "C" void matrix_transpose_bf16_vendor(const __nv_bfloat16* A, __nv_bfloat16* B, int M, int N) {
  if (M <= 0 || N <= 0) return;
  cmv::lt_transform<__nv_bfloat16>(CUBLAS_OP_T, M, N, 1.0f, A, N, 0.0f, nullptr, M, B, M);
}
