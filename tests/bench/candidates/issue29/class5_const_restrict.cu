// Class 5: the same ABI as the task's prototype: other names, const on the values and pointers, __restrict__.
#include <cuda_runtime.h>
typedef float real;
__global__ void vadd(const real* __restrict__ a, const real* __restrict__ b, real* __restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" void vector_add_optimized(const real* const __restrict__ x, real* __restrict__ y, real* const z, const int n) {
  vadd<<<(n + 255) / 256, 256>>>(x, y, z, n);
  cudaDeviceSynchronize();
}
