// MSKernelBench matrix_power baseline (ours), doing what the published baseline does, per call:
// 3 cudaMallocs (A, the running result R, a temp T), A copied in, then P-1 naive GEMMs evaluated
// left to right as repeated right-multiplication by A: T = A*A, R = T; then T = R*A, R = T for
// k = 2 .. P-1 (each a device-to-device copy), R copied out to B, the buffers freed. A*A is always
// formed, so P <= 1 gives A^2 (the published quirk; the task's sizes have P >= 2).
// FP32 receives HOST pointers and BF16 DEVICE pointers: every copy uses cudaMemcpyDefault, which
// infers the direction from the pointer (unified addressing), so the same wrapper serves both. The
// final copy synchronises. GEMM: one thread per output on 16x16 blocks, no shared memory, FP32
// accumulation in increasing k; BF16 stores every product in bf16 (one rounding per product).
#include <cstdio>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
bool ok(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "matrix_power baseline: %s failed: %s\n", what, cudaGetErrorString(err));
  return false;
}

__device__ __forceinline__ float load(const float* p) { return *p; }
__device__ __forceinline__ float load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }

// C = X * Y for N x N row-major matrices: naive, one thread per output.
template <typename T>
__global__ void matrix_power_gemm_kernel(const T* X, const T* Y, T* C, int N) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < N && col < N) {
    float sum = 0.0f;
    for (int k = 0; k < N; ++k) sum += load(&X[(size_t)row * N + k]) * load(&Y[(size_t)k * N + col]);
    store(&C[(size_t)row * N + col], sum);
  }
}

template <typename T>
void matrix_power_impl(const T* A, T* B, int N, int P) {
  if (N <= 0) return;
  size_t bytes = (size_t)N * N * sizeof(T);
  T *dA = nullptr, *dR = nullptr, *dT = nullptr;
  dim3 block(16, 16);
  dim3 grid((N + 15) / 16, (N + 15) / 16);
  if (ok(cudaMalloc(&dA, bytes), "cudaMalloc A") && ok(cudaMalloc(&dR, bytes), "cudaMalloc R") &&
      ok(cudaMalloc(&dT, bytes), "cudaMalloc T") && ok(cudaMemcpy(dA, A, bytes, cudaMemcpyDefault), "copy A in")) {
    matrix_power_gemm_kernel<T><<<grid, block>>>(dA, dA, dT, N);
    bool good = ok(cudaMemcpy(dR, dT, bytes, cudaMemcpyDeviceToDevice), "copy A*A");
    for (int k = 2; good && k < P; ++k) {
      matrix_power_gemm_kernel<T><<<grid, block>>>(dR, dA, dT, N);
      good = ok(cudaMemcpy(dR, dT, bytes, cudaMemcpyDeviceToDevice), "copy R*A");
    }
    if (good) ok(cudaMemcpy(B, dR, bytes, cudaMemcpyDefault), "copy B out");
  }
  if (dA) ok(cudaFree(dA), "cudaFree A");
  if (dR) ok(cudaFree(dR), "cudaFree R");
  if (dT) ok(cudaFree(dT), "cudaFree T");
}
}  // namespace

extern "C" void matrix_power(const float* A, float* B, int N, int P) { matrix_power_impl<float>(A, B, N, P); }

extern "C" void matrix_power_bf16(const __nv_bfloat16* A, __nv_bfloat16* B, int N, int P) {
  matrix_power_impl<__nv_bfloat16>(A, B, N, P);
}
