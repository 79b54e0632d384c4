// Honest matrix_mul, FP32: shared-memory tiles as a template over the tile size; each output accumulates
// in increasing k, one FMA at a time.
#include <cuda_runtime.h>

template <int TILE>
__global__ void sgemm_tiles(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE + 1];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = row < M && ka < K ? A[(size_t)row * K + ka] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = kb < K && col < N ? B[(size_t)kb * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

template <int TILE> static void sgemm(const float* A, const float* B, float* C, int M, int N, int K) {
  dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  sgemm_tiles<TILE><<<grid, block>>>(A, B, C, M, N, K);
}

extern "C" void matrix_mul_optimized(const float* A, const float* B, float* C, int M, int N, int K) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  if (M >= 64 && N >= 64) sgemm<32>(A, B, C, M, N, K);
  else sgemm<16>(A, B, C, M, N, K);
}
