// Honest dot_product, FP32, with printf in device code (a debugging aid left in: it prints only if the kernel
// is ever given a negative length, which this entry point never does).
#include <cuda_runtime.h>
#include <cstdio>

constexpr int kThreads = 256;

__global__ void dot_debug(float* __restrict__ loss, const float* __restrict__ x, const float* __restrict__ y, int n) {
  if (n < 0 && blockIdx.x == 0 && threadIdx.x == 0) printf("dot_debug: bad length %d\n", n);
  __shared__ float warp_sums[kThreads / 32];
  float acc = 0.0f;
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < n; i += gridDim.x * kThreads) acc += x[i] * y[i];
  for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = threadIdx.x < kThreads / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (threadIdx.x == 0) atomicAdd(loss, acc);
  }
}

extern "C" void dot_product_optimized(float* loss, const float* X, const float* Y, const int N) {
  if (N <= 0) return;
  int blocks = (N + kThreads - 1) / kThreads;
  dot_debug<<<blocks < 2048 ? blocks : 2048, kThreads>>>(loss, X, Y, N);
}
