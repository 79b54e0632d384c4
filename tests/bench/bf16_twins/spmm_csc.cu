// BF16 twin of spmm_csc: CSC transposed to row buckets on the device (count, scan, scatter), then one block per row
// summing its entries with four FP32 accumulators (baseline: atomicAdd per product in column order).
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;
constexpr int kScanThreads = 1024;
constexpr int kMaxThreads = 128;  // gather block: a multiple of 4, chunks keep the entry index mod 4

int threads_for(int K) {
  int t = (K + 31) / 32 * 32;
  return t < kMaxThreads ? t : kMaxThreads;
}
}  // namespace

// One thread per column: count each of its entries in its row's bucket.
__global__ void csc_twin_count(int columns, const int* __restrict__ row_indices, const int* __restrict__ col_offsets, int* __restrict__ counts) {
  for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < columns; c += gridDim.x * blockDim.x)
    for (int j = col_offsets[c]; j < col_offsets[c + 1]; ++j) atomicAdd(&counts[row_indices[j]], 1);
}

// One block: a[0..n) becomes its exclusive prefix sum (each thread scans a contiguous chunk after a scan of the chunk totals).
__global__ void csc_twin_exclusive_scan(int* a, int n) {
  __shared__ int sums[kScanThreads];
  int chunk = (n + kScanThreads - 1) / kScanThreads;
  long long begin = (long long)threadIdx.x * chunk;
  long long end = begin + chunk < n ? begin + chunk : n;
  int s = 0;
  for (long long i = begin; i < end; ++i) s += a[i];
  sums[threadIdx.x] = s;
  __syncthreads();
  for (int off = 1; off < kScanThreads; off <<= 1) {
    int v = threadIdx.x >= off ? sums[threadIdx.x - off] : 0;
    __syncthreads();
    sums[threadIdx.x] += v;
    __syncthreads();
  }
  int run = threadIdx.x > 0 ? sums[threadIdx.x - 1] : 0;
  for (long long i = begin; i < end; ++i) {
    int c = a[i];
    a[i] = run;
    run += c;
  }
}

// One thread per column: each entry j goes to the next free slot of its row, with its column.
__global__ void csc_twin_scatter(int columns, const int* __restrict__ row_indices, const int* __restrict__ col_offsets, int* __restrict__ cursor,
                                 int* __restrict__ entry, int* __restrict__ entry_col) {
  for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < columns; c += gridDim.x * blockDim.x)
    for (int j = col_offsets[c]; j < col_offsets[c + 1]; ++j) {
      int slot = atomicAdd(&cursor[row_indices[j]], 1);
      entry[slot] = j;
      entry_col[slot] = c;
    }
}

// grid.x = rows, grid.y covers K in blockDim.x-wide strips; row r's entries sit in slots offsets[r] .. offsets[r+1].
__global__ void csc_twin_gather(int K, const __nv_bfloat16* __restrict__ values, const int* __restrict__ offsets, const int* __restrict__ entry,
                                const int* __restrict__ entry_col, const __nv_bfloat16* __restrict__ X, __nv_bfloat16* __restrict__ Y) {
  __shared__ int s_col[kMaxThreads];
  __shared__ float s_val[kMaxThreads];
  int row = blockIdx.x;
  int k = blockIdx.y * blockDim.x + threadIdx.x;
  int start = offsets[row], end = offsets[row + 1];
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (int c0 = start; c0 < end; c0 += blockDim.x) {
    int n = end - c0 < (int)blockDim.x ? end - c0 : (int)blockDim.x;
    if ((int)threadIdx.x < n) {
      s_col[threadIdx.x] = entry_col[c0 + threadIdx.x];
      s_val[threadIdx.x] = __bfloat162float(values[entry[c0 + threadIdx.x]]);
    }
    __syncthreads();
    if (k < K) {
      int e = 0;
      for (; e + 4 <= n; e += 4) {
        a0 += s_val[e] * __bfloat162float(X[(size_t)s_col[e] * K + k]);
        a1 += s_val[e + 1] * __bfloat162float(X[(size_t)s_col[e + 1] * K + k]);
        a2 += s_val[e + 2] * __bfloat162float(X[(size_t)s_col[e + 2] * K + k]);
        a3 += s_val[e + 3] * __bfloat162float(X[(size_t)s_col[e + 3] * K + k]);
      }
      if (e < n) a0 += s_val[e] * __bfloat162float(X[(size_t)s_col[e] * K + k]);
      if (e + 1 < n) a1 += s_val[e + 1] * __bfloat162float(X[(size_t)s_col[e + 1] * K + k]);
      if (e + 2 < n) a2 += s_val[e + 2] * __bfloat162float(X[(size_t)s_col[e + 2] * K + k]);
    }
    __syncthreads();
  }
  if (k < K) Y[(size_t)row * K + k] = __float2bfloat16((a0 + a1) + (a2 + a3));
}

extern "C" void spmm_csc_bf16_optimized(int rows, int columns, int K, const __nv_bfloat16* values, const int* row_indices,
                                        const int* col_offsets, const __nv_bfloat16* X, __nv_bfloat16* Y) {
  if (rows <= 0 || K <= 0) return;
  int nnz = 0;  // the number of stored entries, col_offsets[columns], sizes the slot arrays
  if (columns > 0 && cudaMemcpy(&nnz, col_offsets + columns, sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess) return;
  // offsets[rows + 1], cursor[rows], entry[nnz], entry_col[nnz] in one allocation.
  int* scratch = nullptr;
  size_t ints = (size_t)rows + 1 + rows + 2 * (size_t)(nnz > 0 ? nnz : 0);
  if (cudaMalloc(&scratch, ints * sizeof(int)) != cudaSuccess) return;
  int* offsets = scratch;
  int* cursor = offsets + rows + 1;
  int* entry = cursor + rows;
  int* entry_col = entry + (nnz > 0 ? nnz : 0);
  cudaMemset(offsets, 0, ((size_t)rows + 1) * sizeof(int));
  int col_blocks = (columns + kThreads - 1) / kThreads;
  col_blocks = col_blocks < 4096 ? col_blocks : 4096;
  if (columns > 0) csc_twin_count<<<col_blocks, kThreads>>>(columns, row_indices, col_offsets, offsets);
  csc_twin_exclusive_scan<<<1, kScanThreads>>>(offsets, rows + 1);
  cudaMemcpy(cursor, offsets, (size_t)rows * sizeof(int), cudaMemcpyDeviceToDevice);
  if (columns > 0) csc_twin_scatter<<<col_blocks, kThreads>>>(columns, row_indices, col_offsets, cursor, entry, entry_col);
  int threads = threads_for(K);
  dim3 grid(rows, (K + threads - 1) / threads);
  csc_twin_gather<<<grid, threads>>>(K, values, offsets, entry, entry_col, X, Y);
  cudaDeviceSynchronize();
  cudaFree(scratch);
}
