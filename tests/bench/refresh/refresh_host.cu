// Host-side twin check of runtime/cm_refresh.h (tests/bench/test_refresh.py compiles and runs it; no GPU).
// stdin: lines "kind draw p0 p1 key call stream index"; stdout: the stored element's bits, in hex.
// Compiled as CUDA, so the functions are __host__ __device__; the kernel below makes nvcc compile the
// device path too (it is not launched here: the GPU tests compare the device's draws with numpy).
#include <cinttypes>
#include <cstdio>

#include "cm_refresh.h"

__global__ void device_path(unsigned char* dst, int kind, int draw, double p0, double p1, uint32_t call, uint32_t stream,
                            uint32_t k0, uint32_t k1) {
  cm::refresh_store(dst, kind, draw, p0, p1, threadIdx.x, call, stream, k0, k1);
}

int main() {
  int kind, draw;
  double p0, p1;
  unsigned long long key, index;
  unsigned call, stream;
  while (scanf("%d %d %lf %lf %llu %u %u %llu", &kind, &draw, &p0, &p1, &key, &call, &stream, &index) == 8) {
    uint64_t bits = cm::refresh_bits(kind, draw, p0, p1, index, call, stream, (uint32_t)key, (uint32_t)(key >> 32));
    printf("%" PRIx64 "\n", bits);
  }
  return 0;
}
