// cudamaster harness runtime: the one shared piece of C++/CUDA behind every generated driver.
//
// A generated driver (see bench_tasks/harness/driver.py) declares the baseline and candidate entry
// points, describes the arguments, and calls cm::run_driver(). This file holds everything else:
// reading the plan and the input files, guarded buffers (device memory, or pageable host memory for
// arguments a task declares `memory = "host"`), NaN poisoning, correctness runs,
// the interleaved timing loop with L2 flushing, and the result lines read back by Python.
//
// Protocol: the driver writes result lines to the file named by `results` in the plan, and on a
// fatal problem prints one line "CMERR <kind> <message>" to stderr and exits with a non-zero code:
//   3 = CUDA error (runtime_error), 4 = guard band overwritten (runtime_error),
//   5 = an input was modified (wrong_answer), 2 = bad plan or I/O (harness bug).
#pragma once

#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_profiler_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>
#include <unistd.h>

namespace cm {

enum Role { IN = 0, OUT = 1, ACC = 2, INOUT = 3, SCALAR = 4 };
enum Memory { DEVICE = 0, HOST = 1 };  // HOST: plain pageable malloc; the kernel gets the host pointer
enum Kind { F32 = 0, BF16 = 1, I32 = 2, F64 = 3, I64 = 4, U32 = 5, U64 = 6 };

struct ArgSpec {
  const char* name;
  int kind;
  int pointer;  // 1 for buffers (device or host: see Buffer::memory), 0 for scalars passed by value
};

static inline size_t kind_size(int k) {
  switch (k) {
    case F32: case I32: case U32: return 4;
    case BF16: return 2;
    default: return 8;
  }
}

static FILE* g_results = nullptr;
static const char* g_stage = "init";

[[noreturn]] static void fail(int code, const char* kind, const std::string& msg) {
  fprintf(stderr, "CMERR %s %s\n", kind, msg.c_str());
  fflush(stderr);
  if (g_results) fflush(g_results);
  _exit(code);
}

#define CM_CHECK(call)                                                                          \
  do {                                                                                          \
    cudaError_t cm_err__ = (call);                                                              \
    if (cm_err__ != cudaSuccess) {                                                              \
      ::cm::fail(3, "cuda", std::string(cudaGetErrorName(cm_err__)) + " (" +                   \
                                cudaGetErrorString(cm_err__) + ") during " + ::cm::g_stage +  \
                                " at " #call);                                                  \
    }                                                                                           \
  } while (0)

// Any error a launch left behind, sticky or not, ends the evaluation.
static void check_after(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    fail(3, "cuda", std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ") after " + what);
}

static constexpr size_t GUARD = 64 * 1024;  // canary bytes before and after every buffer
static constexpr unsigned char GUARD_BYTE = 0xA5;
static constexpr unsigned char POISON_BYTE = 0xFF;  // NaN in float and bf16, -1 in int

struct Buffer {
  int arg = -1;
  int role = IN;
  int memory = DEVICE;
  size_t count = 0, bytes = 0;
  unsigned char* base = nullptr;  // allocation start (guard before)
  unsigned char* ptr = nullptr;   // what the kernel sees
  std::vector<unsigned char> host;  // current dataset's content (inputs / inout)
};

struct Dataset {
  std::string dir;
  std::string purpose;  // check | fresh
};

struct Case {
  int id = 0;
  std::vector<Buffer> buffers;
  std::vector<std::pair<int, double>> scalars;
  std::vector<Dataset> datasets;
  bool timing = false;
};

struct Plan {
  std::string mode = "full";  // full | once
  std::string impl = "candidate";
  std::string results, outdir;
  int min_pairs = 10, max_pairs = 2000, warmup = 3;
  double max_seconds = 3.0, target_rse = 0.005, min_seconds = 0.3, warmup_seconds = 0.1;
  long long flush_bytes = 0;
  std::vector<Case> cases;
};

union ScalarValue {
  float f32;
  double f64;
  int32_t i32;
  int64_t i64;
  uint32_t u32;
  uint64_t u64;
  __nv_bfloat16 bf16;
};

struct Args {
  void* ptrs[32] = {};
  ScalarValue scalars[32];
  void* ptr(int i) const { return ptrs[i]; }
  float f32(int i) const { return scalars[i].f32; }
  double f64(int i) const { return scalars[i].f64; }
  int32_t i32(int i) const { return scalars[i].i32; }
  int64_t i64(int i) const { return scalars[i].i64; }
  uint32_t u32(int i) const { return scalars[i].u32; }
  uint64_t u64(int i) const { return scalars[i].u64; }
  __nv_bfloat16 bf16(int i) const { return scalars[i].bf16; }
};

typedef void (*CallFn)(int impl, const Args& a);

static Plan read_plan(const char* path) {
  std::ifstream in(path);
  if (!in) fail(2, "plan", std::string("cannot open plan ") + path);
  Plan p;
  std::string tok;
  Case* cur = nullptr;
  while (in >> tok) {
    if (tok == "mode") in >> p.mode;
    else if (tok == "impl") in >> p.impl;
    else if (tok == "results") in >> p.results;
    else if (tok == "outdir") in >> p.outdir;
    else if (tok == "timing") in >> p.min_pairs >> p.max_pairs >> p.min_seconds >> p.max_seconds >> p.target_rse >> p.warmup >> p.warmup_seconds;
    else if (tok == "flush_bytes") in >> p.flush_bytes;
    else if (tok == "case") { p.cases.emplace_back(); cur = &p.cases.back(); in >> cur->id; }
    else if (tok == "buffer") {
      if (!cur) fail(2, "plan", "buffer before case");
      Buffer b;
      in >> b.arg >> b.count >> b.role >> b.memory;
      if (!in || (b.memory != DEVICE && b.memory != HOST)) fail(2, "plan", "bad buffer line (buffer ARG COUNT ROLE MEMORY)");
      cur->buffers.push_back(b);
    }
    else if (tok == "scalar") { int a; double v; in >> a >> v; cur->scalars.push_back({a, v}); }
    else if (tok == "dataset") { Dataset d; in >> d.dir >> d.purpose; cur->datasets.push_back(d); }
    else if (tok == "time") { int t; in >> t; cur->timing = t != 0; }
    else fail(2, "plan", "unknown plan token " + tok);
  }
  return p;
}

static std::vector<unsigned char> read_file(const std::string& path, size_t bytes) {
  std::vector<unsigned char> v(bytes);
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) fail(2, "io", "cannot open input " + path);
  size_t got = bytes ? fread(v.data(), 1, bytes, f) : 0;
  fclose(f);
  if (got != bytes) fail(2, "io", "short input file " + path);
  return v;
}

static void write_file(const std::string& path, const void* data, size_t bytes) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) fail(2, "io", "cannot write " + path);
  if (bytes && fwrite(data, 1, bytes, f) != bytes) fail(2, "io", "short write " + path);
  fclose(f);
}

