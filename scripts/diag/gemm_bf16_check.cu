// Diagnostic: accuracy of BF16 GEMM variants for the square_matrix_mul task (C = A @ B, row-major M x M,
// A and B uniform(-1,1) rounded to BF16, FP32 accumulation). The vendor reference
// (bench_tasks/vendor/cublas_util.cuh gemm_rowmajor) fails the task tolerance at M = 8191 on ~2.6% of the
// sampled outputs; the suspicion is a split-K reduction carried out in the BF16 output type.
//
//   gemm_bf16_check [M=8191] [seed=1]
//
// 4096 sampled outputs (plus the first and last) are computed in float64 on the host from the
// BF16-rounded inputs. Variants, each printed as one JSON line (errors, counts outside the tolerances,
// median of 5 event-timed calls after one warm-up):
//   a_gemmex_bf16        cublasGemmEx, BF16 C, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT (the vendor reference)
//   b_gemmex_f32_raw     cublasGemmEx with an FP32 C (not rounded: shows the FP32 sum's own error)
//   b_gemmex_f32_round   the same, then a kernel rounding to BF16 (timing includes the kernel)
//   c_lt_bf16_default    cublasLt BF16 in/out, heuristic top result, default preference (for comparison)
//   c_lt_bf16_noreduce   cublasLt BF16 in/out, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = NONE
//   d_lt_f32_round       cublasLt BF16 in, FP32 D, then rounding to BF16
// Every CUDA/cuBLAS call is checked; a failure prints a JSON error line (and, inside a variant, skips it).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "diag_json.h"

namespace {

int g_M = 8191;
unsigned g_seed = 1;

// bench_tasks/tasks/square_matrix_mul/task.toml [tolerance] bf16; applied as bench_tasks/compare.py:
// |out - ref| <= atol + rtol * |ref|.
constexpr double kTaskAtol = 5e-3, kTaskRtol = 1e-2;
constexpr double kLooseAtol = 1e-2, kLooseRtol = 1e-2;  // the brief's 0.01 + 0.01*|ref|
constexpr size_t kLtWorkspace = size_t(64) << 20;       // 64 MiB for cublasLt

void emit(const std::string& body) {
  printf("{\"M\":%d,\"seed\":%u,%s}\n", g_M, g_seed, body.c_str());
  fflush(stdout);
}

// A failed call prints a JSON line and throws: the current variant is abandoned, the others still run.
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
std::string g_variant = "setup";
[[noreturn]] void fail(const char* lib, long long status, const char* msg, const char* call, int line) {
  emit(fmt("\"variant\":\"%s\",\"event\":\"error\",\"lib\":\"%s\",\"status\":%lld,\"msg\":\"%s\",\"call\":\"%s\",\"line\":%d",
           g_variant.c_str(), lib, status, clean(msg).c_str(), clean(call).c_str(), line));
  throw Failure(call);
}

#define CUDA_CHECK(call)                                                                   \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) fail("cuda", (long long)e_, cudaGetErrorString(e_), #call, __LINE__); \
  } while (0)
