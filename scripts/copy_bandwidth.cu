// Host<->device copy bandwidth on this machine: pageable vs page-locked (cudaMallocHost) vs registered memory, 16 MiB to
// 1 GiB, and the cost of page-locking (issue 13: the driver's staging). Build and run:
//   nvcc -O2 -gencode=arch=compute_90,code=sm_90 -o copy_bandwidth scripts/copy_bandwidth.cu && ./copy_bandwidth
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("err %s line %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main() {
  CK(cudaFree(0));
  size_t sizes[] = {size_t(16) << 20, size_t(256) << 20, size_t(1) << 30};
  for (size_t n : sizes) {
    void* d; CK(cudaMalloc(&d, n));
    std::vector<unsigned char> page(n, 1);  // touched
    void* pin; double t = now(); CK(cudaMallocHost(&pin, n)); double t_alloc = now() - t;
    memset(pin, 1, n);
    // pageable
    for (int rep = 0; rep < 2; ++rep) {
      t = now(); CK(cudaMemcpy(d, page.data(), n, cudaMemcpyHostToDevice)); double h2d = now() - t;
      t = now(); CK(cudaMemcpy(page.data(), d, n, cudaMemcpyDeviceToHost)); double d2h = now() - t;
      t = now(); CK(cudaMemcpy(d, pin, n, cudaMemcpyHostToDevice)); double h2dp = now() - t;
      t = now(); CK(cudaMemcpy(pin, d, n, cudaMemcpyDeviceToHost)); double d2hp = now() - t;
      t = now(); memcpy(page.data(), pin, n); double mc = now() - t;
      printf("%zu MiB rep %d: pageable H2D %.1f GB/s D2H %.1f GB/s; pinned H2D %.1f D2H %.1f GB/s; host memcpy %.1f GB/s; cudaMallocHost %.3f s\n",
             n >> 20, rep, n / h2d / 1e9, n / d2h / 1e9, n / h2dp / 1e9, n / d2hp / 1e9, n / mc / 1e9, t_alloc);
    }
    std::vector<unsigned char> reg(n, 2);
    t = now(); CK(cudaHostRegister(reg.data(), n, cudaHostRegisterDefault)); double t_reg = now() - t;
    t = now(); CK(cudaMemcpy(d, reg.data(), n, cudaMemcpyHostToDevice)); double h2dr = now() - t;
    t = now(); CK(cudaHostUnregister(reg.data())); double t_unreg = now() - t;
    printf("%zu MiB: cudaHostRegister %.3f s, H2D registered %.1f GB/s, unregister %.3f s\n", n >> 20, t_reg, n / h2dr / 1e9, t_unreg);
    CK(cudaFreeHost(pin)); CK(cudaFree(d));
  }
}