// Buffer primitives, the same for device and host memory. Host buffers are plain pageable memory
// (what a caller's malloc gives): filled, poisoned, restored and read back with memset/memcpy. They
// are only touched between calls, after the device has been synchronised.
static void mem_set(const Buffer& b, unsigned char* dst, int byte, size_t n, bool async = false) {
  if (!n) return;
  if (b.memory == HOST) memset(dst, byte, n);
  else if (async) CM_CHECK(cudaMemsetAsync(dst, byte, n, 0));
  else CM_CHECK(cudaMemset(dst, byte, n));
}
static void mem_to_buffer(const Buffer& b, unsigned char* dst, const void* src, size_t n, bool async = false) {
  if (!n) return;
  if (b.memory == HOST) memcpy(dst, src, n);
  else if (async) CM_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, 0));
  else CM_CHECK(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice));
}
static void mem_from_buffer(const Buffer& b, void* dst, const unsigned char* src, size_t n) {
  if (!n) return;
  if (b.memory == HOST) memcpy(dst, src, n);
  else CM_CHECK(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost));
}

static void alloc_buffer(Buffer& b, const ArgSpec* specs) {
  b.bytes = b.count * kind_size(specs[b.arg].kind);
  if (b.memory == HOST) {
    b.base = static_cast<unsigned char*>(malloc(b.bytes + 2 * GUARD));
    if (!b.base) fail(3, "host_alloc", "cannot allocate " + std::to_string(b.bytes) + " bytes of host memory for " + specs[b.arg].name);
  } else {
    CM_CHECK(cudaMalloc(&b.base, b.bytes + 2 * GUARD));
  }
  b.ptr = b.base + GUARD;
  mem_set(b, b.base, GUARD_BYTE, GUARD);
  mem_set(b, b.ptr + b.bytes, GUARD_BYTE, GUARD);
}

