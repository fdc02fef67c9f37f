// The value range, for every codec: order-preserving range keys (min/max reduce to the same result in
// any order, on any backend) and the step's sample. What they settle is quant/bound.hpp's.
#pragma once
#include "common/hd.hpp"
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

// An abs bound above 0 needs no range before coding: its step's margin (choose_step) is taken from the
// largest |x| among kStepSamples values spread evenly over the array (all of a smaller one), so an
// encoder can code in its first read and take the range as it goes. A sample that misses the top
// binades costs nothing while the largest |x| is within about two binades of the sample's (the margin
// of 4 ulp covers the reconstruction's rounding there); values beyond may become exceptions, never errors.
constexpr uint64_t kStepSamples = uint64_t(1) << 16;
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

}  // namespace hpcz::quant
