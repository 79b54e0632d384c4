// BF16 twin of spmv_ell: one warp per row, lane l summing slots l, l+32, ... (coalesced) in FP32 and the partial sums combined by a warp-shuffle tree (the baseline walks each row's slots sequentially).
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;
constexpr int kWarp = 32;

__global__ void twin_spmv_ell_warp(int rows, int max_nnz_per_row, const __nv_bfloat16* values, const int* col_ids,
                                   const __nv_bfloat16* x, __nv_bfloat16* y) {
  long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / kWarp;  // uniform within a warp
  int lane = threadIdx.x % kWarp;
  if (row >= rows) return;
  size_t base = (size_t)row * max_nnz_per_row;
  float sum = 0.0f;
  for (int e = lane; e < max_nnz_per_row; e += kWarp) {
    int col = col_ids[base + e];
    if (col != -1) sum += __bfloat162float(values[base + e]) * __bfloat162float(x[col]);
  }
  for (int offset = kWarp / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) y[row] = __float2bfloat16(sum);
}
}  // namespace

extern "C" void spmv_ell_bf16_optimized(int rows, int max_nnz_per_row, const __nv_bfloat16* values, const int* col_ids,
                                        const __nv_bfloat16* x, __nv_bfloat16* y) {
  if (rows <= 0) return;
  long long threads = (long long)rows * kWarp;
  twin_spmv_ell_warp<<<(unsigned)((threads + kThreads - 1) / kThreads), kThreads>>>(rows, max_nnz_per_row, values, col_ids, x, y);
  cudaDeviceSynchronize();
}
