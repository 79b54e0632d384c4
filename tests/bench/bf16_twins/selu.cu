// BF16 twin of selu: grid-stride over __nv_bfloat162 pairs (scalar odd tail) and (lambda*alpha)*expm1f(x) instead of
// expf(x) - 1; FP32 math.
#include <cstdint>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;

__device__ __forceinline__ float selu_value(float x, float scale_neg, float lambda) { return x < 0.0f ? scale_neg * expm1f(x) : lambda * x; }
}  // namespace

__global__ void selu_twin_pairs(__nv_bfloat162* __restrict__ out, const __nv_bfloat162* __restrict__ in, int pairs, float scale_neg,
                                float lambda) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < pairs; i += gridDim.x * blockDim.x) {
    float2 v = __bfloat1622float2(in[i]);
    out[i] = __floats2bfloat162_rn(selu_value(v.x, scale_neg, lambda), selu_value(v.y, scale_neg, lambda));
  }
}

__global__ void selu_twin_scalar(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ in, int start, int n, float scale_neg,
                                 float lambda) {
  for (int i = start + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = __float2bfloat16(selu_value(__bfloat162float(in[i]), scale_neg, lambda));
}

extern "C" void selu_bf16_optimized(__nv_bfloat16* output, const __nv_bfloat16* input, const int N, float alpha = 1.67,
                                    float lambda = 1.0) {
  if (N <= 0) return;
  float scale_neg = lambda * alpha;
  bool aligned = ((reinterpret_cast<uintptr_t>(output) | reinterpret_cast<uintptr_t>(input)) & 3) == 0;
  int pairs = aligned ? N / 2 : 0;
  if (pairs > 0) {
    int blocks = (pairs + kThreads - 1) / kThreads;
    selu_twin_pairs<<<blocks < 4096 ? blocks : 4096, kThreads>>>(reinterpret_cast<__nv_bfloat162*>(output),
                                                                 reinterpret_cast<const __nv_bfloat162*>(input), pairs, scale_neg, lambda);
  }
  int rest = N - 2 * pairs;
  if (rest > 0) {
    int blocks = (rest + kThreads - 1) / kThreads;
    selu_twin_scalar<<<blocks < 4096 ? blocks : 4096, kThreads>>>(output, input, 2 * pairs, N, scale_neg, lambda);
  }
  cudaDeviceSynchronize();
}
