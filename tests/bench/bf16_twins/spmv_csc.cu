// BF16 twin of spmv_csc: the products are bucketed by row (count, scan, scatter: a CSC -> CSR conversion on the device) and each row summed by one warp with a shuffle tree in FP32, instead of atomic adds into y in arrival order.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;
constexpr int kScanThreads = 1024;
constexpr int kWarp = 32;

__global__ void twin_csc_count(int columns, const int* row_indices, const int* col_offsets, int* counts) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col < columns)
    for (int j = col_offsets[col]; j < col_offsets[col + 1]; ++j) atomicAdd(&counts[row_indices[j]], 1);
}

// One block: offsets[r] = counts[0] + ... + counts[r - 1] for r in [0, n]; each thread scans a contiguous chunk.
__global__ void twin_csc_scan(const int* counts, int* offsets, int n) {
  __shared__ int partial[kScanThreads];
  int t = threadIdx.x;
  long long chunk = ((long long)n + kScanThreads - 1) / kScanThreads;
  long long lo = t * chunk, hi = lo + chunk < n ? lo + chunk : n;
  int own = 0;
  for (long long r = lo; r < hi; ++r) own += counts[r];
  partial[t] = own;
  __syncthreads();
  for (int offset = 1; offset < kScanThreads; offset *= 2) {  // Hillis-Steele inclusive scan of the chunk totals
    int add = t >= offset ? partial[t - offset] : 0;
    __syncthreads();
    partial[t] += add;
    __syncthreads();
  }
  int run = partial[t] - own;
  for (long long r = lo; r < hi; ++r) {
    offsets[r] = run;
    run += counts[r];
  }
  if (t == kScanThreads - 1) offsets[n] = partial[t];
}

__global__ void twin_csc_scatter(int columns, const __nv_bfloat16* values, const int* row_indices, const int* col_offsets,
                                 const __nv_bfloat16* x, int* cursor, float* products) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col < columns) {
    float xc = __bfloat162float(x[col]);
    for (int j = col_offsets[col]; j < col_offsets[col + 1]; ++j) {
      int pos = atomicAdd(&cursor[row_indices[j]], 1);
      products[pos] = __bfloat162float(values[j]) * xc;
    }
  }
}

__global__ void twin_csc_row_sum(int rows, const int* offsets, const float* products, __nv_bfloat16* y) {
  long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / kWarp;  // uniform within a warp
  int lane = threadIdx.x % kWarp;
  if (row >= rows) return;
  float sum = 0.0f;  // an empty row reads 0
  for (int p = offsets[row] + lane; p < offsets[row + 1]; p += kWarp) sum += products[p];
  for (int offset = kWarp / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) y[row] = __float2bfloat16(sum);
}
}  // namespace

extern "C" void spmv_csc_bf16_optimized(int rows, int columns, const __nv_bfloat16* values, const int* row_indices,
                                        const int* col_offsets, const __nv_bfloat16* x, __nv_bfloat16* y) {
  if (rows <= 0) return;
  if (columns < 0) columns = 0;
  int nnz = 0;  // entries [0, col_offsets[columns]): the products buffer holds at most that many
  if (columns > 0 && cudaMemcpy(&nnz, col_offsets + columns, sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess) return;
  if (nnz < 0) nnz = 0;
  int *counts = nullptr, *offsets = nullptr;
  float* products = nullptr;
  // A failed call leaves its error for the harness's cudaGetLastError(), y unwritten.
  bool good = cudaMalloc(&counts, (size_t)rows * sizeof(int)) == cudaSuccess &&
              cudaMalloc(&offsets, ((size_t)rows + 1) * sizeof(int)) == cudaSuccess &&
              cudaMalloc(&products, ((size_t)nnz + 1) * sizeof(float)) == cudaSuccess &&
              cudaMemset(counts, 0, (size_t)rows * sizeof(int)) == cudaSuccess;
  if (good) {
    unsigned column_blocks = (unsigned)(((long long)columns + kThreads - 1) / kThreads);
    if (columns > 0) twin_csc_count<<<column_blocks, kThreads>>>(columns, row_indices, col_offsets, counts);
    twin_csc_scan<<<1, kScanThreads>>>(counts, offsets, rows);
    // counts becomes each row's write cursor, starting at its offset
    good = cudaMemcpy(counts, offsets, (size_t)rows * sizeof(int), cudaMemcpyDeviceToDevice) == cudaSuccess;
    if (good) {
      if (columns > 0)
        twin_csc_scatter<<<column_blocks, kThreads>>>(columns, values, row_indices, col_offsets, x, counts, products);
      long long threads = (long long)rows * kWarp;
      twin_csc_row_sum<<<(unsigned)((threads + kThreads - 1) / kThreads), kThreads>>>(rows, offsets, products, y);
    }
  }
  cudaDeviceSynchronize();
  if (counts) cudaFree(counts);
  if (offsets) cudaFree(offsets);
  if (products) cudaFree(products);
}
