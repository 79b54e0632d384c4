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
// per shape: cuDNN times its algorithms (cudnnFindConvolutionForwardAlgorithmEx on the call's buffers, at
// most 1 GiB of workspace, on the first, untimed call) and the fastest usable one is kept. FP32 runs in FMA math (no TF32); FFT and Winograd algorithms are left
// out (their error is above the FP32 tolerance: they transform the whole image).
template <typename T>
struct Conv2d {
  int h = -1, w = -1, kh = -1, kw = -1;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t f = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace_bytes = 0;
  Workspace workspace;
  static constexpr size_t kFindWorkspaceBytes = size_t(1) << 30;  // what an algorithm may use: 1 GiB
  Workspace find_workspace;

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
    // On the call's own buffers (the output is written again by run) with a bounded workspace: an
    // algorithm that needs more is not tried. Unbounded, cudnnFindConvolutionForwardAlgorithm did not
    // return within the harness's 300 s for FP32 at 4096^2 x 32^2 on the H200 (GEMM's im2col there
    // would need (4065^2 x 1024) floats, 68 GB).
    const size_t bound = kFindWorkspaceBytes;
    CMV_CUDNN(cudnnFindConvolutionForwardAlgorithmEx(dnn(), x, input, f, kernel, conv, y, output, max_algos, &found, perf,
                                                     find_workspace.get(bound), bound));
    for (int i = 0; i < found; ++i) {  // sorted fastest first
      const cudnnConvolutionFwdAlgoPerf_t& p = perf[i];
      if (p.status != CUDNN_STATUS_SUCCESS) continue;
      if (p.algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT || p.algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
          p.algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD || p.algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED)
        continue;
      if (fp32 && p.mathType == CUDNN_TENSOR_OP_MATH) continue;
      if (p.memory > kFindWorkspaceBytes) continue;
      algo = p.algo;
      workspace_bytes = p.memory;
      CMV_CUDNN(cudnnSetConvolutionMathType(conv, p.mathType));
      workspace.get(workspace_bytes);
      return;
    }
    fail("cudnn", CUDNN_STATUS_NOT_SUPPORTED, "no direct or GEMM-based convolution algorithm for this shape", __LINE__);
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
