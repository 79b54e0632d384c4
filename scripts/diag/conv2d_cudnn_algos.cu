// Diagnostic: which cuDNN forward-convolution algorithms work (and how fast, and how accurately) for the
// conv_2d task's shape: one channel (N = C = K = 1), NCHW, valid cross-correlation, no padding, stride 1,
// compute type FP32, math type as bench_tasks/vendor/cudnn_util.cuh (FP32: CUDNN_FMA_MATH, i.e. no TF32;
// BF16: CUDNN_TENSOR_OP_MATH).
//
//   conv2d_cudnn_algos [fp32|bf16] [rows cols krows kcols]          parent: drives everything below
//   conv2d_cudnn_algos PREC ROWS COLS KROWS KCOLS --one ALGO        child: run one algorithm
//   conv2d_cudnn_algos PREC ROWS COLS KROWS KCOLS --v7              child: cudnnGetConvolutionForwardAlgorithm_v7
//   conv2d_cudnn_algos PREC ROWS COLS KROWS KCOLS --find            child: cudnnFindConvolutionForwardAlgorithmEx (1 GiB)
//
// The parent queries the workspace size of every algorithm, then re-executes itself (fork + execv of
// /proc/self/exe; CUDA cannot be used across a plain fork) once per step, polling waitpid and killing the
// child with SIGKILL after a timeout (20 s per algorithm, 60 s for --v7 and --find). Output: JSON lines
// on stdout, each with "prec","rows","cols","krows","kcols"; every failing CUDA/cuDNN call prints a JSON
// error line and exits with status 3.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "diag_json.h"

namespace {

// ---- configuration and JSON output -------------------------------------------------------------------

struct Config {
  std::string prec = "fp32";
  int rows = 4096, cols = 4096, krows = 32, kcols = 32;
  bool fp32() const { return prec == "fp32"; }
  int orows() const { return rows - krows + 1; }
  int ocols() const { return cols - kcols + 1; }
};
Config g;
std::string g_mode = "parent";  // parent, one, v7, find

constexpr double kAtolFp32 = 3e-4, kRtolFp32 = 1e-5;  // bench_tasks/tasks/conv_2d/task.toml
constexpr double kAtolBf16 = 2e-3, kRtolBf16 = 1e-2;
constexpr size_t kMaxWorkspace = size_t(8) << 30;  // algorithms needing more are not run
constexpr size_t kFindWorkspace = size_t(1) << 30;  // as cudnn_util.cuh
constexpr int kAlgoTimeoutS = 20, kListTimeoutS = 60;

// Prints one JSON line: the common fields, then `body` (already formatted "key":value pairs, no braces).
void emit(const std::string& body) {
  printf("{\"prec\":\"%s\",\"rows\":%d,\"cols\":%d,\"krows\":%d,\"kcols\":%d,\"mode\":\"%s\"%s%s}\n", g.prec.c_str(), g.rows,
         g.cols, g.krows, g.kcols, g_mode.c_str(), body.empty() ? "" : ",", body.c_str());
  fflush(stdout);
}

[[noreturn]] void fail(const char* lib, long long status, const char* msg, const char* call, int line) {
  emit(fmt("\"event\":\"error\",\"lib\":\"%s\",\"status\":%lld,\"msg\":\"%s\",\"call\":\"%s\",\"line\":%d", lib, status,
           clean(msg).c_str(), clean(call).c_str(), line));
  _exit(3);
}

#define CUDA_CHECK(call)                                                                   \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) fail("cuda", (long long)e_, cudaGetErrorString(e_), #call, __LINE__); \
  } while (0)
#define CUDNN_CHECK(call)                                                                    \
  do {                                                                                       \
    cudnnStatus_t s_ = (call);                                                               \
    if (s_ != CUDNN_STATUS_SUCCESS) fail("cudnn", (long long)s_, cudnnGetErrorString(s_), #call, __LINE__); \
  } while (0)

const char* algo_name(int a) {
  switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "?";
  }
}

