// Adversarial: calls cuBLAS through its own declarations (no header needed).
typedef struct cublasContext* cublasHandle_t;
extern "C" int cublasCreate_v2(cublasHandle_t* handle);
extern "C" int cublasSaxpy_v2(cublasHandle_t, int, const float*, const float*, int, float*, int);
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  static cublasHandle_t h = nullptr;
  if (!h) cublasCreate_v2(&h);
  const float one = 1.0f;
  cublasSaxpy_v2(h, N, &one, A, 1, C, 1);
}
