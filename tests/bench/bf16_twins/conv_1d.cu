// BF16 twin of conv_1d: a block stages its input window and the taps in shared memory (as floats) and each
// thread sums its output's taps into four interleaved FP32 partial sums (j mod 4) added pairwise at the end,
// where the baseline sums the taps in one sequential chain; one rounding at the store.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

constexpr int kConv1dTwinThreads = 256;

static __global__ void conv1d_twin(const __nv_bfloat16* input, const __nv_bfloat16* kernel, __nv_bfloat16* output, int input_size,
                                   int kernel_size) {
  extern __shared__ float smem[];
  float* taps = smem;
  float* window = smem + kernel_size;
  int out_size = input_size - kernel_size + 1;
  int first = blockIdx.x * kConv1dTwinThreads;
  int span = kConv1dTwinThreads + kernel_size - 1;
  for (int j = threadIdx.x; j < kernel_size; j += blockDim.x) taps[j] = __bfloat162float(kernel[j]);
  for (int j = threadIdx.x; j < span; j += blockDim.x) window[j] = first + j < input_size ? __bfloat162float(input[first + j]) : 0.0f;
  __syncthreads();
  int i = first + threadIdx.x;
  if (i >= out_size) return;
  const float* w = window + threadIdx.x;
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  int j = 0;
  for (; j + 3 < kernel_size; j += 4) {
    s0 = fmaf(w[j], taps[j], s0);
    s1 = fmaf(w[j + 1], taps[j + 1], s1);
    s2 = fmaf(w[j + 2], taps[j + 2], s2);
    s3 = fmaf(w[j + 3], taps[j + 3], s3);
  }
  for (; j < kernel_size; ++j) s0 = fmaf(w[j], taps[j], s0);
  output[i] = __float2bfloat16((s0 + s1) + (s2 + s3));
}

extern "C" void conv_1d_bf16_optimized(const __nv_bfloat16* input, const __nv_bfloat16* kernel, __nv_bfloat16* output, int input_size,
                                       int kernel_size) {
  int out_size = input_size - kernel_size + 1;
  if (out_size <= 0) return;
  size_t smem = (size_t)(2 * kernel_size + kConv1dTwinThreads - 1) * sizeof(float);
  if (smem > 48 * 1024) cudaFuncSetAttribute(conv1d_twin, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  conv1d_twin<<<(out_size + kConv1dTwinThreads - 1) / kConv1dTwinThreads, kConv1dTwinThreads, smem>>>(input, kernel, output, input_size,
                                                                                                      kernel_size);
}
