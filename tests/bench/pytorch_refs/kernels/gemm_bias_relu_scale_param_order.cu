// Wrong: believes the bias comes before the weight (it reads the bias as the weight, wrapping, and the weight as the bias).
__global__ void fused_kernel(float* out, const float* x, const float* w, const float* b, int batch, int in_f, int out_f) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y;
    if (j >= out_f) return;
    const float* xr = x + (long)i * in_f;
    float acc = 0.0f;
    for (int t = 0; t < in_f; ++t) acc += xr[t] * w[((long)j * in_f + t) % out_f];
    acc += b[j];
    out[(long)i * out_f + j] = fmaxf(acc, 0.0f) * 0.5f;
}

extern "C" void pt_gemm_bias_relu_scale_optimized(float* out, const float* x, const float* linear_bias, const float* linear_weight,
                                                  int batch_size, int in_features, int out_features) {
    dim3 grid((out_features + 127) / 128, batch_size);
    fused_kernel<<<grid, 128>>>(out, x, linear_weight, linear_bias, batch_size, in_features, out_features);
}
