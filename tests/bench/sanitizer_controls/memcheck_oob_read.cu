// Positive control for memcheck (issue 41): one out-of-bounds read FAR past the output's guard band.
// The driver gives every buffer 64 KiB guard bands inside its own allocation: a read a few elements past the end
// stays inside the allocation, where memcheck cannot see it (and a write there is the evaluation's runtime_error).
// Thread 0 reads 16 GiB past the end of C instead: no allocation of this run is there.
// The result is correct whatever the read returns (it only decides a branch that never changes C).
#include <cuda_runtime.h>

__global__ void oob_read_kernel(const float* A, const float* B, float* C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  float sum = A[i] + B[i];
  if (i == 0) {
    float far = C[N + (size_t(16) << 30) / sizeof(float)];  // the planted defect
    if (far == 1.2345e-30f) sum += 0.0f;
  }
  C[i] = sum;
}

extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  oob_read_kernel<<<(N + 255) / 256, 256>>>(A, B, C, N);
}
