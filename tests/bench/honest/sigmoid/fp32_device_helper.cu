// Honest sigmoid, FP32, with a plain (non-static, non-inline) __device__ helper: nvcc emits a host stub for
// it that calls exit() (issue 29, class 1).
#include <cuda_runtime.h>

__device__ float logistic(float x) { return 1.0f / (1.0f + expf(-x)); }

__global__ void sigmoid_kernel(float* __restrict__ out, const float* __restrict__ in, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = logistic(in[i]);
}

extern "C" void sigmoid_optimized(float* out, const float* input, const int N) {
  if (N <= 0) return;
  int blocks = (N + 255) / 256;
  sigmoid_kernel<<<blocks < 1024 ? blocks : 1024, 256>>>(out, input, N);
}
