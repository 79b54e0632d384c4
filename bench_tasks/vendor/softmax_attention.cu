// softmax_attention: cuBLAS + cuDNN (legacy API), the unfused library composition of
// Y = softmax(Q K^T * s) V with s = 1/sqrt(dim_qk), single head, no mask:
//   S = s * Q K^T   cublasGemmEx (CUBLAS_COMPUTE_32F; stored in the precision's type, as the baseline),
//   P = softmax(S)  cudnnSoftmaxForward over each row (ACCURATE, MODE_INSTANCE),
//   Y = P V         cublasGemmEx.
// S and P (q_seq_len x kv_seq_len each) live in a workspace reused across calls. cuDNN's fused attention
// exists only in its graph API (frontend), not in the legacy C API used here. Timed: the three calls.
#include <cmath>

#include "cublas_util.cuh"
#include "cudnn_util.cuh"

namespace {

template <typename T>
void attention(T* Y, const T* Q, const T* K, const T* V, int q, int kv, int dqk, int dv) {
  if (q <= 0 || dv <= 0) return;
  static cmv::Workspace scores, probs;
  static cmv::RowSoftmax<T> softmax;
  const size_t count = (size_t)q * kv;
  T* S = scores.as<T>(count);
  T* P = probs.as<T>(count);
  const float scale = 1.0f / sqrtf((float)dqk), zero = 0.0f;
  // Column-major: S^T (kv x q, ld kv) = K (kv x dqk: row-major K read transposed) * Q^T (dqk x q: row-major Q as is).
  CMV_CUBLAS(cublasGemmEx(cmv::blas(), CUBLAS_OP_T, CUBLAS_OP_N, kv, q, dqk, &scale, K, cmv::data_type<T>(), dqk, Q,
                          cmv::data_type<T>(), dqk, &zero, S, cmv::data_type<T>(), kv, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  softmax.run(S, P, q, kv);
  cmv::gemm_rowmajor<T>(q, dv, kv, P, kv, V, dv, Y, dv);
}

}  // namespace

extern "C" void softmax_attention_vendor(float* Y, const float* Q, const float* K, const float* V, int q_seq_len, int kv_seq_len, int dim_qk,
                                         int dim_v) {
  attention<float>(Y, Q, K, V, q_seq_len, kv_seq_len, dim_qk, dim_v);
}

extern "C" void softmax_attention_bf16_vendor(__nv_bfloat16* Y, const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
                                              int q_seq_len, int kv_seq_len, int dim_qk, int dim_v) {
  attention<__nv_bfloat16>(Y, Q, K, V, q_seq_len, kv_seq_len, dim_qk, dim_v);
}
