// Honest matrix_copy, BF16, that declares its input `const` where the task's prototype does not
// (`__nv_bfloat16* A`): the same ABI (issue 39: the agent refused it as `prototype_changed`).
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void copy_rows(const __nv_bfloat16* __restrict__ a, __nv_bfloat16* __restrict__ b, long long total) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
    b[i] = a[i];
  }
}

extern "C" void matrix_copy_bf16_optimized(const __nv_bfloat16* A, __nv_bfloat16* B, int M, int N) {
  long long total = (long long)M * N;
  if (total <= 0) return;
  long long blocks = (total + 255) / 256;
  copy_rows<<<(unsigned)(blocks < 65536 ? blocks : 65536), 256>>>(A, B, total);
}
