// Adversarial: does the work (plus ~2 ms of extra spinning) on its own non-blocking stream and
// returns without synchronising, so a harness that times only the default stream sees ~0 us.
#include <cuda_runtime.h>
__global__ void add_and_spin(const float* A, const float* B, float* C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) C[i] = A[i] + B[i];
  if (i == 0) {
    long long start = clock64();
    while (clock64() - start < 4000000LL) {}  // ~2 ms at ~2 GHz
  }
}
static cudaStream_t side = nullptr;
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  if (!side) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  add_and_spin<<<(N + 255) / 256, 256, 0, side>>>(A, B, C, N);
}
