// reverse_array: CUB DeviceTransform copying through a reverse iterator (output[i] = input[N - 1 - i]),
// CCCL's out-of-place reverse. Timed: the one library call.
#include <cub/device/device_transform.cuh>
#include <thrust/iterator/reverse_iterator.h>

#include "vendor_common.cuh"

namespace {

struct Identity {
  template <typename T>
  __device__ T operator()(T v) const { return v; }
};

template <typename T>
void reverse(T* output, const T* input, int N) {
  if (N <= 0) return;
  auto reversed = thrust::make_reverse_iterator(input + N);
  CMV_CUB(cub::DeviceTransform::Transform(reversed, output, N, Identity{}, 0));
}

}  // namespace

extern "C" void reverse_array_vendor(float* output, float* input, int N) { reverse<float>(output, input, N); }

extern "C" void reverse_array_bf16_vendor(__nv_bfloat16* output, __nv_bfloat16* input, int N) {
  reverse<__nv_bfloat16>(output, input, N);
}