static void free_buffer(Buffer& b) {
  if (b.memory == HOST) free(b.base);
  else CM_CHECK(cudaFree(b.base));
  b.base = b.ptr = nullptr;
}

// Check the canaries of every buffer; report which side of which argument was overwritten.
static void check_guards(const Case& c, const ArgSpec* specs, const char* impl) {
  std::vector<unsigned char> g(GUARD);
  for (const Buffer& b : c.buffers) {
    for (int side = 0; side < 2; ++side) {
      unsigned char* src = side == 0 ? b.base : b.ptr + b.bytes;
      mem_from_buffer(b, g.data(), src, GUARD);
      for (size_t i = 0; i < GUARD; ++i) {
        if (g[i] != GUARD_BYTE) {
          size_t off = side == 0 ? GUARD - i : i;
          std::ostringstream m;
          m << impl << " wrote " << off << " bytes " << (side == 0 ? "before the start" : "past the end")
            << " of argument " << specs[b.arg].name << " (" << b.bytes << " bytes)";
          fail(4, "guard", m.str());
        }
      }
    }
  }
}

static void check_inputs_unchanged(const Case& c, const ArgSpec* specs, const char* impl) {
  std::vector<unsigned char> now;
  for (const Buffer& b : c.buffers) {
    if (b.role != IN) continue;
    now.resize(b.bytes);
    mem_from_buffer(b, now.data(), b.ptr, b.bytes);
    if (b.bytes && memcmp(now.data(), b.host.data(), b.bytes) != 0)
      fail(5, "input_modified", std::string(impl) + " modified input argument " + specs[b.arg].name);
  }
}

static void load_dataset(Case& c, const Dataset& d, const ArgSpec* specs) {
  for (Buffer& b : c.buffers)
    if (b.role == IN || b.role == INOUT) b.host = read_file(d.dir + "/" + specs[b.arg].name + ".bin", b.bytes);
}

static void upload_inputs(Case& c) {
  for (Buffer& b : c.buffers)
    if (b.role == IN) mem_to_buffer(b, b.ptr, b.host.data(), b.bytes);
}

// Define every output before a call: poison plain outputs, zero accumulators, restore in-out data.
// (Device buffers: queued on the legacy stream, ahead of the call; host buffers: done now.)
static void prepare_outputs(Case& c) {
  for (Buffer& b : c.buffers) {
    if (b.role == OUT) mem_set(b, b.ptr, POISON_BYTE, b.bytes, true);
    else if (b.role == ACC) mem_set(b, b.ptr, 0, b.bytes, true);
    else if (b.role == INOUT) mem_to_buffer(b, b.ptr, b.host.data(), b.bytes, true);
  }
}

static void fill_args(const Case& c, const ArgSpec* specs, Args& a) {
  for (const Buffer& b : c.buffers) a.ptrs[b.arg] = b.ptr;
  for (auto& s : c.scalars) {
    ScalarValue& v = a.scalars[s.first];
    switch (specs[s.first].kind) {
      case F32: v.f32 = (float)s.second; break;
      case F64: v.f64 = s.second; break;
      case I32: v.i32 = (int32_t)llround(s.second); break;
      case I64: v.i64 = (int64_t)llround(s.second); break;
      case U32: v.u32 = (uint32_t)llround(s.second); break;
      case U64: v.u64 = (uint64_t)llround(s.second); break;
      case BF16: v.bf16 = __float2bfloat16((float)s.second); break;
    }
  }
}

