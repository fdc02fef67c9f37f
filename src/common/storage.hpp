// Storage types: the API's dtypes that the codecs code as a wider code type (float16, bfloat16 and the
// integers), their exact widening and their narrowing, and the one runtime switch over every API dtype.
// Host and device (the conversions are plain integer code: the same bits on both).
#pragma once
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "common/dtype.hpp"
#include "common/hd.hpp"

namespace hpcz::detail {

// ---- Storage types: the arrays' types that are coded as a wider code type --------------------------
// A storage type S widens exactly to its code type (float32 or float64): the codecs code the widened
// values, and the decoder narrows their reconstruction back (narrow: the nearest S value, ties to even,
// clamped to S's finite range; integers the same, clamped to S's range). The bound layer makes the code
// bound one that stays strict after narrowing (quant::code_bound). f32 and f64 are their own code types.
// Bit-exact software conversions: NaN payloads and signed zeros survive the round trip.
struct Half { uint16_t bits; };      // IEEE binary16
struct BFloat16 { uint16_t bits; };  // bfloat16: a float32's upper half

HPCZ_HD float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 31) return from_bits<float>(sign | 0x7f800000u | (m << 13));  // Inf, NaN (payload kept)
  if (e != 0) return from_bits<float>(sign | ((e + 112) << 23) | (m << 13));
  if (m == 0) return from_bits<float>(sign);
  return from_bits<float>(sign | to_bits(float(m) * 0x1p-24f));  // subnormal: exact in float
}
// Rounds the low `drop` bits off mant (the kept part's lowest bit at drop), to nearest, ties to even.
HPCZ_HD uint32_t round_bits_even(uint32_t mant, int drop) {
  if (drop <= 0) return mant;
  if (drop > 31) return 0;
  const uint32_t kept = mant >> drop, rest = mant & ((1u << drop) - 1), half = 1u << (drop - 1);
  return kept + uint32_t(rest > half || (rest == half && (kept & 1)));
}
HPCZ_HD uint16_t float_to_half(float f) {
  const uint32_t u = to_bits(f), sign = (u >> 16) & 0x8000u, mag = u & 0x7fffffffu;
  if (mag > 0x7f800000u) {  // NaN: its payload's upper bits (a widened half's whole payload), kept quiet or not
    const uint32_t pay = (mag >> 13) & 0x3ffu;
    return uint16_t(sign | 0x7c00u | (pay ? pay : 0x200u));
  }
  if (mag == 0x7f800000u) return uint16_t(sign | 0x7c00u);
  if (mag >= 0x477fe000u) return uint16_t(sign | 0x7bffu);  // from 65520 (would round to Inf): the largest half
  const int e = int(mag >> 23) - 127;
  if (e < -25) return uint16_t(sign);  // below half the smallest subnormal: +-0
  const uint32_t mant = (mag & 0x7fffffu) | 0x800000u;
  if (e < -14) return uint16_t(sign | round_bits_even(mant, -1 - e));  // subnormal (a carry gives the normal)
  // Normal: the top ten fraction bits, rounded; a carry out of them moves into the exponent.
  return uint16_t(sign | ((uint32_t(e + 15) << 10) + round_bits_even(mant & 0x7fffffu, 13)));
}
HPCZ_HD float bfloat16_to_float(uint16_t b) { return from_bits<float>(uint32_t(b) << 16); }
HPCZ_HD uint16_t float_to_bfloat16(float f) {
  const uint32_t u = to_bits(f), mag = u & 0x7fffffffu, sign = u & 0x80000000u;
  if (mag > 0x7f800000u) {
    const uint32_t pay = (mag >> 16) & 0x7fu;
    return uint16_t((sign | 0x7f800000u | ((pay ? pay : 0x40u) << 16)) >> 16);
  }
  if (mag == 0x7f800000u) return uint16_t(u >> 16);
  if (mag >= 0x7f7f8000u) return uint16_t((sign | 0x7f7f0000u) >> 16);  // clamped to the largest bfloat16
  return uint16_t(((u >> 16) + (((u & 0xffffu) > 0x8000u) || ((u & 0xffffu) == 0x8000u && (u >> 16 & 1)))));
}

