// Honest: softmax over dim 1 of [batch_size, dim], one block per row (max, sum of exp, normalize).
__global__ void softmax_kernel(float* out, const float* x, int dim) {
    __shared__ float red[256];
    const float* row = x + (long)blockIdx.x * dim;
    float* orow = out + (long)blockIdx.x * dim;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < dim; j += blockDim.x) m = fmaxf(m, row[j]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.0f;
    for (int j = threadIdx.x; j < dim; j += blockDim.x) sum += expf(row[j] - m);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    float inv = 1.0f / red[0];
    for (int j = threadIdx.x; j < dim; j += blockDim.x) orow[j] = expf(row[j] - m) * inv;
}

extern "C" void pt_softmax_optimized(float* out, const float* x, int batch_size, int dim) {
    softmax_kernel<<<batch_size, 256>>>(out, x, dim);
}