static const char* impl_name(int impl) { return impl == 0 ? "baseline" : "candidate"; }

static void write_outputs(const Case& c, const ArgSpec* specs, const Plan& p, int ds, int impl, const char* stage) {
  std::vector<unsigned char> h;
  for (const Buffer& b : c.buffers) {
    if (b.role == IN) continue;
    h.resize(b.bytes);
    mem_from_buffer(b, h.data(), b.ptr, b.bytes);
    std::ostringstream path;
    path << p.outdir << "/c" << c.id << "_d" << ds << "_" << impl_name(impl) << "_" << stage << "_" << specs[b.arg].name
         << ".bin";
    write_file(path.str(), h.data(), h.size());
  }
  fprintf(g_results, "output %d %d %s %s\n", c.id, ds, impl_name(impl), stage);
  fflush(g_results);
}

// One correctness call: define outputs, call, synchronise, check errors, guards and inputs, save outputs.
static void checked_call(Case& c, const ArgSpec* specs, const Plan& p, CallFn call, int impl, int ds, const char* stage) {
  Args a;
  fill_args(c, specs, a);
  upload_inputs(c);
  prepare_outputs(c);
  CM_CHECK(cudaDeviceSynchronize());
  std::string where = std::string(impl_name(impl)) + " call (" + stage + ")";
  g_stage = where.c_str();
  call(impl, a);
  check_after(where.c_str());
  CM_CHECK(cudaDeviceSynchronize());
  check_after(where.c_str());
  g_stage = "checks";
  check_guards(c, specs, impl_name(impl));
  check_inputs_unchanged(c, specs, impl_name(impl));
  write_outputs(c, specs, p, ds, impl, stage);
}

// Reads the whole scrub buffer through L2 (zeros: the store below never happens but keeps the loads).
__global__ void cm_l2_scrub_read(const int4* __restrict__ buf, size_t n, int* sink) {
  int acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    int4 v = __ldcg(buf + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x5A5A1234) *sink = acc;
}

struct Timer {
  cudaEvent_t start, stop, after;
  unsigned char* flush = nullptr;
  size_t flush_bytes = 0;
  int* sink = nullptr;
  int scrub_blocks = 1;
  Timer(long long want_flush) {
    CM_CHECK(cudaEventCreate(&start));
    CM_CHECK(cudaEventCreate(&stop));
    CM_CHECK(cudaEventCreate(&after));
    int dev = 0, l2 = 0;
    CM_CHECK(cudaGetDevice(&dev));
    CM_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    flush_bytes = want_flush > 0 ? (size_t)want_flush : (size_t)std::max(2 * l2, 64 << 20);
    flush_bytes = (flush_bytes + 15) / 16 * 16;
    CM_CHECK(cudaMalloc(&flush, flush_bytes));
    CM_CHECK(cudaMemset(flush, 0, flush_bytes));
    CM_CHECK(cudaMalloc(&sink, sizeof(int)));
    int sms = 0;
    CM_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    scrub_blocks = std::max(1, sms * 8);
    CM_CHECK(cudaDeviceSynchronize());
  }
  // Evict L2 and drop any persisting-L2 carve-out a kernel set up. The eviction READS a buffer of
  // >= 2x L2: the cache is left holding clean lines, so the timed call pays no write-back of the
  // scrub's data (a memset would leave L2 full of dirty lines; ncu's flush leaves it clean too).
  void scrub() {
    CM_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
    CM_CHECK(cudaCtxResetPersistingL2Cache());
    cm_l2_scrub_read<<<scrub_blocks, 256>>>(reinterpret_cast<const int4*>(flush), flush_bytes / sizeof(int4), sink);
    CM_CHECK(cudaGetLastError());
  }
  // Time one call on the legacy default stream. Every stream a candidate can create is blocking
  // (see cm_stream_create_with_flags), so `stop`, recorded on the legacy stream when the call
  // returns, fires only once all the work the call queued anywhere has finished, and `start`
  // (queued behind the L2 scrub) fires after the host has queued the call: no launch
  // latency in the figure. A device-wide synchronise and a second end event `after` follow: for an
  // honest call after - stop is the fixed synchronise cost (the baseline's is the reference); work
  // that ran on past `stop` shows up as extra tail, which evaluate() adds to the call's time.
  struct Sample { double event_us, wall_us, tail_us; };
  Sample time_call(CallFn call, int impl, const Args& a) {
    auto t0 = std::chrono::steady_clock::now();
    CM_CHECK(cudaEventRecord(start, 0));
    call(impl, a);
    CM_CHECK(cudaEventRecord(stop, 0));
    CM_CHECK(cudaEventSynchronize(stop));
    auto t1 = std::chrono::steady_clock::now();
    CM_CHECK(cudaDeviceSynchronize());
    CM_CHECK(cudaEventRecord(after, 0));
    CM_CHECK(cudaEventSynchronize(after));
    check_after("timed call");
    float ms = 0, tail_ms = 0;
    CM_CHECK(cudaEventElapsedTime(&ms, start, stop));
    CM_CHECK(cudaEventElapsedTime(&tail_ms, stop, after));
    return {ms * 1000.0, std::chrono::duration<double, std::micro>(t1 - t0).count(), tail_ms * 1000.0};
  }
};

