// The value range and the bound it implies, for every codec: order-preserving range keys (min/max
// reduce to the same result in any order, on any backend), the absolute bound, and settle_range, which
// the CPU backend and the GPU kernels all call to fill the header's range, bound and step.
#pragma once
#include "common/hd.hpp"
#include "format/header.hpp"
#include "quant/quantizer.hpp"

namespace hpcz::quant {

// Total order on doubles as unsigned keys (-0 < +0), so min/max reduce the same in any order.
HPCZ_HD uint64_t range_key(double v) {
  uint64_t u = to_bits(v);
  return (u >> 63) ? ~u : (u | 0x8000000000000000ull);
}
HPCZ_HD double range_value(uint64_t k) {
  return from_bits<double>((k >> 63) ? (k & 0x7fffffffffffffffull) : ~k);
}
// Order-preserving key in the value's own width (cheaper than range_key per value); widened once per
// thread with range_key(double(narrow_value(k))). The map to double is exact and monotonic, so the
// result equals range_key's.
template <class T> HPCZ_HD typename Bits<T>::type narrow_key(T x) {
  auto u = to_bits(x);
  constexpr auto top = typename Bits<T>::type(1) << (8 * sizeof(T) - 1);
  return (u & top) ? ~u : (u | top);
}
template <class T> HPCZ_HD T narrow_value(typename Bits<T>::type k) {
  constexpr auto top = typename Bits<T>::type(1) << (8 * sizeof(T) - 1);
  return from_bits<T>((k & top) ? (k & ~top) : ~k);
}
template <class T> HPCZ_HD bool in_range_set(T x, bool has_fill, T fill) {
  return x - x == T(0) && !(has_fill && x == fill);  // finite and not the fill value
}
// The narrow keys of a range (nmin > nmax: no value), widened once to range keys (min > max: none), as
// every range pass ends (the GPU's per thread, the CPU's per pass).
template <class T>
HPCZ_HD void widen_keys(typename Bits<T>::type nmin, typename Bits<T>::type nmax, uint64_t& kmin, uint64_t& kmax) {
  const bool any = nmin <= nmax;
  kmin = any ? range_key(double(narrow_value<T>(nmin))) : ~uint64_t(0);
  kmax = any ? range_key(double(narrow_value<T>(nmax))) : 0;
}

// A positive finite double as m * 2^e, m < 2^53 (subnormals too).
HPCZ_HD void split_double(double x, uint64_t& m, int& e) {
  const uint64_t u = to_bits(x);
  const int biased = int(u >> 52);
  m = (u & 0xfffffffffffffull) | (biased ? uint64_t(1) << 52 : 0);
  e = (biased ? biased : 1) - 1075;
}
// hi:lo = a * b, in 32-bit pieces (the same integers on every backend).
HPCZ_HD void mul_64x64(uint64_t a, uint64_t b, uint64_t& hi, uint64_t& lo) {
  const uint64_t a0 = uint32_t(a), a1 = a >> 32, b0 = uint32_t(b), b1 = b >> 32;
  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const uint64_t mid = (p00 >> 32) + uint32_t(p01) + uint32_t(p10);
  lo = (mid << 32) | uint32_t(p00);
  hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}
// The largest double <= (hi:lo) * 2^e, DBL_MAX where that is larger: truncating the integer to the
// bits a double keeps at that magnitude (53, or fewer among the subnormals) rounds toward zero.
HPCZ_HD double toward_zero(uint64_t hi, uint64_t lo, int e) {
  const int w = hi ? 64 + bit_width64(hi) : bit_width64(lo);
  int shift = w - 53;
  if (e + shift < -1074) shift = -1074 - e;
  uint64_t m;
  if (shift >= 128) m = 0;
  else if (shift >= 64) m = hi >> (shift - 64);
  else if (shift > 0) m = (lo >> shift) | (hi << (64 - shift));
  else m = lo << -shift;  // w <= 53 here: hi == 0
  if (m < (uint64_t(1) << 52)) return from_bits<double>(m);  // a subnormal (or 0): e + shift == -1074
  const int biased = e + shift + 1075;
  return biased >= 2047 ? from_bits<double>(0x7fefffffffffffffull) : from_bits<double>((uint64_t(biased - 1) << 52) + m);
}

// eb actually used: abs as given; rel times (max - min) of the finite, non-fill values (0 if none),
// rounded toward zero so that it is never above the bound asked for. max - min is r + err exactly
// (TwoSum); where err < 0 the double below r is used: the range rounded down. The product of the two
// doubles is then formed exactly in integers and truncated. (Rounding to nearest gave up to half an ulp
// more than bound * range, a whole one among the subnormals.) Where max - min overflows (f64 values of
// both signs near DBL_MAX), the halves are used and the exponent put back: halving is exact there.
HPCZ_HD double absolute_bound(BoundMode mode, double bound, bool range_valid, double mn, double mx) {
  constexpr double kMax = 1.7976931348623157e308;
  if (mode == BoundMode::abs) return bound;
  if (!range_valid || !(bound > 0)) return 0.0;
  int scale = 0;
  double a = mx, b = -mn, r = a + b;
  if (!(r <= kMax)) {
    a = mx * 0.5, b = -mn * 0.5, r = a + b;
    scale = 1;
  }
  const double bv = r - a;
  const double err = (a - (r - bv)) + (b - bv);
  if (err < 0) r = from_bits<double>(to_bits(r) - 1);
  if (!(r > 0)) return 0.0;
  uint64_t mb, mr, hi, lo;
  int eb, er;
  split_double(bound, mb, eb);
  split_double(r, mr, er);
  mul_64x64(mb, mr, hi, lo);
  return toward_zero(hi, lo, eb + er + scale);
}

// An abs bound above 0 needs no range before coding: its step's margin (choose_step) is taken from the
// largest |x| among kStepSamples values spread evenly over the array (all of a smaller one), so an
// encoder can code in its first read and take the range as it goes. A sample that misses the top
// binades costs nothing while the largest |x| is within about two binades of the sample's (the margin
// of 4 ulp covers the reconstruction's rounding there); values beyond may become exceptions, never errors.
constexpr uint64_t kStepSamples = uint64_t(1) << 16;
HPCZ_HD bool step_from_sample(BoundMode mode, double bound) { return mode == BoundMode::abs && bound > 0; }
HPCZ_HD uint64_t step_sample_count(uint64_t n) { return n < kStepSamples ? n : kStepSamples; }
// Sample k's index, floor(k n / kStepSamples) without the 128-bit product (k < kStepSamples = 2^16).
HPCZ_HD uint64_t step_sample_index(uint64_t k, uint64_t n) {
  return n <= kStepSamples ? k : k * (n / kStepSamples) + k * (n % kStepSamples) / kStepSamples;
}
// |x| of a sampled value as an ordered key (the bits of a non-negative double, the sign bit cleared so
// that -0 counts as 0), 0 outside the range set.
template <class T> HPCZ_HD uint64_t sample_key(T x, bool has_fill, T fill) {
  return in_range_set(x, has_fill, fill) ? to_bits(double(x)) & 0x7fffffffffffffffull : 0;
}

// From the range keys (key_min > key_max: no finite, non-fill value): the range-valid flag, the range,
// the absolute bound and the quantization step (its margin from h.sample_maxabs where
// step_from_sample, else from the range).
HPCZ_HD void settle_range(format::HeaderFields& h, uint64_t key_min, uint64_t key_max) {
  const bool valid = key_min <= key_max;
  if (valid) h.flags |= format::kFlagRangeValid;
  h.range_min = valid ? range_value(key_min) : 0.0;
  h.range_max = valid ? range_value(key_max) : 0.0;
  h.eb_abs = absolute_bound(h.mode, h.bound, valid, h.range_min, h.range_max);
  const double maxabs = step_from_sample(h.mode, h.bound) ? h.sample_maxabs : range_maxabs(valid, h.range_min, h.range_max);
  // Also run on the GPU, which cannot throw: h.dtype was checked on the host (header_template). A new
  // dtype adds its choose_step here (docs/DESIGN.md, "Adding a dtype").
  h.step = h.dtype == DType::f32 ? choose_step<float>(h.eb_abs, valid, h.range_min, h.range_max, maxabs)
                        : choose_step<double>(h.eb_abs, valid, h.range_min, h.range_max, maxabs);
}

template <class T> HPCZ_HD QuantParams<T> encoder_params(const format::HeaderFields& h) {
  return make_params<T>(h.eb_abs, h.step, h.flags & format::kFlagFill, h.fill);
}

}  // namespace hpcz::quant
