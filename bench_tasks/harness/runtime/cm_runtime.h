// cudamaster harness runtime: the one shared piece of C++/CUDA behind every generated driver.
//
// A generated driver (see bench_tasks/harness/driver.py) declares the baseline and candidate entry
// points, describes the arguments, and calls cm::run_driver() (declared in cm_driver.h). This file (host
// C++; the kernels it launches are in cm_kernels.cu) holds everything else: reading the plan and the
// input files, guarded buffers (device memory, or pageable host memory for arguments a task declares
// `memory = "host"`), NaN poisoning, correctness runs, the interleaved timing loop with L2 flushing, the
// inputs redrawn between timed calls and the checked timed calls, and the result lines read back by Python. compile.py compiles it once
// (cm_runtime.cpp includes it) with the host compiler, beside cm_kernels.cu with nvcc, into two objects
// cached by content, and links both into every driver.
//
// Protocol: the driver writes result lines to the file named by `results` in the plan, and on a
// fatal problem prints one line "CMERR <kind> <message>" to stderr and exits with a non-zero code:
//   3 = CUDA error (runtime_error), 4 = guard band overwritten (runtime_error),
//   5 = an input was modified (wrong_answer), 6 = a candidate call ran past its limit (timeout),
//   2 = bad plan or I/O (harness bug).
#pragma once

#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_profiler_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <deque>
#include <future>
#include <mutex>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <sys/stat.h>
#include <unistd.h>

#include "cm_driver.h"
#include "cm_host.h"
#include "cm_kernels.h"

namespace cm {

static FILE* g_results = nullptr;
static const char* g_stage = "init";
static BytePool g_bytes;  // host vectors reused for datasets, input comparisons and saved buffers (cm_host.h)

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

enum Memory { DEVICE = 0, HOST = 1 };  // HOST: plain pageable malloc; the kernel gets the host pointer

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
  unsigned char* src = nullptr;   // in-out data: the device copy each call is restored from
  Bytes host;  // current dataset's content (inputs / inout)
  // Between timed calls: redrawn with this draw (DRAW_KEEP: left as loaded).
  int draw = DRAW_KEEP;
  double p0 = 0, p1 = 0;
  unsigned char* stash = nullptr;   // outputs: where the first call of a timed pair leaves its result
  unsigned char* orig = nullptr;    // DRAW_SHUFFLE: the dataset's values, which each pair permutes
  // Device inputs: a device copy of the dataset's values, made right after each upload, before any call;
  // check_inputs_unchanged compares the buffer with it on the device (null: not enough device memory, the
  // buffer is compared on the host with the dataset's bytes instead).
  unsigned char* pristine = nullptr;
  // Outputs checked on a sample (large sizes): the indices, on the device, and where they came from.
  std::string sample_path;
  size_t sample_count = 0;
  int64_t* sample = nullptr;         // device copy of the indices (device buffers)
  std::vector<int64_t> sample_host;  // host copy (host buffers are gathered on the CPU)
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
  std::set<int> check_pairs;  // timed pairs whose outputs are checked (chosen by the parent, in secret)
  // The buffers hold the current dataset's inputs: uploaded, and found byte for byte unchanged after every
  // call since (check_inputs_unchanged), so the next correctness call need not upload them again.
  bool resident = false;
};

struct Plan {
  std::string mode = "full";  // full | once
  std::string impl = "candidate";
  std::string results, outdir;
  int min_pairs = 10, max_pairs = 2000, warmup = 3;
  double max_seconds = 2.0, target_rse = 0.002, min_seconds = 0.05, warmup_seconds = 0.02;
  double warmup_first = -1;     // the first timed size's warm-up seconds (the GPU starts idle); < 0: warmup_seconds
  long long flush_bytes = 0;
  uint32_t key0 = 0, key1 = 0;  // the refresh generator's key
  int check_last = 1;           // one more checked pair after the loop decides to stop
  int dump_baseline = 0;        // also save the baseline's outputs of checked timed calls
  double wait_seconds = 600;    // how long to wait for a dataset the parent is still writing
  // A candidate call (with the synchronise after it) may take max(call_floor_s, call_factor x the longest
  // baseline call of the same size so far) before the watchdog ends the run with exit code 6 (timeout);
  // call_floor_s <= 0: no limit (the parent's run timeout still holds).
  double call_floor_s = 0, call_factor = 0;
  // A file the parent creates once the GPU is this driver's alone (the previous driver has exited): the driver
  // starts (process, sandbox, CUDA context) while the previous one finishes its last correctness runs, and
  // waits here before any other GPU work. Empty: no wait.
  std::string gate;
  // The cores this driver runs on (bench_tasks/harness/cpus.py: the parent's own threads keep off them). Empty:
  // the parent's.
  std::vector<int> cpus;
  // Compare device inputs with the dataset on the host after every call, as for a buffer whose pristine device
  // copy could not be allocated (the settings' input_checks_on_host: to test that fallback).
  int input_checks_on_host = 0;
  // The driver's own staging memory page-locked (cm_host.h's HostMemory; the settings' pinned_staging).
  int pinned_staging = 0;
  std::vector<Case> cases;
};