static double rel_std_err(const std::vector<double>& v) {
  if (v.size() < 2) return 1e9;
  double m = 0;
  for (double x : v) m += x;
  m /= v.size();
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  s = std::sqrt(s / (v.size() - 1));
  return m > 0 ? s / std::sqrt((double)v.size()) / m : 1e9;
}

static void time_case(Case& c, const ArgSpec* specs, const Plan& p, CallFn call, bool has_candidate, Timer& t) {
  Args a;
  fill_args(c, specs, a);
  upload_inputs(c);
  std::vector<int> impls = has_candidate ? std::vector<int>{0, 1} : std::vector<int>{0};
  // Warm up: module load, first touch, and clocks ramping up under load (at least `warmup` calls
  // of each implementation and at least `warmup_seconds`).
  g_stage = "warm-up";
  auto w0 = std::chrono::steady_clock::now();
  for (int i = 0;; ++i) {
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    if (i >= p.warmup && elapsed >= p.warmup_seconds) break;
    for (int impl : impls) {
      prepare_outputs(c);
      call(impl, a);
      check_after("warm-up call");
      CM_CHECK(cudaDeviceSynchronize());
    }
  }
  std::mt19937 rng(12345 + c.id);
  std::vector<double> ratios, base;
  auto t0 = std::chrono::steady_clock::now();
  g_stage = "timing";
  for (int pair = 0; pair < p.max_pairs; ++pair) {
    double us[2] = {0, 0}, wall[2] = {0, 0}, tail[2] = {0, 0};
    std::vector<int> order = impls;
    if (order.size() == 2 && (rng() & 1)) std::swap(order[0], order[1]);
    for (int impl : order) {
      prepare_outputs(c);
      t.scrub();
      Timer::Sample r = t.time_call(call, impl, a);
      us[impl] = r.event_us;
      wall[impl] = r.wall_us;
      tail[impl] = r.tail_us;
    }
    for (int impl : impls) fprintf(g_results, "time %d %s %d %.4f %.4f %.4f\n", c.id, impl_name(impl), pair, us[impl], wall[impl], tail[impl]);
    if (has_candidate) ratios.push_back(us[0] / std::max(us[1], 1e-3));
    base.push_back(us[0]);
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (elapsed > p.max_seconds) break;
    if (pair + 1 >= p.min_pairs && elapsed >= p.min_seconds && rel_std_err(has_candidate ? ratios : base) < p.target_rse) break;
  }
  fflush(g_results);
}

