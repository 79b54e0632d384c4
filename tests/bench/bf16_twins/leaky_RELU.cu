// BF16 twin of leaky_RELU: grid-stride over __nv_bfloat162 pairs (the baseline: one block, one element per
// thread), alpha * x in FP32 with one rounding for negatives, positives copied; odd tail done alone.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

static __device__ __forceinline__ __nv_bfloat16 leaky_twin_one(__nv_bfloat16 v, float alpha) {
  float x = __bfloat162float(v);
  return x < 0.0f ? __float2bfloat16(alpha * x) : v;
}

static __global__ void leaky_twin(__nv_bfloat16* out, const __nv_bfloat16* in, int N, float alpha) {
  int pairs = N / 2;
  bool aligned = ((reinterpret_cast<size_t>(in) | reinterpret_cast<size_t>(out)) & 3) == 0;
  for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < pairs; p += blockDim.x * gridDim.x) {
    if (aligned) {
      __nv_bfloat162 v = reinterpret_cast<const __nv_bfloat162*>(in)[p];
      reinterpret_cast<__nv_bfloat162*>(out)[p] = __halves2bfloat162(leaky_twin_one(v.x, alpha), leaky_twin_one(v.y, alpha));
    } else {
      out[2 * p] = leaky_twin_one(in[2 * p], alpha);
      out[2 * p + 1] = leaky_twin_one(in[2 * p + 1], alpha);
    }
  }
  if ((N & 1) && blockIdx.x == 0 && threadIdx.x == 0) out[N - 1] = leaky_twin_one(in[N - 1], alpha);
}

extern "C" void leaky_RELU_bf16_optimized(__nv_bfloat16* output, const __nv_bfloat16* input, const int N, float alpha = 0.01) {
  if (N <= 0) return;
  int blocks = (N / 2 + 255) / 256;
  leaky_twin<<<blocks < 1 ? 1 : (blocks < 4096 ? blocks : 4096), 256>>>(output, input, N, alpha);
}
