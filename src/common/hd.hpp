// Portability layer for code shared by the CPU and CUDA backends.
// Everything in a header that includes this must compile with g++ and nvcc and produce the same bits:
// no fused multiply-add (nvcc builds with -fmad=false, g++ with -ffp-contract=off), no fast-math,
// only correctly-rounded IEEE operations (+, -, *, /, rint, conversions).
#pragma once
#include <cstdint>
#include <cstring>
#include <cmath>

#include "dtype.hpp"

#if defined(__CUDACC__)
#define HPCZ_HD __host__ __device__ __forceinline__
#define HPCZ_UNROLL _Pragma("unroll")
#else
#define HPCZ_HD inline
#define HPCZ_UNROLL _Pragma("GCC unroll 32")
#endif

namespace hpcz::detail {

HPCZ_HD int popcount32(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __popc(x);
#else
  return __builtin_popcount(x);
#endif
}

// Index of the lowest set bit (x != 0).
HPCZ_HD int lowest_bit32(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __ffs(static_cast<int>(x)) - 1;
#else
  return __builtin_ctz(x);
#endif
}

HPCZ_HD int lowest_bit64(uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __ffsll(static_cast<long long>(x)) - 1;
#else
  return __builtin_ctzll(x);
#endif
}

// Number of bits needed to represent x (0 for x == 0).
HPCZ_HD int bit_width32(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return 32 - __clz(static_cast<int>(x));
#else
  return x ? 32 - __builtin_clz(x) : 0;
#endif
}

HPCZ_HD int bit_width64(uint64_t x) {
#if defined(__CUDA_ARCH__)
  return 64 - __clzll(static_cast<long long>(x));
#else
  return x ? 64 - __builtin_clzll(x) : 0;
#endif
}

// Little-endian byte access at any alignment. Archives are little-endian on every host.
HPCZ_HD uint32_t load_u32_le(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
HPCZ_HD void store_u32_le(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v); p[1] = uint8_t(v >> 8); p[2] = uint8_t(v >> 16); p[3] = uint8_t(v >> 24);
}
HPCZ_HD uint64_t load_u64_le(const uint8_t* p) {
  return uint64_t(load_u32_le(p)) | uint64_t(load_u32_le(p + 4)) << 32;
}
HPCZ_HD void store_u64_le(uint8_t* p, uint64_t v) {
  store_u32_le(p, uint32_t(v)); store_u32_le(p + 4, uint32_t(v >> 32));
}

template <class T> struct Bits { using type = typename DTypeTraits<T>::bits_type; };

template <class T> HPCZ_HD typename Bits<T>::type to_bits(T v) {
  typename Bits<T>::type u;
  memcpy(&u, &v, sizeof u);
  return u;
}
template <class T> HPCZ_HD T from_bits(typename Bits<T>::type u) {
  T v;
  memcpy(&v, &u, sizeof v);
  return v;
}

template <class T> HPCZ_HD void store_value_le(uint8_t* p, T v) {
  auto u = to_bits(v);
  for (unsigned i = 0; i < sizeof(T); ++i) p[i] = uint8_t(u >> (8 * i));
}
template <class T> HPCZ_HD T load_value_le(const uint8_t* p) {
  typename Bits<T>::type u = 0;
  for (unsigned i = 0; i < sizeof(T); ++i) u |= typename Bits<T>::type(p[i]) << (8 * i);
  return from_bits<T>(u);
}

HPCZ_HD uint64_t div_ceil(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

}  // namespace hpcz::detail
