// synccheck probe A: __syncwarp with a mask that leaves out the calling lanes (lanes 16-31 call it with 0x0000FFFF).
#include <cuda_runtime.h>
__global__ void warp_mask_kernel(const float* A, const float* B, float* C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) C[i] = A[i] + B[i];
  __syncwarp(0x0000FFFFu);  // the planted defect: lanes 16-31 are not in the mask they pass
}
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  warp_mask_kernel<<<(N + 255) / 256, 256>>>(A, B, C, N);
}
