// Honest sigmoid, FP32: loads through the read-only path written as inline PTX (ld.global.nc), the math in C.
#include <cuda_runtime.h>

static __device__ __forceinline__ float load_nc(const float* p) {
  float v;
  asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}

__global__ void sigmoid_ptx(float* __restrict__ out, const float* __restrict__ in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 1.0f / (1.0f + expf(-load_nc(in + i)));
}

extern "C" void sigmoid_optimized(float* out, const float* input, const int N) {
  if (N > 0) sigmoid_ptx<<<(N + 255) / 256, 256>>>(out, input, N);
}
