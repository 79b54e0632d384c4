// cudamaster input refresh: the counter-based generator that gives every timed call inputs it has never seen.
//
// Between timed calls, outside the timed region, the driver redraws each refreshed input on the device:
// element `index` of argument stream `stream` at timed call `call` is a pure function of
// (key, call, stream, index), computed with Philox4x32-10 (Salmon et al., SC'11; the generator behind
// cuRAND's Philox) under a 64-bit key the parent process draws from its secrets for each evaluation.
//
// The same functions run in host code (a host-memory argument is refreshed by the CPU, and the CPU
// tests compile this header without CUDA) and have a numpy twin, bench_tasks/refresh.py, that gives
// the same bits: all arithmetic is integer or single IEEE operations with round-to-nearest, and on the
// device the double operations use the _rn intrinsics so that nvcc cannot contract them into FMAs.
//
// Draws (the task's `draw`/`refresh` spec):
//   uniform(a, b)    a + (b - a) * u, u = 53 random bits / 2^53, in double, then rounded to the storage type
//   normal(mu, s)    mu + s * z, z = the sum of 8 independent 16-bit uniforms, centred and scaled to unit
//                    variance (Irwin-Hall: exact mean and variance, tails cut at 4.9 sigma; Box-Muller would
//                    need log and cos, whose last bits differ between the device and the host libm)
//   randint(a, b)    a + floor(w0 * (b - a) / 2^32), an integer in [a, b)  (b - a <= 2^32)
//   const(v)         v
//   shuffle          the dataset's own values, permuted: element i takes the value at shuffle_index(i), a
//                    pseudo-random permutation of [0, n) per call (a 4-round Feistel network on the
//                    smallest even number of bits that covers n, Philox as its round function, cycle-walked
//                    into [0, n)). For inputs whose values must keep a property as a whole (a probability
//                    vector that sums to 1): the multiset of values stays, their order changes.
// Storage: F32 rounds the double to nearest float; BF16 rounds that float to nearest-even bf16 (as
// bench_tasks.data.to_bf16_bits); F64 keeps the double; integer kinds take the integer value.
#pragma once

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define CM_HD __host__ __device__
#else
#define CM_HD
#endif