static double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static Plan read_plan(const char* path) {
  std::ifstream in(path);
  if (!in) fail(2, "plan", std::string("cannot open plan ") + path);
  Plan p;
  std::string tok;
  Case* cur = nullptr;
  auto need_case = [&](const std::string& t) {
    if (!cur) fail(2, "plan", t + " before any case");
  };
  auto buffer_of = [&](int arg) -> Buffer& {
    for (Buffer& b : cur->buffers)
      if (b.arg == arg) return b;
    fail(2, "plan", "no buffer for argument " + std::to_string(arg));
  };
  while (in >> tok) {
    if (tok == "mode") in >> p.mode;
    else if (tok == "impl") in >> p.impl;
    else if (tok == "results") in >> p.results;
    else if (tok == "outdir") in >> p.outdir;
    else if (tok == "timing") in >> p.min_pairs >> p.max_pairs >> p.min_seconds >> p.max_seconds >> p.target_rse >> p.warmup >> p.warmup_seconds;
    else if (tok == "flush_bytes") in >> p.flush_bytes;
    else if (tok == "refresh_key") in >> p.key0 >> p.key1;
    else if (tok == "check_last") in >> p.check_last;
    else if (tok == "dump_baseline") in >> p.dump_baseline;
    else if (tok == "wait_seconds") in >> p.wait_seconds;
    else if (tok == "call_limit") in >> p.call_floor_s >> p.call_factor;
    else if (tok == "warmup_first") in >> p.warmup_first;
    else if (tok == "gate") in >> p.gate;
    else if (tok == "input_checks_on_host") in >> p.input_checks_on_host;
    else if (tok == "pinned_staging") in >> p.pinned_staging;
    else if (tok == "cpus") {
      int n = 0;
      in >> n;
      if (n < 0 || n > 4096) fail(2, "plan", "bad cpus count");
      p.cpus.resize((size_t)n);
      for (int& c : p.cpus) in >> c;
    }
    else if (tok == "case") { p.cases.emplace_back(); cur = &p.cases.back(); in >> cur->id; }
    else if (tok == "buffer") {
      need_case(tok);
      Buffer b;
      in >> b.arg >> b.count >> b.role >> b.memory;
      if (!in || (b.memory != DEVICE && b.memory != HOST)) fail(2, "plan", "bad buffer line (buffer ARG COUNT ROLE MEMORY)");
      cur->buffers.push_back(b);
    }
    else if (tok == "refresh") { need_case(tok); int a; in >> a; Buffer& b = buffer_of(a); in >> b.draw >> b.p0 >> b.p1; }
    else if (tok == "sample") { need_case(tok); int a; in >> a; Buffer& b = buffer_of(a); in >> b.sample_count >> b.sample_path; }
    else if (tok == "check_pairs") {
      need_case(tok);
      int n, j;
      in >> n;
      for (int i = 0; i < n && in >> j; ++i) cur->check_pairs.insert(j);
    }
    else if (tok == "scalar") { need_case(tok); int a; double v; in >> a >> v; cur->scalars.push_back({a, v}); }
    else if (tok == "dataset") { need_case(tok); Dataset d; in >> d.dir >> d.purpose; cur->datasets.push_back(d); }
    else if (tok == "time") { need_case(tok); int t; in >> t; cur->timing = t != 0; }
    else fail(2, "plan", "unknown plan token " + tok);
    if (in.fail()) fail(2, "plan", "bad value after plan token " + tok);
  }
  return p;
}

static Bytes read_file(const std::string& path, size_t bytes) {
  Bytes v = g_bytes.take(bytes);
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
static void mem_within(const Buffer& b, unsigned char* dst, const unsigned char* src, size_t n) {  // queued on the device
  if (!n) return;
  if (b.memory == HOST) memcpy(dst, src, n);
  else CM_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, 0));
}
static unsigned char* mem_alloc(const Buffer& b, size_t n, const ArgSpec* specs) {
  unsigned char* p = nullptr;
  if (b.memory == HOST) {
    p = static_cast<unsigned char*>(malloc(std::max<size_t>(n, 1)));
    if (!p) fail(3, "host_alloc", "cannot allocate " + std::to_string(n) + " bytes of host memory for " + specs[b.arg].name);
  } else {
    CM_CHECK(cudaMalloc(&p, std::max<size_t>(n, 1)));
  }
  return p;
}
static void mem_free(const Buffer& b, void* p) {
  if (!p) return;
  if (b.memory == HOST) free(p);
  else CM_CHECK(cudaFree(p));
}

// Result lines and output files go through one writer thread, in order: a file that is large (a timed
// call's inputs, a full output) is written while the GPU goes on, and the line that tells the parent to
// read it comes after it is on disk. At most LIMIT bytes wait at a time.
struct Writer {
  struct Job {
    std::string path;
    Bytes data;
    std::string line;
  };
  static constexpr size_t LIMIT = size_t(4) << 30;
  std::mutex m;
  std::condition_variable work, room;
  std::deque<Job> queue;
  size_t pending = 0;
  bool stopping = false, started = false;
  std::thread thread;

