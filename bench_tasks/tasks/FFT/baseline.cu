// MSKernelBench FFT baseline (ours), doing what the published baseline does: a forward, unnormalised
// complex DFT X[k] = sum_n x[n] e^(-2 pi i k n / N) of N (a power of two) points held as planar real and
// imaginary arrays, by an iterative radix-2 decimation-in-time FFT. Per call: 7 cudaMallocs (inputs,
// outputs, bit-reversal table, twiddle real and imaginary parts); a host bit-reversal table and a host
// twiddle table W[t] = cos(-2 pi t/N) + i sin(-2 pi t/N), t < N/2, computed in double; copies of the data
// and the tables to the device; a bit-reversal permutation kernel (256 per block); log2 N butterfly
// kernels (N/2 threads, 256 per block; stage s pairs (i1, i1 + 2^(s-1)) with twiddle W[pos * (N >> s)]:
// y = W x2, x1' = x1 + y, x2' = x1 - y), each followed by cudaDeviceSynchronize; copies of the result
// back; frees.
// FP32 (as published): the four data pointers are HOST pointers (the wrapper copies host<->device).
// BF16 (as published): the data pointers are DEVICE pointers (the published wrapper passes them to
// host->device copies, which works through unified addressing; we copy with cudaMemcpyDefault); twiddles
// are stored as bf16 and the data is rounded to bf16 after every stage (FP32 butterfly arithmetic).
#include <cmath>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kThreads = 256;

bool ok(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "FFT baseline: %s failed: %s\n", what, cudaGetErrorString(err));
  return false;
}

int log2_of(int N) {
  int l = 0;
  while ((1 << l) < N) ++l;
  return l;
}

std::vector<int> bit_reversal_table(int N, int log2n) {
  std::vector<int> rev(N);
  for (int i = 0; i < N; ++i) {
    int r = 0;
    for (int b = 0; b < log2n; ++b) r |= ((i >> b) & 1) << (log2n - 1 - b);
    rev[i] = r;
  }
  return rev;
}

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float from_float(float v, float*) { return v; }
__device__ __forceinline__ __nv_bfloat16 from_float(float v, __nv_bfloat16*) { return __float2bfloat16(v); }

template <typename T>
__device__ void bit_reverse(T* out_r, T* out_i, const T* in_r, const T* in_i, const int* rev, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) {
    out_r[i] = in_r[rev[i]];
    out_i[i] = in_i[rev[i]];
  }
}

template <typename T>
__device__ void butterfly(T* re, T* im, const T* tw_r, const T* tw_i, int N, int stage) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < N / 2) {
    int half = 1 << (stage - 1);
    int pos = t & (half - 1);
    int i1 = ((t >> (stage - 1)) << stage) + pos;
    int i2 = i1 + half;
    int w = pos * (N >> stage);
    float wr = to_float(tw_r[w]), wi = to_float(tw_i[w]);
    float xr = to_float(re[i2]), xi = to_float(im[i2]);
    float yr = wr * xr - wi * xi, yi = wr * xi + wi * xr;
    float ar = to_float(re[i1]), ai = to_float(im[i1]);
    re[i1] = from_float(ar + yr, re);
    im[i1] = from_float(ai + yi, im);
    re[i2] = from_float(ar - yr, re);
    im[i2] = from_float(ai - yi, im);
  }
}
}  // namespace

__global__ void fft_bit_reverse_kernel(float* out_r, float* out_i, const float* in_r, const float* in_i, const int* rev, int N) {
  bit_reverse(out_r, out_i, in_r, in_i, rev, N);
}
__global__ void fft_butterfly_kernel(float* re, float* im, const float* tw_r, const float* tw_i, int N, int stage) {
  butterfly(re, im, tw_r, tw_i, N, stage);
}
__global__ void fft_bf16_bit_reverse_kernel(__nv_bfloat16* out_r, __nv_bfloat16* out_i, const __nv_bfloat16* in_r, const __nv_bfloat16* in_i,
                                            const int* rev, int N) {
  bit_reverse(out_r, out_i, in_r, in_i, rev, N);
}
__global__ void fft_bf16_butterfly_kernel(__nv_bfloat16* re, __nv_bfloat16* im, const __nv_bfloat16* tw_r, const __nv_bfloat16* tw_i, int N,
                                          int stage) {
  butterfly(re, im, tw_r, tw_i, N, stage);
}

