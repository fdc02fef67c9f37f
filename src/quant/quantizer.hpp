// The quantizer every codec shares: the step, the parameters the per-value code reads, and the strict
// bound test. Deterministic IEEE arithmetic only (common/hd.hpp), so CPU and GPU pick the same q.
#pragma once
#include "common/hd.hpp"

namespace hpcz::quant {

using namespace hpcz::detail;

constexpr int32_t kQLimit = 1 << 30;  // |q| < 2^30, so deltas of neighbouring q fit in 31 bits + sign
// Whether rint of a value below 2^30 in magnitude may be 2^30 itself: only where the type has values
// between integers there (more than 30 significand bits; a float's are spaced 64 apart).
template <class T> constexpr bool kMayRoundToLimit = DTypeTraits<T>::digits > 30;

template <class T>
struct QuantParams {
  double eb;     // guaranteed absolute bound
  T step;        // quantization step, <= 2*eb
  T recip;       // ~1/step; only picks the candidate, the bound is checked on the reconstruction
  T eb_below;    // the largest T <= eb: a reconstruction error under it in T arithmetic is within eb
  int has_fill;
  T fill;
  T fill_test;   // fill, or NaN without one: x != fill_test is the quick path's fill test, with no flag
  // Pointwise-relative bounds (pw_rel_*: below): q codes the value's signed magnitude bits in steps of
  // pw_width = 2 pw_half + 1; eb is then the factor r. 0 for every other mode.
  int pw;
  uint64_t pw_width, pw_half;
};

template <class T> HPCZ_HD T max_finite() { return from_bits<T>(DTypeTraits<T>::max_finite_bits); }

template <class T> HPCZ_HD T ulp_of(T m) {  // distance to the next representable value above |m|
  m = from_bits<T>(to_bits(m) & (~typename Bits<T>::type(0) >> 1));  // |m|, -0 included (the margin's sign)
  return from_bits<T>(to_bits(m) + 1) - m;
}

// max |x| of a range (0 without one): the magnitude a step's margin is taken from, unless sampled.
HPCZ_HD double range_maxabs(bool range_valid, double mn, double mx) {
  return range_valid ? (-mn > mx ? -mn : mx) : 0.0;
}

// The quantization step, chosen by the encoder and stored in the header.
// The reconstruction T(q) * step rounds (twice, to within about ulp(|x|)), so a step of exactly 2*eb
// would leave values near the middle between two levels with no q inside the bound: they would become
// exceptions. A margin of 4 ulp(max |x|) below 2*eb removes that case; it costs far under 0.01 bit
// per value except where eb nears the values' ulp, where exceptions are unavoidable anyway and the
// margin is dropped. eb == 0 on a field whose finite values are all equal (a rel bound, or abs 0): the step is that
// value, so it is stored exactly as q = +-1.
// maxabs is the magnitude the margin is taken from: max |x| of the range, or of a sample
// (quant::step_from_sample).
template <class T>
HPCZ_HD double choose_step(double eb, bool range_valid, double mn, double mx, double maxabs) {
  const T big = max_finite<T>();
  if (maxabs > double(big)) maxabs = double(big);
  if (eb == 0.0) {
    const double m = range_maxabs(range_valid, mn, mx);
    return range_valid && mn == mx && m > 0 ? m : 0.0;
  }
  double two = 2.0 * eb;  // may be +inf
  double margin = 4.0 * double(ulp_of<T>(T(maxabs)));
  double s = (margin < 0.5 * two) ? two - margin : two;
  T step = s >= double(big) ? big : T(s);
  if (double(step) > s) step = from_bits<T>(to_bits(step) - 1);  // round down
  return double(step);
}

// The margin from the range's max |x|.
template <class T> HPCZ_HD double choose_step(double eb, bool range_valid, double mn, double mx) {
  return choose_step<T>(eb, range_valid, mn, mx, range_maxabs(range_valid, mn, mx));
}

template <class T>
HPCZ_HD QuantParams<T> make_params(double eb, double step, bool has_fill, double fill) {
  QuantParams<T> p;
  p.eb = eb;
  p.step = T(step);
  double r = step > 0.0 ? 1.0 / step : 0.0;
  p.recip = r < double(max_finite<T>()) ? T(r) : T(0);  // tiny steps: everything exact or q = 0
  T e = eb < double(max_finite<T>()) ? T(eb) : max_finite<T>();
  if (double(e) > eb) e = from_bits<T>(to_bits(e) - 1);  // round down (e > 0 here)
  p.eb_below = e;
  p.has_fill = has_fill ? 1 : 0;
  p.fill = has_fill ? T(fill) : T(0);
  p.fill_test = has_fill ? T(fill) : from_bits<T>(DTypeTraits<T>::quiet_nan_bits);
  p.pw = 0;
  p.pw_width = p.pw_half = 0;
  return p;
}

// ---- Pointwise-relative bounds: |x' - x| <= r |x| for every value --------------------------------
// A finite value's bits read as a sign and a magnitude m (exponent and significand) are a piecewise-
// linear log2 of |x|: one unit of m is one ulp, 2^-(digits-1) of the binade's start. Rounding m to a
// multiple of w = 2k + 1 moves it by at most k ulps. For a normal x (binade [2^e, 2^(e+1))) staying
// in its binade or going down that is at most k 2^(e-digits+1) <= r 2^e <= r |x| when
// k <= r 2^(digits-1); going up into the next binade, where ulps are twice as large, |x| is within k
// ulps of 2^(e+1) and the error at most 2k ulps, within r |x| when k <= r 2^(digits-1) / (1 + r/2).
// pw_half is that k (r < 1; a margin of 2^-48 keeps the double arithmetic's rounding below the floor).
// Zero, subnormals, and reconstructions that leave the finite values are checked exactly instead.
template <class T> HPCZ_HD uint64_t pw_rel_half(double r) {
  if (!(r > 0.0) || !(r < 1.0)) return 0;
  const double scale = double(uint64_t(1) << (DTypeTraits<T>::digits - 1));
  const double t = (r * scale) / (1.0 + 0.5 * r) * (1.0 - 0x1p-48);
  return t >= 1.0 ? uint64_t(t) : 0;
}

// The value of q: the signed magnitude q * w (q of a stored archive may be anything: the bits wrap,
// never undefined behaviour).
template <class T> HPCZ_HD T pw_rel_value(int32_t q, uint64_t w) {
  using U = typename Bits<T>::type;
  const uint64_t qm = q < 0 ? uint64_t(0) - uint64_t(int64_t(q)) : uint64_t(q);
  const U mag = U(qm * w);
  return from_bits<T>(q < 0 ? U(mag | (U(1) << (DTypeTraits<T>::bits - 1))) : mag);
}

// q of x rounded to the nearest multiple of w, and whether x' = pw_rel_value(q) passes without the
// exact test: x normal and not the fill value, q below the limit and x' finite. NaN and Inf are
// not normal; they and the fill value are stored exactly (pw_rel_quantize returns false).
template <class T> HPCZ_HD bool pw_rel_quick(T x, const QuantParams<T>& p, int32_t& q) {
  using U = typename Bits<T>::type;
  constexpr int kMant = DTypeTraits<T>::digits - 1;
  constexpr U kSign = U(1) << (DTypeTraits<T>::bits - 1), kInf = U(DTypeTraits<T>::max_finite_bits + 1);
  const U bits = to_bits(x), mag = bits & ~kSign;
  const uint64_t qm = (uint64_t(mag) + p.pw_half) / p.pw_width;
  q = int32_t(qm < uint64_t(kQLimit) ? int64_t(qm) : 0);
  if (bits & kSign) q = -q;
  const bool normal = mag >= (U(1) << kMant) && mag < kInf;
  return normal && (x != p.fill_test) && qm < uint64_t(kQLimit) && qm * p.pw_width < uint64_t(kInf);
}

// True iff |xr - x| <= eb holds exactly. The subtraction rounds, and rounding is monotonic with eb
// representable, so only |d| == eb is ambiguous; there the TwoSum error term says which side we are on.
// eb == 0 asks for the value itself: its bits, so that -0 does not come back as +0.
HPCZ_HD bool within_bound(double x, double xr, double eb) {
  if (eb == 0.0) return to_bits(x) == to_bits(xr);
  double d = xr - x;
  double ad = d < 0 ? -d : d;
  if (ad < eb) return true;
  if (!(ad == eb)) return false;  // larger, or NaN
  double bv = d - xr;
  double err = (xr - (d - bv)) + (-x - bv);  // exact difference = d + err
  return err == 0.0 || ((err > 0) != (d > 0));
}

// |x| as a sign-bit clear: a free operand modifier on the GPU (a compare-and-select costs two).
HPCZ_HD float abs_value(float x) { return fabsf(x); }
HPCZ_HD double abs_value(double x) { return fabs(x); }

template <class T> HPCZ_HD T round_half_even(T x);
template <> HPCZ_HD float round_half_even<float>(float x) { return rintf(x); }
template <> HPCZ_HD double round_half_even<double>(double x) { return rint(x); }

// The decoder's reconstruction; the encoder checks exactly this value.
template <class T> HPCZ_HD T dequantize(int32_t q, T step) { return T(q) * step; }

// The exact search behind quantize(): the first of q0, q0 - 1, q0 + 1 whose reconstruction is within
// eb, or kNoQ. quantize_fast() below settles almost every value without it.
constexpr int32_t kNoQ = INT32_MIN;
template <class T> HPCZ_HD int32_t quantize_search(T x, T step, double eb, int32_t q0) {
  for (int k = 0; k < 3; ++k) {
    int32_t c = q0 + (k == 0 ? 0 : (k == 1 ? -1 : 1));
    if (c <= -kQLimit || c >= kQLimit) continue;
    if (within_bound(double(x), double(dequantize(c, step)), eb)) return c;
  }
  return kNoQ;
}

// The quick part of quantize(): kQuantOk with q set, kQuantNone for a value that must be stored exactly
// (NaN, Inf, the fill value, |x/step| >= 2^30), or kQuantSearch with q = q0 when the exact search must
// decide. T's subtraction rounds monotonically and eb_below is a T, so |fl(xr - x)| < eb_below implies
// |xr - x| < eb_below <= eb exactly; it accepts only q0, the candidate the search tries first, so
// both paths pick the same q.
enum QuantResult { kQuantOk = 0, kQuantNone = 1, kQuantSearch = 2 };
template <class T>
HPCZ_HD QuantResult quantize_fast(T x, const QuantParams<T>& p, int32_t& q) {
  q = 0;
  T s = x * p.recip;
  if ((p.has_fill && x == p.fill) || !(abs_value(s) < T(kQLimit))) return kQuantNone;  // NaN fails too
  const int32_t q0 = int32_t(round_half_even(s));
  q = q0;
  // A float below 2^30 in magnitude rounds to an integer below it (floats there are spaced 64 apart);
  // a double may round up to 2^30 itself.
  if (kMayRoundToLimit<T> && !(q0 > -kQLimit && q0 < kQLimit)) return kQuantSearch;
  const T d = dequantize(q0, p.step) - x;
  return abs_value(d) < p.eb_below ? kQuantOk : kQuantSearch;
}

// rint(s) as an int32 where |s| < 2^30; any value elsewhere (callers reject those lanes). The GPU's
// conversion saturates; on the host an out-of-range conversion would be undefined, so it is guarded.
template <class T> HPCZ_HD int32_t round_to_int(T s) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) return __float2int_rn(s);
  else if constexpr (std::is_same_v<T, double>) return __double2int_rn(s);
  else static_assert(kUnsupportedDType<T>, "no rounding conversion for this type");
