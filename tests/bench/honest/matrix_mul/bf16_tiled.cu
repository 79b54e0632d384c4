// Honest matrix_mul, BF16: 32x32 shared-memory tiles holding the inputs as FP32, FP32 accumulation in
// increasing k, one rounding to BF16 at the store.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

constexpr int kTile = 32;

__global__ void bf16_gemm_tiles(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B, __nv_bfloat16* __restrict__ C,
                                int M, int N, int K) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile + 1];
  int row = blockIdx.y * kTile + threadIdx.y, col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = row < M && ka < K ? __bfloat162float(A[(size_t)row * K + ka]) : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = kb < K && col < N ? __bfloat162float(B[(size_t)kb * N + col]) : 0.0f;
    __syncthreads();
#pragma unroll 8
    for (int k = 0; k < kTile; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[(size_t)row * N + col] = __float2bfloat16(acc);
}

extern "C" void matrix_mul_bf16_optimized(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  dim3 block(kTile, kTile), grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  bf16_gemm_tiles<<<grid, block>>>(A, B, C, M, N, K);
}
