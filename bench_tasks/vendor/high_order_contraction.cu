// high_order_contraction: cuBLAS. C[a,b,c] = sum_x sum_y A[a,x,b,y] B[x,c,y]. For each x, the slices
// A[a,x] (b_dim x y_dim, row-major) times B[x]^T (y_dim x c_dim) are one strided-batched GEMM over a
// (cublasGemmStridedBatchedEx, CUBLAS_COMPUTE_32F); the x_dim GEMMs accumulate with beta = 1. The x and
// y sums cannot be one GEMM: in A's layout x and b interleave, so (x, y) is not a contiguous K dimension.
// FP32 accumulates in C itself. BF16 accumulates in an FP32 workspace (GEMM with bf16 A, B and an FP32
// C), then one CUB DeviceTransform rounds it to bf16 into C. Timed: x_dim GEMM calls (+ the conversion).
#include <cub/device/device_transform.cuh>

#include "cublas_util.cuh"

namespace {

struct ToBf16 {
  __device__ __nv_bfloat16 operator()(float v) const { return __float2bfloat16(v); }
};

template <typename T>
void contract(const T* A, const T* B, void* C, cudaDataType_t ctype, int a_dim, int b_dim, int c_dim, int x_dim, int y_dim) {
  const float one = 1.0f, zero = 0.0f;
  for (int x = 0; x < x_dim; ++x) {
    // Column-major view: C[a] (c_dim x b_dim, ld c_dim) = B[x] (c_dim x y_dim: row-major c x y read transposed)
    //                                                    * A[a,x] (y_dim x b_dim: row-major b x y as is).
    CMV_CUBLAS(cublasGemmStridedBatchedEx(
        cmv::blas(), CUBLAS_OP_T, CUBLAS_OP_N, c_dim, b_dim, y_dim, &one,
        B + (size_t)x * c_dim * y_dim, cmv::data_type<T>(), y_dim, 0LL,
        A + (size_t)x * b_dim * y_dim, cmv::data_type<T>(), y_dim, (long long)x_dim * b_dim * y_dim,
        x == 0 ? &zero : &one, C, ctype, c_dim, (long long)b_dim * c_dim, a_dim, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
}

}  // namespace

extern "C" void high_order_contraction_vendor(const float* A, const float* B, float* C, int a_dim, int b_dim, int c_dim, int x_dim,
                                              int y_dim) {
  if (a_dim <= 0 || b_dim <= 0 || c_dim <= 0) return;
  if (x_dim <= 0 || y_dim <= 0) {
    CMV_CUDA(cudaMemsetAsync(C, 0, (size_t)a_dim * b_dim * c_dim * sizeof(float), 0));
    return;
  }
  contract<float>(A, B, C, CUDA_R_32F, a_dim, b_dim, c_dim, x_dim, y_dim);
}

extern "C" void high_order_contraction_bf16_vendor(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int a_dim,
                                                   int b_dim, int c_dim, int x_dim, int y_dim) {
  if (a_dim <= 0 || b_dim <= 0 || c_dim <= 0) return;
  const size_t count = (size_t)a_dim * b_dim * c_dim;
  static cmv::Workspace acc;
  float* sum = acc.as<float>(count);
  if (x_dim <= 0 || y_dim <= 0) CMV_CUDA(cudaMemsetAsync(sum, 0, count * sizeof(float), 0));
  else contract<__nv_bfloat16>(A, B, sum, CUDA_R_32F, a_dim, b_dim, c_dim, x_dim, y_dim);
  CMV_CUB(cub::DeviceTransform::Transform(sum, C, (long long)count, ToBf16{}, 0));
}
