// cudamaster harness runtime: its kernels (declared, with what each does, in cm_kernels.h). A translation
// unit of its own so that nvcc's device passes run beside the host compiler's pass over cm_runtime.cpp.
#include "cm_kernels.h"
#include "cm_refresh.h"

namespace cm {

__global__ void cm_count_differing(const unsigned char* a, const unsigned char* b, size_t n, unsigned long long* count) {
  unsigned long long mine = 0;
  size_t stride = (size_t)gridDim.x * blockDim.x, first = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t n16 = n / 16;
  const uint4* a16 = reinterpret_cast<const uint4*>(a);
  const uint4* b16 = reinterpret_cast<const uint4*>(b);
  for (size_t i = first; i < n16; i += stride) {
    uint4 x = a16[i], y = b16[i];
    mine += (x.x != y.x) + (x.y != y.y) + (x.z != y.z) + (x.w != y.w);
  }
  for (size_t i = n16 * 16 + first; i < n; i += stride) mine += a[i] != b[i];
  if (mine) atomicAdd(count, mine);
}

__global__ void cm_refresh_kernel(unsigned char* dst, size_t n, int kind, int draw, double p0, double p1, uint32_t call,
                                  uint32_t stream, uint32_t k0, uint32_t k1) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    refresh_store(dst, kind, draw, p0, p1, i, call, stream, k0, k1);
}

__global__ void cm_shuffle_kernel(unsigned char* dst, const unsigned char* orig, size_t n, size_t elem, int bits, uint32_t call,
                                  uint32_t stream, uint32_t k0, uint32_t k1) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    shuffle_store(dst, orig, i, n, elem, bits, call, stream, k0, k1);
}

__global__ void cm_gather(const unsigned char* src, const int64_t* idx, size_t n, int elem, unsigned char* dst) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    size_t j = (size_t)idx[i];
    switch (elem) {
      case 2: ((uint16_t*)dst)[i] = ((const uint16_t*)src)[j]; break;
      case 4: ((uint32_t*)dst)[i] = ((const uint32_t*)src)[j]; break;
      default: ((uint64_t*)dst)[i] = ((const uint64_t*)src)[j]; break;
    }
  }
}

__global__ void cm_count_unwritten(const unsigned char* p, size_t n, int kind, unsigned long long* count) {
  unsigned long long mine = 0;
  size_t elem = kind_size(kind);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint64_t u = elem == 2 ? ((const uint16_t*)p)[i] : elem == 4 ? ((const uint32_t*)p)[i] : ((const uint64_t*)p)[i];
    mine += is_nan_bits(u, kind);
  }
  if (mine) atomicAdd(count, mine);
}

// Reads the whole scrub buffer through L2 (zeros: the store below never happens but keeps the loads).
__global__ void cm_l2_scrub_read(const int4* __restrict__ buf, size_t n, int* sink) {
  int acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    int4 v = __ldcg(buf + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x5A5A1234) *sink = acc;
}

__global__ void cm_refresh_verify(const unsigned char* buf, const unsigned char* orig, size_t n, int kind, int draw, double p0,
                                  double p1, int bits, uint32_t call, uint32_t stream, uint32_t k0, uint32_t k1, unsigned long long* bad) {
  unsigned long long mine = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    mine += element_bits(buf, i, kind_size(kind)) != redrawn_bits(orig, i, n, kind, draw, p0, p1, bits, call, stream, k0, k1);
  if (mine) atomicAdd(bad, mine);
}

cudaError_t launch_count_differing(int blocks, const unsigned char* a, const unsigned char* b, size_t n, unsigned long long* count) {
  cm_count_differing<<<blocks, 256>>>(a, b, n, count);
  return cudaGetLastError();
}

cudaError_t launch_refresh(int blocks, unsigned char* dst, size_t n, int kind, int draw, double p0, double p1, uint32_t call,
                           uint32_t stream, uint32_t k0, uint32_t k1) {
  cm_refresh_kernel<<<blocks, 256>>>(dst, n, kind, draw, p0, p1, call, stream, k0, k1);
  return cudaGetLastError();
}

cudaError_t launch_shuffle(int blocks, unsigned char* dst, const unsigned char* orig, size_t n, size_t elem, int bits, uint32_t call,
                           uint32_t stream, uint32_t k0, uint32_t k1) {
  cm_shuffle_kernel<<<blocks, 256>>>(dst, orig, n, elem, bits, call, stream, k0, k1);
  return cudaGetLastError();
}

cudaError_t launch_gather(int blocks, const unsigned char* src, const int64_t* idx, size_t n, int elem, unsigned char* dst) {
  cm_gather<<<blocks, 256>>>(src, idx, n, elem, dst);
  return cudaGetLastError();
}

cudaError_t launch_count_unwritten(int blocks, const unsigned char* p, size_t n, int kind, unsigned long long* count) {
  cm_count_unwritten<<<blocks, 256>>>(p, n, kind, count);
  return cudaGetLastError();
}

cudaError_t launch_l2_scrub_read(int blocks, const int4* buf, size_t n, int* sink) {
  cm_l2_scrub_read<<<blocks, 256>>>(buf, n, sink);
  return cudaGetLastError();
}

cudaError_t launch_refresh_verify(int blocks, const unsigned char* buf, const unsigned char* orig, size_t n, int kind, int draw, double p0,
                                  double p1, int bits, uint32_t call, uint32_t stream, uint32_t k0, uint32_t k1, unsigned long long* bad) {
  cm_refresh_verify<<<blocks, 256>>>(buf, orig, n, kind, draw, p0, p1, bits, call, stream, k0, k1, bad);
  return cudaGetLastError();
}

}  // namespace cm
