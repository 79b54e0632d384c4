// BF16 twin of matrix_transpose: 32x32 tiles through padded shared memory so both the reads of A and the
// writes of B are coalesced (the baseline writes B with stride M); no arithmetic, no reduction.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

static __global__ void transpose_twin(const __nv_bfloat16* A, __nv_bfloat16* B, int M, int N) {
  __shared__ __nv_bfloat16 tile[32][33];
  int c0 = blockIdx.x * 32, r0 = blockIdx.y * 32;
  for (int dy = threadIdx.y; dy < 32; dy += blockDim.y) {
    int r = r0 + dy, c = c0 + threadIdx.x;
    if (r < M && c < N) tile[dy][threadIdx.x] = A[(size_t)r * N + c];
  }
  __syncthreads();
  for (int dy = threadIdx.y; dy < 32; dy += blockDim.y) {
    int c = c0 + dy, r = r0 + threadIdx.x;  // B row c, column r
    if (r < M && c < N) B[(size_t)c * M + r] = tile[threadIdx.x][dy];
  }
}

extern "C" void matrix_transpose_bf16_optimized(const __nv_bfloat16* A, __nv_bfloat16* B, int M, int N) {
  if (M <= 0 || N <= 0) return;
  dim3 block(32, 8);
  dim3 grid((N + 31) / 32, (M + 31) / 32);
  transpose_twin<<<grid, block>>>(A, B, M, N);
}
