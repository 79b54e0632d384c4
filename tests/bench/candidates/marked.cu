// A file in the published harness format: the preamble above the START marker and the marked block are
// compiled; the baseline copy, test harness and main after the END marker are not.
#include <cuda_bf16.h>
#define THREADS 256
static __host__ __device__ inline float add(float a, float b) { return a + b; }
// ==== OPTIMIZED KERNEL START ====
__global__ void vadd_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) C[i] = add(A[i], B[i]);
}
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  vadd_kernel<<<(N + THREADS - 1) / THREADS, THREADS>>>(A, B, C, N);
  cudaDeviceSynchronize();
}
// ==== OPTIMIZED KERNEL END ====
extern "C" void vector_add_origin(const float* A, const float* B, float* C, int N) {}  // the published baseline copy
static void unused_helper() {}
int main() { return 0; }  // the published harness's own main: after the block, not compiled
