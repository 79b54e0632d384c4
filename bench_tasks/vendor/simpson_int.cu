// simpson_int: CUB DeviceReduce::TransformReduce over the (N - 1) / 2 Simpson segments j of
// y[2j] + 4 y[2j+1] + y[2j+2] in FP32, written as (h / 3) * sum, h = (b - a) / (N - 1), through a transform
// output iterator (for even N the last interval is dropped, as the task defines). FP32 writes the float
// result (zeroed by the harness before every call: `+=` from zero); BF16 rounds it once to bf16.
// Timed: the one library call.
#include "cub_util.cuh"

namespace {

template <typename T>
struct Segment {
  const T* y;
  __device__ float operator()(int j) const {
    const T* s = y + 2 * (size_t)j;
    return cmv::to_float(s[0]) + 4.0f * cmv::to_float(s[1]) + cmv::to_float(s[2]);
  }
};

template <typename T, typename Out>
void simpson(const T* y, Out out, int segments) {
  static cmv::Workspace temp;
  thrust::counting_iterator<int> index(0);
  cmv::cub_run(temp, [&](void* storage, size_t& bytes) {
    return cub::DeviceReduce::TransformReduce(storage, bytes, index, out, segments, cuda::std::plus<float>{}, Segment<T>{y}, 0.0f, 0);
  });
}

}  // namespace

extern "C" void simpson_int_vendor(const float* y_samples, float* result, float a, float b, int N) {
  const int segments = N >= 1 ? (N - 1) / 2 : 0;
  if (segments <= 0) return;  // result stays as the caller left it (zero): no full Simpson segment
  const float h = (b - a) / (float)(N - 1);
  simpson(y_samples, thrust::make_transform_output_iterator(result, cmv::Scale{h / 3.0f}), segments);
}

extern "C" void simpson_int_bf16_vendor(const __nv_bfloat16* y_samples, __nv_bfloat16* result, float a, float b, int N) {
  const int segments = N >= 1 ? (N - 1) / 2 : 0;
  if (segments <= 0) {
    const __nv_bfloat16 zero = __float2bfloat16(0.0f);
    CMV_CUDA(cudaMemcpyAsync(result, &zero, sizeof(zero), cudaMemcpyHostToDevice, 0));
    CMV_CUDA(cudaStreamSynchronize(0));
    return;
  }
  const float h = (b - a) / (float)(N - 1);
  simpson(y_samples, thrust::make_transform_output_iterator(result, cmv::ScaleToBf16{h / 3.0f}), segments);
}
