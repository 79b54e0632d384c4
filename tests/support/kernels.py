"""vector_add fp32 candidate sources and model replies for tests.

`fast_kernel()` is a real, correct, faster kernel than the baseline (one thread per element, 256-thread
blocks over the whole grid; the baseline uses ONE block of 1024 threads). The FAKE_* markers only
mean something to gpu.fake.FakeGpuEvaluator; on a real GPU they are plain comments.
"""

from __future__ import annotations

FAST_KERNEL = """#include <cuda_runtime.h>
{marker}
__global__ void vector_add_grid(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int N) {{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) C[i] = A[i] + B[i];
}}

extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {{
  if (N <= 0) return;
  int blocks = (N + 255) / 256;
  vector_add_grid<<<blocks, 256>>>(A, B, C, N);
  cudaDeviceSynchronize();
}}
"""

# Compiles, but every output is wrong (a real wrong answer on a GPU; FAKE_WRONG for the fake one).
WRONG_KERNEL = """#include <cuda_runtime.h>
// FAKE_WRONG
__global__ void vector_add_bad(const float* A, const float* B, float* C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) C[i] = A[i] - B[i];
}

extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  vector_add_bad<<<(N + 255) / 256, 256>>>(A, B, C, N);
  cudaDeviceSynchronize();
}
"""

SYNTAX_ERROR_KERNEL = """#include <cuda_runtime.h>
__global__ void vector_add_grid(const float* A, const float* B, float* C, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x
  if (i < N) C[i] = A[i] + B[i];
}

extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  vector_add_grid<<<(N + 255) / 256, 256>>>(A, B, C, N);
  cudaDeviceSynchronize();
}
"""

CHANGED_PROTOTYPE_KERNEL = """#include <cuda_runtime.h>
__global__ void vector_add_grid(const float* A, const float* B, float* C, long N) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < N) C[i] = A[i] + B[i];
}

extern "C" void vector_add_optimized(const float* A, const float* B, float* C, long N) {
  vector_add_grid<<<(N + 255) / 256, 256>>>(A, B, C, N);
  cudaDeviceSynchronize();
}
"""


def fast_kernel(fake_speedup: float | None = None) -> str:
    return FAST_KERNEL.format(marker=f"// FAKE_SPEEDUP {fake_speedup}" if fake_speedup is not None else "// grid-wide")


def reply(source: str, preface: str = "Here is the kernel.") -> str:
    """A model reply carrying `source` in a ```cuda block."""
    return f"{preface}\n\n```cuda\n{source}```\n\nIt keeps the prototype."


def plan(title: str = "Use the whole GPU") -> str:
    return f"{title}\nLaunch one thread per element in 256-thread blocks over a full grid instead of one block."
