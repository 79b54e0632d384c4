// Adversarial: dereferences a wild pointer on the device.
#include <cuda_runtime.h>
__global__ void bad_kernel(float* C) { float* p = (float*)0x10; C[0] = *p; }
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) { bad_kernel<<<1, 1>>>(C); }
