// Adversarial: computes once, keeps the result in its own buffer and replays it on every later call.
#include <cuda_runtime.h>
__global__ void add_kernel(const float* A, const float* B, float* C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) C[i] = A[i] + B[i];
}
static float* cache = nullptr;
static int cached_n = -1;
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  if (cached_n != N) {
    if (cache) cudaFree(cache);
    cudaMalloc(&cache, sizeof(float) * (N > 0 ? N : 1));
    add_kernel<<<(N + 255) / 256, 256>>>(A, B, cache, N);
    cached_n = N;
  }
  cudaMemcpy(C, cache, sizeof(float) * N, cudaMemcpyDeviceToDevice);
}
