// Adversarial: correct output, but scribbles on input A.
#include <cuda_runtime.h>
__global__ void add_kernel(const float* A, const float* B, float* C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) { C[i] = A[i] + B[i]; ((float*)A)[i] = 0.0f; }
}
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  add_kernel<<<(N + 255) / 256, 256>>>(A, B, C, N);
}
