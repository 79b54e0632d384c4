// Wrong: the last batch is skipped.
__global__ void bmm_kernel(float* C, const float* A, const float* B, int m, int k, int n) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int b = blockIdx.z;
    if (row >= m || col >= n) return;
    const float* a = A + (long)b * m * k + (long)row * k;
    const float* bb = B + (long)b * k * n + col;
    float acc = 0.0f;
    for (int i = 0; i < k; ++i) acc += a[i] * bb[(long)i * n];
    C[(long)b * m * n + (long)row * n + col] = acc;
}

extern "C" void pt_batched_gemm_optimized(float* out, const float* A, const float* B, int batch_size, int m, int k, int n) {
    dim3 block(16, 16);
    dim3 grid((n + 15) / 16, (m + 15) / 16, batch_size - 1);
    bmm_kernel<<<grid, block>>>(out, A, B, m, k, n);
}
