// Adversarial: uses cuBLAS (needs cublas_v2.h, present on GPU machines).
#include <cublas_v2.h>
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  static cublasHandle_t h = nullptr;
  if (!h) cublasCreate(&h);
  cublasScopy(h, N, B, 1, C, 1);
  const float one = 1.0f;
  cublasSaxpy(h, N, &one, A, 1, C, 1);
}
