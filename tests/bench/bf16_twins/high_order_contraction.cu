// BF16 twin of high_order_contraction: each output sums over y outer and x inner into one FP32 partial per
// y, the partials added in increasing y (the baseline: x outer, y inner, one sequential chain); one rounding.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

static __global__ void hoc_twin(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int a_dim, int b_dim, int c_dim, int x_dim,
                                int y_dim) {
  long long total = (long long)a_dim * b_dim * c_dim;
  for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += (long long)blockDim.x * gridDim.x) {
    long long c = idx % c_dim;
    long long b = (idx / c_dim) % b_dim;
    long long a = idx / ((long long)b_dim * c_dim);
    float sum = 0.0f;
    for (int y = 0; y < y_dim; ++y) {
      float part = 0.0f;
      for (int x = 0; x < x_dim; ++x)
        part = fmaf(__bfloat162float(A[((a * x_dim + x) * b_dim + b) * y_dim + y]), __bfloat162float(B[((long long)x * c_dim + c) * y_dim + y]),
                    part);
      sum += part;
    }
    C[idx] = __float2bfloat16(sum);
  }
}

extern "C" void high_order_contraction_bf16_optimized(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int a_dim, int b_dim,
                                                      int c_dim, int x_dim, int y_dim) {
  long long total = (long long)a_dim * b_dim * c_dim;
  if (total <= 0) return;
  long long blocks = (total + 127) / 128;
  hoc_twin<<<(unsigned)(blocks < 65535 ? blocks : 65535), 128>>>(A, B, C, a_dim, b_dim, c_dim, x_dim, y_dim);
}
