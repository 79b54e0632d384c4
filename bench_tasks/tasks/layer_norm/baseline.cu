// MSKernelBench layer_norm baseline (ours), doing what the published baseline does, per call:
//   4 cudaMallocs of one float (sum, mean, variance sum, variance);
//   a grid-stride sum kernel (min(ceil(N/256), 1024) blocks of 256 threads; each thread sums its
//     elements in FP32 and atomicAdds its partial), after a cudaMemset of the accumulator;
//   device->host copy of the sum, mean = sum / N on the host, host->device copy of the mean;
//   a grid-stride variance kernel (same shape) atomically summing (x - mean)^2;
//   device->host copy, var = sum / N on the host, host->device copy;
//   an apply kernel (same shape): out[i] = weight[i] * (x[i] - mean) / sqrt(var + epsilon) + bias[i];
//   4 cudaFrees.
// The scalar round trips are synchronous cudaMemcpy calls, so they are part of every call's time, as
// published. BF16: inputs converted to float, FP32 arithmetic, one rounding at the store.
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
  std::fprintf(stderr, "layer_norm baseline: %s failed: %s\n", what, cudaGetErrorString(err));
  return false;
}

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }
}  // namespace

template <typename T>
__global__ void layer_norm_sum_kernel(const T* input, float* sum, int N) {
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x) s += to_float(input[i]);
  atomicAdd(sum, s);
}

template <typename T>
__global__ void layer_norm_var_kernel(const T* input, const float* mean, float* var_sum, int N) {
  float mu = *mean;
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x) {
    float d = to_float(input[i]) - mu;
    s += d * d;
  }
  atomicAdd(var_sum, s);
}

template <typename T>
__global__ void layer_norm_apply_kernel(T* output, const T* input, const T* weight, const T* bias, const float* mean,
                                        const float* var, float epsilon, int N) {
  float mu = *mean;
  float denom = sqrtf(*var + epsilon);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x)
    store(&output[i], to_float(weight[i]) * (to_float(input[i]) - mu) / denom + to_float(bias[i]));
}

template <typename T>
static void layer_norm_impl(T* output, const T* input, const T* weight, const T* bias, float epsilon, int N) {
  if (N <= 0) return;
  float* d_sum = nullptr;
  float* d_mean = nullptr;
  float* d_var_sum = nullptr;
  float* d_var = nullptr;
  bool good = ok(cudaMalloc(&d_sum, sizeof(float)), "cudaMalloc") && ok(cudaMalloc(&d_mean, sizeof(float)), "cudaMalloc") &&
              ok(cudaMalloc(&d_var_sum, sizeof(float)), "cudaMalloc") && ok(cudaMalloc(&d_var, sizeof(float)), "cudaMalloc");
  const int blocks = blocks_for(N);
  float h_sum = 0.0f, h_mean = 0.0f, h_var_sum = 0.0f, h_var = 0.0f;
  if (good) good = ok(cudaMemset(d_sum, 0, sizeof(float)), "cudaMemset");
  if (good) {
    layer_norm_sum_kernel<<<blocks, kThreads>>>(input, d_sum, N);
    good = ok(cudaMemcpy(&h_sum, d_sum, sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy (sum)");
  }
  if (good) {
    h_mean = h_sum / (float)N;
    good = ok(cudaMemcpy(d_mean, &h_mean, sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy (mean)") &&
           ok(cudaMemset(d_var_sum, 0, sizeof(float)), "cudaMemset");
  }
  if (good) {
    layer_norm_var_kernel<<<blocks, kThreads>>>(input, d_mean, d_var_sum, N);
    good = ok(cudaMemcpy(&h_var_sum, d_var_sum, sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy (variance sum)");
  }
  if (good) {
    h_var = h_var_sum / (float)N;
    good = ok(cudaMemcpy(d_var, &h_var, sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy (variance)");
  }
  if (good) layer_norm_apply_kernel<<<blocks, kThreads>>>(output, input, weight, bias, d_mean, d_var, epsilon, N);
  ok(cudaFree(d_sum), "cudaFree");
  ok(cudaFree(d_mean), "cudaFree");
  ok(cudaFree(d_var_sum), "cudaFree");
  ok(cudaFree(d_var), "cudaFree");
}

extern "C" void layer_norm(float* output, const float* input, const float* weight, const float* bias, const float epsilon, const int N) {
  layer_norm_impl(output, input, weight, bias, epsilon, N);
  cudaDeviceSynchronize();
}

extern "C" void layer_norm_bf16(__nv_bfloat16* output, const __nv_bfloat16* input, const __nv_bfloat16* weight, const __nv_bfloat16* bias, const float epsilon, const int N) {
  layer_norm_impl(output, input, weight, bias, epsilon, N);
  cudaDeviceSynchronize();
}