static void print_device() {
  int dev = 0, drv = 0, rt = 0;
  cudaDeviceProp prop;
  CM_CHECK(cudaGetDevice(&dev));
  CM_CHECK(cudaGetDeviceProperties(&prop, dev));
  CM_CHECK(cudaDriverGetVersion(&drv));
  CM_CHECK(cudaRuntimeGetVersion(&rt));
  std::string name = prop.name;
  std::replace(name.begin(), name.end(), ' ', '_');
  fprintf(g_results, "device %s %d.%d %d %d %zu %d %d\n", name.c_str(), prop.major, prop.minor,
          prop.multiProcessorCount, prop.l2CacheSize, prop.totalGlobalMem, drv, rt);
}

static int run_driver(int argc, char** argv, const ArgSpec* specs, int nargs, CallFn call, bool has_candidate) {
  (void)nargs;
  if (argc < 2) fail(2, "usage", "driver PLAN");
  Plan p = read_plan(argv[1]);
  g_results = fopen(p.results.c_str(), "w");
  if (!g_results) fail(2, "io", "cannot write results " + p.results);
  CM_CHECK(cudaFree(0));  // create the context before anything is timed
  print_device();
  fflush(g_results);
  if (p.mode == "once") {  // one call of one implementation, for a profiler
    int impl = p.impl == "baseline" ? 0 : 1;
    if (impl == 1 && !has_candidate) fail(2, "plan", "no candidate in this driver");
    Case& c = p.cases.at(0);
    for (Buffer& b : c.buffers) alloc_buffer(b, specs);
    load_dataset(c, c.datasets.at(0), specs);
    Args a;
    fill_args(c, specs, a);
    upload_inputs(c);
    prepare_outputs(c);
    CM_CHECK(cudaDeviceSynchronize());
    CM_CHECK(cudaProfilerStart());
    g_stage = "profiled call";
    call(impl, a);
    CM_CHECK(cudaDeviceSynchronize());
    CM_CHECK(cudaProfilerStop());
    check_after("profiled call");
    fprintf(g_results, "done\n");
    fclose(g_results);
    return 0;
  }
  Timer timer(p.flush_bytes);
  for (Case& c : p.cases) {
    for (Buffer& b : c.buffers) alloc_buffer(b, specs);
    int first_check = -1;
    for (size_t d = 0; d < c.datasets.size(); ++d) {
      if (c.datasets[d].purpose != "check") continue;
      if (first_check < 0) first_check = (int)d;
      load_dataset(c, c.datasets[d], specs);
      checked_call(c, specs, p, call, 0, (int)d, "first");
      if (has_candidate) {
        checked_call(c, specs, p, call, 1, (int)d, "first");
        checked_call(c, specs, p, call, 1, (int)d, "second");
      }
    }
    if (c.timing && first_check >= 0) {
      load_dataset(c, c.datasets[first_check], specs);
      time_case(c, specs, p, call, has_candidate, timer);
      check_guards(c, specs, "timed calls");
    }
    for (size_t d = 0; d < c.datasets.size(); ++d) {
      if (c.datasets[d].purpose != "fresh") continue;
      load_dataset(c, c.datasets[d], specs);
      checked_call(c, specs, p, call, 0, (int)d, "first");  // the baseline too: the oracle of custom tasks
      if (has_candidate) checked_call(c, specs, p, call, 1, (int)d, "after_timing");
    }
    for (Buffer& b : c.buffers) free_buffer(b);
    fprintf(g_results, "case_done %d\n", c.id);
    fflush(g_results);
  }
  fprintf(g_results, "done\n");
  fclose(g_results);
  return 0;
}

}  // namespace cm

// Streams created by code we compile (candidates, custom baselines) are always blocking: compile.py
// renames their calls to cudaStreamCreateWithFlags/WithPriority to these, which drop
// cudaStreamNonBlocking. A blocking stream synchronises with the legacy default stream, so the
// harness's events on it bracket all the work a call queues, on any stream.
extern "C" cudaError_t cm_stream_create_with_flags(cudaStream_t* stream, unsigned int flags) {
  return cudaStreamCreateWithFlags(stream, flags & ~cudaStreamNonBlocking);
}
extern "C" cudaError_t cm_stream_create_with_priority(cudaStream_t* stream, unsigned int flags, int priority) {
  return cudaStreamCreateWithPriority(stream, flags & ~cudaStreamNonBlocking, priority);
}
