// CUB helpers shared by the CUB-based vendor references (inlined like vendor_common.cuh). CUB is
// header-only (CCCL, shipped with the CUDA toolkit): nothing to link. Every algorithm runs on the legacy
// default stream with its temporary storage in a workspace that grows on the first call at a size.
#pragma once

#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>

#include "vendor_common.cuh"

namespace cmv {

// Runs a CUB device algorithm twice, as CUB expects: with no storage to size it, then for real.
template <typename Algorithm>
inline void cub_run(Workspace& temp, Algorithm&& algorithm) {
  size_t bytes = 0;
  CMV_CUB(algorithm(nullptr, bytes));
  CMV_CUB(algorithm(temp.get(bytes), bytes));
}

__host__ __device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

// Writes `scale * sum` (the reduction's result) through an output iterator: the final scaling of an
// integral or a mean happens in the reduction's last kernel, not in a launch of its own.
struct Scale {
  float scale;
  __host__ __device__ float operator()(float v) const { return v * scale; }
};
struct ScaleToBf16 {
  float scale;
  __host__ __device__ __nv_bfloat16 operator()(float v) const { return __float2bfloat16(v * scale); }
};

}  // namespace cmv
