// Honest elu, BF16, whose entry point leaves out the defaulted trailing `float alpha = 1.0` and drops the
// by-value `const` of N (`int N` for `const int N`: the same function type). Issue 39.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void elu_bf16_pairs(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ in, int n) {
  int i = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
  for (int j = i; j < i + 2 && j < n; ++j) {
    float x = __bfloat162float(in[j]);
    out[j] = x < 0.0f ? __float2bfloat16(expf(x) - 1.0f) : in[j];
  }
}

extern "C" void elu_bf16_optimized(__nv_bfloat16* out, const __nv_bfloat16* input, int N) {
  if (N > 0) elu_bf16_pairs<<<(N + 511) / 512, 256>>>(out, input, N);
}
