// The bound layer: a request's bound settled into what the codecs code with. Every bound mode becomes
// one absolute bound here (absolute_bound), and the step is chosen here (choose_step); settle is the
// one function the CPU backend, the streaming path and the GPU kernels call to do it, from the range
// keys and the step's sample. store and bound_of move a Bound into and out of the header; the codecs
// take quant_params (the quantizer's parameters), never the mode. Host and device.
#pragma once
#include "common/hd.hpp"
#include "common/storage.hpp"
#include "format/header.hpp"
#include "quant/logmap.hpp"
#include "quant/quantizer.hpp"
#include "quant/range.hpp"

namespace hpcz::quant {

// The modes this build codes (the request's check and the archive's: an unknown one is refused, never
// taken for another).
HPCZ_HD bool mode_known(BoundMode mode) {
  return mode == BoundMode::abs || mode == BoundMode::rel || mode == BoundMode::pw_rel || mode == BoundMode::psnr ||
         mode == BoundMode::nrmse || mode == BoundMode::abs_and_rel || mode == BoundMode::abs_or_rel;
}
// Quality targets: met over the whole array by coding it as a rel bound, measuring, and tightening
// (pipeline/quality.cpp); an archive's eb_abs and step are a rel bound's.
HPCZ_HD bool mode_quality(BoundMode mode) { return mode == BoundMode::psnr || mode == BoundMode::nrmse; }
// The modes with an absolute part beside the rel factor (Options::abs_bound).
HPCZ_HD bool mode_combined(BoundMode mode) { return mode == BoundMode::abs_and_rel || mode == BoundMode::abs_or_rel; }

// The value transform a mode codes through: the codecs bound the transformed values by eb_abs and the
// decoder inverts it. Not stored: it follows from the mode and the codec (transform_of). log2: pw_rel in
// the ratio-class codecs, each chunk's log2 |x| coded as float64 under eb_abs (logmap.hpp,
// ratio_class/pw_log_chunk.hpp); identity for every other pair (the fast codec codes pw_rel in its
// quantizer: quantizer.hpp, pw_rel_*).
enum class Transform : uint8_t { identity = 0, log2 = 1 };
HPCZ_HD Transform transform_of(BoundMode mode, Codec codec) {
  return mode == BoundMode::pw_rel && codec != Codec::fast ? Transform::log2 : Transform::identity;
}

// A compression's bound. Asked: the mode and bound of the request (with the absolute part of a
// combined mode), the values' type (the step is one of its values), the fill value (outside the range
// set, coded exactly) and the transform. Settled
// (settle): the range of the finite, non-fill values, the absolute bound that the mode asks for
// there, and the quantization step. Plain members: a kernel parameter.
struct Bound {
  BoundMode mode;
  DType dtype;    // the code type (the values the codecs see)
  DType storage;  // the array's type: dtype, or a storage type coded as dtype (code_bound); 0 means dtype
  Transform transform;
  bool has_fill;
  bool range_valid;
  double bound;
  double abs_part;  // abs_and_rel, abs_or_rel: the absolute bound asked for beside the rel factor
  double fill;
  double range_min, range_max;
  double eb_abs;
  double step;
};

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

// The rel part of a bound: rel times (max - min) of the finite, non-fill values (0 if none),
// rounded toward zero so that it is never above the bound asked for. max - min is r + err exactly
// (TwoSum); where err < 0 the double below r is used: the range rounded down. The product of the two
// doubles is then formed exactly in integers and truncated. (Rounding to nearest gave up to half an ulp
// more than bound * range, a whole one among the subnormals.) Where max - min overflows (f64 values of
// both signs near DBL_MAX), the halves are used and the exponent put back: halving is exact there.
HPCZ_HD double rel_bound(double bound, bool range_valid, double mn, double mx) {
  constexpr double kMax = 1.7976931348623157e308;
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
// Combined modes, as SZ3 defines them: within both bounds (the smaller) or within either (the larger).
// Without a range the rel part is 0 (rel_bound), so abs_or_rel keeps its absolute part.
// pw_rel: the factor itself (each value's own bound is bound x |x|).
HPCZ_HD double absolute_bound(BoundMode mode, double bound, double abs_part, bool range_valid, double mn, double mx) {
  if (mode == BoundMode::abs || mode == BoundMode::pw_rel) return bound;
  const double rel = rel_bound(bound, range_valid, mn, mx);
  if (mode == BoundMode::abs_and_rel) return abs_part < rel ? abs_part : rel;
  if (mode == BoundMode::abs_or_rel) return abs_part > rel ? abs_part : rel;
  return rel;
}

// A storage type's values are coded as their code type's (common/storage.hpp) under a code bound whose
// reconstructions stay within eb once narrowed back to the storage type:
// - integers: an integer error is at most floor(eb); a code value within floor(eb) + 1/2 (strictly) of
//   x rounds to an integer within floor(eb) of it (clamping into the type's range only comes closer to
//   x). eb = 0 codes the integers losslessly, with steps of about 1.
// - float16, bfloat16: the nearest storage value y to x' is no farther from x' than x is, so
//   |y - x| <= 2 |x' - x|: eb / 2 is always strict. Also |y - x| <= |x' - x| + h, h the half spacing of
//   the storage values at |x'| <= max |x| + eb: eb - h is strict too, and the larger where eb > 2 h.
//   And where no value is near zero (the range excludes 0), a code value closer to x than half the gap
//   to x's nearer neighbour narrows back to x itself: any bound strictly below g / 2, g the smallest
//   gap next to a value of magnitude >= m = min |x| (the spacing at m, or half of it where m opens its
//   binade), is strict, whatever eb (0 too: exact). At bounds below the storage spacing it spares the
//   codec the bits that the narrowing rounds away.
//   Clamping x' into the finite range only comes closer to x.
// The result is rounded toward zero; eb = 0 (the values themselves) stays 0 but for that exact bound.
HPCZ_HD bool storage_is_integer(DType s) { return uint8_t(s) >= uint8_t(DType::i8) && uint8_t(s) <= uint8_t(DType::u64); }
HPCZ_HD bool storage_is_half(DType s) { return s == DType::f16 || s == DType::bf16; }
HPCZ_HD double below(double x) { return x > 0 ? from_bits<double>(to_bits(x) - 1) : x; }
HPCZ_HD double code_bound(DType storage, double eb, bool range_valid, double mn, double mx) {
  if (storage_is_integer(storage)) {
    if (!(eb >= 0)) return 0.0;
    const double whole = floor(eb);
    return below(whole + 0.5);  // the double at or above floor(eb) + 1/2, then the one below: strictly less
  }
  if (!storage_is_half(storage) || !(eb >= 0)) return eb;
  using HalfTr = detail::StorageTraits<detail::Half>;
  using BfTr = detail::StorageTraits<detail::BFloat16>;
  const bool f16 = storage == DType::f16;
  const int digits = f16 ? HalfTr::digits : BfTr::digits, min_exp = f16 ? HalfTr::min_exponent : BfTr::min_exponent;
  const double max_finite = f16 ? HalfTr::max_finite : BfTr::max_finite;
  double exact = 0.0;
  if (range_valid && (mn > 0 || mx < 0)) {
    const double m = mn > 0 ? mn : -mx;
    int em = ilogb(m);
    if (em < min_exp) em = min_exp;
    const double spacing = ldexp(1.0, em - digits + 1);
    const bool opens = em > min_exp && m == ldexp(1.0, em);  // the gap below m is half the spacing
    exact = below((opens ? spacing * 0.5 : spacing) * 0.5);
  }
  if (!(eb > 0)) return exact;
  double top = range_maxabs(range_valid, mn, mx) + eb;
  top = top < max_finite ? from_bits<double>(to_bits(top) + 1) : max_finite;  // rounded up
  int e = ilogb(top);
  if (e < min_exp) e = min_exp;
  const double half_spacing = ldexp(1.0, e - digits);
  double halved = eb * 0.5;
  if (halved * 2.0 > eb) halved = below(halved);  // a subnormal eb's halving rounded up
  const double less = eb - half_spacing;
  const double shifted = less > 0 ? below(less) : 0.0;  // the subtraction may round up
  const double larger = shifted > halved ? shifted : halved;
  return exact > larger ? exact : larger;
}

// A pointwise factor r on a storage type's values: its code values are coded within r / 2 of theirs.
// Narrowing takes x' to the storage value nearest it, no farther from x' than x (itself a storage value)
// is, so |N(x') - x| <= 2 |x' - x| <= r |x|; zeros, NaN and Inf stay exact. Rounded down.
HPCZ_HD double pw_code_factor(DType storage, double r) {
  if (!storage_is_integer(storage) && !storage_is_half(storage)) return r;
  const double h = r * 0.5;
  return h * 2.0 > r ? below(h) : h;
}

// A pw_rel bound's eb_abs: the code factor (the fast codec's quantizer bounds each value by it), or
// under the log2 transform the bound of the logs that keeps it (logmap.hpp).
HPCZ_HD double pw_eb_abs(Transform transform, DType dtype, DType storage, double r) {
  const double factor = pw_code_factor(storage, r);
  if (transform != Transform::log2) return factor;
  return dtype == DType::f32 ? pw_log_bound<float>(factor) : pw_log_bound<double>(factor);
}

// An abs bound above 0 takes its step's margin from the sample, not the range (range.hpp: kStepSamples),
// so the fast encoder may code before the range is known.
// A pw_rel step needs neither: it follows from the factor (pw_rel_step). A float16 or bfloat16 array's
// code bound needs the range (code_bound).
HPCZ_HD bool step_from_sample(BoundMode mode, double bound, DType storage) {
  return ((mode == BoundMode::abs && bound > 0) || mode == BoundMode::pw_rel) && !storage_is_half(storage);
}

// A pw_rel bound's step: the width 2k + 1 of the magnitude steps (quantizer.hpp, pw_rel_half).
template <class T> HPCZ_HD double pw_rel_step(double r) { return double(2 * pw_rel_half<T>(r) + 1); }

// The step of the log2 transform's float64 values: the margin of |y| < kLogMax (choose_step).
HPCZ_HD double pw_log_step(double eb) { return choose_step<double>(eb, true, -kLogMax, kLogMax, kLogMax); }

// The bound asked for settled from the range keys (key_min > key_max: no finite, non-fill value) and
// the largest |x| of the step's sample (used only where step_from_sample; the range's max |x| else):
// the range and eb_abs here, and the magnitude the step's margin is taken from (returned).
HPCZ_HD double settle_range(Bound& b, uint64_t key_min, uint64_t key_max, double sample_maxabs) {
  b.range_valid = key_min <= key_max;
  b.range_min = b.range_valid ? range_value(key_min) : 0.0;
  b.range_max = b.range_valid ? range_value(key_max) : 0.0;
  b.eb_abs = code_bound(b.storage, absolute_bound(b.mode, b.bound, b.abs_part, b.range_valid, b.range_min, b.range_max),
                        b.range_valid, b.range_min, b.range_max);
  if (b.mode == BoundMode::pw_rel) b.eb_abs = pw_eb_abs(b.transform, b.dtype, b.storage, b.bound);
  return step_from_sample(b.mode, b.bound, b.storage) ? sample_maxabs : range_maxabs(b.range_valid, b.range_min, b.range_max);
}
// settle_as<T>: where the values' type T is known (b.dtype is T's), as in the encoders.
template <class T> HPCZ_HD Bound settle_as(Bound b, uint64_t key_min, uint64_t key_max, double sample_maxabs) {
  const double maxabs = settle_range(b, key_min, key_max, sample_maxabs);
  if (b.transform == Transform::log2) b.step = pw_log_step(b.eb_abs);
  else if (b.mode == BoundMode::pw_rel) b.step = pw_rel_step<T>(b.eb_abs);
  else b.step = choose_step<T>(b.eb_abs, b.range_valid, b.range_min, b.range_max, maxabs);
  return b;
}
// By b.dtype. Also run on the GPU (the seal), which cannot throw: b.dtype was checked on the host
// (header_template). A new dtype adds its choose_step here (docs/DESIGN.md, "Adding a dtype").
HPCZ_HD Bound settle(Bound b, uint64_t key_min, uint64_t key_max, double sample_maxabs) {
  const double maxabs = settle_range(b, key_min, key_max, sample_maxabs);
  if (b.transform == Transform::log2)
    b.step = pw_log_step(b.eb_abs);
  else if (b.mode == BoundMode::pw_rel)
    b.step = b.dtype == DType::f32 ? pw_rel_step<float>(b.eb_abs) : pw_rel_step<double>(b.eb_abs);
  else
    b.step = b.dtype == DType::f32 ? choose_step<float>(b.eb_abs, b.range_valid, b.range_min, b.range_max, maxabs)
                                   : choose_step<double>(b.eb_abs, b.range_valid, b.range_min, b.range_max, maxabs);
  return b;
}

// The header's bound: what a request asked for (a header template) or an archive stores (its eb_abs and
// step are what its decoder reconstructs with). A template carries a combined mode's absolute part in
// eb_abs until settled; settling an archive's bound again gives its eb_abs back (min and max are
// idempotent), so either may be read here.
HPCZ_HD Bound bound_of(const format::HeaderFields& h) {
  Bound b;
  b.mode = h.mode;
  b.dtype = h.dtype;
  b.storage = h.storage;
  b.transform = transform_of(h.mode, h.codec);
  b.has_fill = h.flags & format::kFlagFill;
  b.range_valid = h.flags & format::kFlagRangeValid;
  b.bound = h.bound;
  b.abs_part = h.eb_abs;
  b.fill = h.fill;
  b.range_min = h.range_min;
  b.range_max = h.range_max;
  b.eb_abs = h.eb_abs;
  b.step = h.step;
  return b;
}

// The header's range, bound and step set from b (the fields bound_of reads; the transform follows the mode).
HPCZ_HD void store(format::HeaderFields& h, const Bound& b) {
  h.mode = b.mode;
  h.dtype = b.dtype;
  h.storage = b.storage;
  h.flags = uint8_t((h.flags & ~(format::kFlagFill | format::kFlagRangeValid)) | (b.has_fill ? format::kFlagFill : 0) |
                    (b.range_valid ? format::kFlagRangeValid : 0));
  h.bound = b.bound;
  h.fill = b.fill;
  h.range_min = b.range_min;
  h.range_max = b.range_max;
  h.eb_abs = b.eb_abs;
  h.step = b.step;
}

// The quantizer's parameters of a settled bound: what every codec's encoder and decoder code with.
// Under the log2 transform: those of its float64 values (no fill among them: the transform codes the
// fill value apart).
template <class T> HPCZ_HD QuantParams<T> quant_params(const Bound& b) {
  if (b.transform == Transform::log2) return make_params<T>(b.eb_abs, b.step, false, 0.0);
  QuantParams<T> p = make_params<T>(b.eb_abs, b.step, b.has_fill, b.fill);
  if (b.mode == BoundMode::pw_rel) {
    p.pw = 1;
    p.pw_width = uint64_t(b.step);
    p.pw_half = p.pw_width / 2;
  }
  return p;
}

}  // namespace hpcz::quant