  void start() {
    started = true;
    thread = std::thread([this] { run(); });
  }
  void push(Job job) {
    if (!started) {  // before start (and in `once` mode): write now
      if (!job.path.empty()) write_file(job.path, job.data.data(), job.data.size());
      if (!job.line.empty()) { fputs(job.line.c_str(), g_results); fflush(g_results); }
      g_bytes.give(std::move(job.data));
      return;
    }
    std::unique_lock<std::mutex> lock(m);
    room.wait(lock, [&] { return pending == 0 || pending + job.data.size() <= LIMIT; });
    pending += job.data.size();
    queue.push_back(std::move(job));
    work.notify_one();
  }
  void run() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(m);
        work.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) return;
        job = std::move(queue.front());
        queue.pop_front();
      }
      if (!job.path.empty()) write_file(job.path, job.data.data(), job.data.size());
      if (!job.line.empty()) { fputs(job.line.c_str(), g_results); fflush(g_results); }
      size_t written = job.data.size();
      g_bytes.give(std::move(job.data));  // on disk: its memory serves the next buffer
      std::lock_guard<std::mutex> lock(m);
      pending -= written;
      room.notify_all();
    }
  }
  void finish() {
    if (!started) return;
    {
      std::lock_guard<std::mutex> lock(m);
      stopping = true;
      work.notify_all();
    }
    thread.join();
    started = false;
  }
};
static Writer g_writer;

static void emit(const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  g_writer.push({std::string(), {}, std::string(buf)});
}

static void write_later(const std::string& path, Bytes&& data) {
  g_writer.push({path, std::move(data), std::string()});
}

static void alloc_buffer(Buffer& b, const ArgSpec* specs, const Plan& p) {
  b.bytes = b.count * kind_size(specs[b.arg].kind);
  b.base = mem_alloc(b, b.bytes + 2 * GUARD, specs);
  b.ptr = b.base + GUARD;
  mem_set(b, b.base, GUARD_BYTE, GUARD);
  mem_set(b, b.ptr + b.bytes, GUARD_BYTE, GUARD);
  if (b.role == INOUT) b.src = mem_alloc(b, b.bytes, specs);
  if (b.role == IN && b.memory == DEVICE && b.bytes && !p.input_checks_on_host && cudaMalloc(&b.pristine, b.bytes) != cudaSuccess) {
    (void)cudaGetLastError();  // out of device memory: this buffer is compared on the host
    b.pristine = nullptr;
  }
  if (b.draw == DRAW_SHUFFLE) b.orig = mem_alloc(b, b.bytes, specs);
  if (b.sample_count) {
    Bytes idx = read_file(b.sample_path, b.sample_count * sizeof(int64_t));
    for (size_t i = 0; i < b.sample_count; ++i) {
      int64_t j;
      memcpy(&j, idx.data() + i * sizeof j, sizeof j);
      if (j < 0 || (size_t)j >= b.count) fail(2, "plan", "sample index out of range for " + std::string(specs[b.arg].name));
    }
    if (b.memory == HOST) {
      b.sample_host.resize(b.sample_count);
      memcpy(b.sample_host.data(), idx.data(), idx.size());
    } else {
      CM_CHECK(cudaMalloc(&b.sample, idx.size()));
      CM_CHECK(cudaMemcpy(b.sample, idx.data(), idx.size(), cudaMemcpyHostToDevice));
    }
  }
}

