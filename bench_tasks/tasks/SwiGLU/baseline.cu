// MSKernelBench SwiGLU baseline (ours), doing what the published baseline does, quirk included: it
// launches ceil(N/256) blocks of 256 threads, but the loop is i = threadIdx.x; i += blockDim.x, which
// ignores blockIdx, so EVERY block computes the whole array (about N/256-fold redundant work; the
// redundant stores write identical values: every block runs the same instructions on the same data).
// out[i] = swish(g, beta) * v = g / (1 + exp(-beta * g)) * v, FP32 arithmetic; BF16 converts to float
// and rounds once at the store.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;
}

__global__ void SwiGLU_kernel(float* output, const float* gate_input, const float* value_input, float beta, int N) {
  for (int i = threadIdx.x; i < N; i += blockDim.x) {  // blockIdx is not used: the published quirk
    float g = gate_input[i];
    output[i] = g / (1.0f + expf(-beta * g)) * value_input[i];
  }
}

__global__ void SwiGLU_bf16_kernel(__nv_bfloat16* output, const __nv_bfloat16* gate_input, const __nv_bfloat16* value_input,
                                   float beta, int N) {
  for (int i = threadIdx.x; i < N; i += blockDim.x) {  // blockIdx is not used: the published quirk
    float g = __bfloat162float(gate_input[i]);
    output[i] = __float2bfloat16(g / (1.0f + expf(-beta * g)) * __bfloat162float(value_input[i]));
  }
}

extern "C" void SwiGLU(float* output, const float* gate_input, const float* value_input, float beta, int N) {
  if (N > 0) SwiGLU_kernel<<<(N + kThreads - 1) / kThreads, kThreads>>>(output, gate_input, value_input, beta, N);
  cudaDeviceSynchronize();
}

extern "C" void SwiGLU_bf16(__nv_bfloat16* output, const __nv_bfloat16* gate_input, const __nv_bfloat16* value_input, float beta, int N) {
  if (N > 0) SwiGLU_bf16_kernel<<<(N + kThreads - 1) / kThreads, kThreads>>>(output, gate_input, value_input, beta, N);
  cudaDeviceSynchronize();
}
