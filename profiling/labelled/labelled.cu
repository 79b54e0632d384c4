// Labelled kernels: each one's bottleneck is known by construction (see manifest.toml).
//
//   labelled --list        names of the kernels
//   labelled NAME          set up NAME's inputs, then ONE launch of NAME between
//                          cudaProfilerStart/Stop (profile with `ncu --profile-from-start off`)
//
// compute:          long FMA / SFU / tensor-core chains with register operands, no memory traffic
// memory_bandwidth: streaming copies, saxpy, triad, a read-only reduction over 256 MB
// memory_latency:   dependent random loads (pointer chasing) with few warps, single-block grids
//
// Build: nvcc -O3 -gencode=arch=compute_90,code=sm_90 -o labelled labelled.cu
#include <cuda_bf16.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    cudaError_t err_ = (call);                                                                   \
    if (err_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #call, __FILE__, __LINE__,                 \
              cudaGetErrorString(err_));                                                         \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

typedef __nv_bfloat16 bf16;
typedef __nv_bfloat162 bf162;

static int g_sms = 0;

// ---------------------------------------------------------------------------------------------
// compute
__global__ void fma_ilp_fp32(float* out, float a, float b, int iters) {
  float x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
#pragma unroll 4
  for (int i = 0; i < iters; ++i) {
    x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
    x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

__global__ void fma_chain_fp32(float* out, float a, float b, int iters) {
  float x = threadIdx.x * 1e-3f;
#pragma unroll 8
  for (int i = 0; i < iters; ++i) x = fmaf(x, a, b);
  out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

__global__ void sfu_fp32(float* out, int iters) {
  float x0 = threadIdx.x * 1e-3f, x1 = x0 + 0.25f, x2 = x0 + 0.5f, x3 = x0 + 0.75f;
#pragma unroll 4
  for (int i = 0; i < iters; ++i) {
    x0 = __sinf(x0); x1 = __cosf(x1); x2 = __sinf(x2); x3 = __cosf(x3);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3;
}

__global__ void hfma2_ilp_bf16(bf16* out, float af, float bf, int iters) {
  bf162 a = __float2bfloat162_rn(af), b = __float2bfloat162_rn(bf);
  bf162 x[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) x[k] = __float2bfloat162_rn(threadIdx.x * 1e-3f + k);
#pragma unroll 4
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 8; ++k) x[k] = __hfma2(x[k], a, b);
  }
  bf162 s = x[0];
#pragma unroll
  for (int k = 1; k < 8; ++k) s = __hadd2(s, x[k]);
  out[blockIdx.x * blockDim.x + threadIdx.x] = __hadd(s.x, s.y);
}

__global__ void mma_bf16(float* out, int iters) {
  using namespace nvcuda;
  __shared__ bf16 sa[256], sb[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) {
    sa[i] = __float2bfloat16(0.01f * (i % 7));
    sb[i] = __float2bfloat16(0.01f * (i % 5));
  }
  __syncthreads();
  wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c0, c1, c2, c3;
  wmma::load_matrix_sync(a, sa, 16);
  wmma::load_matrix_sync(b, sb, 16);
  wmma::fill_fragment(c0, 0.0f); wmma::fill_fragment(c1, 0.0f);
  wmma::fill_fragment(c2, 0.0f); wmma::fill_fragment(c3, 0.0f);
  for (int i = 0; i < iters; ++i) {
    wmma::mma_sync(c0, a, b, c0); wmma::mma_sync(c1, a, b, c1);
    wmma::mma_sync(c2, a, b, c2); wmma::mma_sync(c3, a, b, c3);
  }
  for (int k = 0; k < c0.num_elements; ++k) c0.x[k] += c1.x[k] + c2.x[k] + c3.x[k];
  int warp = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  wmma::store_matrix_sync(out + (size_t)warp * 256, c0, 16, wmma::mem_row_major);
}

// ---------------------------------------------------------------------------------------------
// memory bandwidth
__global__ void copy_fp32(const float4* __restrict__ in, float4* __restrict__ out, size_t n4) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) out[i] = in[i];
}

