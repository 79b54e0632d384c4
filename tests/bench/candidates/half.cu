// Adversarial: computes only the first half of the output.
#include <cuda_runtime.h>
__global__ void add_kernel(const float* A, const float* B, float* C, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) C[i] = A[i] + B[i];
}
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  int n = N / 2;
  if (n > 0) add_kernel<<<(n + 255) / 256, 256>>>(A, B, C, n);
}
