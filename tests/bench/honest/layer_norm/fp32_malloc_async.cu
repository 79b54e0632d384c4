// Honest layer_norm, FP32: two-pass statistics with per-block partial sums in scratch memory taken from the
// stream-ordered allocator (cudaMallocAsync / cudaFreeAsync on the default stream), then one apply pass.
// A template over the element type (FP32 accumulation throughout).
#include <cuda_runtime.h>
#include <cuda_bf16.h>

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;

static __device__ __forceinline__ float to_float(float x) { return x; }
static __device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
static __device__ __forceinline__ void store(float* p, float v) { *p = v; }
static __device__ __forceinline__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }

// The block's sum, valid in thread 0.
static __device__ float block_sum(float v) {
  __shared__ float warp_sums[kThreads / 32];
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < kThreads / 32 ? warp_sums[threadIdx.x] : 0.0f;
  if (threadIdx.x < 32)
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  return v;
}

// partial[block] = sum over the block's share of (x - center)^2 (squared) or of x (not squared).
template <class T>
__global__ void partial_sums(const T* __restrict__ x, int n, const float* __restrict__ center, bool squared, float* __restrict__ partial) {
  float c = squared ? *center : 0.0f, acc = 0.0f;
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < n; i += gridDim.x * kThreads) {
    float d = to_float(x[i]) - c;
    acc += squared ? d * d : d;
  }
  acc = block_sum(acc);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

// stats[0] = mean (first call) or stats[1] = 1 / sqrt(var + eps) (second call).
__global__ void finish(const float* __restrict__ partial, int blocks, int n, float eps, bool variance, float* __restrict__ stats) {
  float acc = 0.0f;
  for (int i = threadIdx.x; i < blocks; i += kThreads) acc += partial[i];
  acc = block_sum(acc);
  if (threadIdx.x == 0) {
    if (variance) stats[1] = 1.0f / sqrtf(acc / n + eps);
    else stats[0] = acc / n;
  }
}

template <class T>
__global__ void apply(T* __restrict__ out, const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b, int n,
                      const float* __restrict__ stats) {
  float mean = stats[0], inv_std = stats[1];
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < n; i += gridDim.x * kThreads)
    store(out + i, to_float(w[i]) * ((to_float(x[i]) - mean) * inv_std) + to_float(b[i]));
}

template <class T>
static void layer_norm(T* out, const T* x, const T* w, const T* b, float eps, int n) {
  if (n <= 0) return;
  int blocks = (n + kThreads - 1) / kThreads;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  float* scratch = nullptr;  // blocks partial sums, then the two statistics
  if (cudaMallocAsync(reinterpret_cast<void**>(&scratch), (blocks + 2) * sizeof(float), 0) != cudaSuccess) return;
  float *partial = scratch, *stats = scratch + blocks;
  partial_sums<T><<<blocks, kThreads>>>(x, n, stats, false, partial);
  finish<<<1, kThreads>>>(partial, blocks, n, eps, false, stats);
  partial_sums<T><<<blocks, kThreads>>>(x, n, stats, true, partial);
  finish<<<1, kThreads>>>(partial, blocks, n, eps, true, stats);
  apply<T><<<blocks, kThreads>>>(out, x, w, b, n, stats);
  cudaFreeAsync(scratch, 0);
}

extern "C" void layer_norm_optimized(float* output, const float* input, const float* weight, const float* bias, const float epsilon,
                                     const int N) {
  layer_norm(output, input, weight, bias, epsilon, N);
}