static void free_buffer(Buffer& b) {
  mem_free(b, b.base);
  mem_free(b, b.src);
  mem_free(b, b.stash);
  mem_free(b, b.orig);
  if (b.sample) CM_CHECK(cudaFree(b.sample));
  if (b.pristine) CM_CHECK(cudaFree(b.pristine));
  b.base = b.ptr = b.src = b.stash = b.orig = b.pristine = nullptr;
  b.sample = nullptr;
  g_bytes.give(std::move(b.host));  // the next size's datasets may reuse it
  b.host.clear();
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

// Bytes that differ between two device buffers of n bytes (16 at a time where both are 16-byte aligned,
// as cudaMalloc's are; the tail byte by byte): counted into *count.

static unsigned long long count_differing(const unsigned char* a, const unsigned char* b, size_t n) {
  static unsigned long long* count = nullptr;
  if (!count) CM_CHECK(cudaMalloc(&count, sizeof *count));
  CM_CHECK(cudaMemsetAsync(count, 0, sizeof *count, 0));
  int blocks = (int)std::min<size_t>((n / 16 + 255) / 256 + 1, 4096);
  CM_CHECK(launch_count_differing(blocks, a, b, n, count));
  unsigned long long differing = 0;
  CM_CHECK(cudaMemcpy(&differing, count, sizeof differing, cudaMemcpyDeviceToHost));
  return differing;
}

// Inputs must be left as they were (the dataset's values). KEPT_ONLY: only the inputs the timed pairs
// do not redraw (the redrawn ones are verified against the generator, see verify_redrawn). A device input
// is compared on the device with its pristine copy (made from the dataset before any call), others on the host.
enum InputsNow { DATASET, KEPT_ONLY };
static void check_inputs_unchanged(const Case& c, const ArgSpec* specs, const std::string& impl, InputsNow what = DATASET) {
  for (const Buffer& b : c.buffers) {
    if (b.role != IN) continue;
    if (what == KEPT_ONLY && b.draw != DRAW_KEEP) continue;
    if (b.pristine) {
      if (count_differing(b.ptr, b.pristine, b.bytes))
        fail(5, "input_modified", impl + " modified input argument " + specs[b.arg].name);
      continue;
    }
    const Bytes& want = b.host;
    Bytes now = g_bytes.take(b.bytes);
    mem_from_buffer(b, now.data(), b.ptr, b.bytes);
    bool same = !b.bytes || memcmp(now.data(), want.data(), b.bytes) == 0;
    g_bytes.give(std::move(now));
    if (!same) fail(5, "input_modified", impl + " modified input argument " + specs[b.arg].name);
  }
}

// Wait for a file the parent creates: a dataset's `ready` marker (it is written last), or the plan's gate.
static void wait_file(const std::string& path, const Plan& p, const std::string& what) {
  struct stat st;
  double t0 = now_s();
  while (stat(path.c_str(), &st) != 0) {
    if (now_s() - t0 > p.wait_seconds) fail(2, "io", what);
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
}

static void wait_ready(const Dataset& d, const Plan& p) { wait_file(d.dir + "/ready", p, "dataset " + d.dir + " never became ready"); }

// One dataset's files, per buffer (empty for outputs). Read ahead in a thread while the GPU works.
typedef std::vector<Bytes> Loaded;

static Loaded read_dataset(const Case& c, const Dataset& d, const ArgSpec* specs, const Plan& p) {
  wait_ready(d, p);
  Loaded loaded(c.buffers.size());
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    const Buffer& b = c.buffers[i];
    if (b.role == IN || b.role == INOUT) loaded[i] = read_file(d.dir + "/" + specs[b.arg].name + ".bin", b.bytes);
  }
  return loaded;
}

static void use_dataset(Case& c, Loaded loaded) {
  c.resident = false;
  for (size_t i = 0; i < c.buffers.size(); ++i)
    if (c.buffers[i].role == IN || c.buffers[i].role == INOUT) {
      g_bytes.give(std::move(c.buffers[i].host));  // the previous dataset's memory, for the next read
      c.buffers[i].host = std::move(loaded[i]);
    }
}

static void load_dataset(Case& c, const Dataset& d, const ArgSpec* specs, const Plan& p) {
  use_dataset(c, read_dataset(c, d, specs, p));
}

// The dataset's inputs into the buffers (in-out data into its restore source, shuffled inputs' values into
// `orig`). `resident_inputs`: the input buffers already hold them (c.resident): only the harness's own copies
// (restore sources, `orig`) are written again.
static void upload_inputs(Case& c, bool resident_inputs = false) {
  for (Buffer& b : c.buffers) {
    if (b.role == IN) {
      if (!resident_inputs) {
        mem_to_buffer(b, b.ptr, b.host.data(), b.bytes);
        if (b.pristine) CM_CHECK(cudaMemcpyAsync(b.pristine, b.ptr, b.bytes, cudaMemcpyDeviceToDevice, 0));
      }
    }
    else if (b.role == INOUT) mem_to_buffer(b, b.src, b.host.data(), b.bytes);
    if (b.orig) mem_to_buffer(b, b.orig, b.host.data(), b.bytes);
  }
}

// Define every output before a call: poison plain outputs, zero accumulators, restore in-out data
// (from its restore source, which a timed pair redraws). Device buffers: queued on the legacy stream,
// ahead of the call; host buffers: done now.
static void prepare_outputs(Case& c) {
  for (Buffer& b : c.buffers) {
    if (b.role == OUT) mem_set(b, b.ptr, POISON_BYTE, b.bytes, true);
    else if (b.role == ACC) mem_set(b, b.ptr, 0, b.bytes, true);
    else if (b.role == INOUT) mem_within(b, b.ptr, b.src, b.bytes);
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

// Redraw every refreshed input for timed call `call` (in-out data: its restore source), outside the
// timed region; the scrub that follows evicts what the redraw left in L2.



static void refresh_inputs(Case& c, const ArgSpec* specs, const Plan& p, uint32_t call) {
  for (Buffer& b : c.buffers) {
    if (b.draw == DRAW_KEEP || !b.count || (b.role != IN && b.role != INOUT)) continue;
    unsigned char* dst = b.role == INOUT ? b.src : b.ptr;
    uint32_t stream = ((uint32_t)c.id << 8) | (uint32_t)b.arg;
    int kind = specs[b.arg].kind, bits = shuffle_bits(b.count);
    if (b.memory == HOST) {  // the same generator on the CPU, on up to 8 threads (the device is idle between pairs)
      const Buffer& hb = b;
      parallel_for(b.count, [&, dst, kind, bits, stream](size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; ++i) {
          if (hb.draw == DRAW_SHUFFLE) shuffle_store(dst, hb.orig, i, hb.count, kind_size(kind), bits, call, stream, p.key0, p.key1);
          else refresh_store(dst, kind, hb.draw, hb.p0, hb.p1, i, call, stream, p.key0, p.key1);
        }
      });
      continue;
    }
    int blocks = (int)std::min<size_t>((b.count + 255) / 256, 65535);
    if (b.draw == DRAW_SHUFFLE)
      CM_CHECK(launch_shuffle(blocks, dst, b.orig, b.count, kind_size(kind), bits, call, stream, p.key0, p.key1));
    else
      CM_CHECK(launch_refresh(blocks, dst, b.count, kind, b.draw, b.p0, b.p1, call, stream, p.key0, p.key1));
  }
}

// The outputs of a sampled size are saved as their sampled elements only; every element must still
// be written, so the NaN ones (poison left in place, or NaN written) are counted over the whole buffer
// (infinities are written values, left to the comparison: bench_tasks.data.unwritten_count).



static unsigned long long count_unwritten_host(const unsigned char* p, size_t n, int kind) {
  unsigned long long bad = 0;
  for (size_t i = 0; i < n; ++i) {
    uint64_t u = 0;
    memcpy(&u, p + i * kind_size(kind), kind_size(kind));
    bad += is_nan_bits(u, kind);
  }
  return bad;
}

// Save an output (from `from`: the buffer itself, or where a timed call's result was put aside).
static void save_buffer(const Buffer& b, const unsigned char* from, const ArgSpec* specs, const std::string& path) {
  Bytes h;
  int kind = specs[b.arg].kind;
  size_t elem = kind_size(kind);
  if (!b.sample_count) {
    h = g_bytes.take(b.bytes);
    mem_from_buffer(b, h.data(), from, b.bytes);
    write_later(path, std::move(h));
    return;
  }
  std::string base = path.substr(path.find_last_of('/') + 1);
  if (b.memory == HOST) {
    h = g_bytes.take(b.sample_count * elem);
    for (size_t i = 0; i < b.sample_count; ++i) memcpy(h.data() + i * elem, from + (size_t)b.sample_host[i] * elem, elem);
    write_later(path, std::move(h));
    emit("unwritten %s %llu\n", base.c_str(), count_unwritten_host(from, b.count, kind));
    return;
  }
  unsigned char* picked = nullptr;
  unsigned long long* count = nullptr;
  CM_CHECK(cudaMalloc(&picked, b.sample_count * elem));
  CM_CHECK(cudaMalloc(&count, sizeof(unsigned long long)));
  CM_CHECK(cudaMemset(count, 0, sizeof(unsigned long long)));
  int blocks = (int)std::min<size_t>((std::max(b.count, b.sample_count) + 255) / 256, 4096);
  CM_CHECK(launch_gather(blocks, from, b.sample, b.sample_count, (int)elem, picked));
  CM_CHECK(launch_count_unwritten(blocks, from, b.count, kind, count));
  unsigned long long bad = 0;
  h = g_bytes.take(b.sample_count * elem);
  CM_CHECK(cudaMemcpy(h.data(), picked, h.size(), cudaMemcpyDeviceToHost));
  CM_CHECK(cudaMemcpy(&bad, count, sizeof bad, cudaMemcpyDeviceToHost));
  CM_CHECK(cudaFree(picked));
  CM_CHECK(cudaFree(count));
  write_later(path, std::move(h));
  emit("unwritten %s %llu\n", base.c_str(), bad);
}

static void write_outputs(const Case& c, const ArgSpec* specs, const Plan& p, int ds, int impl, const char* stage) {
  for (const Buffer& b : c.buffers) {
    if (b.role == IN) continue;
    std::ostringstream path;
    path << p.outdir << "/c" << c.id << "_d" << ds << "_" << impl_name(impl) << "_" << stage << "_" << specs[b.arg].name
         << ".bin";
    save_buffer(b, b.ptr, specs, path.str());
  }
  emit("output %d %d %s %s\n", c.id, ds, impl_name(impl), stage);
}

// Where a size's correctness calls spend their time (seconds, summed over its calls; reported per size as
// stages check_upload, check_call, check_verify, check_save, all parts of `checks` and `fresh`).
struct CheckTimes {
  double upload = 0, call = 0, verify = 0, save = 0;
};
static CheckTimes g_check_times;

// The call watchdog: a kernel that never ends is stopped in seconds, not at the parent's run timeout. Each
// candidate call arms it (deadline = now + the limit) and the harness disarms it once the call's work has
// synchronised; a thread ends the process when an armed deadline passes (the GPU context, and the kernel
// with it, goes with the process).
static std::atomic<double> g_deadline{0};  // 0: disarmed
static double g_baseline_call_s = 0;       // the longest baseline call (with its synchronise) at the current size
static double g_call_limit_s = 0;          // the limit of the armed call, for the message
static const Plan* g_plan = nullptr;

static void arm_call(int impl) {
  if (impl != 1 || !g_plan || g_plan->call_floor_s <= 0) return;
  g_call_limit_s = std::max(g_plan->call_floor_s, g_plan->call_factor * g_baseline_call_s);
  g_deadline.store(now_s() + g_call_limit_s);
}
static void disarm_call() { g_deadline.store(0); }
static void note_baseline_call(int impl, double seconds) {
  if (impl == 0) g_baseline_call_s = std::max(g_baseline_call_s, seconds);
}

static void start_watchdog(const Plan& p) {
  g_plan = &p;
  if (p.call_floor_s <= 0) return;
  std::thread([] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      double deadline = g_deadline.load();
      if (deadline > 0 && now_s() > deadline) {
        char msg[200];
        snprintf(msg, sizeof msg, "a candidate call (%s) ran past %.1f s (max(%.0f s, %.0fx the baseline's %.3f s at this size)) and was stopped: a hang or a far too slow kernel",
                 g_stage, g_call_limit_s, g_plan->call_floor_s, g_plan->call_factor, g_baseline_call_s);
        fail(6, "timeout", msg);
      }
    }
  }).detach();
}

