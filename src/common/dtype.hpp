// The value types hpcz codes, and the one step from a runtime DType to code templated on the type.
// Adding a type: a DTypeTraits specialisation, its entry in DTypeList below, the codecs' policies
// (codecs/fast/policy.hpp, codecs/interp/policy.hpp) and its tests (docs/DESIGN.md, "Adding a dtype").
// Everything here compiles with g++ and nvcc (the traits are read in device code).
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "hpcz/hpcz.hpp"

namespace hpcz::detail {

// Undefined for a type without a specialisation: code templated on one fails to compile rather than
// taking another type's branch.
template <class T> struct DTypeTraits;

template <> struct DTypeTraits<float> {
  using value_type = float;
  using bits_type = uint32_t;  // the value's bit pattern, the same width
  static constexpr DType dtype = DType::f32;
  static constexpr unsigned bits = 32;
  static constexpr int digits = 24;                           // significand bits, the implicit one included
  static constexpr bits_type max_finite_bits = 0x7f7fffffu;   // FLT_MAX
  static constexpr bits_type quiet_nan_bits = 0x7fc00000u;    // the canonical quiet NaN
  static constexpr const char* name = "float32";
  static constexpr const char* short_name = "f32";
};

template <> struct DTypeTraits<double> {
  using value_type = double;
  using bits_type = uint64_t;
  static constexpr DType dtype = DType::f64;
  static constexpr unsigned bits = 64;
  static constexpr int digits = 53;
  static constexpr bits_type max_finite_bits = 0x7fefffffffffffffull;  // DBL_MAX
  static constexpr bits_type quiet_nan_bits = 0x7ff8000000000000ull;
  static constexpr const char* name = "float64";
  static constexpr const char* short_name = "f64";
};

// Every supported value type, in the order of their DType numbers.
template <class... T> struct DTypeList {};
using AllDTypes = DTypeList<float, double>;

// A static_assert's dependent false: the last branch of a choice of type-specific instructions.
template <class T> constexpr bool kUnsupportedDType = !std::is_same_v<T, T>;

template <class F, class... Ts> void for_each_dtype_in(F&& f, DTypeList<Ts...>) { (f(DTypeTraits<Ts>{}), ...); }
// Calls f(DTypeTraits<T>{}) for every supported T, in AllDTypes' order.
template <class F> void for_each_dtype(F&& f) { for_each_dtype_in(f, AllDTypes{}); }

// Refuses a DType no traits of the list describe (a caller's cast, an enumerator not yet supported), by
// its number, naming the list's types. Traits: DTypeTraits (code types) or StorageTraits (every API dtype).
template <template <class> class Traits, class... Ts> [[noreturn]] void refuse_in(DType t, DTypeList<Ts...>) {
  std::string known;
  ((known += (known.empty() ? "" : ", ") + std::string(Traits<Ts>::name)), ...);
  throw Error(ErrorCode::invalid_argument,
              "unsupported dtype " + std::to_string(unsigned(t)) + " (supported: " + known + ")");
}
[[noreturn]] inline void refuse_dtype(DType t) { refuse_in<DTypeTraits>(t, AllDTypes{}); }

// f(Traits<T>{}) for the T of the list whose Traits<T>::dtype is t; refuse_in for none. The recursion
// comes before the call: the types are instantiated from the list's end, the order in which nvcc then
// emits their kernels (a .cu file's cubin layout).
template <template <class> class Traits, class F, class List, class T0, class... Ts>
decltype(auto) dispatch_in(DType t, F&& f, DTypeList<T0, Ts...>) {
  if constexpr (sizeof...(Ts) > 0) {
    if (t != Traits<T0>::dtype) return dispatch_in<Traits, F, List>(t, std::forward<F>(f), DTypeList<Ts...>{});
  } else if (t != Traits<T0>::dtype) {
    refuse_in<Traits>(t, List{});
  }
  return std::forward<F>(f)(Traits<T0>{});
}

// Calls f(DTypeTraits<T>{}) for the value type T of t (f's result is returned; every type's must be the
// same); throws Error(invalid_argument) naming t where no type has it. The one runtime switch on DType:
//   dispatch_dtype(h.dtype, [&](auto tr) { using T = typename decltype(tr)::value_type; run<T>(...); });
template <class F> decltype(auto) dispatch_dtype(DType t, F&& f) {
  return dispatch_in<DTypeTraits, F, AllDTypes>(t, std::forward<F>(f), AllDTypes{});
}

// t's position in AllDTypes (for tables by type); throws as dispatch_dtype does.
inline unsigned dtype_index(DType t) {
  unsigned i = 0, found = ~0u;
  for_each_dtype([&](auto tr) {
    if (decltype(tr)::dtype == t) found = i;
    ++i;
  });
  if (found == ~0u) refuse_dtype(t);
  return found;
}
template <class T, class T0, class... Ts> constexpr unsigned dtype_index_in(DTypeList<T0, Ts...>) {
  if constexpr (std::is_same_v<T, T0>) return 0;
  else return 1 + dtype_index_in<T>(DTypeList<Ts...>{});
}
template <class T> constexpr unsigned kDTypeIndex = dtype_index_in<T>(AllDTypes{});
template <class... Ts> constexpr unsigned dtype_count(DTypeList<Ts...>) { return sizeof...(Ts); }
constexpr unsigned kDTypeCount = dtype_count(AllDTypes{});

}  // namespace hpcz::detail
