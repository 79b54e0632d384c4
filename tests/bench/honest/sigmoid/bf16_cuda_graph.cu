// Honest sigmoid, BF16, launched through a CUDA graph built with the explicit graph API (one kernel node),
// instantiated, launched on the default stream and destroyed on every call. FP32 math, one rounding.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void sigmoid_bf16_kernel(__nv_bfloat16* out, const __nv_bfloat16* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2bfloat16(1.0f / (1.0f + expf(-__bfloat162float(in[i]))));
}

extern "C" void sigmoid_bf16_optimized(__nv_bfloat16* out, const __nv_bfloat16* input, const int N) {
  if (N <= 0) return;
  int n = N;
  void* args[] = {&out, &input, &n};
  cudaKernelNodeParams node{};
  node.func = reinterpret_cast<void*>(sigmoid_bf16_kernel);
  node.gridDim = dim3((N + 255) / 256);
  node.blockDim = dim3(256);
  node.sharedMemBytes = 0;
  node.kernelParams = args;
  node.extra = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaGraphNode_t kernel = nullptr;
  if (cudaGraphCreate(&graph, 0) == cudaSuccess && cudaGraphAddKernelNode(&kernel, graph, nullptr, 0, &node) == cudaSuccess &&
      cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
    cudaGraphLaunch(exec, 0);
    cudaStreamSynchronize(0);
  }
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
}
