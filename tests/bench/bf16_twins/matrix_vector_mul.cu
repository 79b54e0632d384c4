// BF16 twin of matrix_vector_mul: one warp per row, lanes striding the columns (coalesced), each lane an
// FP32 partial, combined by a warp-shuffle tree (the baseline: one thread per row, one sequential chain in
// increasing column order); one rounding at the store.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

static __global__ void mv_twin(const __nv_bfloat16* A, const __nv_bfloat16* x, __nv_bfloat16* y, int M, int N) {
  int warps = blockDim.x >> 5, lane = threadIdx.x & 31;
  for (int row = blockIdx.x * warps + (threadIdx.x >> 5); row < M; row += gridDim.x * warps) {
    const __nv_bfloat16* a = A + (size_t)row * N;
    float s = 0.0f;
    for (int c = lane; c < N; c += 32) s = fmaf(__bfloat162float(a[c]), __bfloat162float(x[c]), s);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) y[row] = __float2bfloat16(s);
  }
}

extern "C" void matrix_vector_mul_bf16_optimized(const __nv_bfloat16* A, const __nv_bfloat16* x, __nv_bfloat16* y, int M, int N) {
  if (M <= 0) return;
  int blocks = (M + 7) / 8;
  mv_twin<<<blocks < 4096 ? blocks : 4096, 256>>>(A, x, y, M, N);
}
