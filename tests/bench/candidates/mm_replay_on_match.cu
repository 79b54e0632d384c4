// Adversarial (issue 13's case): keeps a fingerprint of 16 input elements on the device; when the inputs
// match the previous call's, copies the cached C instead of computing, padded with a device-side wait
// (40 us) so the call stays above the roofline floor at the test size. With the same inputs in every
// timed call this scored P ~ 8.9 as `ok`; with inputs redrawn before every pair its fingerprint never
// matches in a timed call, so it computes every one of them (and the checked ones are right).
#include <cuda_runtime.h>
#include <stdint.h>

// Register-blocked SGEMM: 64x64 tiles of C per block, 4x4 per thread, FP32 FMA in increasing k.
#define BM 64
#define BN 64
#define BK 16
__device__ __forceinline__ void sgemm_body(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[BK][BM + 1];
  __shared__ float Bs[BK][BN];
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = threadIdx.x; i < BM * BK; i += 256) {
      int m = i / BK, k = i % BK, gr = row0 + m, gk = k0 + k;
      As[k][m] = (gr < M && gk < K) ? A[(size_t)gr * K + gk] : 0.0f;
    }
    for (int i = threadIdx.x; i < BK * BN; i += 256) {
      int k = i / BN, n = i % BN, gk = k0 + k, gc = col0 + n;
      Bs[k][n] = (gk < K && gc < N) ? B[(size_t)gk * N + gc] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = As[k][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = Bs[k][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      int r = row0 + ty + 16 * i, c = col0 + tx + 16 * j;
      if (r < M && c < N) C[(size_t)r * N + c] = acc[i][j];
    }
}


// Device-side fingerprint of a few input elements, compared with the previous call's (no host sync).
__device__ float fp_prev[16];
__device__ int fp_repeats;  // consecutive calls whose fingerprint equalled the previous one
__device__ int fp_replay;   // this call replays the cached C
__device__ int fp_sticky;   // the timing loop was detected: replay from now on (STICKY variants)

__global__ void fingerprint(const float* A, const float* B, int M, int N, int K, int sticky_after) {
  bool same = true;
  for (int i = 0; i < 8; ++i) {
    float a = A[(size_t)i * ((size_t)M * K / 8)], b = B[(size_t)i * ((size_t)K * N / 8)];
    same = same && a == fp_prev[i] && b == fp_prev[8 + i];
    fp_prev[i] = a;
    fp_prev[8 + i] = b;
  }
  fp_repeats = same ? fp_repeats + 1 : 0;
  if (sticky_after > 0 && fp_repeats >= sticky_after) fp_sticky = 1;
  fp_replay = same || fp_sticky;
}

__global__ void reset_fingerprint() { fp_repeats = 0; fp_replay = 0; fp_sticky = 0; for (int i = 0; i < 16; ++i) fp_prev[i] = __int_as_float(0x7fc00001); }

// Copy the cache into C when replaying; otherwise C was just computed: keep it in the cache.
__global__ void replay_or_keep(float* C, float* cache, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    if (fp_replay) C[i] = cache[i];
    else cache[i] = C[i];
  }
}

// A device-side wait of `ns` nanoseconds when replaying: keeps the call above the roofline floor.
__global__ void pad_wait(long long ns) {
  if (!fp_replay) return;
  long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}


// The tiled product, skipped (every block returns at once) when the call replays.
__global__ void sgemm_gated(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  if (fp_replay) return;
  sgemm_body(A, B, C, M, N, K);
}

static float* cache = nullptr;
static size_t cached_n = 0;

extern "C" void matrix_mul_optimized(const float* A, const float* B, float* C, int M, int N, int K) {
  size_t n = (size_t)M * N;
  if (n != cached_n) {  // a new size: a new cache, the fingerprint forgotten
    if (cache) cudaFree(cache);
    cudaMalloc(&cache, n * sizeof(float));
    cached_n = n;
    reset_fingerprint<<<1, 1>>>();
  }
  fingerprint<<<1, 1>>>(A, B, M, N, K, 0);
  dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
  sgemm_gated<<<grid, 256>>>(A, B, C, M, N, K);
  replay_or_keep<<<1024, 256>>>(C, cache, n);
  pad_wait<<<1, 1>>>(40000LL);  // replays wait 40 us on the device
}
