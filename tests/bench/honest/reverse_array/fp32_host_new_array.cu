// Honest reverse_array, FP32, whose host code plans its launches in a new[] array (C++ runtime pieces of
// new[] in the object: operator new[], __cxa_throw_bad_array_new_length; issue 29, class 2).
#include <cuda_runtime.h>

__global__ void reverse_chunk(float* __restrict__ out, const float* __restrict__ in, int n, int start, int count) {
  int i = start + blockIdx.x * blockDim.x + threadIdx.x;
  if (i < start + count && i < n) out[n - 1 - i] = in[i];
}

struct Chunk {
  int start, count;
};

extern "C" void reverse_array_optimized(float* output, float* input, int N) {
  if (N <= 0) return;
  const int chunk = 1 << 22;
  int chunks = (N + chunk - 1) / chunk;
  Chunk* plan = new Chunk[chunks];
  for (int c = 0; c < chunks; ++c) plan[c] = {c * chunk, N - c * chunk < chunk ? N - c * chunk : chunk};
  for (int c = 0; c < chunks; ++c) reverse_chunk<<<(plan[c].count + 255) / 256, 256>>>(output, input, N, plan[c].start, plan[c].count);
  delete[] plan;
}