namespace {
template <typename T>
T twiddle_value(double v);
template <>
float twiddle_value<float>(double v) { return (float)v; }
template <>
__nv_bfloat16 twiddle_value<__nv_bfloat16>(double v) { return __float2bfloat16((float)v); }

// The whole published wrapper; `to_dev` / `to_host` are the copy kinds of the data (tables are host).
template <typename T>
void fft_call(const T* input_real, const T* input_img, T* output_real, T* output_img, int N, cudaMemcpyKind to_dev, cudaMemcpyKind to_host,
              void (*reverse)(T*, T*, const T*, const T*, const int*, int), void (*stage)(T*, T*, const T*, const T*, int, int)) {
  if (N <= 0) return;
  int log2n = log2_of(N);
  size_t n = (size_t)N, half = N / 2 > 0 ? (size_t)(N / 2) : 1;
  std::vector<int> rev = bit_reversal_table(N, log2n);
  std::vector<T> tw_r(half), tw_i(half);
  for (size_t t = 0; t < (size_t)(N / 2); ++t) {
    double angle = -2.0 * M_PI * (double)t / (double)N;
    tw_r[t] = twiddle_value<T>(std::cos(angle));
    tw_i[t] = twiddle_value<T>(std::sin(angle));
  }
  T *d_in_r = nullptr, *d_in_i = nullptr, *d_out_r = nullptr, *d_out_i = nullptr, *d_tw_r = nullptr, *d_tw_i = nullptr;
  int* d_rev = nullptr;
  bool good = ok(cudaMalloc(&d_in_r, n * sizeof(T)), "cudaMalloc") && ok(cudaMalloc(&d_in_i, n * sizeof(T)), "cudaMalloc") &&
              ok(cudaMalloc(&d_out_r, n * sizeof(T)), "cudaMalloc") && ok(cudaMalloc(&d_out_i, n * sizeof(T)), "cudaMalloc") &&
              ok(cudaMalloc(&d_rev, n * sizeof(int)), "cudaMalloc") && ok(cudaMalloc(&d_tw_r, half * sizeof(T)), "cudaMalloc") &&
              ok(cudaMalloc(&d_tw_i, half * sizeof(T)), "cudaMalloc");
  good = good && ok(cudaMemcpy(d_in_r, input_real, n * sizeof(T), to_dev), "cudaMemcpy(input_real)") &&
         ok(cudaMemcpy(d_in_i, input_img, n * sizeof(T), to_dev), "cudaMemcpy(input_img)") &&
         ok(cudaMemcpy(d_rev, rev.data(), n * sizeof(int), cudaMemcpyHostToDevice), "cudaMemcpy(bit reversal)") &&
         ok(cudaMemcpy(d_tw_r, tw_r.data(), half * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy(twiddles)") &&
         ok(cudaMemcpy(d_tw_i, tw_i.data(), half * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy(twiddles)");
  if (good) {
    reverse(d_out_r, d_out_i, d_in_r, d_in_i, d_rev, N);
    for (int s = 1; s <= log2n && good; ++s) {
      stage(d_out_r, d_out_i, d_tw_r, d_tw_i, N, s);
      good = ok(cudaDeviceSynchronize(), "butterfly stage");
    }
    good = good && ok(cudaMemcpy(output_real, d_out_r, n * sizeof(T), to_host), "cudaMemcpy(output_real)") &&
           ok(cudaMemcpy(output_img, d_out_i, n * sizeof(T), to_host), "cudaMemcpy(output_img)");
  }
  for (void* p : {(void*)d_in_r, (void*)d_in_i, (void*)d_out_r, (void*)d_out_i, (void*)d_rev, (void*)d_tw_r, (void*)d_tw_i})
    if (p) ok(cudaFree(p), "cudaFree");
}

void launch_reverse(float* o_r, float* o_i, const float* i_r, const float* i_i, const int* rev, int N) {
  fft_bit_reverse_kernel<<<(N + kThreads - 1) / kThreads, kThreads>>>(o_r, o_i, i_r, i_i, rev, N);
}
void launch_stage(float* re, float* im, const float* tw_r, const float* tw_i, int N, int s) {
  fft_butterfly_kernel<<<(N / 2 + kThreads - 1) / kThreads, kThreads>>>(re, im, tw_r, tw_i, N, s);
}
void launch_reverse_bf16(__nv_bfloat16* o_r, __nv_bfloat16* o_i, const __nv_bfloat16* i_r, const __nv_bfloat16* i_i, const int* rev, int N) {
  fft_bf16_bit_reverse_kernel<<<(N + kThreads - 1) / kThreads, kThreads>>>(o_r, o_i, i_r, i_i, rev, N);
}
void launch_stage_bf16(__nv_bfloat16* re, __nv_bfloat16* im, const __nv_bfloat16* tw_r, const __nv_bfloat16* tw_i, int N, int s) {
  fft_bf16_butterfly_kernel<<<(N / 2 + kThreads - 1) / kThreads, kThreads>>>(re, im, tw_r, tw_i, N, s);
}
}  // namespace

extern "C" void FFT(const float* input_real, const float* input_img, float* output_real, float* output_img, int N) {
  fft_call<float>(input_real, input_img, output_real, output_img, N, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, launch_reverse,
                  launch_stage);
  cudaDeviceSynchronize();
}

extern "C" void FFT_bf16(const __nv_bfloat16* input_real, const __nv_bfloat16* input_img, __nv_bfloat16* output_real, __nv_bfloat16* output_img, int N) {
  fft_call<__nv_bfloat16>(input_real, input_img, output_real, output_img, N, cudaMemcpyDefault, cudaMemcpyDefault, launch_reverse_bf16,
                          launch_stage_bf16);
  cudaDeviceSynchronize();
}
