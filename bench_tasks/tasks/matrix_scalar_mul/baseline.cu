// MSKernelBench matrix_scalar_mul baseline (ours), doing what the published baseline does: one thread
// per element on 16x16 blocks (x -> column, y -> row), B = A * scalar, then a device-wide synchronise.
// BF16: A and the bf16 scalar converted to float, the product rounded once at the store.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void matrix_scalar_mul_kernel(const float* A, float* B, float scalar, int M, int N) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) B[(size_t)row * N + col] = A[(size_t)row * N + col] * scalar;
}

__global__ void matrix_scalar_mul_bf16_kernel(const __nv_bfloat16* A, __nv_bfloat16* B, __nv_bfloat16 scalar, int M, int N) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    size_t idx = (size_t)row * N + col;
    B[idx] = __float2bfloat16(__bfloat162float(A[idx]) * __bfloat162float(scalar));
  }
}

extern "C" void matrix_scalar_mul(const float* A, float* B, float scalar, int M, int N) {
  dim3 block(16, 16);
  dim3 grid((N + 15) / 16, (M + 15) / 16);  // grid.y <= 65535: M <= 1048560
  if (M > 0 && N > 0) matrix_scalar_mul_kernel<<<grid, block>>>(A, B, scalar, M, N);
  cudaDeviceSynchronize();
}

extern "C" void matrix_scalar_mul_bf16(const __nv_bfloat16* A, __nv_bfloat16* B, __nv_bfloat16 scalar, int M, int N) {
  dim3 block(16, 16);
  dim3 grid((N + 15) / 16, (M + 15) / 16);
  if (M > 0 && N > 0) matrix_scalar_mul_bf16_kernel<<<grid, block>>>(A, B, scalar, M, N);
  cudaDeviceSynchronize();
}
