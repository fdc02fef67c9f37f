// The log2 transform of the pointwise-relative bound in the ratio-class codecs (FORMAT 7.8): each value's
// log2 |x| coded under an absolute bound, |x'| = 2^y' on decoding. Both maps are computed from the
// value's bits and fixed series in plain IEEE operations (hd.hpp: no fused multiply-add, no library
// call), so the CPU and the GPU find the same bits: the encoder checks every x' it will decode to, and
// the decoder must find that x'. Host and device.
#pragma once
#include "common/hd.hpp"

namespace hpcz::quant {

using detail::from_bits;
using detail::to_bits;

// log2 |y| of every regular value lies within +-kLogMax (normal doubles: [-1022, 1024)).
constexpr double kLogMax = 1100.0;

// 2^k as a double, for k in [-1022, 1023].
HPCZ_HD double pow2_normal(int k) { return from_bits<double>(uint64_t(k + 1023) << 52); }

// 2 atanh(s) = ln((1 + s) / (1 - s)) for |s| <= 1/3: its odd series to s^41 (the next term is below
// 2^-66 of the sum at s = 1/3; at |s| <= 0.172, as log2_det takes it, far below).
HPCZ_HD double two_atanh(double s) {
  const double z = s * s;
  double p = 0.04878048780487805;  // 2/41
  p = p * z + 0.05128205128205128;  // 2/39
  p = p * z + 0.05405405405405406;  // 2/37
  p = p * z + 0.05714285714285714;  // 2/35
  p = p * z + 0.06060606060606061;  // 2/33
  p = p * z + 0.06451612903225806;  // 2/31
  p = p * z + 0.06896551724137931;  // 2/29
  p = p * z + 0.07407407407407407;  // 2/27
  p = p * z + 0.08;  // 2/25
  p = p * z + 0.08695652173913043;  // 2/23
  p = p * z + 0.09523809523809523;  // 2/21
  p = p * z + 0.10526315789473684;  // 2/19
  p = p * z + 0.11764705882352941;  // 2/17
  p = p * z + 0.13333333333333333;  // 2/15
  p = p * z + 0.15384615384615385;  // 2/13
  p = p * z + 0.18181818181818182;  // 2/11
  p = p * z + 0.2222222222222222;  // 2/9
  p = p * z + 0.2857142857142857;  // 2/7
  p = p * z + 0.4;  // 2/5
  p = p * z + 0.6666666666666666;  // 2/3
  p = p * z + 2.0;  // 2/1
  return s * p;
}

// log2 a of a positive finite double: a = m 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh((m - 1) / (m + 1)).
HPCZ_HD double log2_det(double a) {
  constexpr double kSqrt2 = 1.4142135623730951, kInvLn2 = 1.4426950408889634;
  uint64_t u = to_bits(a);
  int e = 0;
  if ((u >> 52) == 0) {  // a subnormal: scaled into the normals, exactly
    a = a * 0x1p64;
    u = to_bits(a);
    e = -64;
  }
  e += int(u >> 52) - 1023;
  double m = from_bits<double>((u & 0xfffffffffffffull) | (uint64_t(1023) << 52));
  if (m > kSqrt2) {
    m = m * 0.5;
    ++e;
  }
  return double(e) + two_atanh((m - 1.0) / (m + 1.0)) * kInvLn2;
}

// 2^y: y = n + f with n = rint(y), |f| <= 1/2; 2^f = e^(f ln 2) by its Taylor series to the 16th power
// (the rest below 2^-70), times 2^n in two normal factors (one rounding where the result is subnormal).
// Outside +-kLogMax: 0 or Inf (no regular value decodes there); NaN stays NaN.
HPCZ_HD double exp2_det(double y) {
  constexpr double kLn2 = 0.6931471805599453;
  if (!(y > -kLogMax)) return y != y ? y : 0.0;
  if (!(y < kLogMax)) return from_bits<double>(0x7ff0000000000000ull);
  const double n = rint(y);
  const double t = (y - n) * kLn2;  // y - n is exact
  double p = 4.779477332387385e-14;  // 1/16!
  p = p * t + 7.647163731819816e-13;  // 1/15!
  p = p * t + 1.1470745597729725e-11;  // 1/14!
  p = p * t + 1.6059043836821613e-10;  // 1/13!
  p = p * t + 2.08767569878681e-09;  // 1/12!
  p = p * t + 2.505210838544172e-08;  // 1/11!
  p = p * t + 2.755731922398589e-07;  // 1/10!
  p = p * t + 2.7557319223985893e-06;  // 1/9!
  p = p * t + 2.48015873015873e-05;  // 1/8!
  p = p * t + 0.0001984126984126984;  // 1/7!
  p = p * t + 0.001388888888888889;  // 1/6!
  p = p * t + 0.008333333333333333;  // 1/5!
  p = p * t + 0.041666666666666664;  // 1/4!
  p = p * t + 0.16666666666666666;  // 1/3!
  p = p * t + 0.5;  // 1/2!
  p = p * t + 1.0;  // 1/1!
  p = p * t + 1.0;  // 1/0!
  const int ni = int(n), n1 = ni / 2;
  return p * pow2_normal(n1) * pow2_normal(ni - n1);
}

// The smallest pointwise factor the ratio-class codecs take: there the anchors' and Lorenzo's
// q = y / step stay below 2^30 (quantizer.hpp's kQLimit) for every |y| of a normal double (< 1024); a
// storage type's half factor, or a rarer y beyond it, is stored exactly instead. The fast codec takes
// any factor.
constexpr double kPwLogMinBound = 1e-6;

// The absolute bound on y = log2 |x| that keeps |x' - x| <= r |x|: 2^d stays within [1 - r, 1 + r] for
// |d| <= log2(1 + r) (< -log2(1 - r)). ln(1 + r) = 2 atanh(r / (2 + r)), accurate at small r where 1 + r
// is not. Less a margin for the maps' and the narrowing's rounding: y is found in double (|y| < 1100:
// half an ulp is below 2^-43), 2^y' is rounded to the values' type (a relative 2^-24 for float32) and
// the series are good to a few ulps. The encoder still checks every value; the margin keeps those
// checks from failing.
template <class T> HPCZ_HD double pw_log_bound(double r) {
  constexpr double kInvLn2 = 1.4426950408889634;
  const double margin = sizeof(T) == 4 ? 0x1p-22 : 0x1p-41;
  const double b = two_atanh(r / (2.0 + r)) * kInvLn2 * (1.0 - 0x1p-20) - margin;
  return b > 0 ? b : 0.0;
}

}  // namespace hpcz::quant
