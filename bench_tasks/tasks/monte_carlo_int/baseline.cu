// MSKernelBench monte_carlo_int baseline (ours), doing what the published baselines do: the Monte-Carlo
// estimate (b - a) * (1/N) * sum_i y_i of the integral of f over [a, b] from N given samples y_i = f(x_i).
// FP32 (as published): one thread per sample (256 per block), each atomically adding (b - a) * y_i / N
// into *result, which it does NOT zero (the caller does: role accumulate).
// BF16 (as published): per call a cudaMalloc'ed and zeroed FP32 temporary; a grid-stride loop on
// min(ceil(N/256), 1024) blocks of 256 threads, each thread summing its samples in FP32 and issuing one
// atomicAdd into the temporary; a <<<1, 1>>> kernel OVERWRITING *result = bf16((b - a) * (sum / N));
// cudaFree.
#include <cstdio>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;

bool ok(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "monte_carlo_int baseline: %s failed: %s\n", what, cudaGetErrorString(err));
  return false;
}
}  // namespace

__global__ void monte_carlo_int_kernel(const float* y_samples, float* result, float a, float b, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) atomicAdd(result, (b - a) * y_samples[i] / N);
}

__global__ void monte_carlo_int_bf16_sum_kernel(const __nv_bfloat16* y_samples, float* sum, int N) {
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x) s += __bfloat162float(y_samples[i]);
  atomicAdd(sum, s);
}

__global__ void monte_carlo_int_bf16_finalize_kernel(__nv_bfloat16* result, const float* sum, float a, float b, int N) {
  *result = __float2bfloat16((b - a) * (*sum / N));
}

extern "C" void monte_carlo_int(const float* y_samples, float* result, float a, float b, int N) {
  if (N > 0) monte_carlo_int_kernel<<<(N + kThreads - 1) / kThreads, kThreads>>>(y_samples, result, a, b, N);
  cudaDeviceSynchronize();
}

extern "C" void monte_carlo_int_bf16(const __nv_bfloat16* y_samples, __nv_bfloat16* result, float a, float b, int N) {
  float* d_sum = nullptr;
  if (ok(cudaMalloc(&d_sum, sizeof(float)), "cudaMalloc")) {
    if (ok(cudaMemset(d_sum, 0, sizeof(float)), "cudaMemset")) {
      int blocks = (N + kThreads - 1) / kThreads;
      blocks = blocks < kMaxBlocks ? blocks : kMaxBlocks;
      if (N > 0) monte_carlo_int_bf16_sum_kernel<<<blocks, kThreads>>>(y_samples, d_sum, N);
      monte_carlo_int_bf16_finalize_kernel<<<1, 1>>>(result, d_sum, a, b, N);
    }
    ok(cudaFree(d_sum), "cudaFree");
  }
  cudaDeviceSynchronize();
}