__global__ void saxpy_fp32(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void triad_fp32(float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ c, float s, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) a[i] = b[i] + s * c[i];
}

__global__ void copy_bf16(const uint4* __restrict__ in, uint4* __restrict__ out, size_t n16) {  // 8 bf16 per uint4
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16; i += (size_t)gridDim.x * blockDim.x) out[i] = in[i];
}

__global__ void axpy_bf16(const bf162* __restrict__ x, bf162* __restrict__ y, float af, size_t n2) {
  bf162 a = __float2bfloat162_rn(af);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n2; i += (size_t)gridDim.x * blockDim.x) y[i] = __hfma2(a, x[i], y[i]);
}

__global__ void reduce_sum_bf16(const uint4* __restrict__ in, float* __restrict__ out, size_t n16) {
  float s = 0.0f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = in[i];
    const bf162* h = reinterpret_cast<const bf162*>(&v);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      float2 f = __bfloat1622float2(h[k]);
      s += f.x + f.y;
    }
  }
  for (int off = 16; off > 0; off /= 2) s += __shfl_down_sync(0xffffffffu, s, off);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, s);
}

// ---------------------------------------------------------------------------------------------
// memory latency
__global__ void chase_fp32(const int* __restrict__ next, const float* __restrict__ val, float* out, int steps, int stride) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int p = t * stride;
  float acc = 0.0f;
  for (int i = 0; i < steps; ++i) {
    p = next[p];
    acc += val[p];
  }
  out[t] = acc + p;
}

__global__ void chase_bf16(const int* __restrict__ next, const bf16* __restrict__ val, bf16* out, int steps, int stride) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int p = t * stride;
  float acc = 0.0f;
  for (int i = 0; i < steps; ++i) {
    p = next[p];
    acc += __bfloat162float(val[p]);
  }
  out[t] = __float2bfloat16(acc + p);
}

__global__ void tiny_grid_fp32(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) c[i] = a[i] + b[i];  // one block, as the published vector_add
}

__global__ void tiny_grid_bf16(const bf16* __restrict__ a, const bf16* __restrict__ b, bf16* __restrict__ c, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) c[i] = __hadd(a[i], b[i]);
}

// ---------------------------------------------------------------------------------------------
// set-up helpers (outside the profiled range)
__global__ void init_fp32(float* p, size_t n, float scale) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = scale * (float)((i * 2654435761u) % 1000u) * 1e-3f;
}

__global__ void init_bf16(bf16* p, size_t n, float scale) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = __float2bfloat16(scale * (float)((i * 2654435761u) % 1000u) * 1e-3f);
}

template <typename T>
static T* dalloc(size_t n) {
  T* p = nullptr;
  CHECK(cudaMalloc(&p, n * sizeof(T)));
  return p;
}

static float* dfp32(size_t n, float scale = 1.0f) {
  float* p = dalloc<float>(n);
  init_fp32<<<g_sms * 8, 256>>>(p, n, scale);
  CHECK(cudaGetLastError());
  return p;
}

static bf16* dbf16(size_t n, float scale = 1.0f) {
  bf16* p = dalloc<bf16>(n);
  init_bf16<<<g_sms * 8, 256>>>(p, n, scale);
  CHECK(cudaGetLastError());
  return p;
}

// A random single-cycle permutation (Sattolo): following next[] from any node visits every node.
static int* dcycle(int n) {
  std::vector<int> next(n);
  for (int i = 0; i < n; ++i) next[i] = i;
  std::mt19937_64 rng(12345);
  for (int i = n - 1; i > 0; --i) {
    int j = (int)(rng() % (uint64_t)i);
    std::swap(next[i], next[j]);
  }
  int* d = dalloc<int>(n);
  CHECK(cudaMemcpy(d, next.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  return d;
}

static void begin() {
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaProfilerStart());
}

static void end() {
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaProfilerStop());
}

