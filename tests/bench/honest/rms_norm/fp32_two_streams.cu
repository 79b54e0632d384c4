// Honest rms_norm, FP32, over two streams: each half of the vector's sum of squares on its own stream, joined
// with an event; the scale computed once; the apply split over both streams again; both streams synchronised
// before the call returns. The streams and events are created on the first call and kept (static state).
#include <cuda_runtime.h>

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 512;

struct Streams {
  cudaStream_t s[2];
  cudaEvent_t halves_done, scale_ready;
  bool ok;
};

static const Streams& streams() {
  static const Streams st = [] {
    Streams v{};
    v.ok = cudaStreamCreateWithFlags(&v.s[0], cudaStreamNonBlocking) == cudaSuccess &&
           cudaStreamCreateWithFlags(&v.s[1], cudaStreamNonBlocking) == cudaSuccess &&
           cudaEventCreateWithFlags(&v.halves_done, cudaEventDisableTiming) == cudaSuccess &&
           cudaEventCreateWithFlags(&v.scale_ready, cudaEventDisableTiming) == cudaSuccess;
    return v;
  }();
  return st;
}

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

__global__ void sum_squares(const float* __restrict__ x, int n, float* __restrict__ partial) {
  float acc = 0.0f;
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < n; i += gridDim.x * kThreads) acc += x[i] * x[i];
  acc = block_sum(acc);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

__global__ void inverse_rms(const float* __restrict__ partial, int count, int n, float eps, float* __restrict__ scale) {
  float acc = 0.0f;
  for (int i = threadIdx.x; i < count; i += kThreads) acc += partial[i];
  acc = block_sum(acc);
  if (threadIdx.x == 0) *scale = 1.0f / sqrtf(acc / n + eps);
}

__global__ void apply(float* __restrict__ out, const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                      int n, const float* __restrict__ scale) {
  float s = *scale;
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < n; i += gridDim.x * kThreads) out[i] = w[i] * (x[i] * s) + b[i];
}

static int blocks_for(int n) {
  int blocks = (n + kThreads - 1) / kThreads;
  return blocks < 1 ? 1 : blocks > kMaxBlocks ? kMaxBlocks : blocks;
}

extern "C" void rms_norm_optimized(float* output, const float* input, const float* weight, const float* bias, const float epsilon,
                                   const int N) {
  const Streams& st = streams();
  if (N <= 0 || !st.ok) return;
  float* scratch = nullptr;  // 2 * kMaxBlocks partial sums, then the scale
  if (cudaMalloc(&scratch, (2 * kMaxBlocks + 1) * sizeof(float)) != cudaSuccess) return;
  int half[2] = {N / 2, N - N / 2};
  int offset[2] = {0, N / 2};
  int blocks[2] = {blocks_for(half[0]), blocks_for(half[1])};
  float* scale = scratch + 2 * kMaxBlocks;
  // Partial sums: half 0 into scratch[0, blocks[0]), half 1 right after it.
  sum_squares<<<blocks[0], kThreads, 0, st.s[0]>>>(input, half[0], scratch);
  sum_squares<<<blocks[1], kThreads, 0, st.s[1]>>>(input + offset[1], half[1], scratch + blocks[0]);
  cudaEventRecord(st.halves_done, st.s[1]);
  cudaStreamWaitEvent(st.s[0], st.halves_done, 0);
  inverse_rms<<<1, kThreads, 0, st.s[0]>>>(scratch, blocks[0] + blocks[1], N, epsilon, scale);
  cudaEventRecord(st.scale_ready, st.s[0]);
  cudaStreamWaitEvent(st.s[1], st.scale_ready, 0);
  for (int h = 0; h < 2; ++h)
    if (half[h] > 0)
      apply<<<blocks[h], kThreads, 0, st.s[h]>>>(output + offset[h], input + offset[h], weight + offset[h], bias + offset[h], half[h],
                                                 scale);
  cudaStreamSynchronize(st.s[0]);
  cudaStreamSynchronize(st.s[1]);
  cudaFree(scratch);
}