// One correctness call: define outputs, call, synchronise, check errors, guards and inputs, save outputs.
static void checked_call(Case& c, const ArgSpec* specs, const Plan& p, CallFn call, int impl, int ds, const char* stage) {
  double t0 = now_s();
  Args a;
  fill_args(c, specs, a);
  upload_inputs(c, c.resident);
  prepare_outputs(c);
  CM_CHECK(cudaDeviceSynchronize());
  double t1 = now_s();
  std::string where = std::string(impl_name(impl)) + " call (" + stage + ")";
  g_stage = where.c_str();
  arm_call(impl);
  call(impl, a);
  check_after(where.c_str());
  CM_CHECK(cudaDeviceSynchronize());
  check_after(where.c_str());
  disarm_call();
  double t2 = now_s();
  note_baseline_call(impl, t2 - t1);
  g_stage = "checks";
  check_guards(c, specs, impl_name(impl));
  check_inputs_unchanged(c, specs, impl_name(impl));
  c.resident = true;  // (a changed input ended the run above)
  double t3 = now_s();
  write_outputs(c, specs, p, ds, impl, stage);
  g_check_times.upload += t1 - t0;
  g_check_times.call += t2 - t1;
  g_check_times.verify += t3 - t2;
  g_check_times.save += now_s() - t3;
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
    CM_CHECK(launch_l2_scrub_read(scrub_blocks, reinterpret_cast<const int4*>(flush), flush_bytes / sizeof(int4), sink));
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
    arm_call(impl);
    call(impl, a);
    CM_CHECK(cudaEventRecord(stop, 0));
    CM_CHECK(cudaEventSynchronize(stop));
    auto t1 = std::chrono::steady_clock::now();
    CM_CHECK(cudaDeviceSynchronize());
    CM_CHECK(cudaEventRecord(after, 0));
    CM_CHECK(cudaEventSynchronize(after));
    disarm_call();
    check_after("timed call");
    float ms = 0, tail_ms = 0;
    CM_CHECK(cudaEventElapsedTime(&ms, start, stop));
    CM_CHECK(cudaEventElapsedTime(&tail_ms, stop, after));
    return {ms * 1000.0, std::chrono::duration<double, std::micro>(t1 - t0).count(), tail_ms * 1000.0};
  }
};

