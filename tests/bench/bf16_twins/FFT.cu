// BF16 twin of FFT: Stockham autosort radix-2 decimation in frequency (the baseline: bit reversal then
// decimation-in-time butterflies), all stages in FP32 on float2 scratch with FP32 twiddles from sincospif;
// the data is rounded to bf16 once, at the end (the baseline rounds after every stage).
#include <cuda_runtime.h>
#include <cuda_bf16.h>

static __global__ void fft_twin_load(float2* x, const __nv_bfloat16* re, const __nv_bfloat16* im, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) x[i] = make_float2(__bfloat162float(re[i]), __bfloat162float(im[i]));
}

// One stage: sub-transform length n, stride s (n * s == N); thread t < N/2 takes p = t / s, q = t % s.
static __global__ void fft_twin_stage(const float2* x, float2* y, int N, int n, int s) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= N / 2) return;
  int m = n / 2, p = t / s, q = t % s;
  float sn, cs;
  sincospif(-2.0f * (float)p / (float)n, &sn, &cs);
  float2 a = x[q + s * p], b = x[q + s * (p + m)];
  float dr = a.x - b.x, di = a.y - b.y;
  y[q + s * 2 * p] = make_float2(a.x + b.x, a.y + b.y);
  y[q + s * (2 * p + 1)] = make_float2(dr * cs - di * sn, dr * sn + di * cs);
}

static __global__ void fft_twin_store(const float2* x, __nv_bfloat16* re, __nv_bfloat16* im, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) {
    re[i] = __float2bfloat16(x[i].x);
    im[i] = __float2bfloat16(x[i].y);
  }
}

extern "C" void FFT_bf16_optimized(const __nv_bfloat16* input_real, const __nv_bfloat16* input_img, __nv_bfloat16* output_real,
                                   __nv_bfloat16* output_img, int N) {
  if (N <= 0) return;
  float2 *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, (size_t)N * sizeof(float2)) != cudaSuccess || cudaMalloc(&b, (size_t)N * sizeof(float2)) != cudaSuccess) {
    cudaFree(a);
    return;
  }
  const int threads = 256;
  fft_twin_load<<<(N + threads - 1) / threads, threads>>>(a, input_real, input_img, N);
  for (int n = N, s = 1; n > 1; n /= 2, s *= 2) {
    fft_twin_stage<<<(N / 2 + threads - 1) / threads, threads>>>(a, b, N, n, s);
    float2* t = a;
    a = b;
    b = t;
  }
  fft_twin_store<<<(N + threads - 1) / threads, threads>>>(a, output_real, output_img, N);
  cudaFree(a);
  cudaFree(b);
}
