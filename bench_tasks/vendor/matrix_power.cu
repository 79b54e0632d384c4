// matrix_power: cuBLAS cublasGemmEx (CUBLAS_COMPUTE_32F), P - 1 products evaluated left to right as the
// task defines (R2 = A*A, R(k+1) = R(k)*A; the baseline's quirk kept: P <= 1 still gives A*A). BF16 rounds
// every intermediate product to bf16 (it is stored in bf16), as the task's semantics say.
// FP32 receives HOST pointers (the task's memory = host): the timed call copies A to the device and the
// result back (pageable cudaMemcpy, as the baseline does); its device buffers are a workspace allocated on
// the first call at a size and reused (the baseline allocates per call). BF16 receives device pointers and
// reads A in place; the last product is written straight into B.
#include "cublas_util.cuh"

namespace {

template <typename T>
void power(const T* dA, T* dOut, int N, int P, cmv::Workspace& w0, cmv::Workspace& w1) {
  const int products = P < 2 ? 1 : P - 1;
  const size_t count = (size_t)N * N;
  const T* cur = dA;
  for (int i = 1; i <= products; ++i) {
    T* dst = i == products ? dOut : (i % 2 ? w0.as<T>(count) : w1.as<T>(count));
    cmv::gemm_rowmajor<T>(N, N, N, cur, N, dA, N, dst, N);
    cur = dst;
  }
}

}  // namespace

extern "C" void matrix_power_vendor(const float* A, float* B, int N, int P) {
  if (N <= 0) return;
  static cmv::Workspace a, out, w0, w1;
  const size_t bytes = (size_t)N * N * sizeof(float);
  float* dA = a.as<float>((size_t)N * N);
  float* dB = out.as<float>((size_t)N * N);
  CMV_CUDA(cudaMemcpy(dA, A, bytes, cudaMemcpyHostToDevice));
  power<float>(dA, dB, N, P, w0, w1);
  CMV_CUDA(cudaMemcpy(B, dB, bytes, cudaMemcpyDeviceToHost));
}

extern "C" void matrix_power_bf16_vendor(const __nv_bfloat16* A, __nv_bfloat16* B, int N, int P) {
  if (N <= 0) return;
  static cmv::Workspace w0, w1;
  power<__nv_bfloat16>(A, B, N, P, w0, w1);
}
