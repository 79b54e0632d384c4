// Honest elu, FP32, whose entry point leaves out the trailing parameter the task's prototype defaults
// (`float alpha = 1.0`) and uses alpha = 1 itself, as the published optimized kernel does (issue 39: the agent
// refused it as `prototype_changed` while the harness accepted it).
#include <cuda_runtime.h>

__global__ void elu_grid_stride(float* __restrict__ out, const float* __restrict__ in, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float x = in[i];
    out[i] = x < 0.0f ? expm1f(x) : x;
  }
}

extern "C" void elu_optimized(float* output, const float* input, const int N) {
  if (N <= 0) return;
  int blocks = (N + 255) / 256;
  elu_grid_stride<<<blocks < 4096 ? blocks : 4096, 256>>>(output, input, N);
}