// The redrawn inputs must still hold what the generator drew for this pair: recomputed and compared
// element by element (on the device for device buffers), without a copy taken before the calls.



static void verify_redrawn(Case& c, const ArgSpec* specs, const Plan& p, uint32_t call, const std::string& who) {
  unsigned long long* bad = nullptr;
  for (Buffer& b : c.buffers) {
    if (b.role != IN || b.draw == DRAW_KEEP || !b.count) continue;
    int kind = specs[b.arg].kind;
    uint32_t stream = ((uint32_t)c.id << 8) | (uint32_t)b.arg;
    unsigned long long n_bad = 0;
    int bits = shuffle_bits(b.count);
    if (b.memory == HOST) {
      std::atomic<unsigned long long> host_bad{0};
      const Buffer& hb = b;
      parallel_for(b.count, [&, kind, bits, stream](size_t lo, size_t hi) {
        unsigned long long mine = 0;
        for (size_t i = lo; i < hi; ++i)
          mine += element_bits(hb.ptr, i, kind_size(kind)) !=
                  redrawn_bits(hb.orig, i, hb.count, kind, hb.draw, hb.p0, hb.p1, bits, call, stream, p.key0, p.key1);
        host_bad += mine;
      });
      n_bad = host_bad.load();
    } else {
      if (!bad) CM_CHECK(cudaMalloc(&bad, sizeof *bad));
      CM_CHECK(cudaMemset(bad, 0, sizeof *bad));
      int blocks = (int)std::min<size_t>((b.count + 255) / 256, 4096);
      CM_CHECK(launch_refresh_verify(blocks, b.ptr, b.orig, b.count, kind, b.draw, b.p0, b.p1, bits, call, stream, p.key0, p.key1, bad));
      CM_CHECK(cudaMemcpy(&n_bad, bad, sizeof n_bad, cudaMemcpyDeviceToHost));
    }
    if (n_bad) {
      if (bad) cudaFree(bad);
      fail(5, "input_modified", who + " modified input argument " + specs[b.arg].name + " (" + std::to_string(n_bad) + " elements)");
    }
  }
  if (bad) CM_CHECK(cudaFree(bad));
}

// After both calls of a checked timed pair (nothing differs before or between the calls of a checked
// pair, so a candidate cannot tell it is checked): the same checks as a correctness call, then the
// inputs the calls saw and the outputs saved for the parent, who compares them with a float64 reference.
// `stashed`: the implementation whose outputs were put aside (it ran first), or -1.
static void check_timed_pair(Case& c, const ArgSpec* specs, const Plan& p, int pair, bool has_candidate, int stashed) {
  std::string who = std::string(has_candidate ? "candidate" : "baseline") + " (timed call " + std::to_string(pair) + ")";
  check_after(who.c_str());
  check_guards(c, specs, who.c_str());
  verify_redrawn(c, specs, p, (uint32_t)pair + 1, who);
  check_inputs_unchanged(c, specs, who, KEPT_ONLY);
  for (Buffer& b : c.buffers) {
    if (b.draw == DRAW_KEEP || (b.role != IN && b.role != INOUT)) continue;
    Bytes h = g_bytes.take(b.bytes);
    mem_from_buffer(b, h.data(), b.role == INOUT ? b.src : b.ptr, b.bytes);
    std::ostringstream path;
    path << p.outdir << "/c" << c.id << "_t" << pair << "_input_" << specs[b.arg].name << ".bin";
    write_later(path.str(), std::move(h));
  }
  for (int impl = 0; impl < 2; ++impl) {
    bool saved = impl == 1 ? has_candidate : !has_candidate || p.dump_baseline;
    if (!saved) continue;
    for (const Buffer& b : c.buffers) {
      if (b.role == IN) continue;
      std::ostringstream path;
      path << p.outdir << "/c" << c.id << "_t" << pair << "_" << impl_name(impl) << "_" << specs[b.arg].name << ".bin";
      save_buffer(b, impl == stashed ? b.stash : b.ptr, specs, path.str());
    }
    emit("timed %d %d %s\n", c.id, pair, impl_name(impl));
  }
}