template <typename T>
static double checksum(const T* d, size_t n) {
  size_t k = n < 4096 ? n : 4096;
  std::vector<T> h(k);
  CHECK(cudaMemcpy(h.data(), d, k * sizeof(T), cudaMemcpyDeviceToHost));
  double s = 0;
  for (size_t i = 0; i < k; ++i) {
    if constexpr (sizeof(T) == 2) s += (double)__bfloat162float(h[i]);
    else s += (double)h[i];
  }
  return s;
}

static const size_t STREAM_FP32 = (size_t)1 << 26;  // 256 MB per fp32 array
static const size_t STREAM_BF16 = (size_t)1 << 27;  // 256 MB per bf16 array
static const int CHASE_NODES = 1 << 24;              // 64 MB of links, beyond the 60 MB L2
static const int CHASE_STEPS = 4096;

static double run(const char* name) {
  const int sms = g_sms;
  if (!strcmp(name, "fma_ilp_fp32")) {
    int blocks = sms * 8, threads = 256;
    float* out = dalloc<float>((size_t)blocks * threads);
    begin(); fma_ilp_fp32<<<blocks, threads>>>(out, 0.999999f, 1e-6f, 4096); end();
    return checksum(out, (size_t)blocks * threads);
  }
  if (!strcmp(name, "fma_chain_fp32")) {
    int blocks = sms * 8, threads = 512;
    float* out = dalloc<float>((size_t)blocks * threads);
    begin(); fma_chain_fp32<<<blocks, threads>>>(out, 0.999999f, 1e-6f, 16384); end();
    return checksum(out, (size_t)blocks * threads);
  }
  if (!strcmp(name, "sfu_fp32")) {
    int blocks = sms * 8, threads = 256;
    float* out = dalloc<float>((size_t)blocks * threads);
    begin(); sfu_fp32<<<blocks, threads>>>(out, 2048); end();
    return checksum(out, (size_t)blocks * threads);
  }
  if (!strcmp(name, "hfma2_ilp_bf16")) {
    int blocks = sms * 8, threads = 256;
    bf16* out = dalloc<bf16>((size_t)blocks * threads);
    begin(); hfma2_ilp_bf16<<<blocks, threads>>>(out, 0.99f, 0.001f, 4096); end();
    return checksum(out, (size_t)blocks * threads);
  }
  if (!strcmp(name, "mma_bf16")) {
    int blocks = sms * 4, threads = 256;
    float* out = dalloc<float>((size_t)blocks * (threads / 32) * 256);
    begin(); mma_bf16<<<blocks, threads>>>(out, 1024); end();
    return checksum(out, (size_t)blocks * (threads / 32) * 256);
  }
  if (!strcmp(name, "copy_fp32")) {
    float* in = dfp32(STREAM_FP32);
    float* out = dalloc<float>(STREAM_FP32);
    begin(); copy_fp32<<<sms * 16, 256>>>((const float4*)in, (float4*)out, STREAM_FP32 / 4); end();
    return checksum(out, STREAM_FP32);
  }
  if (!strcmp(name, "saxpy_fp32")) {  // the example of shared/notes/ncu.md: 2^26 floats, 256 threads per block
    float* x = dfp32(STREAM_FP32);
    float* y = dfp32(STREAM_FP32, 0.5f);
    int n = (int)STREAM_FP32;
    begin(); saxpy_fp32<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y); end();
    return checksum(y, STREAM_FP32);
  }
  if (!strcmp(name, "triad_fp32")) {
    float* a = dalloc<float>(STREAM_FP32);
    float* b = dfp32(STREAM_FP32);
    float* c = dfp32(STREAM_FP32, 0.5f);
    begin(); triad_fp32<<<sms * 16, 256>>>(a, b, c, 3.0f, STREAM_FP32); end();
    return checksum(a, STREAM_FP32);
  }
  if (!strcmp(name, "copy_bf16")) {
    bf16* in = dbf16(STREAM_BF16);
    bf16* out = dalloc<bf16>(STREAM_BF16);
    begin(); copy_bf16<<<sms * 16, 256>>>((const uint4*)in, (uint4*)out, STREAM_BF16 / 8); end();
    return checksum(out, STREAM_BF16);
  }
  if (!strcmp(name, "axpy_bf16")) {
    bf16* x = dbf16(STREAM_BF16);
    bf16* y = dbf16(STREAM_BF16, 0.5f);
    begin(); axpy_bf16<<<sms * 16, 256>>>((const bf162*)x, (bf162*)y, 2.0f, STREAM_BF16 / 2); end();
    return checksum(y, STREAM_BF16);
  }
  if (!strcmp(name, "reduce_sum_bf16")) {
    bf16* in = dbf16(STREAM_BF16);
    float* out = dalloc<float>(1);
    CHECK(cudaMemset(out, 0, sizeof(float)));
    begin(); reduce_sum_bf16<<<sms * 16, 256>>>((const uint4*)in, out, STREAM_BF16 / 8); end();
    return checksum(out, 1);
  }
  if (!strcmp(name, "chase_fp32") || !strcmp(name, "chase_wide_fp32")) {
    bool wide = name[5] == 'w';  // wide: one warp on every SM; narrow: one warp in all
    int blocks = wide ? sms : 1, threads = 32;
    int* next = dcycle(CHASE_NODES);
    float* val = dfp32(CHASE_NODES);
    float* out = dalloc<float>((size_t)blocks * threads);
    int stride = CHASE_NODES / (blocks * threads);
    begin(); chase_fp32<<<blocks, threads>>>(next, val, out, wide ? CHASE_STEPS / 2 : CHASE_STEPS, stride); end();
    return checksum(out, (size_t)blocks * threads);
  }
  if (!strcmp(name, "chase_bf16")) {
    int blocks = 1, threads = 128;
    int* next = dcycle(CHASE_NODES);
    bf16* val = dbf16(CHASE_NODES);
    bf16* out = dalloc<bf16>((size_t)blocks * threads);
    begin(); chase_bf16<<<blocks, threads>>>(next, val, out, CHASE_STEPS, CHASE_NODES / (blocks * threads)); end();
    return checksum(out, (size_t)blocks * threads);
  }
  if (!strcmp(name, "tiny_grid_fp32")) {
    int n = 1 << 22;
    float* a = dfp32(n);
    float* b = dfp32(n, 0.5f);
    float* c = dalloc<float>(n);
    begin(); tiny_grid_fp32<<<1, 1024>>>(a, b, c, n); end();
    return checksum(c, n);
  }
  if (!strcmp(name, "tiny_grid_bf16")) {
    int n = 1 << 22;
    bf16* a = dbf16(n);
    bf16* b = dbf16(n, 0.5f);
    bf16* c = dalloc<bf16>(n);
    begin(); tiny_grid_bf16<<<1, 1024>>>(a, b, c, n); end();
    return checksum(c, n);
  }
  fprintf(stderr, "unknown kernel %s (see --list)\n", name);
  exit(2);
}

static const char* NAMES[] = {
    "fma_ilp_fp32", "fma_chain_fp32", "sfu_fp32", "hfma2_ilp_bf16", "mma_bf16",
    "copy_fp32", "saxpy_fp32", "triad_fp32", "copy_bf16", "axpy_bf16", "reduce_sum_bf16",
    "chase_fp32", "chase_wide_fp32", "chase_bf16", "tiny_grid_fp32", "tiny_grid_bf16",
};

int main(int argc, char** argv) {
  if (argc != 2 || !strcmp(argv[1], "--list")) {
    for (const char* n : NAMES) printf("%s\n", n);
    return argc == 2 ? 0 : 2;
  }
  int dev = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, dev));
  double s = run(argv[1]);
  printf("%s ok checksum %.6g\n", argv[1], s);
  return 0;
}
