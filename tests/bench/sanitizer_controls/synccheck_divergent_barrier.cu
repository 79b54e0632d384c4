// Positive control for synccheck (issue 41): a __syncthreads in divergent code (half of each warp reaches it).
// It comes after every thread has written its element, and the threads that skip it only exit, so the result is
// correct and the barrier completes; synccheck still reports the divergent barrier.
#include <cuda_runtime.h>

__global__ void divergent_kernel(const float* A, const float* B, float* C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) C[i] = A[i] + B[i];
  if ((threadIdx.x & 31) < 16) {
    __syncthreads();  // the planted defect: not every thread of the warp (nor of the block) reaches it
  }
}

extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  divergent_kernel<<<(N + 255) / 256, 256>>>(A, B, C, N);
}
