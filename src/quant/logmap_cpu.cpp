#include "quant/logmap_cpu.hpp"

#include <algorithm>
#include <cmath>

#include "quant/logmap.hpp"
#include "quant/quantizer.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#define HPCZ_LOGMAP_X86 1
#endif

namespace hpcz::quant {
namespace {

#define HPCZ_LANE inline __attribute__((always_inline))

// Small whole numbers between double and bits without an int64 conversion (AVX2 has none): for k in
// [0, 2^51), the bits of 2^52 + k are 2^52's plus k.
constexpr double kTwo52 = 0x1p52;
HPCZ_LANE double small_to_double(uint64_t k) { return from_bits<double>(to_bits(kTwo52) | k) - kTwo52; }

// log2_det of a normal a, without branches: the same operations (its subnormal scaling is not taken).
HPCZ_LANE double log2_normal_lane(double a) {
  constexpr double kSqrt2 = 1.4142135623730951, kInvLn2 = 1.4426950408889634;
  const uint64_t u = to_bits(a);
  double m = from_bits<double>((u & 0xfffffffffffffull) | (uint64_t(1023) << 52));
  const bool big = m > kSqrt2;
  m = big ? m * 0.5 : m;
  const double e = (small_to_double(u >> 52) - 1023.0) + (big ? 1.0 : 0.0);  // exact: small integers
  return e + two_atanh((m - 1.0) / (m + 1.0)) * kInvLn2;
}

// exp2_det without branches. rint(y) for |y| < 2^51 is (y + 1.5 2^52) - 1.5 2^52 in the default rounding;
// 2^k from k + 1023 placed in the exponent field. exp2_det splits 2^n as 2^(n/2 toward zero) 2^(the rest);
// any split with both halves within +-551 gives the same bits: p 2^n1 is then a normal double, exact,
// and the second product rounds once, as p 2^n would.
HPCZ_LANE double exp2_lane(double y) {
  constexpr double kLn2 = 0.6931471805599453, kRound = 0x1.8p52;
  const bool below = !(y > -kLogMax), above = !(y < kLogMax), outside = below | above;  // NaN: both
  const double yc = outside ? 0.0 : y;
  const double n = (yc + kRound) - kRound;
  const double t = (yc - n) * kLn2;
  double p = 4.779477332387385e-14;
  p = p * t + 7.647163731819816e-13;
  p = p * t + 1.1470745597729725e-11;
  p = p * t + 1.6059043836821613e-10;
  p = p * t + 2.08767569878681e-09;
  p = p * t + 2.505210838544172e-08;
  p = p * t + 2.755731922398589e-07;
  p = p * t + 2.7557319223985893e-06;
  p = p * t + 2.48015873015873e-05;
  p = p * t + 0.0001984126984126984;
  p = p * t + 0.001388888888888889;
  p = p * t + 0.008333333333333333;
  p = p * t + 0.041666666666666664;
  p = p * t + 0.16666666666666666;
  p = p * t + 0.5;
  p = p * t + 1.0;
  p = p * t + 1.0;
  const double n1 = (n * 0.5 + kRound) - kRound, n2 = n - n1;  // either half when n is odd: p 2^n1 is exact
  const double f1 = from_bits<double>(to_bits((n1 + 1023.0) + kTwo52) << 52);
  const double f2 = from_bits<double>(to_bits((n2 + 1023.0) + kTwo52) << 52);
  const double r = p * f1 * f2;
  const double limit = below ? 0.0 : from_bits<double>(0x7ff0000000000000ull);
  const double edge = y != y ? y : limit;
  return outside ? edge : r;
}

// pw_rel_within without branches.
HPCZ_LANE bool pw_within_lane(double x, double xr, double r) {
  const double ax = std::fabs(x);
  double eb = r * ax;
  eb = std::fma(r, ax, -eb) < 0 ? from_bits<double>(to_bits(eb) - 1) : eb;
  const double d = xr - x, ad = std::fabs(d);
  const double bv = d - xr;
  const double err = (xr - (d - bv)) + (-x - bv);
  const bool same = to_bits(x) == to_bits(xr);
  const bool ok = (ad < eb) | ((ad == eb) & ((err == 0.0) | ((err > 0) != (d > 0))));
  const bool exact = !(ax >= 0x1p-960) | (eb == 0.0);  // only the value itself
  return (exact & same) | (!exact & ok);
}

// The passes over a block of values, for one instruction set each (the target attribute below).
constexpr uint64_t kBlock = 512;

template <class T> HPCZ_LANE void log2_lanes(const T* x, const uint8_t* regular, uint64_t n, double special, double* y) {
  for (uint64_t i0 = 0; i0 < n; i0 += kBlock) {
    const uint64_t m = std::min(kBlock, n - i0);
    double t[kBlock];
    for (uint64_t j = 0; j < m; ++j) t[j] = log2_normal_lane(std::fabs(double(x[i0 + j])));
    for (uint64_t j = 0; j < m; ++j) y[i0 + j] = regular[i0 + j] ? t[j] : special;
  }
}

template <class T> HPCZ_LANE void exp2_lanes(const double* y, uint64_t n, T* out) {
  for (uint64_t i0 = 0; i0 < n; i0 += kBlock) {
    const uint64_t m = std::min(kBlock, n - i0);
    T t[kBlock];
    for (uint64_t j = 0; j < m; ++j) t[j] = T(exp2_lane(y[i0 + j]));
    std::copy(t, t + m, out + i0);
  }
}

template <class T> HPCZ_LANE void check_lanes(const T* x, const double* yr, uint64_t n, double r, uint8_t* flags) {
  for (uint64_t i0 = 0; i0 < n; i0 += kBlock) {
    const uint64_t m = std::min(kBlock, n - i0);
    uint8_t t[kBlock];
    for (uint64_t j = 0; j < m; ++j) {
      const T v = x[i0 + j], mag = T(exp2_lane(yr[i0 + j]));
      const T xr = v < T(0) ? -mag : mag;
      t[j] = pw_within_lane(double(v), double(xr), r) ? 1 : 2;
    }
    for (uint64_t j = 0; j < m; ++j) flags[i0 + j] = flags[i0 + j] ? t[j] : 0;
  }
}

#ifdef HPCZ_LOGMAP_X86
#define HPCZ_LOGMAP_TARGET(name, isa)                                                                                  \
  template <class T> __attribute__((target(isa))) void log2_##name(const T* x, const uint8_t* g, uint64_t n, double s, \
                                                                   double* y) {                                        \
    log2_lanes(x, g, n, s, y);                                                                                         \
  }                                                                                                                    \
  template <class T> __attribute__((target(isa))) void exp2_##name(const double* y, uint64_t n, T* out) {             \
    exp2_lanes(y, n, out);                                                                                             \
  }                                                                                                                    \
  template <class T>                                                                                                   \
  __attribute__((target(isa))) void check_##name(const T* x, const double* yr, uint64_t n, double r, uint8_t* f) {    \
    check_lanes(x, yr, n, r, f);                                                                                       \
  }
