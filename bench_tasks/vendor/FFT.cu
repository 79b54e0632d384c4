// FFT: cuFFT, forward unnormalised C2C transform of N points (CUFFT_FORWARD is exp(-2 pi i k n / N), the
// task's sign; cuFFT does not normalise, nor does the task). The plan is made once per N (first, untimed
// call: fair for a library). The task's planar real/imag arrays are interleaved into a complex workspace
// by one CUB DeviceTransform before the transform and split back by another after it (both timed; cuFFT has
// no planar layout).
// FP32: single precision (cufftExecC2C, in place in the workspace). The FP32 entry receives HOST pointers
// (the task's memory = host): the timed call copies the inputs to a device staging buffer and the outputs
// back (pageable cudaMemcpy, as the baseline does).
// BF16: cuFFT's half-precision path with CUDA_C_16BF data (cufftXtMakePlanMany / cufftXtExec, FP32
// arithmetic inside cuFFT's kernels, bf16 between passes), device pointers in and out.
#include <cub/device/device_transform.cuh>
#include <cufft.h>
#include <cufftXt.h>
#include <thrust/iterator/counting_iterator.h>

#include "vendor_common.cuh"

namespace {

struct InterleaveF32 {
  __device__ float2 operator()(float re, float im) const { return make_float2(re, im); }
};
struct InterleaveBf16 {
  __device__ __nv_bfloat162 operator()(__nv_bfloat16 re, __nv_bfloat16 im) const { return __halves2bfloat162(re, im); }
};
template <typename C>
struct Part {
  const C* data;
  int imag;
  __device__ auto operator()(int i) const { return imag ? data[i].y : data[i].x; }
};

struct Plan {
  cufftHandle handle = 0;
  int n = -1;
  bool made = false;
};

}  // namespace

extern "C" void FFT_vendor(const float* input_real, const float* input_img, float* output_real, float* output_img, int N) {
  if (N <= 0) return;
  static Plan plan;
  static cmv::Workspace staging, complex_data;
  if (!plan.made || plan.n != N) {
    if (plan.made) CMV_CUFFT(cufftDestroy(plan.handle));
    CMV_CUFFT(cufftPlan1d(&plan.handle, N, CUFFT_C2C, 1));
    CMV_CUFFT(cufftSetStream(plan.handle, 0));
    plan.n = N, plan.made = true;
  }
  float* planar = staging.as<float>(2 * (size_t)N);
  float2* data = complex_data.as<float2>(N);
  const size_t bytes = (size_t)N * sizeof(float);
  CMV_CUDA(cudaMemcpy(planar, input_real, bytes, cudaMemcpyHostToDevice));
  CMV_CUDA(cudaMemcpy(planar + N, input_img, bytes, cudaMemcpyHostToDevice));
  CMV_CUB(cub::DeviceTransform::Transform(cuda::std::make_tuple(planar, planar + N), data, N, InterleaveF32{}, 0));
  CMV_CUFFT(cufftExecC2C(plan.handle, reinterpret_cast<cufftComplex*>(data), reinterpret_cast<cufftComplex*>(data), CUFFT_FORWARD));
  thrust::counting_iterator<int> index(0);
  CMV_CUB(cub::DeviceTransform::Transform(index, planar, N, Part<float2>{data, 0}, 0));
  CMV_CUB(cub::DeviceTransform::Transform(index, planar + N, N, Part<float2>{data, 1}, 0));
  CMV_CUDA(cudaMemcpy(output_real, planar, bytes, cudaMemcpyDeviceToHost));
  CMV_CUDA(cudaMemcpy(output_img, planar + N, bytes, cudaMemcpyDeviceToHost));
}

extern "C" void FFT_bf16_vendor(const __nv_bfloat16* input_real, const __nv_bfloat16* input_img, __nv_bfloat16* output_real,
                                __nv_bfloat16* output_img, int N) {
  if (N <= 0) return;
  static Plan plan;
  static cmv::Workspace complex_data;
  if (!plan.made || plan.n != N) {
    if (plan.made) CMV_CUFFT(cufftDestroy(plan.handle));
    CMV_CUFFT(cufftCreate(&plan.handle));
    CMV_CUFFT(cufftSetStream(plan.handle, 0));
    long long n = N;
    size_t bytes = 0;
    CMV_CUFFT(cufftXtMakePlanMany(plan.handle, 1, &n, nullptr, 1, 1, CUDA_C_16BF, nullptr, 1, 1, CUDA_C_16BF, 1, &bytes, CUDA_C_16BF));
    plan.n = N, plan.made = true;
  }
  __nv_bfloat162* data = complex_data.as<__nv_bfloat162>(N);
  CMV_CUB(cub::DeviceTransform::Transform(cuda::std::make_tuple(input_real, input_img), data, N, InterleaveBf16{}, 0));
  CMV_CUFFT(cufftXtExec(plan.handle, data, data, CUFFT_FORWARD));
  thrust::counting_iterator<int> index(0);
  CMV_CUB(cub::DeviceTransform::Transform(index, output_real, N, Part<__nv_bfloat162>{data, 0}, 0));
  CMV_CUB(cub::DeviceTransform::Transform(index, output_img, N, Part<__nv_bfloat162>{data, 1}, 0));
}
