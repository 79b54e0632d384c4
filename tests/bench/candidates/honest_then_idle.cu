// Adversarial: behaves while it is being checked (the first 6 calls: 3 seeds x 2 runs), then stops
// working, as a kernel that detects the timing loop would. The re-check after timing catches it.
#include <cuda_runtime.h>
__global__ void add_kernel(const float* A, const float* B, float* C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) C[i] = A[i] + B[i];
}
static int calls = 0;
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  if (++calls > 6) return;
  add_kernel<<<(N + 255) / 256, 256>>>(A, B, C, N);
}
