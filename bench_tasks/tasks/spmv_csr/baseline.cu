// MSKernelBench spmv_csr baseline (ours), doing what the published baseline does: one thread per row
// (row = blockIdx.x * 32 + threadIdx.x), summing its entries sequentially in CSR order in FP32, but
// launched with (32, 32) blocks on ceil(rows / 32) blocks, so all 32 threadIdx.y threads of a column
// compute the SAME row: 32x redundant work. The redundant stores are benign: every copy runs the same
// instructions on the same data and stores the same value. BF16: values and x converted to float, FP32
// accumulation, one rounding at the store.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void spmv_csr_kernel(int rows, const float* values, const int* col_indices, const int* row_offsets,
                                const float* x, float* y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;  // threadIdx.y is not used: the published quirk
  if (row < rows) {
    float sum = 0.0f;
    for (int j = row_offsets[row]; j < row_offsets[row + 1]; ++j) sum += values[j] * x[col_indices[j]];
    y[row] = sum;
  }
}

__global__ void spmv_csr_bf16_kernel(int rows, const __nv_bfloat16* values, const int* col_indices,
                                     const int* row_offsets, const __nv_bfloat16* x, __nv_bfloat16* y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;  // threadIdx.y is not used: the published quirk
  if (row < rows) {
    float sum = 0.0f;
    for (int j = row_offsets[row]; j < row_offsets[row + 1]; ++j)
      sum += __bfloat162float(values[j]) * __bfloat162float(x[col_indices[j]]);
    y[row] = __float2bfloat16(sum);
  }
}

extern "C" void spmv_csr(int rows, const float* values, const int* col_indices, const int* row_offsets, const float* x, float* y) {
  dim3 block(32, 32);
  dim3 grid((rows + 31) / 32);
  if (rows > 0) spmv_csr_kernel<<<grid, block>>>(rows, values, col_indices, row_offsets, x, y);
  cudaDeviceSynchronize();
}

extern "C" void spmv_csr_bf16(int rows, const __nv_bfloat16* values, const int* col_indices, const int* row_offsets, const __nv_bfloat16* x, __nv_bfloat16* y) {
  dim3 block(32, 32);
  dim3 grid((rows + 31) / 32);
  if (rows > 0) spmv_csr_bf16_kernel<<<grid, block>>>(rows, values, col_indices, row_offsets, x, y);
  cudaDeviceSynchronize();
}
