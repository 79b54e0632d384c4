// BF16 twin of matrix_power: the same chain of products as the baseline (A*A, then R*A, each stored in
// bf16), but each product by shared-memory tiles with two FP32 partial sums per output, even and odd k,
// added at the end (the baseline: one sequential chain in increasing k); the last product written to B.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

constexpr int kMpTwinTile = 16, kMpTwinK = 32;

static __global__ void mp_twin_gemm(const __nv_bfloat16* X, const __nv_bfloat16* Y, __nv_bfloat16* Z, int N) {
  __shared__ float Xs[kMpTwinTile][kMpTwinK + 1];
  __shared__ float Ys[kMpTwinK][kMpTwinTile + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * kMpTwinTile + ty, col = blockIdx.x * kMpTwinTile + tx;
  float even = 0.0f, odd = 0.0f;
  for (int k0 = 0; k0 < N; k0 += kMpTwinK) {
    for (int kk = tx; kk < kMpTwinK; kk += kMpTwinTile) {
      int k = k0 + kk;
      Xs[ty][kk] = row < N && k < N ? __bfloat162float(X[(size_t)row * N + k]) : 0.0f;
    }
    for (int kk = ty; kk < kMpTwinK; kk += kMpTwinTile) {
      int k = k0 + kk;
      Ys[kk][tx] = col < N && k < N ? __bfloat162float(Y[(size_t)k * N + col]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kMpTwinK; kk += 2) {
      even = fmaf(Xs[ty][kk], Ys[kk][tx], even);
      odd = fmaf(Xs[ty][kk + 1], Ys[kk + 1][tx], odd);
    }
    __syncthreads();
  }
  if (row < N && col < N) Z[(size_t)row * N + col] = __float2bfloat16(even + odd);
}

extern "C" void matrix_power_bf16_optimized(const __nv_bfloat16* A, __nv_bfloat16* B, int N, int P) {
  if (N <= 0 || P < 2) return;
  dim3 block(kMpTwinTile, kMpTwinTile);
  dim3 grid((N + kMpTwinTile - 1) / kMpTwinTile, (N + kMpTwinTile - 1) / kMpTwinTile);
  __nv_bfloat16* tmp[2] = {nullptr, nullptr};
  size_t bytes = (size_t)N * N * sizeof(__nv_bfloat16);
  if (P > 2 && (cudaMalloc(&tmp[0], bytes) != cudaSuccess || cudaMalloc(&tmp[1], bytes) != cudaSuccess)) {
    cudaFree(tmp[0]);
    return;
  }
  const __nv_bfloat16* R = A;
  for (int k = 1; k < P; ++k) {  // R holds A^k; the product R*A is A^(k+1)
    __nv_bfloat16* out = k == P - 1 ? B : tmp[k & 1];
    mp_twin_gemm<<<grid, block>>>(R, A, out, N);
    R = out;
  }
  cudaFree(tmp[0]);
  cudaFree(tmp[1]);
}
