// BF16 twin of MSE_loss: each block sums its grid-stride share in FP32, reduces it by warp shuffles and a
// shared-memory tree (the baseline: one atomicAdd per thread), and one atomicAdd per block; then *loss /= N.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

static __device__ __forceinline__ float mse_twin_block_sum(float v) {
  __shared__ float warp_sums[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = threadIdx.x < (blockDim.x >> 5) ? warp_sums[lane] : 0.0f;
  if (warp == 0)
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

static __global__ void mse_twin_sum(float* loss, const __nv_bfloat16* X, const __nv_bfloat16* Y, int N) {
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x) {
    float d = __bfloat162float(X[i]) - __bfloat162float(Y[i]);
    s = fmaf(d, d, s);
  }
  s = mse_twin_block_sum(s);
  if (threadIdx.x == 0) atomicAdd(loss, s);
}

static __global__ void mse_twin_divide(float* loss, int N) { *loss /= (float)N; }

extern "C" void MSE_loss_bf16_optimized(float* loss, const __nv_bfloat16* X, const __nv_bfloat16* Y, const int N) {
  if (N <= 0) return;
  const int threads = 512;
  int blocks = (N + threads - 1) / threads;
  if (blocks > 264) blocks = 264;
  mse_twin_sum<<<blocks, threads>>>(loss, X, Y, N);
  mse_twin_divide<<<1, 1>>>(loss, N);
}
