// dot_product: FP32 with cuBLAS cublasSdot (device pointer mode: the result is written on the device,
// no host round trip); BF16 with CUB DeviceReduce::TransformReduce over i of f(X[i]) * f(Y[i]) in FP32
// (cuBLAS's BF16 dot, cublasDotEx, returns a bf16 result: a rounding the FP32 `loss` need not take).
// `*loss += X . Y`: the harness zeroes `loss` before every call (role accumulate), and both write the
// sum into it, which is the same thing from zero. Timed: the one library call.
#include "cub_util.cuh"
#include "cublas_util.cuh"

namespace {

struct Product {
  const __nv_bfloat16* x;
  const __nv_bfloat16* y;
  __device__ float operator()(int i) const { return __bfloat162float(x[i]) * __bfloat162float(y[i]); }
};

}  // namespace

extern "C" void dot_product_vendor(float* loss, const float* X, const float* Y, const int N) {
  if (N <= 0) return;
  cublasHandle_t h = cmv::blas();
  CMV_CUBLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
  CMV_CUBLAS(cublasSdot(h, N, X, 1, Y, 1, loss));
  CMV_CUBLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
}

extern "C" void dot_product_bf16_vendor(float* loss, const __nv_bfloat16* X, const __nv_bfloat16* Y, const int N) {
  if (N <= 0) return;
  static cmv::Workspace temp;
  thrust::counting_iterator<int> index(0);
  cmv::cub_run(temp, [&](void* storage, size_t& bytes) {
    return cub::DeviceReduce::TransformReduce(storage, bytes, index, loss, N, cuda::std::plus<float>{}, Product{X, Y}, 0.0f, 0);
  });
}
