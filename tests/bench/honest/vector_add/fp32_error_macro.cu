// Honest vector_add, FP32, with the usual error-check macro of hand-written CUDA: fprintf(stderr, ...) and
// exit(1) on a failed runtime call (issue 29, class 2).
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

#define CUDA_CHECK(call)                                                                              \
  do {                                                                                                \
    cudaError_t err_ = (call);                                                                        \
    if (err_ != cudaSuccess) {                                                                        \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #call, __FILE__, __LINE__, cudaGetErrorString(err_)); \
      exit(1);                                                                                        \
    }                                                                                                 \
  } while (0)

__global__ void vadd(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  if (N <= 0) return;
  vadd<<<(N + 511) / 512, 512>>>(A, B, C, N);
  CUDA_CHECK(cudaGetLastError());
}
