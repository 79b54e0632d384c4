// Host-side pieces of the harness runtime that need no GPU: the timing loop's stop rule and a parallel
// for over host buffers. Included by cm_runtime.h; tests/bench/test_stop_rule.py compiles it alone (no
// GPU) and checks it against the Python twin, bench_tasks/harness/stoprule.py.
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace cm {

// The q-quantile of sorted values, interpolated linearly between order statistics (numpy's default).
inline double quantile_sorted(const std::vector<double>& s, double q) {
  double pos = q * (double)(s.size() - 1);
  size_t lo = (size_t)std::floor(pos);
  size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (s[hi] - s[lo]) * (pos - (double)lo);
}

// The relative standard error of the MEDIAN of `v` (what the result reports: the median of the paired
// ratios, or of the baseline's times when it runs alone), estimated robustly: the median of n draws has
// a standard error of sqrt(pi/2) * sigma / sqrt(n) for normal noise, with sigma taken as IQR / 1.349. A
// few outliers (a preempted call) barely move it, where they blow up the standard deviation. 1e9 when
// it cannot be estimated (fewer than 2 values, a median that is not positive).
inline double median_rse(std::vector<double> v) {
  if (v.size() < 2) return 1e9;
  std::sort(v.begin(), v.end());
  double med = quantile_sorted(v, 0.5);
  if (!(med > 0)) return 1e9;
  double iqr = quantile_sorted(v, 0.75) - quantile_sorted(v, 0.25);
  return 1.2533141373155003 * (iqr / 1.3489795003921634) / std::sqrt((double)v.size()) / med;
}

struct StopRule {
  int min_pairs = 10, max_pairs = 2000;
  double min_seconds = 0.05, max_seconds = 2.0, target_rse = 0.002;
};

// Whether the timing loop may stop after `pairs` pairs and `elapsed` seconds, `stat` holding each pair's
// statistic: at max_pairs or past max_seconds; otherwise once it has at least min_pairs pairs and
// min_seconds and the median's relative standard error is under target_rse. The median is estimated at
// every pair up to 64, then every 8th pair (a sort of up to max_pairs values).
inline bool stop_after(const StopRule& r, int pairs, double elapsed, const std::vector<double>& stat) {
  if (pairs >= r.max_pairs || elapsed > r.max_seconds) return true;
  if (pairs < r.min_pairs || elapsed < r.min_seconds) return false;
  if (pairs > 64 && pairs % 8 != 0) return false;
  return median_rse(stat) < r.target_rse;
}

// f(lo, hi) over [0, n) in up to 8 threads (chunks of at least `grain`); the calling thread takes the
// first chunk. Used for host buffers, which the runtime redraws and verifies on the CPU. If a thread
// cannot be started (a process limit), its chunk runs on the calling thread.
// The cores this process may run on (its affinity: a driver is pinned to a few), not every core of the host.
inline size_t usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return (size_t)CPU_COUNT(&set);
  return std::max<size_t>(1, std::thread::hardware_concurrency());
}

template <typename F>
void parallel_for(size_t n, F f, size_t grain = size_t(1) << 16) {
  size_t hw = usable_cores();
  size_t chunks = std::min<size_t>(std::min<size_t>(hw, 8), (n + grain - 1) / std::max<size_t>(grain, 1));
  if (chunks <= 1) {
    if (n) f(size_t(0), n);
    return;
  }
  size_t step = (n + chunks - 1) / chunks;
  std::vector<std::thread> threads;
  std::vector<std::pair<size_t, size_t>> inline_chunks;
  for (size_t c = 1; c < chunks; ++c) {
    size_t lo = c * step, hi = std::min(n, lo + step);
    if (lo >= hi) continue;
    try {
      threads.emplace_back(f, lo, hi);
    } catch (const std::system_error&) {
      inline_chunks.push_back({lo, hi});
    }
  }
  f(size_t(0), std::min(n, step));
  for (auto& ch : inline_chunks) f(ch.first, ch.second);
  for (auto& t : threads) t.join();
}

// Host memory for the driver's own staging (datasets read, inputs compared, buffers saved): malloc, or page-locked
// memory once the runtime sets HostMemory's hooks (plan token `pinned_staging`). The GPU copies page-locked memory
// at the bus's speed; pageable memory it copies through a bounce buffer of the CUDA driver, several times slower
// for the gigabytes of a large size's datasets and checked pairs. The buffers a kernel is given stay malloc'd
// (the task's host memory is what a caller's malloc gives). Each block records how it was allocated, so one
// allocated before the hooks were set (or when page-locked memory ran out) is freed as it was allocated.
// In an unnamed namespace: its members have internal linkage, so a candidate that defines a cm::HostMemory of its
// own keeps its own copies (and is not turned into a link error) while the runtime keeps the runtime's.
namespace {
struct HostMemory {
  static inline void* (*pin_alloc)(size_t) = nullptr;  // page-locked bytes, or nullptr (then malloc)
  static inline void (*pin_free)(void*) = nullptr;
  static constexpr size_t PIN_MIN = size_t(1) << 20;  // smaller blocks: malloc (a page-locked allocation costs a call)
  static constexpr size_t HEADER = 64;                // blocks are 64-byte aligned, and so are the bytes after it

