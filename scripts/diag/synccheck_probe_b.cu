// synccheck probe B: the two halves of each warp wait at two different block barriers (divergent __syncthreads).
#include <cuda_runtime.h>
__global__ void divergent_barriers_kernel(const float* A, const float* B, float* C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if ((threadIdx.x & 31) < 16) {
    if (i < N) C[i] = A[i] + B[i];
    __syncthreads();
  } else {
    if (i < N) C[i] = B[i] + A[i];
    (void)__syncthreads_count(1);
  }
}
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  divergent_barriers_kernel<<<(N + 255) / 256, 256>>>(A, B, C, N);
}
