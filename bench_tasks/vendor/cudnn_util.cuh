// cuDNN helpers shared by the cuDNN-based vendor references (inlined like vendor_common.cuh). They use
// cuDNN's legacy C API (cudnn_ops / cudnn_cnn: tensor, filter, convolution, pooling, softmax and batch
// normalization descriptors), which cuDNN 9 still ships; not the graph API or the C++ frontend.
#pragma once

#include <cudnn.h>

#include "vendor_common.cuh"

namespace cmv {

// One handle per process, on the legacy default stream.
inline cudnnHandle_t dnn() {
  static cudnnHandle_t handle = [] {
    cudnnHandle_t h = nullptr;
    CMV_CUDNN(cudnnCreate(&h));
    CMV_CUDNN(cudnnSetStream(h, 0));
    return h;
  }();
  return handle;
}

template <typename T> constexpr cudnnDataType_t dnn_type();
template <> constexpr cudnnDataType_t dnn_type<float>() { return CUDNN_DATA_FLOAT; }
template <> constexpr cudnnDataType_t dnn_type<__nv_bfloat16>() { return CUDNN_DATA_BFLOAT16; }

inline cudnnTensorDescriptor_t tensor4d(cudnnDataType_t type, int n, int c, int h, int w) {
  cudnnTensorDescriptor_t d = nullptr;
  CMV_CUDNN(cudnnCreateTensorDescriptor(&d));
  CMV_CUDNN(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, type, n, c, h, w));
  return d;
}

// Single-channel valid cross-correlation (no flip) of an h x w image with a kh x kw filter, planned once
// per shape on the first, untimed call: cuDNN's heuristic lists the algorithms for the shape
// (cudnnGetConvolutionForwardAlgorithm_v7), FFT and Winograd ones are left out (their error is above the
// FP32 tolerance: they transform the whole image), as are those needing more than 1 GiB of workspace and,
// in FP32, tensor-op math (no TF32); each one left is run on the call's buffers and timed, and the fastest
// is kept. cudnnFindConvolutionForwardAlgorithmEx is not used: on the H200 it did not return for FP32 at
// 4096^2 x 32^2 (its FFT_TILING trial hangs: scripts/diag/conv2d_cudnn_algos.cu).
template <typename T>
struct Conv2d {
  int h = -1, w = -1, kh = -1, kw = -1;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t f = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace_bytes = 0;
  Workspace workspace;
  static constexpr size_t kMaxWorkspaceBytes = size_t(1) << 30;  // what an algorithm may use: 1 GiB

  static bool usable(const cudnnConvolutionFwdAlgoPerf_t& p, bool fp32) {
    if (p.status != CUDNN_STATUS_SUCCESS || p.memory > kMaxWorkspaceBytes) return false;
    if (p.algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT || p.algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
        p.algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD || p.algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED)
      return false;
    return !(fp32 && p.mathType == CUDNN_TENSOR_OP_MATH);
  }

  void plan(int h_, int w_, int kh_, int kw_, const T* input, const T* kernel, T* output) {
    if (h_ == h && w_ == w && kh_ == kh && kw_ == kw) return;
    release();
    h = h_, w = w_, kh = kh_, kw = kw_;
    const cudnnDataType_t type = dnn_type<T>();
    x = tensor4d(type, 1, 1, h, w);
    y = tensor4d(type, 1, 1, h - kh + 1, w - kw + 1);
    CMV_CUDNN(cudnnCreateFilterDescriptor(&f));
    CMV_CUDNN(cudnnSetFilter4dDescriptor(f, type, CUDNN_TENSOR_NCHW, 1, 1, kh, kw));
    CMV_CUDNN(cudnnCreateConvolutionDescriptor(&conv));
    CMV_CUDNN(cudnnSetConvolution2dDescriptor(conv, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    const bool fp32 = type == CUDNN_DATA_FLOAT;
    CMV_CUDNN(cudnnSetConvolutionMathType(conv, fp32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
    int max_algos = 0, found = 0;
    CMV_CUDNN(cudnnGetConvolutionForwardAlgorithmMaxCount(dnn(), &max_algos));
    cudnnConvolutionFwdAlgoPerf_t perf[32];
    if (max_algos > 32) max_algos = 32;
    CMV_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(dnn(), x, f, conv, y, max_algos, &found, perf));
    cudaEvent_t start = nullptr, stop = nullptr;
    CMV_CUDA(cudaEventCreate(&start));
    CMV_CUDA(cudaEventCreate(&stop));
    float best_ms = -1.0f;
    cudnnConvolutionFwdAlgoPerf_t best{};
    for (int i = 0; i < found; ++i) {
      const cudnnConvolutionFwdAlgoPerf_t& p = perf[i];
      if (!usable(p, fp32)) continue;
      algo = p.algo;
      workspace_bytes = p.memory;
      CMV_CUDNN(cudnnSetConvolutionMathType(conv, p.mathType));
      run(input, kernel, output);  // warm: module load, first touch
      CMV_CUDA(cudaEventRecord(start, 0));
      run(input, kernel, output);
      CMV_CUDA(cudaEventRecord(stop, 0));
      CMV_CUDA(cudaEventSynchronize(stop));
      float ms = 0.0f;
      CMV_CUDA(cudaEventElapsedTime(&ms, start, stop));
      if (best_ms < 0.0f || ms < best_ms) best_ms = ms, best = p;
    }
    CMV_CUDA(cudaEventDestroy(start));
    CMV_CUDA(cudaEventDestroy(stop));
    if (best_ms < 0.0f) fail("cudnn", CUDNN_STATUS_NOT_SUPPORTED, "no direct or GEMM-based convolution algorithm for this shape", __LINE__);
    algo = best.algo;
    workspace_bytes = best.memory;
    CMV_CUDNN(cudnnSetConvolutionMathType(conv, best.mathType));
  }

  void run(const T* input, const T* kernel, T* output) {
    const float one = 1.0f, zero = 0.0f;
    CMV_CUDNN(cudnnConvolutionForward(dnn(), &one, x, input, f, kernel, conv, algo, workspace.get(workspace_bytes), workspace_bytes,
                                      &zero, y, output));
  }

  void release() {
    if (x) CMV_CUDNN(cudnnDestroyTensorDescriptor(x));
    if (y) CMV_CUDNN(cudnnDestroyTensorDescriptor(y));
    if (f) CMV_CUDNN(cudnnDestroyFilterDescriptor(f));
    if (conv) CMV_CUDNN(cudnnDestroyConvolutionDescriptor(conv));
    x = y = nullptr, f = nullptr, conv = nullptr;
  }
};

// Row-wise softmax of an n x c row-major matrix: cudnnSoftmaxForward, CUDNN_SOFTMAX_ACCURATE (the row max
// is subtracted) over the channels of an n x c x 1 x 1 tensor (CUDNN_SOFTMAX_MODE_INSTANCE).
template <typename T>
struct RowSoftmax {
  int n = -1, c = -1;
  cudnnTensorDescriptor_t desc = nullptr;
  void run(const T* in, T* out, int n_, int c_) {
    if (n_ != n || c_ != c) {
      if (desc) CMV_CUDNN(cudnnDestroyTensorDescriptor(desc));
      desc = tensor4d(dnn_type<T>(), n_, c_, 1, 1);
      n = n_, c = c_;
    }
    const float one = 1.0f, zero = 0.0f;
    CMV_CUDNN(cudnnSoftmaxForward(dnn(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one, desc, in, &zero, desc, out));
  }
};

}  // namespace cmv
