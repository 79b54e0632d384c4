// MSKernelBench vector_add baseline (ours): one block of 1024 threads, block-stride loop, as the
// published baseline does. FP32 and BF16 entry points.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void vector_add_kernel(const float* A, const float* B, float* C, int N) {
  for (int i = threadIdx.x; i < N; i += blockDim.x) C[i] = A[i] + B[i];
}

__global__ void vector_add_bf16_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int N) {
  for (int i = threadIdx.x; i < N; i += blockDim.x)
    C[i] = __float2bfloat16(__bfloat162float(A[i]) + __bfloat162float(B[i]));
}

extern "C" void vector_add(const float* A, const float* B, float* C, int N) {
  vector_add_kernel<<<1, 1024>>>(A, B, C, N);
  cudaDeviceSynchronize();
}

extern "C" void vector_add_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int N) {
  vector_add_bf16_kernel<<<1, 1024>>>(A, B, C, N);
  cudaDeviceSynchronize();
}
