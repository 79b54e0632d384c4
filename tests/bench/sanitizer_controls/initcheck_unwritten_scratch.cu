// Positive control for initcheck (issue 41): a read of cudaMalloc'ed scratch that nothing ever wrote.
// The value read only decides a branch that never changes C, so the result is correct whatever the memory holds.
#include <cuda_runtime.h>

__global__ void scratch_kernel(const float* A, const float* B, const float* scratch, float* C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  float sum = A[i] + B[i];
  if (scratch[i] == 1.2345e-30f) sum += 0.0f;  // the planted defect: scratch was never written
  C[i] = sum;
}

extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  float* scratch = nullptr;
  if (cudaMalloc(&scratch, sizeof(float) * (N > 0 ? N : 1)) != cudaSuccess) return;
  scratch_kernel<<<(N + 255) / 256, 256>>>(A, B, scratch, C, N);
  cudaFree(scratch);
}
