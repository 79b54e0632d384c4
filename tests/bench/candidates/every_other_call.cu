// Adversarial: computes on odd-numbered calls only (call-count trick); the second run catches it.
#include <cuda_runtime.h>
__global__ void add_kernel(const float* A, const float* B, float* C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) C[i] = A[i] + B[i];
}
static int calls = 0;
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  if (++calls % 2 == 0) return;
  add_kernel<<<(N + 255) / 256, 256>>>(A, B, C, N);
}