#else
  return abs_value(s) < T(kQLimit) ? int32_t(round_half_even(s)) : 0;
#endif
}

// quantize_fast's kQuantOk as one predicate, for the encoder's whole-block path: true exactly when
// quantize_fast would return kQuantOk, with q = its q0. Not the fill value (fill_test is NaN without
// one, and NaN != x always), |s| below the limit (NaN fails), for doubles q0 itself below it (for
// |s| < 2^30, |rint(s)| < 2^30 iff |s| < 2^30 - 1/2; a float below 2^30 is at most 2^30 - 64), and the
// quick bound test. Evaluated without branches: the GPU folds the three tests into one predicate.
template <class T> HPCZ_HD bool quantize_quick(T x, const QuantParams<T>& p, int32_t& q) {
  const T s = x * p.recip;
  q = round_to_int(s);
  const T d = dequantize(q, p.step) - x;
  constexpr T lim = kMayRoundToLimit<T> ? T(kQLimit) - T(0.5) : T(kQLimit);
  return (x != p.fill_test) & (abs_value(s) < lim) & (abs_value(d) < p.eb_below);
}

template <class T> HPCZ_HD bool pw_rel_quantize(T x, const QuantParams<T>& p, int32_t& q);  // below

// q such that dequantize(q) is within the bound, or false: the value must be stored exactly
// (NaN, Inf, the fill value, |x/step| >= 2^30, or rounding that no neighbouring q repairs). A
// pointwise-relative bound's q comes from pw_rel_quantize.
template <class T>
HPCZ_HD bool quantize(T x, const QuantParams<T>& p, int32_t& q) {
  if (p.pw) return pw_rel_quantize(x, p, q);
  int32_t q0;
  const QuantResult r = quantize_fast(x, p, q0);
  if (r == kQuantNone) return false;
  const int32_t c = r == kQuantOk ? q0 : quantize_search<T>(x, p.step, p.eb, q0);
  if (c == kNoQ) return false;
  q = c;
  return true;
}