// `first`: the first size this driver times (its warm-up also brings the GPU up from idle).
static void time_case(Case& c, const ArgSpec* specs, const Plan& p, CallFn call, bool has_candidate, Timer& t, bool first) {
  Args a;
  fill_args(c, specs, a);
  upload_inputs(c, c.resident);
  std::vector<int> impls = has_candidate ? std::vector<int>{0, 1} : std::vector<int>{0};
  HostMemory::begin_timing();  // from here to the last pair, only this thread page-locks or frees page-locked memory
  // Warm up: module load, first touch, and clocks ramping up under load (at least `warmup` calls
  // of each implementation and at least `warmup_seconds`, or `warmup_first` at the first timed size,
  // when the GPU may have been idle), on the dataset's inputs.
  g_stage = "warm-up";
  double warmup_seconds = first && p.warmup_first >= 0 ? std::max(p.warmup_first, p.warmup_seconds) : p.warmup_seconds;
  auto w0 = std::chrono::steady_clock::now();
  for (int i = 0;; ++i) {
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    if (i >= p.warmup && elapsed >= warmup_seconds) break;
    for (int impl : impls) {
      prepare_outputs(c);
      arm_call(impl);
      call(impl, a);
      check_after("warm-up call");
      CM_CHECK(cudaDeviceSynchronize());
      disarm_call();
    }
  }
  emit("stage %d warmup %.6f\n", c.id, std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
  std::mt19937 rng(12345 + c.id);
  std::vector<double> ratios, base;
  double checked_s = 0;  // seconds spent saving checked pairs (inside the loop's time)
  StopRule rule;
  rule.min_pairs = p.min_pairs;
  rule.max_pairs = p.max_pairs;
  rule.min_seconds = p.min_seconds;
  rule.max_seconds = p.max_seconds;
  rule.target_rse = p.target_rse;
  auto t0 = std::chrono::steady_clock::now();
  g_stage = "timing";
  // Every pair redraws the inputs first (both calls of a pair see the same new values, which neither
  // has seen before). Pairs in check_pairs, and one more after the loop decides to stop, are checked
  // once both calls are done: their inputs and outputs are saved and compared with a float64 reference
  // by the parent. Every pair runs the same way up to then: the outputs of a first call that are to be
  // saved are put aside on every pair, checked or not.
  if (has_candidate)
    for (Buffer& b : c.buffers)
      if (b.role != IN && !b.stash) b.stash = mem_alloc(b, b.bytes, specs);
  bool last = false;
  for (int pair = 0; pair < p.max_pairs + 1; ++pair) {
    bool checked = last || c.check_pairs.count(pair) > 0;
    refresh_inputs(c, specs, p, (uint32_t)pair + 1);
    double us[2] = {0, 0}, wall[2] = {0, 0}, tail[2] = {0, 0};
    std::vector<int> order = impls;
    if (order.size() == 2 && (rng() & 1)) std::swap(order[0], order[1]);
    int stashed = -1;
    for (size_t k = 0; k < order.size(); ++k) {
      int impl = order[k];
      prepare_outputs(c);
      t.scrub();
      Timer::Sample r = t.time_call(call, impl, a);
      us[impl] = r.event_us;
      wall[impl] = r.wall_us;
      tail[impl] = r.tail_us;
      if (k == 0 && order.size() == 2 && (impl == 1 || p.dump_baseline)) {
        for (Buffer& b : c.buffers)
          if (b.role != IN) mem_within(b, b.stash, b.ptr, b.bytes);
        stashed = impl;
      }
    }
    if (checked) {
      double t_checked = now_s();
      check_timed_pair(c, specs, p, pair, has_candidate, stashed);
      checked_s += now_s() - t_checked;
    }
    for (int impl : impls) emit("time %d %s %d %.4f %.4f %.4f\n", c.id, impl_name(impl), pair, us[impl], wall[impl], tail[impl]);
    if (has_candidate) ratios.push_back(us[0] / std::max(us[1], 1e-3));
    base.push_back(us[0]);
    if (last) break;
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    bool stop = stop_after(rule, pair + 1, elapsed, has_candidate ? ratios : base);
    if (stop && !p.check_last) break;
    last = stop;
  }
  HostMemory::end_timing();
  emit("stage %d timed_checks %.6f\n", c.id, checked_s);
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

// Run on the plan's cores (the parent keeps its own threads off them), then report the cores this driver may use.
// Setting them can fail (a core the container does not have): the driver then runs where it was started.
static void pin_to(const std::vector<int>& cpus) {
  if (!cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus)
      if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) fprintf(stderr, "cudamaster driver: could not run on the plan's cores\n");
  }
  cpu_set_t now;
  CPU_ZERO(&now);
  if (sched_getaffinity(0, sizeof(now), &now) != 0) return;
  fprintf(g_results, "cpus %d", CPU_COUNT(&now));
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &now)) fprintf(g_results, " %d", c);
  fprintf(g_results, "\n");
}

// Seconds spent in one part of the run (read back into the result's per-stage breakdown).
static void stage_time(int case_id, const char* stage, double since) {
  emit("stage %d %s %.6f\n", case_id, stage, now_s() - since);
}

