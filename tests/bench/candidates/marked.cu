// A file in the published harness format: only the marked block is used.
#include <cuda_bf16.h>
int main() { return 0; }  // the published harness's own main: outside the block, ignored
// ==== OPTIMIZED KERNEL START ====
__global__ void vadd_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) C[i] = A[i] + B[i];
}
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  vadd_kernel<<<(N + 255) / 256, 256>>>(A, B, C, N);
  cudaDeviceSynchronize();
}
// ==== OPTIMIZED KERNEL END ====
static void unused_helper() {}
