// Host-side twin check of runtime/cm_refresh.h (tests/bench/test_refresh.py compiles and runs it; no GPU).
// stdin lines: "V kind draw p0 p1 key call stream index" -> the stored element's bits, in hex;
//              "S n call stream key index"                -> the shuffled input's source index, in hex.
// Compiled as CUDA, so the functions are __host__ __device__; the kernel below makes nvcc compile the
// device path too (it is not launched here: the GPU tests compare the device's draws with numpy).
#include <cinttypes>
#include <cstdio>

#include "cm_refresh.h"

__global__ void device_path(unsigned char* dst, int kind, int draw, double p0, double p1, uint32_t call, uint32_t stream,
                            uint32_t k0, uint32_t k1) {
  cm::refresh_store(dst, kind, draw, p0, p1, threadIdx.x, call, stream, k0, k1);
  dst[0] = (unsigned char)cm::shuffle_index(threadIdx.x, 1000, cm::shuffle_bits(1000), call, stream, k0, k1);
}

int main() {
  char mode[4];
  while (scanf("%3s", mode) == 1) {
    unsigned long long key, index, n;
    unsigned call, stream;
    if (mode[0] == 'S') {
      if (scanf("%llu %u %u %llu %llu", &n, &call, &stream, &key, &index) != 5) return 2;
      printf("%" PRIx64 "\n", cm::shuffle_index(index, n, cm::shuffle_bits(n), call, stream, (uint32_t)key, (uint32_t)(key >> 32)));
      continue;
    }
    int kind, draw;
    double p0, p1;
    if (scanf("%d %d %lf %lf %llu %u %u %llu", &kind, &draw, &p0, &p1, &key, &call, &stream, &index) != 8) return 2;
    uint64_t bits = cm::refresh_bits(kind, draw, p0, p1, index, call, stream, (uint32_t)key, (uint32_t)(key >> 32));
    printf("%" PRIx64 "\n", bits);
  }
  return 0;
}
