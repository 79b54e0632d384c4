// max_pooling_2d: cuDNN (legacy API) cudnnPoolingForward, CUDNN_POOLING_MAX, NCHW, square window,
// symmetric padding. cuDNN's max pooling takes the maximum over the window's positions inside the image
// (padded positions are not candidates), which is the task's -inf padding; the GPU test checks it on
// every padded paper size. The output size cuDNN derives is checked against the task's
// (H + 2p - k) / s + 1 before anything runs. Descriptors are kept per shape. Timed: the one call.
#include "cudnn_util.cuh"

namespace {

template <typename T>
void max_pool(const T* input, T* output, int N, int C, int H, int W, int k, int stride, int padding) {
  const int out_h = (H + 2 * padding - k) / stride + 1, out_w = (W + 2 * padding - k) / stride + 1;
  if (out_h <= 0 || out_w <= 0 || N <= 0 || C <= 0) return;
  static int key[7] = {-1, -1, -1, -1, -1, -1, -1};
  static cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  static cudnnPoolingDescriptor_t pool = nullptr;
  const int now[7] = {N, C, H, W, k, stride, padding};
  bool same = true;
  for (int i = 0; i < 7; ++i) same = same && key[i] == now[i];
  if (!same) {
    if (x) CMV_CUDNN(cudnnDestroyTensorDescriptor(x));
    if (y) CMV_CUDNN(cudnnDestroyTensorDescriptor(y));
    if (pool) CMV_CUDNN(cudnnDestroyPoolingDescriptor(pool));
    x = cmv::tensor4d(cmv::dnn_type<T>(), N, C, H, W);
    CMV_CUDNN(cudnnCreatePoolingDescriptor(&pool));
    CMV_CUDNN(cudnnSetPooling2dDescriptor(pool, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, k, k, padding, padding, stride, stride));
    int n = 0, c = 0, h = 0, w = 0;
    CMV_CUDNN(cudnnGetPooling2dForwardOutputDim(pool, x, &n, &c, &h, &w));
    if (n != N || c != C || h != out_h || w != out_w)
      cmv::fail("cudnn", 0, "cuDNN's pooling output shape differs from the task's (H + 2p - k) / s + 1", __LINE__);
    y = cmv::tensor4d(cmv::dnn_type<T>(), N, C, out_h, out_w);
    for (int i = 0; i < 7; ++i) key[i] = now[i];
  }
  const float one = 1.0f, zero = 0.0f;
  CMV_CUDNN(cudnnPoolingForward(cmv::dnn(), pool, &one, x, input, &zero, y, output));
}

}  // namespace

extern "C" void max_pooling_2d_vendor(const float* input, float* output, int N, int C, int H, int W, int kernel_size, int stride,
                                      int padding) {
  max_pool<float>(input, output, N, C, H, W, kernel_size, stride, padding);
}

extern "C" void max_pooling_2d_bf16_vendor(const __nv_bfloat16* input, __nv_bfloat16* output, int N, int C, int H, int W,
                                           int kernel_size, int stride, int padding) {
  max_pool<__nv_bfloat16>(input, output, N, C, H, W, kernel_size, stride, padding);
}
