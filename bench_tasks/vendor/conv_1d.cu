// conv_1d: cuDNN (legacy API) cudnnConvolutionForward, a 1 x input_size image and a 1 x kernel_size filter,
// CUDNN_CROSS_CORRELATION (no flip: the task's "valid" correlation), no padding. The algorithm is chosen
// once per shape on the first, untimed call (the usable ones of cuDNN's heuristic list, each timed on the
// call's buffers; cmv::Conv2d); descriptors and the workspace are kept. Timed: the one cudnnConvolutionForward.
#include "cudnn_util.cuh"

namespace {

template <typename T>
void conv1d(const T* input, const T* kernel, T* output, int input_size, int kernel_size) {
  if (kernel_size <= 0 || input_size < kernel_size) return;
  static cmv::Conv2d<T> conv;
  conv.plan(1, input_size, 1, kernel_size, input, kernel, output);
  conv.run(input, kernel, output);
}

}  // namespace

extern "C" void conv_1d_vendor(const float* input, const float* kernel, float* output, int input_size, int kernel_size) {
  conv1d<float>(input, kernel, output, input_size, kernel_size);
}

extern "C" void conv_1d_bf16_vendor(const __nv_bfloat16* input, const __nv_bfloat16* kernel, __nv_bfloat16* output, int input_size,
                                    int kernel_size) {
  conv1d<__nv_bfloat16>(input, kernel, output, input_size, kernel_size);
}