const char* math_name(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_DEFAULT_MATH: return "DEFAULT_MATH";
    case CUDNN_TENSOR_OP_MATH: return "TENSOR_OP_MATH";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "TENSOR_OP_MATH_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH: return "FMA_MATH";
    default: return "?";
  }
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ---- cuDNN setup (descriptors as cudnn_util.cuh's Conv2d::plan) --------------------------------------

struct Setup {
  cudnnHandle_t h = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t f = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnMathType_t math = CUDNN_FMA_MATH;

  void init() {
    const cudnnDataType_t type = g.fp32() ? CUDNN_DATA_FLOAT : CUDNN_DATA_BFLOAT16;
    CUDNN_CHECK(cudnnCreate(&h));
    CUDNN_CHECK(cudnnSetStream(h, 0));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, type, 1, 1, g.rows, g.cols));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, type, 1, 1, g.orows(), g.ocols()));
    CUDNN_CHECK(cudnnCreateFilterDescriptor(&f));
    CUDNN_CHECK(cudnnSetFilter4dDescriptor(f, type, CUDNN_TENSOR_NCHW, 1, 1, g.krows, g.kcols));
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    math = g.fp32() ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
    CUDNN_CHECK(cudnnSetConvolutionMathType(conv, math));
    // The output shape cuDNN derives must be the valid-correlation shape.
    int n, c, oh, ow;
    CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(conv, x, f, &n, &c, &oh, &ow));
    if (n != 1 || c != 1 || oh != g.orows() || ow != g.ocols())
      fail("diag", 0, fmt("unexpected output dims %dx%dx%dx%d", n, c, oh, ow).c_str(), "cudnnGetConvolution2dForwardOutputDim",
           __LINE__);
  }
};

// ---- device data: random uniform(-1,1) input and kernel, host copies of the (rounded) values ---------

struct Data {
  std::vector<double> in, ker;  // values as stored on the device (BF16-rounded for bf16)
  void* d_in = nullptr;
  void* d_ker = nullptr;
  void* d_out = nullptr;
  size_t elem = 4;

  void init() {
    elem = g.fp32() ? sizeof(float) : sizeof(__nv_bfloat16);
    std::mt19937_64 rng(12345);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    auto fill = [&](std::vector<double>& host, size_t n, void** dev) {
      host.resize(n);
      std::vector<float> f32(n);
      std::vector<__nv_bfloat16> b16(g.fp32() ? 0 : n);
      for (size_t i = 0; i < n; ++i) {
        f32[i] = u(rng);
        if (g.fp32()) {
          host[i] = f32[i];
        } else {
          b16[i] = __float2bfloat16(f32[i]);
          host[i] = __bfloat162float(b16[i]);
        }
      }
      CUDA_CHECK(cudaMalloc(dev, n * elem));
      CUDA_CHECK(cudaMemcpy(*dev, g.fp32() ? (const void*)f32.data() : (const void*)b16.data(), n * elem, cudaMemcpyHostToDevice));
    };
    fill(in, size_t(g.rows) * g.cols, &d_in);
    fill(ker, size_t(g.krows) * g.kcols, &d_ker);
    const size_t nout = size_t(g.orows()) * g.ocols();
    CUDA_CHECK(cudaMalloc(&d_out, nout * elem));
    CUDA_CHECK(cudaMemset(d_out, 0xff, nout * elem));  // NaN pattern: unwritten outputs show up as errors
  }