int run_driver(int argc, char** argv, const ArgSpec* specs, int nargs, CallFn call, bool has_candidate) {
  (void)nargs;
  if (argc < 2) fail(2, "usage", "driver PLAN");
  double t_init = now_s();
  Plan p = read_plan(argv[1]);
  g_results = fopen(p.results.c_str(), "w");
  if (!g_results) fail(2, "io", "cannot write results " + p.results);
  pin_to(p.cpus);  // before the CUDA context: its threads inherit the affinity
  CM_CHECK(cudaFree(0));  // create the context before anything is timed
  if (p.pinned_staging) {  // from now on the staging pool's large blocks are page-locked (cm_host.h)
    HostMemory::pin_alloc = [](size_t n) -> void* {
      void* q = nullptr;
      if (cudaHostAlloc(&q, n, cudaHostAllocDefault) == cudaSuccess) return q;
      (void)cudaGetLastError();  // none left: this block is malloc'd
      return nullptr;
    };
    HostMemory::pin_free = [](void* q) { (void)cudaFreeHost(q); };  // at exit the runtime may be gone: nothing to report
  }
  print_device();
  fflush(g_results);
  if (p.mode == "once") {  // one call of one implementation, for a profiler
    int impl = p.impl == "baseline" ? 0 : 1;
    if (impl == 1 && !has_candidate) fail(2, "plan", "no candidate in this driver");
    Case& c = p.cases.at(0);
    for (Buffer& b : c.buffers) alloc_buffer(b, specs, p);
    load_dataset(c, c.datasets.at(0), specs, p);
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
  g_writer.start();
  start_watchdog(p);
  stage_time(-1, "init", t_init);
  if (!p.gate.empty()) {
    double t_gate = now_s();
    wait_file(p.gate, p, "the previous driver never left the GPU (no gate file " + p.gate + ")");
    stage_time(-1, "gate_wait", t_gate);
  }
  // When the GPU became this driver's (CLOCK_MONOTONIC seconds, the parent's clock too): bench run's pipeline
  // measures the GPU's idle time between two drivers from it.
  emit("gpu_start %.6f\n", now_s());
  // The last size this driver times: once it is timed, the parent may start the next driver (which waits at its
  // gate until this one has exited), while this one finishes its correctness runs.
  int last_timed = -1;
  for (size_t i = 0; i < p.cases.size(); ++i)
    for (const Dataset& d : p.cases[i].datasets)
      if (p.cases[i].timing && d.purpose == "check") last_timed = (int)i;
  if (last_timed < 0) emit("timing_done\n");
  bool timed_before = false;
  for (Case& c : p.cases) {
    g_check_times = CheckTimes();
    g_baseline_call_s = 0;  // each size's limit comes from its own baseline calls
    double t_checks = now_s();
    for (Buffer& b : c.buffers) alloc_buffer(b, specs, p);
    // Datasets in the order they are used (the check seeds, then the fresh one), each read while the
    // previous one runs; the timing loop starts from the last check dataset, which the buffers then hold
    // (its inputs found unchanged after its last correctness call: nothing to copy or upload again).
    std::vector<size_t> checks, fresh, order;
    for (size_t d = 0; d < c.datasets.size(); ++d) (c.datasets[d].purpose == "check" ? checks : fresh).push_back(d);
    order = checks;
    order.insert(order.end(), fresh.begin(), fresh.end());
    std::future<Loaded> ahead;
    size_t next = 0;
    auto prefetch = [&]() {
      if (next < order.size()) {
        const Dataset& d = c.datasets[order[next++]];
        ahead = std::async(std::launch::async, [&c, &d, specs, &p] { return read_dataset(c, d, specs, p); });
      }
    };
    double input_wait = 0;  // seconds the GPU side waited for a dataset (drawn by the parent, or read from disk)
    auto take = [&]() {
      double t_wait = now_s();
      Loaded loaded = ahead.get();
      input_wait += now_s() - t_wait;
      prefetch();
      return loaded;
    };
    prefetch();
    for (size_t d : checks) {
      use_dataset(c, take());
      checked_call(c, specs, p, call, 0, (int)d, "first");
      if (has_candidate) {
        checked_call(c, specs, p, call, 1, (int)d, "first");
        checked_call(c, specs, p, call, 1, (int)d, "second");
      }
    }
    stage_time(c.id, "checks", t_checks);
    if (c.timing && !checks.empty()) {
      double t_timing = now_s();
      time_case(c, specs, p, call, has_candidate, timer, !timed_before);
      c.resident = false;  // the timed pairs redrew the inputs
      timed_before = true;
      check_guards(c, specs, "timed calls");
      check_inputs_unchanged(c, specs, "timed calls", KEPT_ONLY);
      stage_time(c.id, "timing", t_timing);
      if (&c == &p.cases[last_timed]) emit("timing_done\n");
    }
    double t_fresh = now_s();
    for (size_t d : fresh) {
      use_dataset(c, take());
      checked_call(c, specs, p, call, 0, (int)d, "first");  // the baseline too: the oracle of custom tasks
      if (has_candidate) checked_call(c, specs, p, call, 1, (int)d, "after_timing");
    }
    stage_time(c.id, "fresh", t_fresh);
    emit("stage %d input_wait %.6f\n", c.id, input_wait);
    emit("stage %d check_upload %.6f\nstage %d check_call %.6f\n", c.id, g_check_times.upload, c.id, g_check_times.call);
    emit("stage %d check_verify %.6f\nstage %d check_save %.6f\n", c.id, g_check_times.verify, c.id, g_check_times.save);
    for (Buffer& b : c.buffers) free_buffer(b);
    emit("case_done %d\n", c.id);
  }
  emit("done\n");
  g_writer.finish();
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
