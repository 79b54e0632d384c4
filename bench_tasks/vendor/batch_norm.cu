// batch_norm: cuDNN (legacy API) cudnnBatchNormalizationForwardTraining, CUDNN_BATCHNORM_SPATIAL on an
// N x C x 1 x 1 tensor: per feature c, the batch mean and the biased variance over the N samples, then
// gamma * (x - mean) / sqrt(var + eps) + beta, which is the task's definition. No running averages or saved
// statistics are requested (null pointers). cuDNN's scale/bias tensor is FP32 for BF16 data, so BF16 first
// converts gamma and beta to FP32 with a CUB DeviceTransform (inside the timed call). cuDNN refuses
// eps < CUDNN_BN_MIN_EPSILON (1e-5 as a double); the task's eps is 1e-5f = 9.99999974e-6, so it is raised
// to 1e-5 (a relative change of 3e-8 in the variance term). Descriptors are kept per shape.
#include <cub/device/device_transform.cuh>

#include "cudnn_util.cuh"

namespace {

struct ToFloat {
  __device__ float operator()(__nv_bfloat16 v) const { return __bfloat162float(v); }
};

template <typename T>
void batch_norm(T* output, const T* input, const float* gamma, const float* beta, float epsilon, int N, int C) {
  if (N <= 0 || C <= 0) return;
  static int n = -1, c = -1;
  static cudnnTensorDescriptor_t x = nullptr, params = nullptr;
  if (N != n || C != c) {
    if (x) CMV_CUDNN(cudnnDestroyTensorDescriptor(x));
    if (params) CMV_CUDNN(cudnnDestroyTensorDescriptor(params));
    x = cmv::tensor4d(cmv::dnn_type<T>(), N, C, 1, 1);
    CMV_CUDNN(cudnnCreateTensorDescriptor(&params));
    CMV_CUDNN(cudnnDeriveBNTensorDescriptor(params, x, CUDNN_BATCHNORM_SPATIAL));
    n = N, c = C;
  }
  const double eps = (double)epsilon < CUDNN_BN_MIN_EPSILON ? CUDNN_BN_MIN_EPSILON : (double)epsilon;
  const float one = 1.0f, zero = 0.0f;
  CMV_CUDNN(cudnnBatchNormalizationForwardTraining(cmv::dnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, x, input, x, output, params, gamma,
                                                   beta, 0.0, nullptr, nullptr, eps, nullptr, nullptr));
}

}  // namespace

extern "C" void batch_norm_vendor(float* output, const float* input, const float* gamma, const float* beta, const float epsilon, const int N,
                                  const int C) {
  batch_norm<float>(output, input, gamma, beta, epsilon, N, C);
}

extern "C" void batch_norm_bf16_vendor(__nv_bfloat16* output, const __nv_bfloat16* input, const __nv_bfloat16* gamma,
                                       const __nv_bfloat16* beta, const float epsilon, const int N, const int C) {
  if (N <= 0 || C <= 0) return;
  static cmv::Workspace params;
  float* g = params.as<float>(2 * (size_t)C);
  float* b = g + C;
  CMV_CUB(cub::DeviceTransform::Transform(gamma, g, C, ToFloat{}, 0));
  CMV_CUB(cub::DeviceTransform::Transform(beta, b, C, ToFloat{}, 0));
  batch_norm<__nv_bfloat16>(output, input, g, b, epsilon, N, C);
}
