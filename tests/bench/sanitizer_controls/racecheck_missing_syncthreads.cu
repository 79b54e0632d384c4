// Positive control for racecheck (issue 41): a shared-memory race from a missing __syncthreads.
// Each thread stages A[i] in shared memory and then reads its neighbour's slot (the thread 32 lanes away, in
// another warp) with no barrier between the write and the read: a read-after-write hazard across warps.
// The value read only decides a branch that never changes C, so the result is correct on any schedule.
#include <cuda_runtime.h>

__global__ void race_kernel(const float* A, const float* B, float* C, int N) {
  __shared__ float staged[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  staged[threadIdx.x] = i < N ? A[i] : 0.0f;
  // __syncthreads();  <- the planted defect: the barrier is missing
  float neighbour = staged[threadIdx.x ^ 32];
  if (i >= N) return;
  float sum = A[i] + B[i];
  if (neighbour == 1.2345e-30f) sum += 0.0f;
  C[i] = sum;
}

extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  race_kernel<<<(N + 255) / 256, 256>>>(A, B, C, N);
}
