// BF16 twin of matrix_scalar_mul: one flat grid-stride loop over __nv_bfloat162 pairs multiplied with __hmul2
// in bf16 arithmetic (exact product, one rounding: the baseline multiplies in FP32 and rounds once), odd tail
// alone; no reduction.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

static __global__ void msm_twin(const __nv_bfloat16* A, __nv_bfloat16* B, __nv_bfloat16 scalar, size_t total) {
  size_t start = (size_t)blockIdx.x * blockDim.x + threadIdx.x, step = (size_t)blockDim.x * gridDim.x;
  bool aligned = ((reinterpret_cast<size_t>(A) | reinterpret_cast<size_t>(B)) & 3) == 0;
  size_t pairs = aligned ? total / 2 : 0;
  __nv_bfloat162 s2 = __halves2bfloat162(scalar, scalar);
  for (size_t p = start; p < pairs; p += step)
    reinterpret_cast<__nv_bfloat162*>(B)[p] = __hmul2(reinterpret_cast<const __nv_bfloat162*>(A)[p], s2);
  for (size_t i = 2 * pairs + start; i < total; i += step) B[i] = __hmul(A[i], scalar);
}

extern "C" void matrix_scalar_mul_bf16_optimized(const __nv_bfloat16* A, __nv_bfloat16* B, __nv_bfloat16 scalar, int M, int N) {
  if (M <= 0 || N <= 0) return;
  size_t total = (size_t)M * N;
  size_t blocks = (total / 2 + 255) / 256 + 1;
  msm_twin<<<(unsigned)(blocks < 8192 ? blocks : 8192), 256>>>(A, B, scalar, total);
}
