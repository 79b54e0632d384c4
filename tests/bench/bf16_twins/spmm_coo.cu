// BF16 twin of spmm_coo: COO bucketed by row on the device (count, scan, scatter), then one block per row summing its
// entries with four FP32 accumulators (baseline: atomicAdd per product).
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

int blocks_for(long long n) {
  long long b = (n + kThreads - 1) / kThreads;
  return (int)(b < 4096 ? (b > 0 ? b : 1) : 4096);
}
}  // namespace

__global__ void coo_twin_count(const int* __restrict__ row_indices, int nnz, int* __restrict__ counts) {
  for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < nnz; j += gridDim.x * blockDim.x) atomicAdd(&counts[row_indices[j]], 1);
}

// One block: a[0..n) becomes its exclusive prefix sum (each thread scans a contiguous chunk after a scan of the chunk totals).
__global__ void coo_twin_exclusive_scan(int* a, int n) {
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

__global__ void coo_twin_scatter(const int* __restrict__ row_indices, int nnz, int* __restrict__ cursor, int* __restrict__ order) {
  for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < nnz; j += gridDim.x * blockDim.x) order[atomicAdd(&cursor[row_indices[j]], 1)] = j;
}

// grid.x = rows, grid.y covers K in blockDim.x-wide strips; row r's entries are order[offsets[r] .. offsets[r+1]).
__global__ void coo_twin_gather(int K, const __nv_bfloat16* __restrict__ values, const int* __restrict__ col_indices,
                                const int* __restrict__ offsets, const int* __restrict__ order, const __nv_bfloat16* __restrict__ X,
                                __nv_bfloat16* __restrict__ Y) {
  __shared__ int s_col[kMaxThreads];
  __shared__ float s_val[kMaxThreads];
  int row = blockIdx.x;
  int k = blockIdx.y * blockDim.x + threadIdx.x;
  int start = offsets[row], end = offsets[row + 1];
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (int c0 = start; c0 < end; c0 += blockDim.x) {
    int n = end - c0 < (int)blockDim.x ? end - c0 : (int)blockDim.x;
    if ((int)threadIdx.x < n) {
      int j = order[c0 + threadIdx.x];
      s_col[threadIdx.x] = col_indices[j];
      s_val[threadIdx.x] = __bfloat162float(values[j]);
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

extern "C" void spmm_coo_bf16_optimized(int rows, int nnz, int K, const __nv_bfloat16* values, const int* row_indices,
                                        const int* col_indices, const __nv_bfloat16* X, __nv_bfloat16* Y) {
  if (rows <= 0 || K <= 0) return;
  int n_entries = nnz > 0 ? nnz : 0;
  // offsets[rows + 1], cursor[rows], order[nnz] in one allocation.
  int* scratch = nullptr;
  size_t ints = (size_t)rows + 1 + rows + n_entries;
  if (cudaMalloc(&scratch, ints * sizeof(int)) != cudaSuccess) return;
  int* offsets = scratch;
  int* cursor = offsets + rows + 1;
  int* order = cursor + rows;
  cudaMemset(offsets, 0, ((size_t)rows + 1) * sizeof(int));
  if (n_entries > 0) coo_twin_count<<<blocks_for(n_entries), kThreads>>>(row_indices, n_entries, offsets);
  coo_twin_exclusive_scan<<<1, kScanThreads>>>(offsets, rows + 1);
  cudaMemcpy(cursor, offsets, (size_t)rows * sizeof(int), cudaMemcpyDeviceToDevice);
  if (n_entries > 0) coo_twin_scatter<<<blocks_for(n_entries), kThreads>>>(row_indices, n_entries, cursor, order);
  int threads = threads_for(K);
  dim3 grid(rows, (K + threads - 1) / threads);
  coo_twin_gather<<<grid, threads>>>(K, values, col_indices, offsets, order, X, Y);
  cudaDeviceSynchronize();
  cudaFree(scratch);
}