// |xr - x| <= r |x| exactly (x finite): 0 only as its own bits (-0 is not +0); else r |x| rounded
// toward zero (fma gives the product's rounding error exactly) and within_bound's exact test. Below
// 2^-960 the product would round among the subnormal doubles: such x only as their own bits.
HPCZ_HD bool pw_rel_within(double x, double xr, double r) {
  const double ax = x < 0 ? -x : x;
  if (!(ax >= 0x1p-960)) return to_bits(x) == to_bits(xr);
  double eb = r * ax;
  if (fma(r, ax, -eb) < 0) eb = from_bits<double>(to_bits(eb) - 1);
  return within_bound(x, xr, eb);
}

// The first of q0, q0 - 1, q0 + 1 whose value is within the pointwise bound, or kNoQ (the value is then
// stored exactly).
template <class T> HPCZ_HD int32_t pw_rel_search(T x, const QuantParams<T>& p, int32_t q0) {
  for (int k = 0; k < 3; ++k) {
    const int32_t c = q0 + (k == 0 ? 0 : (k == 1 ? -1 : 1));
    if (c <= -kQLimit || c >= kQLimit) continue;
    const T xr = pw_rel_value<T>(c, p.pw_width);
    if (xr - xr == T(0) && pw_rel_within(double(x), double(xr), p.eb)) return c;
  }
  return kNoQ;
}

// quantize() for a pointwise-relative bound.
template <class T> HPCZ_HD bool pw_rel_quantize(T x, const QuantParams<T>& p, int32_t& q) {
  int32_t q0;
  if (pw_rel_quick(x, p, q0)) {
    q = q0;
    return true;
  }
  if (!(x - x == T(0)) || (p.has_fill && x == p.fill)) return false;  // NaN, Inf, the fill value
  const int32_t c = pw_rel_search(x, p, q0);
  if (c == kNoQ) return false;
  q = c;
  return true;
}

// The decoder's value of q under either kind of bound.
template <class T> HPCZ_HD T value_of(int32_t q, const QuantParams<T>& p) {
  return p.pw ? pw_rel_value<T>(q, p.pw_width) : dequantize<T>(q, p.step);
}

}  // namespace hpcz::quant