template <class S> struct StorageTraits;
template <class T> struct CodedAsItself {  // f32, f64
  using storage_type = T;
  using code_type = T;
  static constexpr DType dtype = DTypeTraits<T>::dtype;
  static constexpr bool is_integer = false;
  static constexpr bool may_round = false;
  static constexpr int digits = DTypeTraits<T>::digits;
  static constexpr const char* name = DTypeTraits<T>::name;
  static constexpr const char* short_name = DTypeTraits<T>::short_name;
  HPCZ_HD static T widen(T x) { return x; }
  HPCZ_HD static T narrow(T x) { return x; }
};
template <> struct StorageTraits<float> : CodedAsItself<float> {};
template <> struct StorageTraits<double> : CodedAsItself<double> {};
template <> struct StorageTraits<Half> {
  using storage_type = Half;
  using code_type = float;
  static constexpr DType dtype = DType::f16;
  static constexpr bool is_integer = false;
  static constexpr bool may_round = false;
  static constexpr int digits = 11;
  static constexpr int min_exponent = -14;  // of the smallest normal; the subnormals' spacing is 2^(-14-10)
  static constexpr double max_finite = 65504.0;
  static constexpr const char* name = "float16";
  static constexpr const char* short_name = "f16";
  HPCZ_HD static float widen(Half x) { return half_to_float(x.bits); }
  HPCZ_HD static Half narrow(float x) { return Half{float_to_half(x)}; }
};
template <> struct StorageTraits<BFloat16> {
  using storage_type = BFloat16;
  using code_type = float;
  static constexpr DType dtype = DType::bf16;
  static constexpr bool is_integer = false;
  static constexpr bool may_round = false;
  static constexpr int digits = 8;
  static constexpr int min_exponent = -126;
  static constexpr double max_finite = 3.3895313892515355e38;
  static constexpr const char* name = "bfloat16";
  static constexpr const char* short_name = "bf16";
  HPCZ_HD static float widen(BFloat16 x) { return bfloat16_to_float(x.bits); }
  HPCZ_HD static BFloat16 narrow(float x) { return BFloat16{float_to_bfloat16(x)}; }
};
// Integers: exact in the code type (below 2^24 in a float, 2^53 in a double; int64 and uint64 only
// there: widens_exactly, checked where their arrays come in). Narrowing rounds to the nearest integer
// within the type's range; a NaN (only from a damaged archive) becomes 0.
template <class I, class C, DType D> struct IntegerStorage {
  using storage_type = I;
  using code_type = C;
  static constexpr DType dtype = D;
  static constexpr bool is_integer = true;
  static constexpr double lowest = double(std::numeric_limits<I>::lowest());
  static constexpr double highest = double(std::numeric_limits<I>::max());  // 2^63, 2^64 for the 64-bit ones
  static constexpr bool may_round = sizeof(I) == 8;  // a value beyond 2^53 has no float64 of its own
  HPCZ_HD static bool widens_exactly(I x) {
    constexpr I kExact = I(uint64_t(1) << 53);
    if constexpr (std::numeric_limits<I>::is_signed) return x >= -kExact && x <= kExact;
    else return x <= kExact;
  }
  // Whether f is a value of I (a fill value, say): whole and within the limits, which for the 64-bit
  // types lie below their doubles (2^63, 2^64).
  static bool holds(double f) {
    return f >= lowest && (sizeof(I) == 8 ? f < highest : f <= highest) && std::floor(f) == f;
  }
  HPCZ_HD static C widen(I x) { return C(x); }
  HPCZ_HD static I narrow(C x) {
    if (x != x) return I(0);
    if (!(x > C(lowest))) return std::numeric_limits<I>::lowest();
    if (!(x < C(highest))) return std::numeric_limits<I>::max();  // highest itself may be beyond I (2^63)
    return I(rint(double(x)));
  }
};
template <> struct StorageTraits<int8_t> : IntegerStorage<int8_t, float, DType::i8> {
  static constexpr const char* name = "int8"; static constexpr const char* short_name = "i8"; };
template <> struct StorageTraits<uint8_t> : IntegerStorage<uint8_t, float, DType::u8> {
  static constexpr const char* name = "uint8"; static constexpr const char* short_name = "u8"; };
template <> struct StorageTraits<int16_t> : IntegerStorage<int16_t, float, DType::i16> {
  static constexpr const char* name = "int16"; static constexpr const char* short_name = "i16"; };
template <> struct StorageTraits<uint16_t> : IntegerStorage<uint16_t, float, DType::u16> {
  static constexpr const char* name = "uint16"; static constexpr const char* short_name = "u16"; };
template <> struct StorageTraits<int32_t> : IntegerStorage<int32_t, double, DType::i32> {
  static constexpr const char* name = "int32"; static constexpr const char* short_name = "i32"; };
template <> struct StorageTraits<uint32_t> : IntegerStorage<uint32_t, double, DType::u32> {
  static constexpr const char* name = "uint32"; static constexpr const char* short_name = "u32"; };
template <> struct StorageTraits<int64_t> : IntegerStorage<int64_t, double, DType::i64> {
  static constexpr const char* name = "int64"; static constexpr const char* short_name = "i64"; };
template <> struct StorageTraits<uint64_t> : IntegerStorage<uint64_t, double, DType::u64> {
  static constexpr const char* name = "uint64"; static constexpr const char* short_name = "u64"; };

// Every dtype of the API, in the order of their numbers: the code types, then the storage types.
using AllStorageTypes =
    DTypeList<float, double, Half, BFloat16, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t>;
template <class F, class... Ts> void for_each_storage_in(F&& f, DTypeList<Ts...>) { (f(StorageTraits<Ts>{}), ...); }
template <class F> void for_each_storage(F&& f) { for_each_storage_in(f, AllStorageTypes{}); }

// Calls f(StorageTraits<S>{}) for the API dtype t (every dtype, storage types included); throws
// Error(invalid_argument) naming t where no type has it. The codecs dispatch on code types only
// (dispatch_dtype); the pipeline's edges, where arrays come in and go out, on this.
template <class F> decltype(auto) dispatch_storage(DType t, F&& f) {
  return dispatch_in<StorageTraits, F, AllStorageTypes>(t, std::forward<F>(f), AllStorageTypes{});
}
// The type the codecs code t's values as (t itself for f32 and f64); throws for an unknown t.
inline DType code_dtype(DType t) {
  return dispatch_storage(t, [](auto tr) { return DTypeTraits<typename decltype(tr)::code_type>::dtype; });
}
// code_dtype without the throw (host and device: the header's reader): an unknown t is returned as is.
HPCZ_HD DType code_dtype_or_self(DType t) {
  switch (t) {
    case DType::f16: case DType::bf16: case DType::i8: case DType::u8: case DType::i16: case DType::u16: return DType::f32;
    case DType::i32: case DType::u32: case DType::i64: case DType::u64: return DType::f64;
    default: return t;
  }
}
// Whether t is a storage type (coded as another).
inline bool is_storage_type(DType t) { return code_dtype(t) != t; }

}  // namespace hpcz::detail
