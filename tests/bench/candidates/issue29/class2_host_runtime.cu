// Class 2: what the host compiler makes of ordinary host code: the error-check macro (fprintf(stderr, ...);
// exit(1)), fortified libc under _FORTIFY_SOURCE, new[] of a run-time length, <iostream>.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#define CUDA_CHECK(call)                                                                          \
  do {                                                                                            \
    cudaError_t err_ = (call);                                                                    \
    if (err_ != cudaSuccess) {                                                                    \
      fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(err_), __FILE__, __LINE__); \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)
__global__ void vadd(const float* A, const float* B, float* C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) C[i] = A[i] + B[i];
}
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  char label[32], copy[32];
  snprintf(label, sizeof label, "N=%d", N);
  memcpy(copy, label, N > 8 ? sizeof copy : sizeof label);
  int* blocks = new int[N > 0 ? (N + 255) / 256 : 1];
  blocks[0] = (N + 255) / 256;
  if (N < 0) std::cerr << "bad size " << copy << std::endl;
  vadd<<<blocks[0], 256>>>(A, B, C, N);
  delete[] blocks;
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
}
