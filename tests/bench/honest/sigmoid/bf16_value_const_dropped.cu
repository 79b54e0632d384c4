// Honest sigmoid, BF16, whose entry point takes `int N` where the task's prototype has `const int N`:
// top-level const is not part of a function's type (issue 39: the agent refused it as `prototype_changed`).
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void sigmoid_bf16_kernel(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2bfloat16(1.0f / (1.0f + expf(-__bfloat162float(in[i]))));
}

extern "C" void sigmoid_bf16_optimized(__nv_bfloat16* out, const __nv_bfloat16* input, int N) {
  if (N > 0) sigmoid_bf16_kernel<<<(N + 255) / 256, 256>>>(out, input, N);
}
