// Refused: an environment read made on purpose, even in a file that includes CUB (whose NVTX loader is compiled out).
#include <cub/cub.cuh>
#include <cstdlib>
__global__ void vadd(const float* A, const float* B, float* C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) C[i] = A[i] + B[i];
}
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  if (getenv("HOME")) vadd<<<(N + 255) / 256, 256>>>(A, B, C, N);
}
