// Honest softmax, FP32: one block per row; the row is cached in dynamic shared memory, which needs more than
// the default 48 KB from C = 12289 on (64 KB at the paper's C = 16384): the limit is raised with
// cudaFuncSetAttribute. Rows longer than 96 KB are read from global memory three times instead.
#include <cuda_runtime.h>
#include <cfloat>

constexpr int kThreads = 512;
constexpr int kMaxCachedBytes = 96 * 1024;

static __device__ float block_reduce(float v, bool is_max, float* scratch) {
  for (int off = 16; off > 0; off >>= 1) {
    float o = __shfl_xor_sync(0xffffffffu, v, off);
    v = is_max ? fmaxf(v, o) : v + o;
  }
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // scratch may still be read from the previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kThreads / 32 ? scratch[lane] : (is_max ? -FLT_MAX : 0.0f);
    for (int off = 16; off > 0; off >>= 1) {
      float o = __shfl_xor_sync(0xffffffffu, v, off);
      v = is_max ? fmaxf(v, o) : v + o;
    }
    if (lane == 0) scratch[0] = v;
  }
  __syncthreads();
  return scratch[0];
}

__global__ void softmax_smem_rows(float* __restrict__ out, const float* __restrict__ in, int cols, bool cached) {
  extern __shared__ float row_cache[];
  __shared__ float scratch[32];
  const float* x = in + (size_t)blockIdx.x * cols;
  float* y = out + (size_t)blockIdx.x * cols;
  float m = -FLT_MAX;
  for (int j = threadIdx.x; j < cols; j += kThreads) {
    float v = x[j];
    if (cached) row_cache[j] = v;
    m = fmaxf(m, v);
  }
  m = block_reduce(m, true, scratch);
  float s = 0.0f;
  for (int j = threadIdx.x; j < cols; j += kThreads) s += expf((cached ? row_cache[j] : x[j]) - m);
  s = block_reduce(s, false, scratch);
  float inv = 1.0f / s;
  for (int j = threadIdx.x; j < cols; j += kThreads) y[j] = expf((cached ? row_cache[j] : x[j]) - m) * inv;
}

extern "C" void softmax_optimized(float* out, const float* input, int N, int C) {
  if (N <= 0 || C <= 0) return;
  size_t bytes = (size_t)C * sizeof(float);
  bool cached = bytes <= (size_t)kMaxCachedBytes;
  if (cached && bytes > 48 * 1024)
    cudaFuncSetAttribute(softmax_smem_rows, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
  softmax_smem_rows<<<N, kThreads, cached ? bytes : 0>>>(out, input, C, cached);
}
