// BF16 twin of spmv_csr: one warp per row, lane l summing entries l, l+32, ... in FP32 and the 32 partial sums combined by a warp-shuffle tree (the baseline sums each row sequentially in CSR order).
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;
constexpr int kWarp = 32;

__global__ void twin_spmv_csr_warp(int rows, const __nv_bfloat16* values, const int* col_indices, const int* row_offsets,
                                   const __nv_bfloat16* x, __nv_bfloat16* y) {
  long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / kWarp;  // uniform within a warp
  int lane = threadIdx.x % kWarp;
  if (row >= rows) return;
  int begin = row_offsets[row], end = row_offsets[row + 1];
  float sum = 0.0f;
  for (int j = begin + lane; j < end; j += kWarp) sum += __bfloat162float(values[j]) * __bfloat162float(x[col_indices[j]]);
  for (int offset = kWarp / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) y[row] = __float2bfloat16(sum);
}
}  // namespace

extern "C" void spmv_csr_bf16_optimized(int rows, const __nv_bfloat16* values, const int* col_indices, const int* row_offsets,
                                        const __nv_bfloat16* x, __nv_bfloat16* y) {
  if (rows <= 0) return;
  long long threads = (long long)rows * kWarp;
  twin_spmv_csr_warp<<<(unsigned)((threads + kThreads - 1) / kThreads), kThreads>>>(rows, values, col_indices, row_offsets, x, y);
  cudaDeviceSynchronize();
}
