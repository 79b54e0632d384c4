// MSKernelBench rope baseline (ours), doing what the published baseline does: rotary position embedding
// on [M][D] row-major data with the INTERLEAVED-pair convention, position = row index m. One thread per
// (m, pair p), 256 per block, each computing its own
//   theta = powf(base, -2p/D), angle = m * theta, c = cosf(angle), s = sinf(angle),
//   out[2p] = x0*c - x1*s, out[2p+1] = x0*s + x1*c  (x0 = in[m*D + 2p], x1 = in[m*D + 2p + 1]).
// BF16: inputs converted to float, FP32 arithmetic, one rounding per stored element.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;
}  // namespace

__global__ void rope_kernel(float* output, const float* input, int M, int D, float base) {
  size_t half = (size_t)(D / 2);
  size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < (size_t)M * half) {
    int m = (int)(idx / half);
    int p = (int)(idx % half);
    float theta = powf(base, -2.0f * p / D);
    float angle = m * theta;
    float c = cosf(angle), s = sinf(angle);
    size_t i = (size_t)m * D + 2 * (size_t)p;
    float x0 = input[i], x1 = input[i + 1];
    output[i] = x0 * c - x1 * s;
    output[i + 1] = x0 * s + x1 * c;
  }
}

__global__ void rope_bf16_kernel(__nv_bfloat16* output, const __nv_bfloat16* input, int M, int D, float base) {
  size_t half = (size_t)(D / 2);
  size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < (size_t)M * half) {
    int m = (int)(idx / half);
    int p = (int)(idx % half);
    float theta = powf(base, -2.0f * p / D);
    float angle = m * theta;
    float c = cosf(angle), s = sinf(angle);
    size_t i = (size_t)m * D + 2 * (size_t)p;
    float x0 = __bfloat162float(input[i]), x1 = __bfloat162float(input[i + 1]);
    output[i] = __float2bfloat16(x0 * c - x1 * s);
    output[i + 1] = __float2bfloat16(x0 * s + x1 * c);
  }
}

extern "C" void rope(float* output, const float* input, int M, int D, float base) {
  size_t pairs = (M > 0 && D > 1) ? (size_t)M * (D / 2) : 0;
  if (pairs > 0) rope_kernel<<<(unsigned)((pairs + kThreads - 1) / kThreads), kThreads>>>(output, input, M, D, base);
  cudaDeviceSynchronize();
}

extern "C" void rope_bf16(__nv_bfloat16* output, const __nv_bfloat16* input, int M, int D, float base) {
  size_t pairs = (M > 0 && D > 1) ? (size_t)M * (D / 2) : 0;
  if (pairs > 0) rope_bf16_kernel<<<(unsigned)((pairs + kThreads - 1) / kThreads), kThreads>>>(output, input, M, D, base);
  cudaDeviceSynchronize();
}