  // Compares ~1000 sampled outputs (plus the first and last) with a float64 reference.
  std::string verify() const {
    const int oh = g.orows(), ow = g.ocols();
    const size_t nout = size_t(oh) * ow;
    std::vector<unsigned char> raw(nout * elem);
    CUDA_CHECK(cudaMemcpy(raw.data(), d_out, raw.size(), cudaMemcpyDeviceToHost));
    auto out_at = [&](size_t i) -> double {
      if (g.fp32()) return reinterpret_cast<const float*>(raw.data())[i];
      return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(raw.data())[i]);
    };
    std::mt19937_64 rng(777);
    std::vector<size_t> idx = {0, nout - 1};
    for (int s = 0; s < 1000; ++s) idx.push_back(rng() % nout);
    const double atol = g.fp32() ? kAtolFp32 : kAtolBf16, rtol = g.fp32() ? kRtolFp32 : kRtolBf16;
    double max_abs = 0, max_rel = 0, max_ref = 0, worst_out = 0, worst_ref = 0;
    long bad = 0, nonfinite = 0;
    for (size_t i : idx) {
      const int r = int(i / ow), c = int(i % ow);
      double ref = 0;
      for (int m = 0; m < g.krows; ++m)
        for (int n = 0; n < g.kcols; ++n) ref += in[size_t(r + m) * g.cols + (c + n)] * ker[size_t(m) * g.kcols + n];
      const double out = out_at(i);
      const double err = std::fabs(out - ref);
      if (!std::isfinite(out)) ++nonfinite;
      if (!(err <= atol + rtol * std::fabs(ref))) ++bad;  // also counts NaN
      if (!(err <= max_abs)) max_abs = err, worst_out = out, worst_ref = ref;
      if (std::fabs(ref) > 0) max_rel = std::max(max_rel, err / std::fabs(ref));
      max_ref = std::max(max_ref, std::fabs(ref));
    }
    return fmt("\"checked\":%zu,\"max_abs_err\":%s,\"max_rel_err\":%s,\"max_abs_ref\":%s,\"worst_out\":%s,\"worst_ref\":%s,"
               "\"nonfinite\":%ld,\"n_outside_task_tol\":%ld,\"task_atol\":%g,\"task_rtol\":%g,\"correct\":%s",
               idx.size(), num(max_abs).c_str(), num(max_rel).c_str(), num(max_ref).c_str(), num(worst_out).c_str(),
               num(worst_ref).c_str(), nonfinite, bad, atol, rtol, bad == 0 ? "true" : "false");
  }
};

// ---- child modes ------------------------------------------------------------------------------------

// --one ALGO: setup, one warm-up call (wall-clocked: may include cuDNN's own kernel selection/compilation),
// three timed calls with cudaEvents, then verification.
int run_one(int algo_i) {
  const auto algo = static_cast<cudnnConvolutionFwdAlgo_t>(algo_i);
  Setup s;
  s.init();
  Data d;
  d.init();
  size_t ws = 0;
  cudnnStatus_t st = cudnnGetConvolutionForwardWorkspaceSize(s.h, s.x, s.f, s.conv, s.y, algo, &ws);
  if (st != CUDNN_STATUS_SUCCESS) {
    emit(fmt("\"event\":\"run\",\"algo\":\"%s\",\"algo_id\":%d,\"status\":\"ws_query_failed\",\"cudnn_status\":\"%s\"",
             algo_name(algo_i), algo_i, cudnnGetErrorString(st)));
    return 2;
  }
  void* d_ws = nullptr;
  if (ws > 0) CUDA_CHECK(cudaMalloc(&d_ws, ws));
  const float one = 1.0f, zero = 0.0f;
  auto fwd = [&]() { return cudnnConvolutionForward(s.h, &one, s.x, d.d_in, s.f, d.d_ker, s.conv, algo, d_ws, ws, &zero, s.y, d.d_out); };

  const double t0 = now_s();
  st = fwd();
  if (st != CUDNN_STATUS_SUCCESS) {
    emit(fmt("\"event\":\"run\",\"algo\":\"%s\",\"algo_id\":%d,\"status\":\"forward_failed\",\"cudnn_status\":\"%s\",\"workspace_bytes\":%zu",
             algo_name(algo_i), algo_i, cudnnGetErrorString(st), ws));
    return 2;
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  const double warm_s = now_s() - t0;

  cudaEvent_t e0, e1;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  std::vector<float> ms(3);
  for (float& t : ms) {
    CUDA_CHECK(cudaEventRecord(e0, 0));
    CUDNN_CHECK(fwd());
    CUDA_CHECK(cudaEventRecord(e1, 0));
    CUDA_CHECK(cudaEventSynchronize(e1));
    CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
  }
  CUDA_CHECK(cudaGetLastError());
  emit(fmt("\"event\":\"run\",\"algo\":\"%s\",\"algo_id\":%d,\"status\":\"ok\",\"math\":\"%s\",\"workspace_bytes\":%zu,"
           "\"warmup_wall_s\":%.4f,\"ms\":[%.4f,%.4f,%.4f],%s",
           algo_name(algo_i), algo_i, math_name(s.math), ws, warm_s, ms[0], ms[1], ms[2], d.verify().c_str()));
  return 0;
}

void emit_perf(const char* event, int rank, const cudnnConvolutionFwdAlgoPerf_t& p) {
  emit(fmt("\"event\":\"%s\",\"rank\":%d,\"algo\":\"%s\",\"algo_id\":%d,\"status\":\"%s\",\"time_ms\":%s,\"memory\":%zu,"
           "\"math\":\"%s\",\"determinism\":%d",
           event, rank, algo_name(p.algo), int(p.algo), cudnnGetErrorString(p.status), num(p.time).c_str(), p.memory,
           math_name(p.mathType), int(p.determinism)));
}

// --v7: the heuristic's ranked list (no kernels run).
int run_v7() {
  Setup s;
  s.init();
  int max_algos = 0, found = 0;
  CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(s.h, &max_algos));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(std::max(max_algos, 1));
  const double t0 = now_s();
  CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(s.h, s.x, s.f, s.conv, s.y, max_algos, &found, perf.data()));
  emit(fmt("\"event\":\"v7_done\",\"max_count\":%d,\"returned\":%d,\"wall_s\":%.3f", max_algos, found, now_s() - t0));
  for (int i = 0; i < found; ++i) emit_perf("v7", i, perf[i]);
  return 0;
}

