// Class 3: CUB from the toolkit (its NVTX loader references getenv, dlopen, dlsym, dlclose, sched_yield).
#include <cub/cub.cuh>
__global__ void vadd(const float* A, const float* B, float* C, int N) {
  using Reduce = cub::BlockReduce<int, 256>;
  __shared__ typename Reduce::TempStorage temp;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int valid = Reduce(temp).Sum(i < N ? 1 : 0);  // how many threads of the block have an element
  if (i < N && valid > 0) C[i] = A[i] + B[i];
}
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  vadd<<<(N + 255) / 256, 256>>>(A, B, C, N);
  cudaDeviceSynchronize();
}
