// MSKernelBench stencil_2d baseline (ours), doing what the published baseline does: one explicit
// 5-point heat/Jacobi step with two kernels on 16x16 blocks, one for the interior
//   u_new[i,j] = c + r * (u[i,j-1] + u[i,j+1] + u[i+1,j] + u[i-1,j] - 4c),  c = u[i,j]
// and one copying the boundary cells. Layout u[i * ny + j], i the slow index. Thread x maps to i (the
// slow index), as published, so a warp's accesses are strided by ny: uncoalesced. BF16: inputs
// converted to float, FP32 arithmetic, one rounding at the store.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void stencil_2d_interior_kernel(float* u_new, const float* u_old, float r, int nx, int ny) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= 1 && i < nx - 1 && j >= 1 && j < ny - 1) {
    size_t idx = (size_t)i * ny + j;
    float c = u_old[idx];
    u_new[idx] = c + r * (u_old[idx - 1] + u_old[idx + 1] + u_old[idx + ny] + u_old[idx - ny] - 4.0f * c);
  }
}

__global__ void stencil_2d_boundary_kernel(float* u_new, const float* u_old, int nx, int ny) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < nx && j < ny && (i == 0 || i == nx - 1 || j == 0 || j == ny - 1)) {
    size_t idx = (size_t)i * ny + j;
    u_new[idx] = u_old[idx];
  }
}

__global__ void stencil_2d_bf16_interior_kernel(__nv_bfloat16* u_new, const __nv_bfloat16* u_old, float r, int nx, int ny) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= 1 && i < nx - 1 && j >= 1 && j < ny - 1) {
    size_t idx = (size_t)i * ny + j;
    float c = __bfloat162float(u_old[idx]);
    float sum = __bfloat162float(u_old[idx - 1]) + __bfloat162float(u_old[idx + 1]) + __bfloat162float(u_old[idx + ny]) +
                __bfloat162float(u_old[idx - ny]);
    u_new[idx] = __float2bfloat16(c + r * (sum - 4.0f * c));
  }
}

__global__ void stencil_2d_bf16_boundary_kernel(__nv_bfloat16* u_new, const __nv_bfloat16* u_old, int nx, int ny) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < nx && j < ny && (i == 0 || i == nx - 1 || j == 0 || j == ny - 1)) {
    size_t idx = (size_t)i * ny + j;
    u_new[idx] = u_old[idx];
  }
}

extern "C" void stencil_2d(float* u_new, const float* u_old, float r, int nx, int ny) {
  dim3 block(16, 16);
  dim3 grid((nx + 15) / 16, (ny + 15) / 16);
  if (nx > 0 && ny > 0) {
    stencil_2d_interior_kernel<<<grid, block>>>(u_new, u_old, r, nx, ny);
    stencil_2d_boundary_kernel<<<grid, block>>>(u_new, u_old, nx, ny);
  }
  cudaDeviceSynchronize();
}

extern "C" void stencil_2d_bf16(__nv_bfloat16* u_new, const __nv_bfloat16* u_old, float r, int nx, int ny) {
  dim3 block(16, 16);
  dim3 grid((nx + 15) / 16, (ny + 15) / 16);
  if (nx > 0 && ny > 0) {
    stencil_2d_bf16_interior_kernel<<<grid, block>>>(u_new, u_old, r, nx, ny);
    stencil_2d_bf16_boundary_kernel<<<grid, block>>>(u_new, u_old, nx, ny);
  }
  cudaDeviceSynchronize();
}
