// Honest matrix_transpose, BF16: A is M x N, B = A^T is N x M. 32x32 tiles through shared memory padded to
// 33 columns (no bank conflicts), 32x8 threads each moving 4 elements; coalesced reads and writes.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

constexpr int kTile = 32, kRows = 8;

__global__ void transpose_tiles(const __nv_bfloat16* __restrict__ A, __nv_bfloat16* __restrict__ B, int M, int N) {
  __shared__ __nv_bfloat16 tile[kTile][kTile + 1];
  int x = blockIdx.x * kTile + threadIdx.x;  // column of A
  int y = blockIdx.y * kTile + threadIdx.y;  // row of A
  for (int j = 0; j < kTile; j += kRows)
    if (x < N && y + j < M) tile[threadIdx.y + j][threadIdx.x] = A[(size_t)(y + j) * N + x];
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;  // column of B (a row of A)
  y = blockIdx.x * kTile + threadIdx.y;  // row of B (a column of A)
  for (int j = 0; j < kTile; j += kRows)
    if (x < M && y + j < N) B[(size_t)(y + j) * M + x] = tile[threadIdx.x][threadIdx.y + j];
}

extern "C" void matrix_transpose_bf16_optimized(const __nv_bfloat16* A, __nv_bfloat16* B, int M, int N) {
  if (M <= 0 || N <= 0) return;
  dim3 block(kTile, kRows), grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  transpose_tiles<<<grid, block>>>(A, B, M, N);
}
