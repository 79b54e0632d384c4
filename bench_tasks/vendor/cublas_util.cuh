// cuBLAS helpers shared by the cuBLAS-based vendor references (inlined like vendor_common.cuh).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include <array>
#include <map>
#include <memory>
#include <type_traits>

#include "vendor_common.cuh"

namespace cmv {

// One handle per process, on the legacy default stream (the harness's timing events bracket it), host
// pointer mode, default math: FP32 GEMMs run in full FP32 (TF32 is never enabled); BF16 GEMMs go through
// cuBLASLt (LtGemmBf16: tensor cores, FP32 accumulation).
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

// BF16 GEMM through cuBLASLt, planned once per shape (descriptors, layouts, the heuristic's algorithm kept):
// FP32 compute and scale, and a split-K's partial sums reduced in FP32 (reduction schemes NONE or
// COMPUTE_TYPE only). cublasGemmEx's own choice at M = N = K = 8191 on the H200 was split-K 3 reduced in place
// in BF16: 5.8 % of sampled outputs outside the task's tolerance (scripts/diag/gemm_bf16_check.cu). Column-major
// operands as cuBLAS sees them: D (rows x cols, ld ldd) = A (rows x k, ld lda) * B (k x cols, ld ldb).
struct LtGemmBf16 {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace_bytes = 0;
  static constexpr size_t kMaxWorkspaceBytes = size_t(64) << 20;

  LtGemmBf16(int rows, int cols, int k, int lda, int ldb, int ldd) {
    CMV_CUBLAS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t n = CUBLAS_OP_N;
    CMV_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &n, sizeof n));
    CMV_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof n));
    CMV_CUBLAS(cublasLtMatrixLayoutCreate(&a, CUDA_R_16BF, rows, k, lda));
    CMV_CUBLAS(cublasLtMatrixLayoutCreate(&b, CUDA_R_16BF, k, cols, ldb));
    CMV_CUBLAS(cublasLtMatrixLayoutCreate(&d, CUDA_R_16BF, rows, cols, ldd));
    cublasLtMatmulPreference_t pref = nullptr;
    CMV_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
    const size_t max_bytes = kMaxWorkspaceBytes;
    CMV_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_bytes, sizeof max_bytes));
    const uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;  // (NONE is always allowed)
    CMV_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes, sizeof schemes));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    CMV_CUBLAS(cublasLtMatmulAlgoGetHeuristic(blas_lt(), op, a, b, d, d, pref, 1, &result, &found));
    CMV_CUBLAS(cublasLtMatmulPreferenceDestroy(pref));
    if (found == 0) fail("cublas", CUBLAS_STATUS_NOT_SUPPORTED, "cublasLtMatmulAlgoGetHeuristic found no algorithm", __LINE__);
    algo = result.algo;
    workspace_bytes = result.workspaceSize;
  }

  void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* D, float alpha, float beta) {
    static Workspace workspace;
    CMV_CUBLAS(cublasLtMatmul(blas_lt(), op, &alpha, A, a, B, b, &beta, D, d, D, d, &algo, workspace.get(workspace_bytes),
                              workspace_bytes, 0));
  }
};

// Row-major C (m x n) = alpha * A (m x k) * B (k x n) + beta * C, leading dimensions lda, ldb, ldc (row
// strides). cuBLAS is column-major: a row-major matrix is its transpose in column-major, so this is
// C^T = B^T A^T, i.e. cuBLAS's GEMM with the operands swapped and m, n exchanged. FP32: cublasGemmEx in full
// FP32; BF16: LtGemmBf16 (FP32 accumulation and reduction, one rounding).
template <typename T>
inline void gemm_rowmajor(int m, int n, int k, const T* A, int lda, const T* B, int ldb, T* C, int ldc, float alpha = 1.0f,
                          float beta = 0.0f) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    static std::map<std::array<int, 6>, std::unique_ptr<LtGemmBf16>> plans;
    std::unique_ptr<LtGemmBf16>& plan = plans[{m, n, k, lda, ldb, ldc}];
    if (!plan) plan = std::make_unique<LtGemmBf16>(n, m, k, ldb, lda, ldc);
    plan->run(B, A, C, alpha, beta);
  } else {
    CMV_CUBLAS(cublasGemmEx(blas(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, B, data_type<T>(), ldb, A, data_type<T>(), lda,
                            &beta, C, data_type<T>(), ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
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