HPCZ_LOGMAP_TARGET(avx2, "avx2,fma")
HPCZ_LOGMAP_TARGET(avx512, "avx512f,avx512dq,avx512vl,avx512bw,fma")
#undef HPCZ_LOGMAP_TARGET

int best_level() {
  static const int level = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                                   __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw")
                               ? 2
                               : (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : 0);
  return level;
}
#else
int best_level() { return 0; }
#endif

int level_of(int asked) { return asked < 0 ? best_level() : std::min(asked, best_level()); }

}  // namespace

int logmap_simd_best() { return best_level(); }

template <class T> void log2_abs_run(const T* x, const uint8_t* regular, uint64_t n, double special, double* y, int level) {
  switch (level_of(level)) {
#ifdef HPCZ_LOGMAP_X86
    case 2: return log2_avx512(x, regular, n, special, y);
    case 1: return log2_avx2(x, regular, n, special, y);
#endif
    default:
      for (uint64_t i = 0; i < n; ++i) y[i] = regular[i] ? log2_det(double(x[i] < T(0) ? -x[i] : x[i])) : special;
  }
}

template <class T> void exp2_run(const double* y, uint64_t n, T* out, int level) {
  switch (level_of(level)) {
#ifdef HPCZ_LOGMAP_X86
    case 2: return exp2_avx512(y, n, out);
    case 1: return exp2_avx2(y, n, out);
#endif
    default:
      for (uint64_t i = 0; i < n; ++i) out[i] = T(exp2_det(y[i]));
  }
}

template <class T> void pw_log_check_run(const T* x, const double* yr, uint64_t n, double r, uint8_t* flags, int level) {
  switch (level_of(level)) {
#ifdef HPCZ_LOGMAP_X86
    case 2: return check_avx512(x, yr, n, r, flags);
    case 1: return check_avx2(x, yr, n, r, flags);
#endif
    default:
      for (uint64_t i = 0; i < n; ++i)
        if (flags[i]) {
          const T mag = T(exp2_det(yr[i])), xr = x[i] < T(0) ? -mag : mag;
          flags[i] = pw_rel_within(double(x[i]), double(xr), r) ? 1 : 2;
        }
  }
}

template void log2_abs_run<float>(const float*, const uint8_t*, uint64_t, double, double*, int);
template void log2_abs_run<double>(const double*, const uint8_t*, uint64_t, double, double*, int);
template void exp2_run<float>(const double*, uint64_t, float*, int);
template void exp2_run<double>(const double*, uint64_t, double*, int);
template void pw_log_check_run<float>(const float*, const double*, uint64_t, double, uint8_t*, int);
template void pw_log_check_run<double>(const double*, const double*, uint64_t, double, uint8_t*, int);

}  // namespace hpcz::quant
