// Class 6: a marked file whose includes, #define, typedef and helper sit above the START marker.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#define ROWS_PER_BLOCK 256
typedef const float* in_ptr;
__device__ __forceinline__ float twice_half(float v) { return 0.5f * (v + v); }
static bool float_equals(float a, float b, float tol) { return a - b < tol && b - a < tol; }  // the harness's helper

// ==== OPTIMIZED KERNEL START ====
__global__ void vadd(in_ptr A, in_ptr B, float* C, int N) {
  int i = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x;
  if (i < N) C[i] = twice_half(A[i]) + B[i];
}
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  vadd<<<(N + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK, ROWS_PER_BLOCK>>>(A, B, C, N);
  cudaDeviceSynchronize();
}
// ==== OPTIMIZED KERNEL END ====

// The published file's copy of the baseline and its test harness follow (not compiled).
__global__ void vector_add_kernel(const float* A, const float* B, float* C, int N) {}
extern "C" void vector_add_origin(const float* A, const float* B, float* C, int N) {}
int main() { return float_equals(1.0f, 1.0f, 0.1f) ? 0 : 1; }
