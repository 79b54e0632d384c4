// Honest vector_add, BF16, whose host code uses memcpy, snprintf and fprintf as hand-written code does; under
// _FORTIFY_SOURCE (the default of many distributions' host compilers; the corpus manifest passes
// -D_FORTIFY_SOURCE=2) the host compiler makes them __memcpy_chk, __snprintf_chk and __fprintf_chk (issue 29,
// class 2).
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cstdio>
#include <cstring>

struct LaunchConfig {
  int threads;
  int blocks;
  char label[32];
};

__global__ void vadd_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = __float2bfloat16(__bfloat162float(a[i]) + __bfloat162float(b[i]));
}

// `name` is one of this file's short literals (it fits the label); noipa: its length is known only at run time.
__attribute__((noinline, noipa)) static LaunchConfig make_config(int n, int threads, const char* name) {
  LaunchConfig cfg{threads, (n + threads - 1) / threads, ""};
  size_t len = strlen(name);
  memcpy(cfg.label, name, len + 1);
  snprintf(cfg.label + len, sizeof cfg.label - len, " n=%d", n);
  return cfg;
}

extern "C" void vector_add_bf16_optimized(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int N) {
  if (N <= 0) return;
  LaunchConfig cfg = make_config(N, 256, "vadd_bf16");
  vadd_bf16<<<cfg.blocks, cfg.threads>>>(A, B, C, N);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) fprintf(stderr, "%s: %s\n", cfg.label, cudaGetErrorString(err));
}
