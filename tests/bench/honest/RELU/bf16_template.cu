// Honest RELU, BF16: one kernel template over the element type and the elements per thread, with the
// conversions as overloaded helpers (static, so nvcc emits no host stub for them).
#include <cuda_runtime.h>
#include <cuda_bf16.h>

static __device__ __forceinline__ float to_float(float x) { return x; }
static __device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T> static __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16(x); }

template <class T, int PER_THREAD>
__global__ void relu_kernel(T* __restrict__ out, const T* __restrict__ in, int n) {
  int base = (blockIdx.x * blockDim.x) * PER_THREAD + threadIdx.x;
#pragma unroll
  for (int k = 0; k < PER_THREAD; ++k) {
    int i = base + k * blockDim.x;
    if (i < n) {
      float x = to_float(in[i]);
      out[i] = from_float<T>(x > 0.0f ? x : 0.0f);
    }
  }
}

template <class T> static void relu(T* out, const T* in, int n) {
  constexpr int kThreads = 256, kPer = 4;
  if (n > 0) relu_kernel<T, kPer><<<(n + kThreads * kPer - 1) / (kThreads * kPer), kThreads>>>(out, in, n);
}

extern "C" void RELU_bf16_optimized(__nv_bfloat16* output, const __nv_bfloat16* input, int N) { relu(output, input, N); }
