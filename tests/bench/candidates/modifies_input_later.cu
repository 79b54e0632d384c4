// Adversarial: correct output on every call, but scribbles on input A on its second call only (the second
// correctness run, whose inputs the driver does not upload again: they were found unchanged after the
// first run). The check after that call must still name the modified input.
#include <cuda_runtime.h>
__global__ void add_kernel(const float* A, const float* B, float* C, int N, int scribble) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) {
    C[i] = A[i] + B[i];
    if (scribble && i == N / 2) ((float*)A)[i] = A[i] + 1.0f;
  }
}
static int calls = 0;
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  ++calls;
  add_kernel<<<(N + 255) / 256, 256>>>(A, B, C, N, calls == 2);
}
