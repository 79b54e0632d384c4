// MSKernelBench top_k baseline (ours), doing what the published baseline does, per call: cudaMalloc
// two arrays of (value, index) pairs, fill the first with (input[i], i) and copy it into the second;
// fully sort the pairs by value descending, ties by index ascending, with the same double-pass
// bottom-up merge sort as the sorting task (one thread per pair of runs, 256 threads per block, run
// widths 1, 2, 4, ... < N, each width merging temp -> pairs then pairs -> temp, a thread whose second
// run is empty does nothing, cudaDeviceSynchronize after every launch); copy the first k pairs out to
// top_k_values / top_k_indices; free both arrays. BF16 compares as floats; the stored value is the
// input's bf16 value (exact). k <= N is assumed (the task's sizes).
#include <cstdio>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;

struct ValueIndex {
  float value;
  int index;
};

bool ok(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "top_k baseline: %s failed: %s\n", what, cudaGetErrorString(err));
  return false;
}

__device__ __forceinline__ float as_float(float v) { return v; }
__device__ __forceinline__ float as_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }

// a goes first: larger value, or equal value and smaller index.
__device__ __forceinline__ bool goes_first(const ValueIndex& a, const ValueIndex& b) {
  return a.value > b.value || (a.value == b.value && a.index < b.index);
}

template <typename T>
__global__ void top_k_init_kernel(const T* input, ValueIndex* pairs, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) pairs[i] = ValueIndex{as_float(input[i]), i};
}

// Merges src[left, mid) and src[mid, right) into dst[left, right); on ties (impossible: the indices
// differ) the left run would go first.
__global__ void top_k_merge_kernel(const ValueIndex* src, ValueIndex* dst, long long N, long long width) {
  long long pair = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long left = pair * 2 * width;
  if (left >= N) return;
  long long mid = left + width < N ? left + width : N;
  long long right = left + 2 * width < N ? left + 2 * width : N;
  if (mid >= right) return;  // second run empty: dst already holds this run
  long long i = left, j = mid, k = left;
  while (i < mid && j < right) {
    if (!goes_first(src[j], src[i])) dst[k++] = src[i++];
    else dst[k++] = src[j++];
  }
  while (i < mid) dst[k++] = src[i++];
  while (j < right) dst[k++] = src[j++];
}

template <typename T>
__global__ void top_k_output_kernel(const ValueIndex* sorted, T* values, int* indices, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < k) {
    store(&values[i], sorted[i].value);
    indices[i] = sorted[i].index;
  }
}

template <typename T>
void top_k_impl(T* values, int* indices, const T* input, int N, int k) {
  if (N <= 0 || k <= 0) return;
  size_t bytes = (size_t)N * sizeof(ValueIndex);
  ValueIndex *pairs = nullptr, *temp = nullptr;
  if (ok(cudaMalloc(&pairs, bytes), "cudaMalloc pairs") && ok(cudaMalloc(&temp, bytes), "cudaMalloc temp")) {
    top_k_init_kernel<T><<<(N + kThreads - 1) / kThreads, kThreads>>>(input, pairs, N);
    bool good = ok(cudaMemcpy(temp, pairs, bytes, cudaMemcpyDeviceToDevice), "copy pairs to temp");
    for (long long width = 1; good && width < N; width *= 2) {
      long long runs = (N + 2 * width - 1) / (2 * width);
      unsigned blocks = (unsigned)((runs + kThreads - 1) / kThreads);
      top_k_merge_kernel<<<blocks, kThreads>>>(temp, pairs, N, width);
      good = ok(cudaDeviceSynchronize(), "merge pass temp -> pairs");
      if (!good) break;
      top_k_merge_kernel<<<blocks, kThreads>>>(pairs, temp, N, width);
      good = ok(cudaDeviceSynchronize(), "merge pass pairs -> temp");
    }
    if (good) {
      top_k_output_kernel<T><<<(k + kThreads - 1) / kThreads, kThreads>>>(temp, values, indices, k);
      ok(cudaDeviceSynchronize(), "output kernel");
    }
  }
  if (pairs) ok(cudaFree(pairs), "cudaFree pairs");
  if (temp) ok(cudaFree(temp), "cudaFree temp");
}
}  // namespace

extern "C" void top_k(float* top_k_values, int* top_k_indices, const float* input, const int N, const int k) {
  top_k_impl<float>(top_k_values, top_k_indices, input, N, k);
}

extern "C" void top_k_bf16(__nv_bfloat16* top_k_values, int* top_k_indices, const __nv_bfloat16* input, const int N, const int k) {
  top_k_impl<__nv_bfloat16>(top_k_values, top_k_indices, input, N, k);
}
