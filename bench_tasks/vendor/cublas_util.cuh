// cuBLAS helpers shared by the cuBLAS-based vendor references (inlined like vendor_common.cuh).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include "vendor_common.cuh"

namespace cmv {

// One handle per process, on the legacy default stream (the harness's timing events bracket it), host
// pointer mode, default math: FP32 GEMMs run in full FP32 (TF32 is never enabled), BF16 GEMMs on tensor
// cores with FP32 accumulation (CUBLAS_COMPUTE_32F).
inline cublasHandle_t blas() {
  static cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    CMV_CUBLAS(cublasCreate(&h));
    CMV_CUBLAS(cublasSetStream(h, 0));
    CMV_CUBLAS(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    CMV_CUBLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    return h;
  }();
  return handle;
}

inline cublasLtHandle_t blas_lt() {
  static cublasLtHandle_t handle = [] {
    cublasLtHandle_t h = nullptr;
    CMV_CUBLAS(cublasLtCreate(&h));
    return h;
  }();
  return handle;
}

template <typename T> constexpr cudaDataType_t data_type();
template <> constexpr cudaDataType_t data_type<float>() { return CUDA_R_32F; }
template <> constexpr cudaDataType_t data_type<__nv_bfloat16>() { return CUDA_R_16BF; }

// Row-major C (m x n) = alpha * A (m x k) * B (k x n) + beta * C, leading dimensions lda, ldb, ldc (row
// strides). cuBLAS is column-major: a row-major matrix is its transpose in column-major, so this is
// C^T = B^T A^T, i.e. cuBLAS's GEMM with the operands swapped and m, n exchanged.
template <typename T>
inline void gemm_rowmajor(int m, int n, int k, const T* A, int lda, const T* B, int ldb, T* C, int ldc, float alpha = 1.0f,
                          float beta = 0.0f) {
  CMV_CUBLAS(cublasGemmEx(blas(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, B, data_type<T>(), ldb, A, data_type<T>(), lda,
                          &beta, C, data_type<T>(), ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// C = alpha * op(A) + beta * op(B) on column-major rows x cols matrices with cuBLASLt's matrix transform
// (the one cuBLAS call that copies, scales, adds and transposes BF16 as well as FP32; arithmetic in FP32,
// one rounding of the result). B may be null when beta == 0. Layouts are created per call (host-only work).
template <typename T>
inline void lt_transform(cublasOperation_t opa, int rows, int cols, float alpha, const T* A, int lda, float beta, const T* B,
                         int ldb, T* C, int ldc) {
  const cudaDataType_t type = data_type<T>();
  cublasLtMatrixTransformDesc_t desc = nullptr;
  CMV_CUBLAS(cublasLtMatrixTransformDescCreate(&desc, CUDA_R_32F));
  CMV_CUBLAS(cublasLtMatrixTransformDescSetAttribute(desc, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &opa, sizeof(opa)));
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  const bool t = opa == CUBLAS_OP_T;
  CMV_CUBLAS(cublasLtMatrixLayoutCreate(&la, type, t ? cols : rows, t ? rows : cols, lda));
  CMV_CUBLAS(cublasLtMatrixLayoutCreate(&lc, type, rows, cols, ldc));
  if (B != nullptr) CMV_CUBLAS(cublasLtMatrixLayoutCreate(&lb, type, rows, cols, ldb));
  CMV_CUBLAS(cublasLtMatrixTransform(blas_lt(), desc, &alpha, A, la, &beta, B, lb, C, lc, 0));
  if (lb != nullptr) CMV_CUBLAS(cublasLtMatrixLayoutDestroy(lb));
  CMV_CUBLAS(cublasLtMatrixLayoutDestroy(lc));
  CMV_CUBLAS(cublasLtMatrixLayoutDestroy(la));
  CMV_CUBLAS(cublasLtMatrixTransformDescDestroy(desc));
}

}  // namespace cmv
