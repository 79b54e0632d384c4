// Wrong: writes zeros (a zero output).
#include <cuda_runtime.h>

extern "C" void pt_softmax_optimized(float* out, const float* x, int batch_size, int dim) {
    cudaMemsetAsync(out, 0, sizeof(float) * (size_t)batch_size * dim);
}
