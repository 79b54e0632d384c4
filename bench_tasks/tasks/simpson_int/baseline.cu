// MSKernelBench simpson_int baseline (ours), doing what the published baselines do: composite Simpson's
// rule over pairs of intervals of N equally spaced samples y_i = f(a + i h), h = (b - a)/(N - 1):
//   result = sum over even i with i + 2 < N of (h/3) (y_i + 4 y_{i+1} + y_{i+2}),
// so for even N the last interval [N-2, N-1] is dropped (it is not a full Simpson pair), as published.
// FP32 (as published): ceil(N/256) blocks of 256 threads, a grid-stride loop in which threads with odd i
// skip and threads with even i compute one segment; one atomicAdd per thread into *result, which it
// does NOT zero (the caller does: role accumulate).
// BF16 (as published): per call a cudaMalloc'ed and zeroed FP32 temporary; the same loop on
// min(ceil(N/256), 1024) blocks of 256 threads (bf16 samples converted to float), one atomicAdd per
// thread into the temporary; a <<<1, 1>>> kernel OVERWRITING *result = bf16(sum); cudaFree.
#include <cstdio>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;

bool ok(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "simpson_int baseline: %s failed: %s\n", what, cudaGetErrorString(err));
  return false;
}

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

// This thread's share of the Simpson sum (grid-stride over i; odd i and incomplete pairs skipped).
template <typename T>
__device__ float simpson_partial(const T* y, float a, float b, int N) {
  float h = (b - a) / (N - 1);
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x) {
    if (i % 2 != 0 || i + 2 >= N) continue;
    s += h / 3.0f * (to_float(y[i]) + 4.0f * to_float(y[i + 1]) + to_float(y[i + 2]));
  }
  return s;
}
}  // namespace

__global__ void simpson_int_kernel(const float* y_samples, float* result, float a, float b, int N) {
  atomicAdd(result, simpson_partial(y_samples, a, b, N));
}

__global__ void simpson_int_bf16_sum_kernel(const __nv_bfloat16* y_samples, float* sum, float a, float b, int N) {
  atomicAdd(sum, simpson_partial(y_samples, a, b, N));
}

__global__ void simpson_int_bf16_finalize_kernel(__nv_bfloat16* result, const float* sum) { *result = __float2bfloat16(*sum); }

extern "C" void simpson_int(const float* y_samples, float* result, float a, float b, int N) {
  if (N > 0) simpson_int_kernel<<<(N + kThreads - 1) / kThreads, kThreads>>>(y_samples, result, a, b, N);
  cudaDeviceSynchronize();
}

extern "C" void simpson_int_bf16(const __nv_bfloat16* y_samples, __nv_bfloat16* result, float a, float b, int N) {
  float* d_sum = nullptr;
  if (ok(cudaMalloc(&d_sum, sizeof(float)), "cudaMalloc")) {
    if (ok(cudaMemset(d_sum, 0, sizeof(float)), "cudaMemset")) {
      int blocks = (N + kThreads - 1) / kThreads;
      blocks = blocks < kMaxBlocks ? blocks : kMaxBlocks;
      if (N > 0) simpson_int_bf16_sum_kernel<<<blocks, kThreads>>>(y_samples, d_sum, a, b, N);
      simpson_int_bf16_finalize_kernel<<<1, 1>>>(result, d_sum);
    }
    ok(cudaFree(d_sum), "cudaFree");
  }
  cudaDeviceSynchronize();
}
