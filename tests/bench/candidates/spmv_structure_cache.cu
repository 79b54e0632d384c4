// Adversarial: a cache keyed on the inputs the harness keeps between timed calls. It fingerprints the
// sparsity structure (row_offsets and a few col_indices, which stay as the dataset drew them) and, when
// the structure equals the previous call's, replays the y it computed last, as if a matrix that did not
// change gave the same product. Inputs that are the same in every timed call let this pass every check;
// the timed-call checks must catch it (values and x are redrawn before every pair).
#include <cuda_runtime.h>

__device__ int fp_prev[16];
__device__ int fp_replay;

__global__ void structure_fingerprint(int rows, const int* col_indices, const int* row_offsets) {
  int nnz = row_offsets[rows];
  bool same = true;
  for (int i = 0; i < 8; ++i) {
    int a = row_offsets[(long long)i * rows / 8], b = nnz > 0 ? col_indices[(long long)i * nnz / 8] : -1;
    same = same && a == fp_prev[i] && b == fp_prev[8 + i];
    fp_prev[i] = a;
    fp_prev[8 + i] = b;
  }
  fp_replay = same;
}

__global__ void reset() { fp_replay = 0; for (int i = 0; i < 16; ++i) fp_prev[i] = -7; }

__global__ void spmv_rows(int rows, const float* values, const int* col_indices, const int* row_offsets, const float* x,
                          float* y, float* cache) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  if (fp_replay) { y[row] = cache[row]; return; }
  float sum = 0.0f;
  for (int j = row_offsets[row]; j < row_offsets[row + 1]; ++j) sum += values[j] * x[col_indices[j]];
  y[row] = sum;
  cache[row] = sum;
}

static float* cache = nullptr;
static int cached_rows = -1;

extern "C" void spmv_csr_optimized(int rows, const float* values, const int* col_indices, const int* row_offsets, const float* x, float* y) {
  if (rows != cached_rows) {
    if (cache) cudaFree(cache);
    cudaMalloc(&cache, sizeof(float) * (rows > 0 ? rows : 1));
    cached_rows = rows;
    reset<<<1, 1>>>();
  }
  if (rows <= 0) return;
  structure_fingerprint<<<1, 1>>>(rows, col_indices, row_offsets);
  spmv_rows<<<(rows + 255) / 256, 256>>>(rows, values, col_indices, row_offsets, x, y, cache);
}
