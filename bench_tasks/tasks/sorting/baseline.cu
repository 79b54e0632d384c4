// MSKernelBench sorting baseline (ours), doing what the published baseline does, in place, per call:
// cudaMalloc a temp array and copy data into it (device to device); a bottom-up merge sort with run
// widths 1, 2, 4, ... < N, one thread per pair of runs (256 threads per block), each thread merging
// its two sorted runs serially and taking the left element on ties (<=); a thread whose second run is
// empty does nothing. Every width merges twice, temp -> data and then data -> temp with the same
// width: the second pass is redundant, but it keeps both buffers identical, which is what makes the
// skip safe (the destination already holds that run). A cudaDeviceSynchronize follows every launch.
// Finally temp is copied back into data (device to device) and freed. BF16 compares as floats.
#include <cstdio>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;

bool ok(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "sorting baseline: %s failed: %s\n", what, cudaGetErrorString(err));
  return false;
}

__device__ __forceinline__ float sort_key(float v) { return v; }
__device__ __forceinline__ float sort_key(__nv_bfloat16 v) { return __bfloat162float(v); }

// Merges src[left, mid) and src[mid, right) into dst[left, right); ties from the left run.
template <typename T>
__global__ void merge_pass_kernel(const T* src, T* dst, long long N, long long width) {
  long long pair = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long left = pair * 2 * width;
  if (left >= N) return;
  long long mid = left + width < N ? left + width : N;
  long long right = left + 2 * width < N ? left + 2 * width : N;
  if (mid >= right) return;  // second run empty: dst already holds this run
  long long i = left, j = mid, k = left;
  while (i < mid && j < right) {
    if (sort_key(src[i]) <= sort_key(src[j])) dst[k++] = src[i++];
    else dst[k++] = src[j++];
  }
  while (i < mid) dst[k++] = src[i++];
  while (j < right) dst[k++] = src[j++];
}

template <typename T>
void merge_sort(T* data, int N, const char* name) {
  if (N <= 0) return;
  T* temp = nullptr;
  size_t bytes = (size_t)N * sizeof(T);
  if (!ok(cudaMalloc(&temp, bytes), name)) return;
  if (ok(cudaMemcpy(temp, data, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy to temp")) {
    for (long long width = 1; width < N; width *= 2) {
      long long pairs = (N + 2 * width - 1) / (2 * width);
      unsigned blocks = (unsigned)((pairs + kThreads - 1) / kThreads);
      merge_pass_kernel<T><<<blocks, kThreads>>>(temp, data, N, width);
      if (!ok(cudaDeviceSynchronize(), "merge pass temp -> data")) break;
      merge_pass_kernel<T><<<blocks, kThreads>>>(data, temp, N, width);
      if (!ok(cudaDeviceSynchronize(), "merge pass data -> temp")) break;
    }
    ok(cudaMemcpy(data, temp, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy from temp");
  }
  ok(cudaFree(temp), "cudaFree");
}
}  // namespace

extern "C" void sorting(float* data, int N) { merge_sort<float>(data, N, "cudaMalloc (float temp)"); }

extern "C" void sorting_bf16(__nv_bfloat16* data, int N) { merge_sort<__nv_bfloat16>(data, N, "cudaMalloc (bf16 temp)"); }
