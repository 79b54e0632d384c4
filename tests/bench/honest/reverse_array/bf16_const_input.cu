// Honest reverse_array, BF16, that declares its input `const` where the task's prototype does not
// (`__nv_bfloat16* input`): the same ABI (issue 29, class 5).
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void reverse_bf16(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[n - 1 - i] = in[i];
}

extern "C" void reverse_array_bf16_optimized(__nv_bfloat16* output, const __nv_bfloat16* input, int N) {
  if (N > 0) reverse_bf16<<<(N + 255) / 256, 256>>>(output, input, N);
}
