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

// eb actually used: abs as given; rel times (max - min) of the finite, non-fill values (0 if none),
// kept finite. Where max - min overflows (f64 values of both signs near DBL_MAX) it is taken as
// 2 * (bound * (max/2 - min/2)): the halves are exact, so that is the same rounding of the true product
// that bound * (max - min) gives whenever it does not overflow. (Clamping the overflowed range to
// DBL_MAX instead gave a bound far looser than the one asked for.)
HPCZ_HD double absolute_bound(BoundMode mode, double bound, bool range_valid, double mn, double mx) {
  constexpr double kMax = 1.7976931348623157e308;
  if (mode == BoundMode::abs) return bound;
  if (!range_valid || bound == 0) return 0.0;
  const double r = mx - mn;
  const double e = r <= kMax ? bound * r : 2 * (bound * (mx * 0.5 - mn * 0.5));
  return e <= kMax ? e : kMax;
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
  h.step = h.dtype == DType::f32 ? choose_step<float>(h.eb_abs, valid, h.range_min, h.range_max, maxabs)
                        : choose_step<double>(h.eb_abs, valid, h.range_min, h.range_max, maxabs);
}

template <class T> HPCZ_HD QuantParams<T> encoder_params(const format::HeaderFields& h) {
  return make_params<T>(h.eb_abs, h.step, h.flags & format::kFlagFill, h.fill);
}

}  // namespace hpcz::quant