namespace cm {

enum DrawKind { DRAW_KEEP = 0, DRAW_UNIFORM = 1, DRAW_NORMAL = 2, DRAW_RANDINT = 3, DRAW_CONST = 4, DRAW_SHUFFLE = 5 };
// Storage kinds, as in the generated drivers' argument tables.
enum Kind { F32 = 0, BF16 = 1, I32 = 2, F64 = 3, I64 = 4, U32 = 5, U64 = 6 };

CM_HD inline size_t kind_size(int k) {
  switch (k) {
    case F32: case I32: case U32: return 4;
    case BF16: return 2;
    default: return 8;
  }
}

CM_HD inline void philox4x32_10(const uint32_t ctr_in[4], uint32_t k0, uint32_t k1, uint32_t out[4]) {
  uint32_t c0 = ctr_in[0], c1 = ctr_in[1], c2 = ctr_in[2], c3 = ctr_in[3];
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0;
    uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

// Double arithmetic that nvcc may not fuse (the host compiler does not contract without -mfma).
CM_HD inline double refresh_mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
CM_HD inline double refresh_add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
CM_HD inline double refresh_sub(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

// sqrt(3/2) / 2^17: scales a centred sum of 8 16-bit halves (times 2) to unit variance.
#define CM_NORMAL_SCALE 0x1.3988e1409212ep-17

// The value of one element before it is stored: `real` for floating-point arguments, `integer` for
// integer ones (randint and const only; bench_tasks/refresh.py refuses other draws for them).
struct RefreshValue {
  double real;
  int64_t integer;
};

CM_HD inline RefreshValue refresh_value(int draw, double p0, double p1, uint64_t index, uint32_t call, uint32_t stream,
                                        uint32_t k0, uint32_t k1) {
  uint32_t ctr[4] = {(uint32_t)index, (uint32_t)(index >> 32), call, stream};
  uint32_t w[4];
  philox4x32_10(ctr, k0, k1, w);
  RefreshValue v = {0.0, 0};
  switch (draw) {
    case DRAW_UNIFORM: {
      uint64_t bits = ((uint64_t)(w[0] >> 5) << 26) | (uint64_t)(w[1] >> 6);
      double u = (double)bits * 0x1.0p-53;
      v.real = refresh_add(p0, refresh_mul(refresh_sub(p1, p0), u));
      break;
    }
    case DRAW_NORMAL: {
      int64_t s = 0;
      for (int i = 0; i < 4; ++i) s += (int64_t)(w[i] & 0xFFFFu) + (int64_t)(w[i] >> 16);
      double z = refresh_mul((double)(2 * s - 8 * 65535), CM_NORMAL_SCALE);
      v.real = refresh_add(p0, refresh_mul(p1, z));
      break;
    }
    case DRAW_RANDINT: {
      uint64_t range = (uint64_t)((int64_t)p1 - (int64_t)p0);
      v.integer = (int64_t)p0 + (int64_t)(((uint64_t)w[0] * range) >> 32);
      v.real = (double)v.integer;
      break;
    }
    default:  // DRAW_CONST
      v.real = p0;
      v.integer = (int64_t)p0;
      break;
  }
  return v;
}

CM_HD inline uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}

// Round a float to the nearest bfloat16, ties to even (finite values), as bench_tasks.data.to_bf16_bits.
CM_HD inline uint16_t bf16_bits_rn(float f) {
  uint32_t u = float_bits(f);
  uint32_t rounding = ((u >> 16) & 1u) + 0x7FFFu;
  return (uint16_t)((u + rounding) >> 16);
}

CM_HD inline float double_to_float_rn(double d) {
#if defined(__CUDA_ARCH__)
  return __double2float_rn(d);
#else
  return (float)d;
#endif
}

CM_HD inline uint64_t double_bits(double d) {
#if defined(__CUDA_ARCH__)
  return (uint64_t)__double_as_longlong(d);
#else
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
#endif
}

// The stored bits (zero-extended) of element `index` in storage kind `kind`.
CM_HD inline uint64_t refresh_bits(int kind, int draw, double p0, double p1, uint64_t index, uint32_t call, uint32_t stream,
                                   uint32_t k0, uint32_t k1) {
  RefreshValue v = refresh_value(draw, p0, p1, index, call, stream, k0, k1);
  switch (kind) {
    case F32: return float_bits(double_to_float_rn(v.real));
    case BF16: return bf16_bits_rn(double_to_float_rn(v.real));
    case F64: return double_bits(v.real);
    case I32: case U32: return (uint32_t)v.integer;
    default: return (uint64_t)v.integer;  // I64, U64
  }
}

// Compute element `index` and store it into `dst` (the buffer's start).
CM_HD inline void refresh_store(void* dst, int kind, int draw, double p0, double p1, uint64_t index, uint32_t call,
                                uint32_t stream, uint32_t k0, uint32_t k1) {
  uint64_t bits = refresh_bits(kind, draw, p0, p1, index, call, stream, k0, k1);
  switch (kind_size(kind)) {
    case 2: ((uint16_t*)dst)[index] = (uint16_t)bits; break;
    case 4: ((uint32_t*)dst)[index] = (uint32_t)bits; break;
    default: ((uint64_t*)dst)[index] = bits; break;
  }
}

// Bits of the Feistel domain for a permutation of [0, n): even, >= 2, 2^bits >= n.
CM_HD inline int shuffle_bits(uint64_t n) {
  int bits = 2;
  while (bits < 64 && ((uint64_t)1 << bits) < n) bits += 2;
  return bits;
}

// Where element `index` of a shuffled input takes its value from at timed call `call`: a permutation of
// [0, n) (the Feistel network is a bijection of [0, 2^bits); cycle-walking restricts it to [0, n)).
CM_HD inline uint64_t shuffle_index(uint64_t index, uint64_t n, int bits, uint32_t call, uint32_t stream, uint32_t k0, uint32_t k1) {
  int half = bits / 2;
  uint64_t mask = ((uint64_t)1 << half) - 1, x = index;
  do {
    uint64_t left = x >> half, right = x & mask;
    for (uint32_t round = 0; round < 4; ++round) {
      uint32_t ctr[4] = {(uint32_t)right, round, call, stream ^ 0x80000000u};
      uint32_t w[4];
      philox4x32_10(ctr, k0, k1, w);
      uint64_t f = (((uint64_t)w[1] << 32) | w[0]) & mask;
      uint64_t next = left ^ f;
      left = right;
      right = next;
    }
    x = (left << half) | right;
  } while (x >= n);
  return x;
}

// A shuffled input: element i takes the dataset's value at shuffle_index(i) (a permutation per call).
CM_HD inline void shuffle_store(unsigned char* dst, const unsigned char* orig, size_t i, size_t n, size_t elem, int bits,
                          uint32_t call, uint32_t stream, uint32_t k0, uint32_t k1) {
  size_t j = (size_t)shuffle_index(i, n, bits, call, stream, k0, k1);
  for (size_t k = 0; k < elem; ++k) dst[i * elem + k] = orig[j * elem + k];
}

// A NaN's bits in a float kind (the poison, or a NaN written); integers have no poison to tell.
CM_HD inline bool is_nan_bits(uint64_t u, int kind) {
  if (kind == F32) return (u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu) != 0;
  if (kind == BF16) return (u & 0x7F80u) == 0x7F80u && (u & 0x007Fu) != 0;
  if (kind == F64) return (u & 0x7FF0000000000000ull) == 0x7FF0000000000000ull && (u & 0x000FFFFFFFFFFFFFull) != 0;
  return false;  // integers: no poison to tell
}

// Element i of a buffer of elem-byte elements, as its bits.
CM_HD inline uint64_t element_bits(const unsigned char* buf, size_t i, size_t elem) {
  if (elem == 2) return ((const uint16_t*)buf)[i];
  if (elem == 4) return ((const uint32_t*)buf)[i];
  return ((const uint64_t*)buf)[i];
}

// What element i of a redrawn input must hold at timed call `call`.
CM_HD inline uint64_t redrawn_bits(const unsigned char* orig, size_t i, size_t n, int kind, int draw, double p0, double p1,
                            int bits, uint32_t call, uint32_t stream, uint32_t k0, uint32_t k1) {
  if (draw == DRAW_SHUFFLE) return element_bits(orig, (size_t)shuffle_index(i, n, bits, call, stream, k0, k1), kind_size(kind));
  return refresh_bits(kind, draw, p0, p1, i, call, stream, k0, k1);
}

}  // namespace cm
