// BF16 twin of square_matrix_mul: 16x16 shared-memory tiles, each tile's 16 products summed into its own FP32 partial (FMA) and the partials added tile by tile (the baseline sums all M products in one sequential chain).
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kTile = 16;

__global__ void twin_sgemm_tiled(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M) {
  __shared__ float a_tile[kTile][kTile];
  __shared__ float b_tile[kTile][kTile + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * kTile + ty;
  int col = blockIdx.x * kTile + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < M; k0 += kTile) {
    int ka = k0 + tx, kb = k0 + ty;
    a_tile[ty][tx] = (row < M && ka < M) ? __bfloat162float(A[(size_t)row * M + ka]) : 0.0f;
    b_tile[ty][tx] = (kb < M && col < M) ? __bfloat162float(B[(size_t)kb * M + col]) : 0.0f;
    __syncthreads();
    float partial = 0.0f;
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) partial = fmaf(a_tile[ty][kk], b_tile[kk][tx], partial);
    acc += partial;
    __syncthreads();
  }
  if (row < M && col < M) C[(size_t)row * M + col] = __float2bfloat16(acc);
}
}  // namespace

extern "C" void square_matrix_mul_bf16_optimized(__nv_bfloat16* A, __nv_bfloat16* B, __nv_bfloat16* C, int M) {
  if (M <= 0) return;
  dim3 block(kTile, kTile);
  dim3 grid((M + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  twin_sgemm_tiled<<<grid, block>>>(A, B, C, M);
  cudaDeviceSynchronize();
}
