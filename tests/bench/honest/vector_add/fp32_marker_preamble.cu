// A file in the published harness format whose marked block relies on a #define and a helper above the
// START marker (issue 29, class 6): the block compiles with its preamble.
#include <cuda_runtime.h>
#include <cstdio>

#define THREADS_PER_BLOCK 256
#define ELEMS_PER_THREAD 4

static inline int div_up(int a, int b) { return (a + b - 1) / b; }

int main() { return 0; }  // the published harness's own main: outside the block

// ==== OPTIMIZED KERNEL START ====
__global__ void vadd_multi(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int N) {
  int base = blockIdx.x * THREADS_PER_BLOCK * ELEMS_PER_THREAD + threadIdx.x;
#pragma unroll
  for (int k = 0; k < ELEMS_PER_THREAD; ++k) {
    int i = base + k * THREADS_PER_BLOCK;
    if (i < N) C[i] = A[i] + B[i];
  }
}

extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  if (N <= 0) return;
  vadd_multi<<<div_up(N, THREADS_PER_BLOCK * ELEMS_PER_THREAD), THREADS_PER_BLOCK>>>(A, B, C, N);
}
// ==== OPTIMIZED KERNEL END ====
