// BF16 twin of top_k: a bitonic sort of 64-bit keys (descending value, then ascending index, -0 folded into +0) padded to a power of two, shared-memory passes for strides below 2048, instead of the baseline's bottom-up merge sort; same order, ties to the smaller index.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;
constexpr int kChunk = 2048;             // keys sorted in shared memory by one block
constexpr int kChunkThreads = kChunk / 2;  // one compare-exchange per thread per step
constexpr unsigned long long kPadKey = ~0ull;  // sorts after every real key (index < 2^31)

// Ascending key order = descending value, ties by ascending index: the baseline's order.
__device__ __forceinline__ unsigned long long twin_key(__nv_bfloat16 v, int index) {
  unsigned u = __float_as_uint(__bfloat162float(v));
  if ((u & 0x7fffffffu) == 0) u = 0;  // the baseline compares as floats: -0 == +0, ordered by index
  unsigned ascending = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return ((unsigned long long)(~ascending) << 32) | (unsigned)index;
}

__global__ void twin_topk_fill(const __nv_bfloat16* input, unsigned long long* keys, int N, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) keys[i] = i < N ? twin_key(input[i], i) : kPadKey;
}

__device__ __forceinline__ void compare_exchange(unsigned long long& a, unsigned long long& b, bool ascending) {
  if ((a > b) == ascending) {
    unsigned long long t = a;
    a = b;
    b = t;
  }
}

// Bitonic stages size = size_lo .. size_hi (powers of two), strides min(size / 2, kChunk / 2) .. 1, on this block's chunk.
__global__ void twin_topk_bitonic_shared(unsigned long long* keys, int size_lo, int size_hi) {
  __shared__ unsigned long long s[kChunk];
  int base = blockIdx.x * kChunk;
  int t = threadIdx.x;
  s[t] = keys[base + t];
  s[t + kChunkThreads] = keys[base + t + kChunkThreads];
  for (int size = size_lo; size <= size_hi; size *= 2) {
    for (int stride = (size / 2 < kChunkThreads ? size / 2 : kChunkThreads); stride > 0; stride /= 2) {
      __syncthreads();
      int i = 2 * stride * (t / stride) + (t % stride);
      compare_exchange(s[i], s[i + stride], ((base + i) & size) == 0);
    }
  }
  __syncthreads();
  keys[base + t] = s[t];
  keys[base + t + kChunkThreads] = s[t + kChunkThreads];
}

// One step of stage `size` at a stride >= kChunk, in global memory.
__global__ void twin_topk_bitonic_global(unsigned long long* keys, int size, int stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int partner = i ^ stride;
  if (partner > i) compare_exchange(keys[i], keys[partner], (i & size) == 0);
}

__global__ void twin_topk_output(const unsigned long long* keys, const __nv_bfloat16* input, __nv_bfloat16* values, int* indices,
                                 int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < k) {
    int index = (int)(keys[i] & 0xffffffffu);
    values[i] = input[index];
    indices[i] = index;
  }
}
}  // namespace

extern "C" void top_k_bf16_optimized(__nv_bfloat16* top_k_values, int* top_k_indices, const __nv_bfloat16* input, const int N,
                                     const int k) {
  if (N <= 0 || k <= 0) return;
  int n = kChunk;
  while (n < N) n *= 2;
  unsigned long long* keys = nullptr;
  // A failed call leaves its error for the harness's cudaGetLastError(), the outputs unwritten.
  if (cudaMalloc(&keys, (size_t)n * sizeof(unsigned long long)) != cudaSuccess) return;
  twin_topk_fill<<<n / kThreads, kThreads>>>(input, keys, N, n);
  twin_topk_bitonic_shared<<<n / kChunk, kChunkThreads>>>(keys, 2, kChunk);
  for (int size = 2 * kChunk; size <= n; size *= 2) {
    for (int stride = size / 2; stride >= kChunk; stride /= 2) twin_topk_bitonic_global<<<n / kThreads, kThreads>>>(keys, size, stride);
    twin_topk_bitonic_shared<<<n / kChunk, kChunkThreads>>>(keys, size, size);
  }
  int count = k < N ? k : N;
  twin_topk_output<<<(count + kThreads - 1) / kThreads, kThreads>>>(keys, input, top_k_values, top_k_indices, count);
  cudaDeviceSynchronize();
  cudaFree(keys);
}
