// top_k: CUB DeviceRadixSort::SortPairsDescending of (value, index) pairs, then the first k of each
// copied out (cudaMemcpyAsync, device to device). The radix sort is stable, so equal values keep their
// input order: ties come out by ascending index, the task's order. The index sequence 0..N-1 is written
// once per N into a workspace (it does not depend on the input values). Timed: the sort and the copies.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_transform.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "cub_util.cuh"

namespace {

struct Identity {
  __device__ int operator()(int i) const { return i; }
};

template <typename T>
void top_k(T* values_out, int* indices_out, const T* input, int N, int k) {
  if (N <= 0 || k <= 0) return;
  if (k > N) k = N;
  static cmv::Workspace iota, keys_sorted, index_sorted, temp;
  static int iota_n = 0;
  int* index = iota.as<int>(N);
  if (iota_n < N) {
    CMV_CUB(cub::DeviceTransform::Transform(thrust::counting_iterator<int>(0), index, N, Identity{}, 0));
    iota_n = N;
  }
  T* keys_out = keys_sorted.as<T>(N);
  int* index_out = index_sorted.as<int>(N);
  cmv::cub_run(temp, [&](void* storage, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairsDescending(storage, bytes, input, keys_out, index, index_out, N, 0, int(sizeof(T) * 8), 0);
  });
  CMV_CUDA(cudaMemcpyAsync(values_out, keys_out, (size_t)k * sizeof(T), cudaMemcpyDeviceToDevice, 0));
  CMV_CUDA(cudaMemcpyAsync(indices_out, index_out, (size_t)k * sizeof(int), cudaMemcpyDeviceToDevice, 0));
}

}  // namespace

extern "C" void top_k_vendor(float* top_k_values, int* top_k_indices, const float* input, const int N, const int k) {
  top_k<float>(top_k_values, top_k_indices, input, N, k);
}

extern "C" void top_k_bf16_vendor(__nv_bfloat16* top_k_values, int* top_k_indices, const __nv_bfloat16* input, const int N, const int k) {
  top_k<__nv_bfloat16>(top_k_values, top_k_indices, input, N, k);
}
