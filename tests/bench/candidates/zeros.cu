// Adversarial: writes zeros (passes an absolute tolerance on tiny outputs in weak harnesses).
#include <cuda_runtime.h>
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) { cudaMemset(C, 0, sizeof(float) * N); }
