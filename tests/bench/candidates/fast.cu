// A correct, faster vector_add: one thread per element over the whole GPU (the baseline uses one block).
#include <cuda_runtime.h>
__global__ void add_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int N) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) C[i] = A[i] + B[i];
}
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  int blocks = (N + 255) / 256;
  if (blocks > 132 * 32) blocks = 132 * 32;
  if (blocks < 1) blocks = 1;
  add_kernel<<<blocks, 256>>>(A, B, C, N);
}
