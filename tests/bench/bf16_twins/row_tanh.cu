// BF16 twin of row_tanh: many blocks, grid-stride over __nv_bfloat162 pairs (scalar odd tail) instead of one block of
// 1024 threads; tanhf in FP32.
#include <cstdint>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;
}  // namespace

__global__ void tanh_twin_pairs(__nv_bfloat162* __restrict__ out, const __nv_bfloat162* __restrict__ in, int pairs) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < pairs; i += gridDim.x * blockDim.x) {
    float2 v = __bfloat1622float2(in[i]);
    out[i] = __floats2bfloat162_rn(tanhf(v.x), tanhf(v.y));
  }
}

__global__ void tanh_twin_scalar(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ in, int start, int n) {
  for (int i = start + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = __float2bfloat16(tanhf(__bfloat162float(in[i])));
}

extern "C" void row_tanh_bf16_optimized(__nv_bfloat16* out, const __nv_bfloat16* input, const int N) {
  if (N <= 0) return;
  bool aligned = ((reinterpret_cast<uintptr_t>(out) | reinterpret_cast<uintptr_t>(input)) & 3) == 0;
  int pairs = aligned ? N / 2 : 0;
  if (pairs > 0) {
    int blocks = (pairs + kThreads - 1) / kThreads;
    tanh_twin_pairs<<<blocks < 4096 ? blocks : 4096, kThreads>>>(reinterpret_cast<__nv_bfloat162*>(out),
                                                                 reinterpret_cast<const __nv_bfloat162*>(input), pairs);
  }
  int rest = N - 2 * pairs;
  if (rest > 0) {
    int blocks = (rest + kThreads - 1) / kThreads;
    tanh_twin_scalar<<<blocks < 4096 ? blocks : 4096, kThreads>>>(out, input, 2 * pairs, N);
  }
  cudaDeviceSynchronize();
}
