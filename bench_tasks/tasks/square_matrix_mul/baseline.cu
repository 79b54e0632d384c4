// MSKernelBench square_matrix_mul baseline (ours), doing what the published baseline does: naive GEMM
// for M x M row-major matrices, one thread per output element on 16x16 blocks (x -> column,
// y -> row), no shared memory, FP32 accumulation in increasing k. BF16: inputs converted to float,
// FP32 accumulation, one rounding at the store. Index products are 64-bit.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void square_matrix_mul_kernel(const float* A, const float* B, float* C, int M) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < M) {
    float sum = 0.0f;
    for (int k = 0; k < M; ++k) sum += A[(size_t)row * M + k] * B[(size_t)k * M + col];
    C[(size_t)row * M + col] = sum;
  }
}

__global__ void square_matrix_mul_bf16_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < M) {
    float sum = 0.0f;
    for (int k = 0; k < M; ++k)
      sum += __bfloat162float(A[(size_t)row * M + k]) * __bfloat162float(B[(size_t)k * M + col]);
    C[(size_t)row * M + col] = __float2bfloat16(sum);
  }
}

extern "C" void square_matrix_mul(float* A, float* B, float* C, int M) {
  dim3 block(16, 16);
  dim3 grid((M + 15) / 16, (M + 15) / 16);
  if (M > 0) square_matrix_mul_kernel<<<grid, block>>>(A, B, C, M);
  cudaDeviceSynchronize();
}

extern "C" void square_matrix_mul_bf16(__nv_bfloat16* A, __nv_bfloat16* B, __nv_bfloat16* C, int M) {
  dim3 block(16, 16);
  dim3 grid((M + 15) / 16, (M + 15) / 16);
  if (M > 0) square_matrix_mul_bf16_kernel<<<grid, block>>>(A, B, C, M);
  cudaDeviceSynchronize();
}
