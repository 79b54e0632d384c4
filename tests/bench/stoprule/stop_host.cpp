// Host-side check of runtime/cm_host.h (tests/bench/test_stop_rule.py compiles and runs it; no GPU).
// stdin lines:
//   "R min_pairs max_pairs min_seconds max_seconds target pairs elapsed n v1 .. vn"
//       -> "<median_rse %.17g> <stop 0|1>"
//   "P n grain" -> "<chunks that ran> <1 if every index in [0, n) was visited exactly once, else 0>"
//   "B" -> the BytePool scenario's figures, one "name value" a line, then "end"
//   "H" -> the page-locked staging scenario's figures (HostMemory's hooks, a fake page-locking allocator), then "end"
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "cm_host.h"

int main() {
  char mode[4];
  while (scanf("%3s", mode) == 1) {
    if (mode[0] == 'B') {
      const size_t MiB = size_t(1) << 20;
      cm::BytePool pool(10 * MiB);
      cm::Bytes a = pool.take(8 * MiB);
      a[0] = 1;
      const unsigned char* where = a.data();
      pool.give(std::move(a));
      cm::Bytes b = pool.take(4 * MiB);  // fits in the 8 MiB spare: the same memory
      printf("same_memory %d\n", b.data() == where ? 1 : 0);
      printf("size %zu\n", b.size());
      printf("reused %zu\n", pool.reused());
      pool.give(std::move(b));
      cm::Bytes c = pool.take(MiB + 1);  // far smaller than the spare: not lent
      printf("small_not_lent %d\n", c.data() != where ? 1 : 0);
      pool.give(std::move(c));
      printf("spares %zu\n", pool.spares());  // 8 MiB + (1 MiB + 1) <= 10 MiB
      pool.give(cm::Bytes(4 * MiB));  // over the limit: the smallest spares go
      printf("held_within_limit %d\n", pool.held() <= 10 * MiB ? 1 : 0);
      printf("spares_after %zu\n", pool.spares());
      pool.give(cm::Bytes(11 * MiB));  // larger than the limit: freed, not kept
      printf("spares_after_huge %zu\n", pool.spares());
      std::atomic<int> bad{0};
      std::vector<std::thread> ts;
      for (int t = 0; t < 8; ++t)
        ts.emplace_back([&, t] {
          for (int i = 0; i < 200; ++i) {
            size_t n = (size_t)((i * 7 + t) % 5 + 1) * MiB / 2;
            cm::Bytes v = pool.take(n);
            if (v.size() != n) bad++;
            v[n - 1] = (unsigned char)t;
            pool.give(std::move(v));
          }
        });
      for (auto& th : ts) th.join();
      printf("threads_ok %d\n", bad.load() == 0 && pool.held() <= 10 * MiB ? 1 : 0);
      printf("end\n");
      continue;
    }
    if (mode[0] == 'H') {
      const size_t MiB = size_t(1) << 20;
      static std::atomic<int> pinned_allocs{0}, pinned_frees{0}, refuse{0};
      cm::BytePool pool(64 * MiB);
      cm::Bytes before = pool.take(4 * MiB);  // allocated before the hooks are set: malloc'd
      cm::HostMemory::pin_alloc = [](size_t n) -> void* {
        if (refuse.load()) return nullptr;  // page-locked memory ran out
        pinned_allocs++;
        void* q = nullptr;  // page-aligned, as cudaHostAlloc's blocks are
        return posix_memalign(&q, 4096, n) == 0 ? q : nullptr;
      };
      cm::HostMemory::pin_free = [](void* p) {
        pinned_frees++;
        free(p);
      };
      cm::Bytes big = pool.take(4 * MiB);
      cm::Bytes small = pool.take(1000);
      printf("big_pinned %d\n", cm::HostAlloc<unsigned char>::pinned(big.data()) ? 1 : 0);
      printf("small_pinned %d\n", cm::HostAlloc<unsigned char>::pinned(small.data()) ? 1 : 0);
      printf("before_pinned %d\n", cm::HostAlloc<unsigned char>::pinned(before.data()) ? 1 : 0);
      printf("aligned %d\n", reinterpret_cast<uintptr_t>(big.data()) % 64 == 0 && reinterpret_cast<uintptr_t>(small.data()) % 64 == 0 ? 1 : 0);
      big[4 * MiB - 1] = 7;  // every byte of the block is usable
      refuse = 1;
      cm::Bytes fallback = pool.take(8 * MiB);
      printf("fallback_pinned %d\n", cm::HostAlloc<unsigned char>::pinned(fallback.data()) ? 1 : 0);
      refuse = 0;
      { cm::Bytes().swap(before); cm::Bytes().swap(small); cm::Bytes().swap(fallback); }  // not page-locked: freed with free()
      printf("frees_after_unpinned %d\n", pinned_frees.load());
      pool.give(std::move(big));  // kept as a spare, then lent again: the same page-locked block
      cm::Bytes again = pool.take(3 * MiB);
      printf("again_pinned %d\n", cm::HostAlloc<unsigned char>::pinned(again.data()) ? 1 : 0);
      { cm::Bytes().swap(again); }
      printf("pinned_allocs %d\n", pinned_allocs.load());
      printf("pinned_frees %d\n", pinned_frees.load());
      // While a size is timed: the timing thread still page-locks; another thread gets malloc, and its page-locked
      // blocks are freed by the timing thread when the timing ends.
      cm::Bytes held = pool.take(2 * MiB);  // page-locked, handed to a helper thread below
      cm::HostMemory::begin_timing();
      cm::Bytes mine = pool.take(5 * MiB);
      int helper_pinned = -1;
      std::thread helper([&] {
        cm::Bytes theirs = pool.take(6 * MiB);
        helper_pinned = cm::HostAlloc<unsigned char>::pinned(theirs.data()) ? 1 : 0;
        cm::Bytes().swap(held);  // a page-locked block freed on the helper's thread: later
      });
      helper.join();
      printf("timing_main_pinned %d\n", cm::HostAlloc<unsigned char>::pinned(mine.data()) ? 1 : 0);
      printf("timing_helper_pinned %d\n", helper_pinned);
      printf("frees_while_timing %d\n", pinned_frees.load());
      cm::HostMemory::end_timing();
      printf("frees_after_timing %d\n", pinned_frees.load());
      { cm::Bytes().swap(mine); }
      printf("frees_at_end %d\n", pinned_frees.load());
      printf("end\n");
      continue;
    }
    if (mode[0] == 'P') {
      unsigned long long n, grain;
      if (scanf("%llu %llu", &n, &grain) != 2) return 2;
      std::vector<std::atomic<int>> seen(n);
      for (auto& s : seen) s = 0;
      std::atomic<int> chunks{0};
      cm::parallel_for(
          (size_t)n,
          [&](size_t lo, size_t hi) {
            chunks++;
            for (size_t i = lo; i < hi; ++i) seen[i]++;
          },
          (size_t)grain);
      int once = 1;
      for (auto& s : seen) once &= s.load() == 1;
      printf("%d %d\n", chunks.load(), once);
      continue;
    }
    cm::StopRule r;
    int pairs, n;
    double elapsed;
    if (scanf("%d %d %lf %lf %lf %d %lf %d", &r.min_pairs, &r.max_pairs, &r.min_seconds, &r.max_seconds, &r.target_rse, &pairs,
              &elapsed, &n) != 8)
      return 2;
    std::vector<double> v(n);
    for (int i = 0; i < n; ++i)
      if (scanf("%lf", &v[i]) != 1) return 2;
    printf("%.17g %d\n", cm::median_rse(v), cm::stop_after(r, pairs, elapsed, v) ? 1 : 0);
  }
  return 0;
}
