// BF16 twin of prefix_sum: reduce-then-scan (tile sums, a scan of the tile sums, then a warp-shuffle block scan per
// 1024-element tile) instead of each output's sequential sum from index 0.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kTile = 1024;  // elements per tile = threads per block
constexpr int kWarps = kTile / 32;

// Inclusive scan of v over the block (kTile threads, warp shuffles then the warp totals); *total gets the block's sum.
__device__ __forceinline__ float block_inclusive_scan(float v, float* total) {
  __shared__ float warp_sums[kWarps];
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int off = 1; off < 32; off <<= 1) {
    float u = __shfl_up_sync(0xffffffffu, v, off);
    if (lane >= off) v += u;
  }
  if (lane == 31) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float w = warp_sums[lane];  // kWarps == 32
    for (int off = 1; off < 32; off <<= 1) {
      float u = __shfl_up_sync(0xffffffffu, w, off);
      if (lane >= off) w += u;
    }
    warp_sums[lane] = w;
  }
  __syncthreads();
  if (warp > 0) v += warp_sums[warp - 1];
  *total = warp_sums[kWarps - 1];
  __syncthreads();  // warp_sums is reused by the next call
  return v;
}
}  // namespace

__global__ void scan_twin_tile_sums(const __nv_bfloat16* __restrict__ input, float* __restrict__ tile_sums, int N) {
  int i = blockIdx.x * kTile + threadIdx.x;
  float total;
  block_inclusive_scan(i < N ? __bfloat162float(input[i]) : 0.0f, &total);
  if (threadIdx.x == 0) tile_sums[blockIdx.x] = total;
}

// One block: tile_sums becomes its exclusive scan, kTile values at a time with a running carry.
__global__ void scan_twin_tile_offsets(float* tile_sums, int tiles) {
  float carry = 0.0f;
  for (int base = 0; base < tiles; base += kTile) {
    int i = base + threadIdx.x;
    float v = i < tiles ? tile_sums[i] : 0.0f;
    float total;
    float incl = block_inclusive_scan(v, &total);
    if (i < tiles) tile_sums[i] = carry + (incl - v);
    carry += total;
  }
}

__global__ void scan_twin_tiles(__nv_bfloat16* __restrict__ output, const __nv_bfloat16* __restrict__ input, const float* __restrict__ offsets,
                                int N) {
  int i = blockIdx.x * kTile + threadIdx.x;
  float total;
  float incl = block_inclusive_scan(i < N ? __bfloat162float(input[i]) : 0.0f, &total);
  if (i < N) output[i] = __float2bfloat16(offsets[blockIdx.x] + incl);
}

extern "C" void prefix_sum_bf16_optimized(__nv_bfloat16* output, const __nv_bfloat16* input, const int N) {
  if (N <= 0) return;
  int tiles = (N + kTile - 1) / kTile;
  float* offsets = nullptr;
  if (cudaMalloc(&offsets, tiles * sizeof(float)) != cudaSuccess) return;
  scan_twin_tile_sums<<<tiles, kTile>>>(input, offsets, N);
  scan_twin_tile_offsets<<<1, kTile>>>(offsets, tiles);
  scan_twin_tiles<<<tiles, kTile>>>(output, input, offsets, N);
  cudaDeviceSynchronize();
  cudaFree(offsets);
}