// --find: what cudnn_util.cuh does (on real buffers, 1 GiB workspace bound).
int run_find() {
  Setup s;
  s.init();
  Data d;
  d.init();
  void* d_ws = nullptr;
  CUDA_CHECK(cudaMalloc(&d_ws, kFindWorkspace));
  int max_algos = 0, found = 0;
  CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(s.h, &max_algos));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(std::max(max_algos, 1));
  emit(fmt("\"event\":\"find_start\",\"max_count\":%d,\"workspace_bound\":%zu", max_algos, kFindWorkspace));
  const double t0 = now_s();
  CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(s.h, s.x, d.d_in, s.f, d.d_ker, s.conv, s.y, d.d_out, max_algos, &found,
                                                     perf.data(), d_ws, kFindWorkspace));
  CUDA_CHECK(cudaDeviceSynchronize());
  emit(fmt("\"event\":\"find_done\",\"returned\":%d,\"wall_s\":%.3f", found, now_s() - t0));
  for (int i = 0; i < found; ++i) emit_perf("find", i, perf[i]);
  return 0;
}

// ---- parent: fork/exec a child per step, with a timeout --------------------------------------------

volatile sig_atomic_t g_child = 0;

// If the parent is terminated (e.g. by `timeout`), take the running child with it.
void on_term(int sig) {
  if (g_child > 0) kill(g_child, SIGKILL);
  signal(sig, SIG_DFL);
  raise(sig);
}

std::string g_self;  // path of this executable

// Runs this program again with `extra` arguments; returns after it exits or after timeout_s (then SIGKILL).
void run_child(const std::vector<std::string>& extra, int timeout_s, const std::string& label) {
  std::vector<std::string> args = {g_self, g.prec, std::to_string(g.rows), std::to_string(g.cols), std::to_string(g.krows),
                                   std::to_string(g.kcols)};
  args.insert(args.end(), extra.begin(), extra.end());
  fflush(stdout);
  fflush(stderr);
  const double t0 = now_s();
  pid_t pid = fork();
  if (pid < 0) {
    emit(fmt("\"event\":\"error\",\"lib\":\"posix\",\"call\":\"fork\",\"msg\":\"%s\",%s", clean(strerror(errno)).c_str(), label.c_str()));
    return;
  }
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(g_self.c_str(), argv.data());
    fprintf(stderr, "execv %s failed: %s\n", g_self.c_str(), strerror(errno));
    _exit(127);
  }
  g_child = pid;
  int status = 0;
  bool done = false, timed_out = false;
  while (!done) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      done = true;
    } else if (r < 0 && errno != EINTR) {
      emit(fmt("\"event\":\"error\",\"lib\":\"posix\",\"call\":\"waitpid\",\"msg\":\"%s\",%s", clean(strerror(errno)).c_str(), label.c_str()));
      break;
    } else if (now_s() - t0 > timeout_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      timed_out = done = true;
    } else {
      usleep(50 * 1000);
    }
  }
  g_child = 0;
  const double wall = now_s() - t0;
  if (timed_out) {
    emit(fmt("%s,\"status\":\"timeout\",\"timeout_s\":%d,\"wall_s\":%.2f", label.c_str(), timeout_s, wall));
  } else if (done) {
    if (WIFEXITED(status))
      emit(fmt("%s,\"event\":\"child_exit\",\"exit_code\":%d,\"wall_s\":%.2f", label.c_str(), WEXITSTATUS(status), wall));
    else if (WIFSIGNALED(status))
      emit(fmt("%s,\"event\":\"child_exit\",\"signal\":%d,\"wall_s\":%.2f", label.c_str(), WTERMSIG(status), wall));
  }
}