#define CUBLAS_CHECK(call)                                                                     \
  do {                                                                                         \
    cublasStatus_t s_ = (call);                                                                \
    if (s_ != CUBLAS_STATUS_SUCCESS) fail("cublas", (long long)s_, cublasGetStatusString(s_), #call, __LINE__); \
  } while (0)

__global__ void round_to_bf16(const float* in, __nv_bfloat16* out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16_rn(in[i]);
}

void launch_round(const float* in, __nv_bfloat16* out, size_t n) {
  round_to_bf16<<<1024, 256>>>(in, out, n);
  CUDA_CHECK(cudaGetLastError());
}

// ---- host data and reference -------------------------------------------------------------------------

struct Problem {
  int M = 0;
  std::vector<float> a, b;  // BF16-rounded values (row-major)
  std::vector<size_t> idx;  // sampled output indices (row-major i*M + j)
  std::vector<double> ref;
  __nv_bfloat16 *dA = nullptr, *dB = nullptr, *dC16 = nullptr;
  float* dC32 = nullptr;

  void init(int m) {
    M = m;
    const size_t n = size_t(M) * M;
    std::mt19937_64 rng(g_seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<__nv_bfloat16> ha(n), hb(n);
    a.resize(n);
    b.resize(n);
    for (size_t i = 0; i < n; ++i) ha[i] = __float2bfloat16(u(rng)), a[i] = __bfloat162float(ha[i]);
    for (size_t i = 0; i < n; ++i) hb[i] = __float2bfloat16(u(rng)), b[i] = __bfloat162float(hb[i]);
    CUDA_CHECK(cudaMalloc(&dA, n * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMalloc(&dB, n * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMalloc(&dC16, n * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMalloc(&dC32, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dA, ha.data(), n * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, hb.data(), n * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));

    // 4096 random samples plus the first and last element, in float64.
    std::mt19937_64 srng(g_seed * 7919u + 1);
    idx = {0, n - 1};
    for (int s = 0; s < 4096; ++s) idx.push_back(srng() % n);
    ref.resize(idx.size());
    for (size_t s = 0; s < idx.size(); ++s) {
      const size_t i = idx[s] / M, j = idx[s] % M;
      double acc = 0;
      for (int k = 0; k < M; ++k) acc += double(a[i * M + k]) * double(b[size_t(k) * M + j]);
      ref[s] = acc;
    }
  }

  void clear_outputs() {  // NaN pattern, so an unwritten output shows up as an error
    const size_t n = size_t(M) * M;
    CUDA_CHECK(cudaMemset(dC16, 0xff, n * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMemset(dC32, 0xff, n * sizeof(float)));
  }

  // Compares the sampled outputs (BF16 buffer if bf16_out, else the FP32 buffer) with the reference.
  std::string compare(bool bf16_out) const {
    const size_t n = size_t(M) * M;
    std::vector<double> out(idx.size());
    if (bf16_out) {
      std::vector<__nv_bfloat16> h(n);
      CUDA_CHECK(cudaMemcpy(h.data(), dC16, n * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
      for (size_t s = 0; s < idx.size(); ++s) out[s] = __bfloat162float(h[idx[s]]);
    } else {
      std::vector<float> h(n);
      CUDA_CHECK(cudaMemcpy(h.data(), dC32, n * sizeof(float), cudaMemcpyDeviceToHost));
      for (size_t s = 0; s < idx.size(); ++s) out[s] = h[idx[s]];
    }
    double max_abs = 0, max_rel = 0, max_ref = 0, w_out = 0, w_ref = 0, sum_sq = 0;
    long bad_task = 0, bad_loose = 0, nonfinite = 0;
    size_t w_idx = 0;
    for (size_t s = 0; s < idx.size(); ++s) {
      const double r = ref[s], o = out[s], err = std::fabs(o - r);
      if (!std::isfinite(o)) ++nonfinite;
      if (!(err <= kTaskAtol + kTaskRtol * std::fabs(r))) ++bad_task;  // NaN counts as bad
      if (!(err <= kLooseAtol + kLooseRtol * std::fabs(r))) ++bad_loose;
      if (!(err <= max_abs)) max_abs = err, w_out = o, w_ref = r, w_idx = idx[s];
      if (std::fabs(r) > 0) max_rel = std::max(max_rel, err / std::fabs(r));
      max_ref = std::max(max_ref, std::fabs(r));
      sum_sq += err * err;
    }
    return fmt("\"checked\":%zu,\"max_abs_err\":%s,\"rms_err\":%s,\"max_rel_err\":%s,\"max_abs_ref\":%s,"
               "\"worst\":{\"row\":%zu,\"col\":%zu,\"out\":%s,\"ref\":%s},\"nonfinite\":%ld,"
               "\"n_outside_task_tol\":%ld,\"frac_outside_task_tol\":%.5f,\"task_atol\":%g,\"task_rtol\":%g,"
               "\"n_outside_0.01+0.01rel\":%ld",
               idx.size(), num(max_abs).c_str(), num(std::sqrt(sum_sq / idx.size())).c_str(), num(max_rel).c_str(),
               num(max_ref).c_str(), w_idx / M, w_idx % M, num(w_out).c_str(), num(w_ref).c_str(), nonfinite, bad_task,
               double(bad_task) / idx.size(), kTaskAtol, kTaskRtol, bad_loose);
  }
};

// One warm-up call, then the median of 5 event-timed calls (ms).
template <typename F>
std::string time_calls(F&& call, double* median_ms) {
  call();
  CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  std::vector<float> ms(5);
  for (float& t : ms) {
    CUDA_CHECK(cudaEventRecord(e0, 0));
    call();
    CUDA_CHECK(cudaEventRecord(e1, 0));
    CUDA_CHECK(cudaEventSynchronize(e1));
    CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
  }
  CUDA_CHECK(cudaEventDestroy(e0));
  CUDA_CHECK(cudaEventDestroy(e1));
  std::vector<float> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  *median_ms = sorted[2];
  return fmt("\"ms\":[%.4f,%.4f,%.4f,%.4f,%.4f]", ms[0], ms[1], ms[2], ms[3], ms[4]);
}

void report(const Problem& p, const std::string& variant, bool bf16_out, const std::string& times, double median_ms,
            const std::string& extra = "") {
  const double tflops = 2.0 * double(p.M) * p.M * p.M / (median_ms * 1e-3) / 1e12;
  emit(fmt("\"variant\":\"%s\",\"event\":\"result\",\"median_ms\":%.4f,\"tflops\":%.1f,%s,%s%s%s", variant.c_str(), median_ms, tflops,
           times.c_str(), p.compare(bf16_out).c_str(), extra.empty() ? "" : ",", extra.c_str()));
}

// ---- cuBLAS (cublasGemmEx) variants -------------------------------------------------------------------
// Row-major C = A B is column-major C^T = B^T A^T: swap the operands, as cublas_util.cuh gemm_rowmajor.

void gemmex(cublasHandle_t h, Problem& p, cudaDataType_t ctype, void* C) {
  const float alpha = 1.0f, beta = 0.0f;
  const int M = p.M;
  CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, M, M, &alpha, p.dB, CUDA_R_16BF, M, p.dA, CUDA_R_16BF, M, &beta, C,
                            ctype, M, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void variant_a(cublasHandle_t h, Problem& p) {
  g_variant = "a_gemmex_bf16";
  p.clear_outputs();
  double med = 0;
  std::string t = time_calls([&] { gemmex(h, p, CUDA_R_16BF, p.dC16); }, &med);
  report(p, g_variant, true, t, med);
}

void variant_b(cublasHandle_t h, Problem& p) {
  g_variant = "b_gemmex_f32_raw";
  p.clear_outputs();
  const size_t n = size_t(p.M) * p.M;
  double med = 0;
  std::string t = time_calls([&] { gemmex(h, p, CUDA_R_32F, p.dC32); }, &med);
  report(p, g_variant, false, t, med);
  g_variant = "b_gemmex_f32_round";
  p.clear_outputs();
  t = time_calls([&] {
    gemmex(h, p, CUDA_R_32F, p.dC32);
    launch_round(p.dC32, p.dC16, n);
  }, &med);
  report(p, g_variant, true, t, med);
}

// ---- cuBLASLt variants --------------------------------------------------------------------------------

const char* reduction_name(int r) {
  switch (r) {
    case CUBLASLT_REDUCTION_SCHEME_NONE: return "NONE";
    case CUBLASLT_REDUCTION_SCHEME_INPLACE: return "INPLACE";
    case CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE: return "COMPUTE_TYPE";
    case CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE: return "OUTPUT_TYPE";
    default: return "?";
  }
}

// The algorithm's configuration as JSON (what the heuristic picked).
std::string algo_info(const cublasLtMatmulHeuristicResult_t& r) {
  auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr, const char* name) -> long long {
    // Attributes differ in size (uint32, int32, uint16, uint64): read into a zeroed 8-byte slot.
    unsigned long long v = 0;
    size_t written = 0;
    cublasStatus_t s = cublasLtMatmulAlgoConfigGetAttribute(&r.algo, attr, &v, sizeof v, &written);
    if (s != CUBLAS_STATUS_SUCCESS) {
      // Retry with the exact size the library asks for (some attributes reject a larger buffer).
      size_t need = 0;
      cublasLtMatmulAlgoConfigGetAttribute(&r.algo, attr, nullptr, 0, &need);
      if (need > 0 && need <= sizeof v) s = cublasLtMatmulAlgoConfigGetAttribute(&r.algo, attr, &v, need, &written);
    }
    if (s != CUBLAS_STATUS_SUCCESS) {
      emit(fmt("\"variant\":\"%s\",\"event\":\"warning\",\"msg\":\"cublasLtMatmulAlgoConfigGetAttribute(%s): %s\"", g_variant.c_str(), name,
               cublasGetStatusString(s)));
      return -1;
    }
    if (written == 4) return (long long)(int)(unsigned)v;
    if (written == 2) return (long long)(unsigned short)v;
    return (long long)v;
  };
  const long long id = get(CUBLASLT_ALGO_CONFIG_ID, "ID");
  const long long tile = get(CUBLASLT_ALGO_CONFIG_TILE_ID, "TILE_ID");
  const long long splitk = get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, "SPLITK_NUM");
  const long long red = get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, "REDUCTION_SCHEME");
  const long long stages = get(CUBLASLT_ALGO_CONFIG_STAGES_ID, "STAGES_ID");
  const long long swz = get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, "CTA_SWIZZLING");
  const long long custom = get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, "CUSTOM_OPTION");
  return fmt("\"lt_algo\":{\"id\":%lld,\"tile_id\":%lld,\"splitk_num\":%lld,\"reduction_scheme\":%lld,\"reduction\":\"%s\","
             "\"stages_id\":%lld,\"cta_swizzling\":%lld,\"custom_option\":%lld,\"heur_workspace\":%zu,\"waves\":%.3f}",
             id, tile, splitk, red, reduction_name(int(red)), stages, swz, custom, r.workspaceSize, r.wavesCount);
}

// cublasLt D = A B (row-major, operands swapped as above), BF16 A/B, FP32 compute and scale, output type
// `dtype` (C has the same type and layout as D; beta = 0). no_reduction: restrict the heuristic to
// algorithms without a split-K reduction.
void lt_variant(cublasLtHandle_t lt, Problem& p, const std::string& name, cudaDataType_t dtype, bool no_reduction, bool round) {
  g_variant = name;
  p.clear_outputs();
  const int M = p.M;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  void* ws = nullptr;
  auto cleanup = [&] {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (ld) cublasLtMatrixLayoutDestroy(ld);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (op) cublasLtMatmulDescDestroy(op);
    if (ws) cudaFree(ws);
  };
  try {
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t nop = CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &nop, sizeof nop));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &nop, sizeof nop));
    // Column-major M x M each (the row-major matrices transposed).
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, M, M, M));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, M, M, M));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&ld, dtype, M, M, M));
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const size_t ws_bytes = kLtWorkspace;
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes));
    if (no_reduction) {
      const uint32_t mask = CUBLASLT_REDUCTION_SCHEME_NONE;
      CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof mask));
    }
    CUDA_CHECK(cudaMalloc(&ws, ws_bytes));
    cublasLtMatmulHeuristicResult_t res[8] = {};
    int found = 0;
    // "A" of the column-major product is the row-major B (operands swapped).
    CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, op, lb, la, ld, ld, pref, 8, res, &found));
    if (found == 0) {
      emit(fmt("\"variant\":\"%s\",\"event\":\"error\",\"lib\":\"cublasLt\",\"msg\":\"no algorithm from the heuristic\"", name.c_str()));
      cleanup();
      return;
    }
    const std::string info = algo_info(res[0]);
    const float alpha = 1.0f, beta = 0.0f;
    void* D = dtype == CUDA_R_32F ? static_cast<void*>(p.dC32) : static_cast<void*>(p.dC16);
    const size_t n = size_t(M) * M;
    double med = 0;
    std::string t = time_calls([&] {
      CUBLAS_CHECK(cublasLtMatmul(lt, op, &alpha, p.dB, lb, p.dA, la, &beta, D, ld, D, ld, &res[0].algo, ws, res[0].workspaceSize, 0));
      if (round) launch_round(p.dC32, p.dC16, n);
    }, &med);
    report(p, name, dtype == CUDA_R_16BF || round, t, med, fmt("%s,\"heuristic_results\":%d", info.c_str(), found));
  } catch (const Failure&) {
  }
  cleanup();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) g_M = atoi(argv[1]);
  if (argc > 2) g_seed = unsigned(strtoul(argv[2], nullptr, 10));
  if (g_M <= 0) {
    emit("\"event\":\"error\",\"lib\":\"diag\",\"msg\":\"usage: gemm_bf16_check [M>0] [seed]\"");
    return 2;
  }
  cublasHandle_t h = nullptr;
  cublasLtHandle_t lt = nullptr;
  Problem p;
  try {
    int dev = 0, rt = 0, drv = 0;
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    CUDA_CHECK(cudaDriverGetVersion(&drv));
    // Same handle setup as cublas_util.cuh blas().
    CUBLAS_CHECK(cublasCreate(&h));
    CUBLAS_CHECK(cublasSetStream(h, 0));
    CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    CUBLAS_CHECK(cublasLtCreate(&lt));
    int cublas_ver = 0;
    CUBLAS_CHECK(cublasGetVersion(h, &cublas_ver));
    emit(fmt("\"event\":\"info\",\"device\":\"%s\",\"cc\":\"%d.%d\",\"cuda_runtime\":%d,\"cuda_driver\":%d,\"cublas_version\":%d,"
             "\"cublasLt_version\":%zu",
             clean(prop.name).c_str(), prop.major, prop.minor, rt, drv, cublas_ver, cublasLtGetVersion()));
    p.init(g_M);
    emit(fmt("\"event\":\"reference_ready\",\"samples\":%zu", p.idx.size()));
  } catch (const Failure&) {
    return 3;
  }
  // Each variant catches its own failures, so one broken variant does not hide the others.
  try { variant_a(h, p); } catch (const Failure&) {}
  try { variant_b(h, p); } catch (const Failure&) {}
  lt_variant(lt, p, "c_lt_bf16_default", CUDA_R_16BF, false, false);
  lt_variant(lt, p, "c_lt_bf16_noreduce", CUDA_R_16BF, true, false);
  lt_variant(lt, p, "d_lt_f32_round", CUDA_R_32F, false, true);
  g_variant = "end";
  emit("\"event\":\"done\"");
  return 0;
}
