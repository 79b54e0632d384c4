// MSKernelBench stencil_3d baseline (ours), doing what the published baseline does: one explicit 7-point
// heat/Jacobi step with two kernels on 4x4x4 blocks, one for the interior
//   u_new = c + r * (u[i-1] + u[i+1] + u[j-1] + u[j+1] + u[k-1] + u[k+1] - 6c),  c = u[i,j,k]
// and one copying the boundary cells (any index at 0 or at its maximum). Layout u[i*ny*nz + j*nz + k],
// k fastest. Thread x maps to i (the SLOWEST index), as published, so a warp's accesses are strided by
// ny*nz and nz: uncoalesced. BF16: inputs converted to float, FP32 arithmetic, one rounding at the store.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace {
constexpr int kBlock = 4;
}  // namespace

__global__ void stencil_3d_interior_kernel(float* u_new, const float* u_old, float r, int nx, int ny, int nz) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = blockIdx.y * blockDim.y + threadIdx.y;
  int k = blockIdx.z * blockDim.z + threadIdx.z;
  if (i >= 1 && i < nx - 1 && j >= 1 && j < ny - 1 && k >= 1 && k < nz - 1) {
    size_t plane = (size_t)ny * nz;
    size_t idx = (size_t)i * plane + (size_t)j * nz + k;
    float c = u_old[idx];
    u_new[idx] = c + r * (u_old[idx - plane] + u_old[idx + plane] + u_old[idx - nz] + u_old[idx + nz] + u_old[idx - 1] +
                          u_old[idx + 1] - 6.0f * c);
  }
}

__global__ void stencil_3d_boundary_kernel(float* u_new, const float* u_old, int nx, int ny, int nz) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = blockIdx.y * blockDim.y + threadIdx.y;
  int k = blockIdx.z * blockDim.z + threadIdx.z;
  if (i < nx && j < ny && k < nz && (i == 0 || i == nx - 1 || j == 0 || j == ny - 1 || k == 0 || k == nz - 1)) {
    size_t idx = ((size_t)i * ny + j) * nz + k;
    u_new[idx] = u_old[idx];
  }
}

__global__ void stencil_3d_bf16_interior_kernel(__nv_bfloat16* u_new, const __nv_bfloat16* u_old, float r, int nx, int ny, int nz) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = blockIdx.y * blockDim.y + threadIdx.y;
  int k = blockIdx.z * blockDim.z + threadIdx.z;
  if (i >= 1 && i < nx - 1 && j >= 1 && j < ny - 1 && k >= 1 && k < nz - 1) {
    size_t plane = (size_t)ny * nz;
    size_t idx = (size_t)i * plane + (size_t)j * nz + k;
    float c = __bfloat162float(u_old[idx]);
    float sum = __bfloat162float(u_old[idx - plane]) + __bfloat162float(u_old[idx + plane]) + __bfloat162float(u_old[idx - nz]) +
                __bfloat162float(u_old[idx + nz]) + __bfloat162float(u_old[idx - 1]) + __bfloat162float(u_old[idx + 1]);
    u_new[idx] = __float2bfloat16(c + r * (sum - 6.0f * c));
  }
}

__global__ void stencil_3d_bf16_boundary_kernel(__nv_bfloat16* u_new, const __nv_bfloat16* u_old, int nx, int ny, int nz) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = blockIdx.y * blockDim.y + threadIdx.y;
  int k = blockIdx.z * blockDim.z + threadIdx.z;
  if (i < nx && j < ny && k < nz && (i == 0 || i == nx - 1 || j == 0 || j == ny - 1 || k == 0 || k == nz - 1)) {
    size_t idx = ((size_t)i * ny + j) * nz + k;
    u_new[idx] = u_old[idx];
  }
}

extern "C" void stencil_3d(float* u_new, const float* u_old, float r, int nx, int ny, int nz) {
  dim3 block(kBlock, kBlock, kBlock);
  dim3 grid((nx + kBlock - 1) / kBlock, (ny + kBlock - 1) / kBlock, (nz + kBlock - 1) / kBlock);
  if (nx > 0 && ny > 0 && nz > 0) {
    stencil_3d_interior_kernel<<<grid, block>>>(u_new, u_old, r, nx, ny, nz);
    stencil_3d_boundary_kernel<<<grid, block>>>(u_new, u_old, nx, ny, nz);
  }
  cudaDeviceSynchronize();
}

extern "C" void stencil_3d_bf16(__nv_bfloat16* u_new, const __nv_bfloat16* u_old, float r, int nx, int ny, int nz) {
  dim3 block(kBlock, kBlock, kBlock);
  dim3 grid((nx + kBlock - 1) / kBlock, (ny + kBlock - 1) / kBlock, (nz + kBlock - 1) / kBlock);
  if (nx > 0 && ny > 0 && nz > 0) {
    stencil_3d_bf16_interior_kernel<<<grid, block>>>(u_new, u_old, r, nx, ny, nz);
    stencil_3d_bf16_boundary_kernel<<<grid, block>>>(u_new, u_old, nx, ny, nz);
  }
  cudaDeviceSynchronize();
}
