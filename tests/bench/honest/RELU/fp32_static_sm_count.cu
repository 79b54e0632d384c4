// Honest RELU, FP32: a grid-stride loop sized from the SM count, which the host code queries once and keeps
// in a function-local static (static host state set up on the first call).
#include <cuda_runtime.h>

__global__ void relu_grid_stride(float* __restrict__ out, const float* __restrict__ in, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = fmaxf(in[i], 0.0f);
}

static int sm_count() {
  static const int count = [] {
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
      return 80;
    return sms > 0 ? sms : 80;
  }();
  return count;
}

extern "C" void RELU_optimized(float* output, const float* input, int N) {
  if (N <= 0) return;
  int wanted = (N + 255) / 256, cap = 8 * sm_count();
  relu_grid_stride<<<wanted < cap ? wanted : cap, 256>>>(output, input, N);
}