int run_parent() {
  signal(SIGTERM, on_term);
  signal(SIGINT, on_term);
  {
    int dev = 0;
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    int rt = 0, drv = 0;
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    CUDA_CHECK(cudaDriverGetVersion(&drv));
    emit(fmt("\"event\":\"info\",\"device\":\"%s\",\"cc\":\"%d.%d\",\"cuda_runtime\":%d,\"cuda_driver\":%d,"
             "\"cudnn_version\":%zu,\"cudnn_header_version\":%d",
             clean(prop.name).c_str(), prop.major, prop.minor, rt, drv, cudnnGetVersion(), CUDNN_VERSION));
  }

  // 1. The heuristic's list.
  run_child({"--v7"}, kListTimeoutS, "\"step\":\"v7\"");

  // 2. Every algorithm: workspace query here (no kernels), then a child that runs it.
  Setup s;
  s.init();
  for (int a = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM; a <= CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED; ++a) {
    const std::string label = fmt("\"step\":\"one\",\"algo\":\"%s\",\"algo_id\":%d", algo_name(a), a);
    size_t ws = 0;
    cudnnStatus_t st = cudnnGetConvolutionForwardWorkspaceSize(s.h, s.x, s.f, s.conv, s.y, static_cast<cudnnConvolutionFwdAlgo_t>(a), &ws);
    emit(fmt("%s,\"event\":\"workspace\",\"cudnn_status\":\"%s\",\"workspace_bytes\":%zu,\"workspace_gib\":%.3f", label.c_str(),
             cudnnGetErrorString(st), st == CUDNN_STATUS_SUCCESS ? ws : 0, st == CUDNN_STATUS_SUCCESS ? ws / double(1 << 30) : 0.0));
    if (st != CUDNN_STATUS_SUCCESS) {
      emit(fmt("%s,\"status\":\"skipped_unsupported\"", label.c_str()));
      continue;
    }
    if (ws > kMaxWorkspace) {
      emit(fmt("%s,\"status\":\"skipped_workspace_over_8GiB\"", label.c_str()));
      continue;
    }
    run_child({"--one", std::to_string(a)}, kAlgoTimeoutS, label);
  }
  // Free the parent's cuDNN handle before the Find, so that it has the GPU to itself.
  CUDNN_CHECK(cudnnDestroy(s.h));

  // 3. What the vendor reference does (reportedly hangs for FP32 at 4096^2 x 32^2).
  run_child({"--find"}, kListTimeoutS, "\"step\":\"find\"");
  emit("\"event\":\"done\"");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Self path for re-exec: /proc/self/exe is robust against relative argv[0] and PATH lookups.
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  g_self = n > 0 ? std::string(buf, size_t(n)) : std::string(argv[0]);

  std::vector<std::string> pos;
  std::string mode;
  int algo = -1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--one" && i + 1 < argc) mode = "one", algo = atoi(argv[++i]);
    else if (a == "--v7") mode = "v7";
    else if (a == "--find") mode = "find";
    else pos.push_back(a);
  }
  if (pos.size() > 0) g.prec = pos[0];
  if (pos.size() > 1) g.rows = atoi(pos[1].c_str());
  if (pos.size() > 2) g.cols = atoi(pos[2].c_str());
  if (pos.size() > 3) g.krows = atoi(pos[3].c_str());
  if (pos.size() > 4) g.kcols = atoi(pos[4].c_str());
  if (!mode.empty()) g_mode = mode;
  if ((g.prec != "fp32" && g.prec != "bf16") || g.krows <= 0 || g.kcols <= 0 || g.rows < g.krows || g.cols < g.kcols) {
    emit("\"event\":\"error\",\"lib\":\"diag\",\"msg\":\"usage: conv2d_cudnn_algos [fp32|bf16] [rows cols krows kcols] "
         "[--one ALGO|--v7|--find]; need rows>=krows>0, cols>=kcols>0\"");
    return 2;
  }
  if (mode == "one") return run_one(algo);
  if (mode == "v7") return run_v7();
  if (mode == "find") return run_find();
  return run_parent();
}
