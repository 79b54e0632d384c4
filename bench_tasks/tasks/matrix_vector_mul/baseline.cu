// MSKernelBench matrix_vector_mul baseline (ours), doing what the published baseline does: one thread
// per row, 256 threads per block, each thread walking its row of A (row-major M x N) serially in
// increasing column order with an FP32 accumulator: y[r] = sum_c A[r, c] * x[c]. A warp reads 32
// different rows at once (uncoalesced). BF16: inputs converted to float, FP32 accumulation, one
// rounding at the store.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void matrix_vector_mul_kernel(const float* A, const float* x, float* y, int M, int N) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M) {
    const float* a = A + (size_t)row * N;
    float sum = 0.0f;
    for (int c = 0; c < N; ++c) sum += a[c] * x[c];
    y[row] = sum;
  }
}

__global__ void matrix_vector_mul_bf16_kernel(const __nv_bfloat16* A, const __nv_bfloat16* x, __nv_bfloat16* y, int M, int N) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M) {
    const __nv_bfloat16* a = A + (size_t)row * N;
    float sum = 0.0f;
    for (int c = 0; c < N; ++c) sum += __bfloat162float(a[c]) * __bfloat162float(x[c]);
    y[row] = __float2bfloat16(sum);
  }
}

extern "C" void matrix_vector_mul(const float* A, const float* x, float* y, int M, int N) {
  int threads = 256;
  int blocks = (M + threads - 1) / threads;
  if (M > 0) matrix_vector_mul_kernel<<<blocks, threads>>>(A, x, y, M, N);
  cudaDeviceSynchronize();
}

extern "C" void matrix_vector_mul_bf16(const __nv_bfloat16* A, const __nv_bfloat16* x, __nv_bfloat16* y, int M, int N) {
  int threads = 256;
  int blocks = (M + threads - 1) / threads;
  if (M > 0) matrix_vector_mul_bf16_kernel<<<blocks, threads>>>(A, x, y, M, N);
  cudaDeviceSynchronize();
}
