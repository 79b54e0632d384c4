// cudamaster harness runtime: its kernels, behind host functions that launch them.
//
// The runtime's host code (cm_runtime.h, compiled as plain C++ by the host compiler) calls these; the
// kernels live in cm_kernels.cu, compiled by nvcc into an object of their own. The two objects compile in
// parallel (compile.py), and every driver links both. Each function launches on the legacy default stream
// (stream 0, as the launches in one translation unit did) and returns cudaGetLastError() for the caller
// to check.
#pragma once

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

namespace cm {

// Count the bytes that differ between device buffers a and b (n bytes) into *count.
cudaError_t launch_count_differing(int blocks, const unsigned char* a, const unsigned char* b, size_t n, unsigned long long* count);
// Redraw n elements of dst for timed call `call` (cm_refresh.h's generator).
cudaError_t launch_refresh(int blocks, unsigned char* dst, size_t n, int kind, int draw, double p0, double p1, uint32_t call,
                           uint32_t stream, uint32_t k0, uint32_t k1);
// Shuffle: element i of dst takes orig's element shuffle_index(i).
cudaError_t launch_shuffle(int blocks, unsigned char* dst, const unsigned char* orig, size_t n, size_t elem, int bits, uint32_t call,
                           uint32_t stream, uint32_t k0, uint32_t k1);
// dst[i] = src[idx[i]] for n elements of elem bytes.
cudaError_t launch_gather(int blocks, const unsigned char* src, const int64_t* idx, size_t n, int elem, unsigned char* dst);
// Count the NaN elements (the poison left in place, or NaN written) of p into *count.
cudaError_t launch_count_unwritten(int blocks, const unsigned char* p, size_t n, int kind, unsigned long long* count);
// Read n int4 of buf through L2 (the scrub between timed calls).
cudaError_t launch_l2_scrub_read(int blocks, const int4* buf, size_t n, int* sink);
// Count into *bad the elements of buf that differ from what the generator drew for timed call `call`.
cudaError_t launch_refresh_verify(int blocks, const unsigned char* buf, const unsigned char* orig, size_t n, int kind, int draw, double p0,
                                  double p1, int bits, uint32_t call, uint32_t stream, uint32_t k0, uint32_t k1, unsigned long long* bad);

}  // namespace cm
