// MSKernelBench softmax baseline (ours), doing what the published baseline does: ONE block of 1024
// threads (grid = 1), one thread per row of the row-major N x C input, three serial passes per row:
//   1. m = max_j x[j], starting from -FLT_MAX;
//   2. e_j = expf(x[j] - m) stored into out, sum += e_j (FP32, sequential in j);
//   3. out[j] = out[j] / sum.
// BF16, as published: pass 2 stores bf16(e_j) into out but adds the UNROUNDED FP32 e_j into the sum;
// pass 3 writes bf16(f(out[j]) * (1 / sum)): two roundings.
// Deviation: the published kernel computes row = threadIdx.x with grid = 1, so rows >= 1024 are never
// written; ours loops row += blockDim.x, identical for N <= 1024 (every paper size) and correct beyond.
#include <cfloat>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void softmax_kernel(float* out, const float* input, int N, int C) {
  for (int row = threadIdx.x; row < N; row += blockDim.x) {
    const float* x = input + (size_t)row * C;
    float* y = out + (size_t)row * C;
    float m = -FLT_MAX;
    for (int j = 0; j < C; ++j) m = fmaxf(m, x[j]);
    float sum = 0.0f;
    for (int j = 0; j < C; ++j) {
      float e = expf(x[j] - m);
      y[j] = e;
      sum += e;
    }
    for (int j = 0; j < C; ++j) y[j] = y[j] / sum;
  }
}

__global__ void softmax_bf16_kernel(__nv_bfloat16* out, const __nv_bfloat16* input, int N, int C) {
  for (int row = threadIdx.x; row < N; row += blockDim.x) {
    const __nv_bfloat16* x = input + (size_t)row * C;
    __nv_bfloat16* y = out + (size_t)row * C;
    float m = -FLT_MAX;
    for (int j = 0; j < C; ++j) m = fmaxf(m, __bfloat162float(x[j]));
    float sum = 0.0f;
    for (int j = 0; j < C; ++j) {
      float e = expf(__bfloat162float(x[j]) - m);
      y[j] = __float2bfloat16(e);  // first rounding
      sum += e;                    // the unrounded value goes into the sum
    }
    float inv = 1.0f / sum;
    for (int j = 0; j < C; ++j) y[j] = __float2bfloat16(__bfloat162float(y[j]) * inv);  // second rounding
  }
}

extern "C" void softmax(float* out, const float* input, int N, int C) {
  softmax_kernel<<<1, 1024>>>(out, input, N, C);
  cudaDeviceSynchronize();
}

extern "C" void softmax_bf16(__nv_bfloat16* out, const __nv_bfloat16* input, int N, int C) {
  softmax_bf16_kernel<<<1, 1024>>>(out, input, N, C);
  cudaDeviceSynchronize();
}
