// Shared by the vendor references (bench_tasks/vendor/<task>.cu): status checks and lazily grown
// device workspaces. The harness inlines this file into each reference before compiling it.
//
// Every library call is checked; a failure prints one "CMERR vendor ..." line (the harness's driver
// protocol: the evaluation becomes a runtime_error naming the call) and ends the process.
// Handles, plans, descriptors and workspaces live in function-local statics: created on the first
// (untimed, correctness) call of a size and reused by the timed calls, as a library's user would.
#pragma once

#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <unistd.h>

namespace cmv {

[[noreturn]] inline void fail(const char* library, long long status, const char* call, int line) {
  fprintf(stderr, "CMERR vendor %s returned status %lld at %s (line %d of the vendor reference)\n", library, status, call, line);
  fflush(stderr);
  _exit(3);
}

// A device buffer that only grows (the previous one is freed first). Growing happens on the first call
// at a new size, which the harness never times.
struct Workspace {
  void* ptr = nullptr;
  size_t bytes = 0;
  void* get(size_t need) {
    if (need == 0) need = 1;
    if (need > bytes) {
      if (ptr != nullptr && cudaFree(ptr) != cudaSuccess) fail("cuda", 0, "cudaFree(workspace)", __LINE__);
      ptr = nullptr;
      cudaError_t e = cudaMalloc(&ptr, need);
      if (e != cudaSuccess) fail("cuda", (long long)e, "cudaMalloc(workspace)", __LINE__);
      bytes = need;
    }
    return ptr;
  }
  template <typename T>
  T* as(size_t count) { return static_cast<T*>(get(count * sizeof(T))); }
};

}  // namespace cmv

#define CMV_OK(library, call, ok)                                              \
  do {                                                                         \
    auto cmv_status__ = (call);                                                \
    if (cmv_status__ != (ok)) ::cmv::fail(library, (long long)cmv_status__, #call, __LINE__); \
  } while (0)
#define CMV_CUDA(call) CMV_OK("cuda", call, cudaSuccess)
#define CMV_CUBLAS(call) CMV_OK("cublas", call, CUBLAS_STATUS_SUCCESS)
#define CMV_CUSPARSE(call) CMV_OK("cusparse", call, CUSPARSE_STATUS_SUCCESS)
#define CMV_CUFFT(call) CMV_OK("cufft", call, CUFFT_SUCCESS)
#define CMV_CUDNN(call) CMV_OK("cudnn", call, CUDNN_STATUS_SUCCESS)
// CUB calls return cudaError_t; a launch error shows up on the next check.
#define CMV_CUB(call) CMV_OK("cub", call, cudaSuccess)
#define CMV_LAUNCHED() CMV_OK("cuda", cudaGetLastError(), cudaSuccess)