  // Page-locking and freeing page-locked memory are CUDA calls that take the driver's locks (cudaMallocHost took
  // 0.49 s a GiB on the H200 machine). While a size is timed, only the timing thread makes them, between timed
  // calls: the dataset reader's and the file writer's threads get malloc'd blocks, and their page-locked blocks
  // are freed by the timing thread once the size's timing ends. `m` is held across each call, so none is still
  // running when timing begins.
  static inline std::mutex m;
  static inline bool timing = false;
  static inline std::thread::id timer;
  static inline std::vector<void*> deferred;

  static bool may_call() { return !timing || std::this_thread::get_id() == timer; }  // with m held
  static void* alloc(size_t bytes) {
    std::lock_guard<std::mutex> lock(m);
    return pin_alloc && may_call() ? pin_alloc(bytes) : nullptr;
  }
  static void release(void* p) {
    std::lock_guard<std::mutex> lock(m);
    if (may_call()) pin_free(p);
    else deferred.push_back(p);
  }
  static void begin_timing() {
    std::lock_guard<std::mutex> lock(m);
    timing = true;
    timer = std::this_thread::get_id();
  }
  static void end_timing() {
    std::vector<void*> freed;
    {
      std::lock_guard<std::mutex> lock(m);
      timing = false;
      freed.swap(deferred);
    }
    for (void* p : freed) release(p);
  }
};
}  // namespace

template <class T>
struct HostAlloc {
  using value_type = T;
  HostAlloc() = default;
  template <class U>
  HostAlloc(const HostAlloc<U>&) {}
  T* allocate(size_t n) {
    size_t bytes = n * sizeof(T) + HostMemory::HEADER;
    unsigned char* p = bytes >= HostMemory::PIN_MIN ? static_cast<unsigned char*>(HostMemory::alloc(bytes)) : nullptr;
    unsigned char pinned = p != nullptr;
    if (!p) {
      void* q = nullptr;
      if (posix_memalign(&q, HostMemory::HEADER, bytes) != 0) throw std::bad_alloc();
      p = static_cast<unsigned char*>(q);
    }
    p[0] = pinned;
    return reinterpret_cast<T*>(p + HostMemory::HEADER);
  }
  void deallocate(T* q, size_t) {
    unsigned char* p = reinterpret_cast<unsigned char*>(q) - HostMemory::HEADER;
    if (p[0]) HostMemory::release(p);
    else free(p);
  }
  static bool pinned(const T* q) { return q && reinterpret_cast<const unsigned char*>(q)[-(std::ptrdiff_t)HostMemory::HEADER] != 0; }
  template <class U>
  bool operator==(const HostAlloc<U>&) const { return true; }
  template <class U>
  bool operator!=(const HostAlloc<U>&) const { return false; }
};
typedef std::vector<unsigned char, HostAlloc<unsigned char>> Bytes;

// Host byte vectors handed back and taken again. A driver reads, compares and saves buffers of the same
// few sizes over and over (four datasets a size, every correctness call, every checked pair), and a fresh
// vector of a gigabyte costs more (page faults, zero fill: ~0.65 s/GB measured on a VM) than the copy into
// it (~0.1 s/GB). take(n) gives a vector of size n, reusing the smallest spare whose capacity fits (at least
// n, at most 4n or 1 MiB: its pages are already mapped); give() hands one back. Thread-safe (the dataset reader and the file writer are
// threads). Spare capacity is bounded by `limit` bytes (the smallest spares go first).
class BytePool {
 public:
  explicit BytePool(size_t limit = size_t(8) << 30) : limit_(limit) {}

  Bytes take(size_t n) {
    Bytes v;
    {
      std::lock_guard<std::mutex> lock(m_);
      size_t best = spare_.size();
      for (size_t i = 0; i < spare_.size(); ++i)
        if (fits(spare_[i].capacity(), n) && (best == spare_.size() || spare_[i].capacity() < spare_[best].capacity())) best = i;
      if (best != spare_.size()) {
        v = std::move(spare_[best]);
        held_ -= v.capacity();
        spare_.erase(spare_.begin() + (std::ptrdiff_t)best);
        ++reused_;
      }
    }
    v.resize(n);  // within the capacity: no new pages
    return v;
  }

  void give(Bytes&& v) {
    if (v.capacity() == 0 || v.capacity() > limit_) {
      Bytes().swap(v);
      return;
    }
    std::vector<Bytes> dropped;
    {
      std::lock_guard<std::mutex> lock(m_);
      held_ += v.capacity();
      spare_.push_back(std::move(v));
      while (held_ > limit_) {
        size_t smallest = 0;
        for (size_t i = 1; i < spare_.size(); ++i)
          if (spare_[i].capacity() < spare_[smallest].capacity()) smallest = i;
        held_ -= spare_[smallest].capacity();
        dropped.push_back(std::move(spare_[smallest]));
        spare_.erase(spare_.begin() + (std::ptrdiff_t)smallest);
      }
    }  // freed outside the lock
  }

  // A spare serves a request it holds, not one far smaller (a gigabyte is not lent for a few kilobytes).
  static bool fits(size_t capacity, size_t n) { return capacity >= n && capacity <= std::max(4 * n, size_t(1) << 20); }

  size_t held() {
    std::lock_guard<std::mutex> lock(m_);
    return held_;
  }
  size_t spares() {
    std::lock_guard<std::mutex> lock(m_);
    return spare_.size();
  }
  size_t reused() {
    std::lock_guard<std::mutex> lock(m_);
    return reused_;
  }

 private:
  std::mutex m_;
  std::vector<Bytes> spare_;
  size_t held_ = 0, reused_ = 0, limit_;
};

}  // namespace cm
