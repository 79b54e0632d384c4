// BF16 twin of sigmoid: grid-stride over __nv_bfloat162 pairs (scalar odd tail), computed as 0.5 + 0.5*tanhf(x/2)
// instead of 1/(1 + expf(-x)).
#include <cstdint>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;

__device__ __forceinline__ float sigmoid_value(float x) { return fmaf(0.5f, tanhf(0.5f * x), 0.5f); }
}  // namespace

__global__ void sigmoid_twin_pairs(__nv_bfloat162* __restrict__ out, const __nv_bfloat162* __restrict__ in, int pairs) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < pairs; i += gridDim.x * blockDim.x) {
    float2 v = __bfloat1622float2(in[i]);
    out[i] = __floats2bfloat162_rn(sigmoid_value(v.x), sigmoid_value(v.y));
  }
}

__global__ void sigmoid_twin_scalar(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ in, int start, int n) {
  for (int i = start + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = __float2bfloat16(sigmoid_value(__bfloat162float(in[i])));
}

extern "C" void sigmoid_bf16_optimized(__nv_bfloat16* out, const __nv_bfloat16* input, const int N) {
  if (N <= 0) return;
  bool aligned = ((reinterpret_cast<uintptr_t>(out) | reinterpret_cast<uintptr_t>(input)) & 3) == 0;
  int pairs = aligned ? N / 2 : 0;
  if (pairs > 0) {
    int blocks = (pairs + kThreads - 1) / kThreads;
    sigmoid_twin_pairs<<<blocks < 4096 ? blocks : 4096, kThreads>>>(reinterpret_cast<__nv_bfloat162*>(out),
                                                                    reinterpret_cast<const __nv_bfloat162*>(input), pairs);
  }
  int rest = N - 2 * pairs;
  if (rest > 0) {
    int blocks = (rest + kThreads - 1) / kThreads;
    sigmoid_twin_scalar<<<blocks < 4096 ? blocks : 4096, kThreads>>>(out, input, 2 * pairs, N);
  }
  cudaDeviceSynchronize();
}
