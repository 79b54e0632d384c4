// Adversarial: never finishes.
#include <cuda_runtime.h>
__global__ void spin_kernel(volatile int* flag) { while (*flag == 0) {} }
static int* zero = nullptr;
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  if (!zero) { cudaMalloc(&zero, sizeof(int)); cudaMemset(zero, 0, sizeof(int)); }
  spin_kernel<<<1, 1>>>(zero);
  cudaDeviceSynchronize();
}
