// Adversarial: correct, but also writes 16 elements past the end of C.
#include <cuda_runtime.h>
__global__ void add_kernel(const float* A, const float* B, float* C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N + 16) C[i] = i < N ? A[i] + B[i] : 0.0f;
}
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  add_kernel<<<(N + 16 + 255) / 256, 256>>>(A, B, C, N);
}
