// sorting: CUB DeviceRadixSort::SortKeys (ascending; float and __nv_bfloat16 keys), in place through a
// DoubleBuffer whose second half is a reused workspace; when the sorted keys end in the workspace they
// are copied back (cudaMemcpyAsync, device to device). Radix order puts -0.0 before +0.0, which compare
// equal. Timed: the sort and that copy.
#include <cub/device/device_radix_sort.cuh>

#include "cub_util.cuh"

namespace {

template <typename T>
void sort_in_place(T* data, int N) {
  if (N <= 1) return;
  static cmv::Workspace alternate, temp;
  cub::DoubleBuffer<T> keys(data, alternate.as<T>(N));
  cmv::cub_run(temp, [&](void* storage, size_t& bytes) {
    return cub::DeviceRadixSort::SortKeys(storage, bytes, keys, N, 0, int(sizeof(T) * 8), 0);
  });
  if (keys.Current() != data) CMV_CUDA(cudaMemcpyAsync(data, keys.Current(), (size_t)N * sizeof(T), cudaMemcpyDeviceToDevice, 0));
}

}  // namespace

extern "C" void sorting_vendor(float* data, int N) { sort_in_place<float>(data, N); }

extern "C" void sorting_bf16_vendor(__nv_bfloat16* data, int N) { sort_in_place<__nv_bfloat16>(data, N); }
