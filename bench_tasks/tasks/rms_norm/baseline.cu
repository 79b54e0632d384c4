// MSKernelBench rms_norm baseline (ours), doing what the published baseline does, per call:
// cudaMalloc and cudaMemset of one float; a grid-stride kernel (min(ceil(N/256), 1024) blocks of 256
// threads) where each thread sums the squares of its elements in FP32 and atomicAdds its partial into
// that float; an apply kernel (same launch shape) computing
//   out[i] = weight[i] * x[i] / rms + bias[i],  rms = sqrt(sum / N + epsilon);
// then cudaFree. BF16: inputs converted to float, FP32 arithmetic, one rounding at the store.
#include <cstdio>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;

int blocks_for(int N) {
  int blocks = (N + kThreads - 1) / kThreads;
  return blocks < kMaxBlocks ? blocks : kMaxBlocks;
}

bool ok(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "rms_norm baseline: %s failed: %s\n", what, cudaGetErrorString(err));
  return false;
}
}  // namespace

__global__ void rms_norm_sum_squares_kernel(const float* input, float* sum_sq, int N) {
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x) s += input[i] * input[i];
  atomicAdd(sum_sq, s);
}

__global__ void rms_norm_apply_kernel(float* output, const float* input, const float* weight, const float* bias,
                                      const float* sum_sq, float epsilon, int N) {
  float rms = sqrtf(*sum_sq / (float)N + epsilon);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x)
    output[i] = weight[i] * input[i] / rms + bias[i];
}

__global__ void rms_norm_bf16_sum_squares_kernel(const __nv_bfloat16* input, float* sum_sq, int N) {
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x) {
    float v = __bfloat162float(input[i]);
    s += v * v;
  }
  atomicAdd(sum_sq, s);
}

__global__ void rms_norm_bf16_apply_kernel(__nv_bfloat16* output, const __nv_bfloat16* input, const __nv_bfloat16* weight,
                                           const __nv_bfloat16* bias, const float* sum_sq, float epsilon, int N) {
  float rms = sqrtf(*sum_sq / (float)N + epsilon);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x)
    output[i] = __float2bfloat16(__bfloat162float(weight[i]) * __bfloat162float(input[i]) / rms + __bfloat162float(bias[i]));
}

extern "C" void rms_norm(float* output, const float* input, const float* weight, const float* bias, const float epsilon, const int N) {
  if (N > 0) {
    float* d_sum = nullptr;
    if (ok(cudaMalloc(&d_sum, sizeof(float)), "cudaMalloc")) {
      if (ok(cudaMemset(d_sum, 0, sizeof(float)), "cudaMemset")) {
        rms_norm_sum_squares_kernel<<<blocks_for(N), kThreads>>>(input, d_sum, N);
        rms_norm_apply_kernel<<<blocks_for(N), kThreads>>>(output, input, weight, bias, d_sum, epsilon, N);
      }
      ok(cudaFree(d_sum), "cudaFree");
    }
  }
  cudaDeviceSynchronize();
}

extern "C" void rms_norm_bf16(__nv_bfloat16* output, const __nv_bfloat16* input, const __nv_bfloat16* weight, const __nv_bfloat16* bias, const float epsilon, const int N) {
  if (N > 0) {
    float* d_sum = nullptr;
    if (ok(cudaMalloc(&d_sum, sizeof(float)), "cudaMalloc")) {
      if (ok(cudaMemset(d_sum, 0, sizeof(float)), "cudaMemset")) {
        rms_norm_bf16_sum_squares_kernel<<<blocks_for(N), kThreads>>>(input, d_sum, N);
        rms_norm_bf16_apply_kernel<<<blocks_for(N), kThreads>>>(output, input, weight, bias, d_sum, epsilon, N);
      }
      ok(cudaFree(d_sum), "cudaFree");
    }
  }
  cudaDeviceSynchronize();
}
