// Class 5: the entry leaves out the trailing parameters that have defaults in the task's prototype
// (alpha = 1.67, lambda = 1.0), declares the input pointer without const and names parameters its own way.
#include <cuda_runtime.h>
__global__ void selu_kernel(float* __restrict__ y, const float* __restrict__ x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] < 0.0f ? 1.0f * 1.67f * (expf(x[i]) - 1.0f) : 1.0f * x[i];
}
extern "C" void selu_optimized(float* __restrict__ out, float* in, int count) {
  selu_kernel<<<(count + 255) / 256, 256>>>(out, in, count);
  cudaDeviceSynchronize();
}
