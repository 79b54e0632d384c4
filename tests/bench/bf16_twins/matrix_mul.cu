// BF16 twin of matrix_mul: shared-memory tiles (16x16 outputs, 32-wide k slabs) with two FP32 partial sums
// per output, even and odd k, added at the end (the baseline: one sequential chain in increasing k from
// global memory); one rounding at the store.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

constexpr int kMmTwinTile = 16, kMmTwinK = 32;

static __global__ void mm_twin(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K) {
  __shared__ float As[kMmTwinTile][kMmTwinK + 1];
  __shared__ float Bs[kMmTwinK][kMmTwinTile + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * kMmTwinTile + ty, col = blockIdx.x * kMmTwinTile + tx;
  float even = 0.0f, odd = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kMmTwinK) {
    for (int kk = tx; kk < kMmTwinK; kk += kMmTwinTile) {
      int k = k0 + kk;
      As[ty][kk] = row < M && k < K ? __bfloat162float(A[(size_t)row * K + k]) : 0.0f;
    }
    for (int kk = ty; kk < kMmTwinK; kk += kMmTwinTile) {
      int k = k0 + kk;
      Bs[kk][tx] = col < N && k < K ? __bfloat162float(B[(size_t)k * N + col]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kMmTwinK; kk += 2) {
      even = fmaf(As[ty][kk], Bs[kk][tx], even);
      odd = fmaf(As[ty][kk + 1], Bs[kk + 1][tx], odd);
    }
    __syncthreads();
  }
  if (row < M && col < N) C[(size_t)row * N + col] = __float2bfloat16(even + odd);
}

extern "C" void matrix_mul_bf16_optimized(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K) {
  if (M <= 0 || N <= 0) return;
  dim3 block(kMmTwinTile, kMmTwinTile);
  dim3 grid((N + kMmTwinTile - 1) / kMmTwinTile, (M + kMmTwinTile - 1) / kMmTwinTile);
  mm_twin<<<grid, block>>>(A, B, C, M, N, K);
}
