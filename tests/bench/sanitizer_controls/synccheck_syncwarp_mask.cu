// Positive control for synccheck (issue 41): lane 16 of each warp calls __syncwarp with a mask that leaves it out
// (the mask names lanes 0-15), the misuse NVIDIA's own synccheck sample plants (compute-sanitizer-samples,
// Synccheck/illegal_syncwarp.cu). The earlier control, a __syncthreads that half of each warp skips by exiting, is
// legal on sm_70 and later (exited threads count as arrived) and synccheck rightly reported it clean on an H100.
// The result is still correct: every thread writes its element after the barrier.
#include <cuda_runtime.h>

__global__ void syncwarp_mask_kernel(const float* A, const float* B, float* C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned lane = threadIdx.x & 31u;
  unsigned low_half = __ballot_sync(0xffffffffu, lane < 16u);  // lanes 0-15
  if (lane <= 16u) {
    __syncwarp(low_half);  // the planted defect: lane 16 is not in the mask it passes
  }
  if (i < N) C[i] = A[i] + B[i];
}

extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  syncwarp_mask_kernel<<<(N + 255) / 256, 256>>>(A, B, C, N);
}
