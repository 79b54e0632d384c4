// conv_2d: cuDNN (legacy API) cudnnConvolutionForward, one channel, CUDNN_CROSS_CORRELATION (no flip),
// no padding, stride 1: the task's valid 2-D correlation. The algorithm is chosen once per shape on the
// first, untimed call: the usable ones of cuDNN's heuristic list, each timed on the call's buffers (at most
// 1 GiB of workspace; FFT and Winograd excluded, FP32 without TF32; cmv::Conv2d); descriptors and the
// workspace are kept. Timed: the one cudnnConvolutionForward.
#include "cudnn_util.cuh"

namespace {

template <typename T>
void conv2d(const T* input, const T* kernel, T* output, int rows, int cols, int krows, int kcols) {
  if (krows <= 0 || kcols <= 0 || rows < krows || cols < kcols) return;
  static cmv::Conv2d<T> conv;
  conv.plan(rows, cols, krows, kcols, input, kernel, output);
  conv.run(input, kernel, output);
}

}  // namespace

extern "C" void conv_2d_vendor(const float* input, const float* kernel, float* output, int input_rows, int input_cols, int kernel_rows,
                               int kernel_cols) {
  conv2d<float>(input, kernel, output, input_rows, input_cols, kernel_rows, kernel_cols);
}

extern "C" void conv_2d_bf16_vendor(const __nv_bfloat16* input, const __nv_bfloat16* kernel, __nv_bfloat16* output, int input_rows,
                                    int input_cols, int kernel_rows, int kernel_cols) {
  conv2d<__nv_bfloat16>(input, kernel, output, input_rows, input_cols, kernel_rows, kernel_cols);
}
