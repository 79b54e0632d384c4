// What a generated driver (bench_tasks/harness/driver.py) needs from the harness runtime: the argument
// table, the argument pack its call switch reads, and run_driver(). The runtime itself
// (cm_runtime.h, compiled once into an object by compile.py) holds everything else, so a driver is a
// few lines of host C++ that compile in well under a second.
#pragma once

#include <cuda_bf16.h>
#include <stdint.h>

#include "cm_refresh.h"

namespace cm {

enum Role { IN = 0, OUT = 1, ACC = 2, INOUT = 3, SCALAR = 4 };

struct ArgSpec {
  const char* name;
  int kind;
  int pointer;  // 1 for buffers, 0 for scalars passed by value
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

// Reads the plan named by argv[1], runs it, writes the result lines; exits non-zero on a fatal problem.
int run_driver(int argc, char** argv, const ArgSpec* specs, int nargs, CallFn call, bool has_candidate);

}  // namespace cm
