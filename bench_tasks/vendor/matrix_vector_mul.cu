// matrix_vector_mul: cuBLAS. Row-major A (M x N) is column-major N x M (ld N), so y = A x is
// y = (A_cm)^T x. FP32: cublasSgemv with op = T. BF16: cublasGemmEx with n = 1 (bf16 in and out,
// CUBLAS_COMPUTE_32F: FP32 accumulation, one rounding), since cuBLAS has no plain BF16 GEMV.
// Timed: the one library call.
#include "cublas_util.cuh"

extern "C" void matrix_vector_mul_vendor(const float* A, const float* x, float* y, int M, int N) {
  if (M <= 0) return;
  const float one = 1.0f, zero = 0.0f;
  CMV_CUBLAS(cublasSgemv(cmv::blas(), CUBLAS_OP_T, N, M, &one, A, N, x, 1, &zero, y, 1));
}

extern "C" void matrix_vector_mul_bf16_vendor(const __nv_bfloat16* A, const __nv_bfloat16* x, __nv_bfloat16* y, int M, int N) {
  if (M <= 0) return;
  cmv::gemm_rowmajor<__nv_bfloat16>(M, 1, N, A, N, x, 1, y, 1);
}
