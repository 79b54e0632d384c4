// matrix_scalar_mul: cuBLAS. FP32: cublasSgeam with alpha = scalar, beta = 0. BF16: cuBLASLt's matrix
// transform with alpha = f(scalar) in FP32, one rounding to bf16. Timed: the one library call.
#include "cublas_util.cuh"

extern "C" void matrix_scalar_mul_vendor(const float* A, float* B, float scalar, int M, int N) {
  if (M <= 0 || N <= 0) return;
  const float zero = 0.0f;
  CMV_CUBLAS(cublasSgeam(cmv::blas(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, &scalar, A, N, &zero, B, N, B, N));
}

extern "C" void matrix_scalar_mul_bf16_vendor(const __nv_bfloat16* A, __nv_bfloat16* B, __nv_bfloat16 scalar, int M, int N) {
  if (M <= 0 || N <= 0) return;
  cmv::lt_transform<__nv_bfloat16>(CUBLAS_OP_N, N, M, __bfloat162float(scalar), A, N, 0.0f, nullptr, N, B, N);
}
