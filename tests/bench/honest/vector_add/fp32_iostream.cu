// Honest vector_add, FP32, that reports a failed launch on std::cerr (<iostream>: std::ios_base::Init and
// std::cerr in the object; issue 29, class 2).
#include <cuda_runtime.h>
#include <iostream>

__global__ void vadd(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) c[i] = a[i] + b[i];
}

extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  if (N <= 0) return;
  int blocks = (N + 255) / 256;
  vadd<<<blocks < 2048 ? blocks : 2048, 256>>>(A, B, C, N);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) std::cerr << "vector_add_optimized: launch failed: " << cudaGetErrorString(err) << std::endl;
}
