// Honest selu, FP32, whose entry point omits the two trailing parameters to which the task's prototype gives
// defaults (alpha = 1.67, lambda = 1.0), as the published harness calls it with three arguments (issue 29,
// class 5): it uses the defaults itself.
#include <cuda_runtime.h>

__global__ void selu_kernel(float* __restrict__ out, const float* __restrict__ in, int n, float alpha, float lambda) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = in[i];
    out[i] = x < 0.0f ? lambda * alpha * expm1f(x) : lambda * x;
  }
}

extern "C" void selu_optimized(float* output, const float* input, const int N) {
  if (N > 0) selu_kernel<<<(N + 255) / 256, 256>>>(output, input, N, 1.67f, 1.0f);
}
