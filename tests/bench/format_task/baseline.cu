// Baseline of the synthetic format_demo task (a test fixture). FP32: h and y are HOST pointers; the
// wrapper copies them in, adds atomically into the caller-zeroed y (role accumulate), copies y back.
// BF16: everything on the device, y overwritten (role output).
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void format_demo_add(int n, const float* x, const float* h, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&y[i], x[i] + h[i]);
}

__global__ void format_demo_add_bf16(int n, const __nv_bfloat16* x, const __nv_bfloat16* h, __nv_bfloat16* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __float2bfloat16(__bfloat162float(x[i]) + __bfloat162float(h[i]));
}

static __device__ __forceinline__ float as_float(float v) { return v; }
static __device__ __forceinline__ float as_float(__nv_bfloat16 v) { return __bfloat162float(v); }
static __device__ __forceinline__ void store(float* p, float v) { *p = v; }
static __device__ __forceinline__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }

// One thread per bucket j: s[j] = x[j] + x[j + m] + ...; thread m (or block 1's thread 0) finds idx.
template <typename T>
__global__ void format_demo_buckets(int n, int m, const T* x, T* s, int* idx) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < m) {
    float sum = 0.0f;
    for (int i = j; i < n; i += m) sum += as_float(x[i]);
    store(&s[j], sum);
  }
  if (j == 0) {
    int best = 0;
    for (int i = 1; i < n; ++i)
      if (fabsf(as_float(x[i])) > fabsf(as_float(x[best]))) best = i;
    *idx = best;
  }
}

extern "C" void format_demo(int n, int m, const float* x, const float* h, float* y, float* s, int* idx) {
  float *dh = nullptr, *dy = nullptr;
  size_t bytes = (size_t)n * sizeof(float);
  if (cudaMalloc(&dh, bytes) != cudaSuccess || cudaMalloc(&dy, bytes) != cudaSuccess) return;
  cudaMemcpy(dh, h, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(dy, y, bytes, cudaMemcpyHostToDevice);
  format_demo_add<<<(n + 255) / 256, 256>>>(n, x, dh, dy);
  format_demo_buckets<float><<<(m + 255) / 256, 256>>>(n, m, x, s, idx);
  cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost);
  cudaFree(dh);
  cudaFree(dy);
}

extern "C" void format_demo_bf16(int n, int m, const __nv_bfloat16* x, const __nv_bfloat16* h, __nv_bfloat16* y,
                                 __nv_bfloat16* sums, int* idx) {
  format_demo_add_bf16<<<(n + 255) / 256, 256>>>(n, x, h, y);
  format_demo_buckets<__nv_bfloat16><<<(m + 255) / 256, 256>>>(n, m, x, sums, idx);
}
