// The dtype traits (common/dtype.hpp): the one dispatch from a runtime DType refuses a value no traits
// describe by its number, never coding it as another type; each type's traits agree with the names,
// sizes and limits the rest of the library uses.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/storage.hpp"
#include "common/hd.hpp"
#include "harness.hpp"
#include "hpcz/hpcz.hpp"

namespace {

// The code and message of the Error f throws; code 0 when it throws none.
template <class F> int error_of(F&& f, std::string& msg) {
  try {
    f();
  } catch (const hpcz::Error& e) {
    msg = e.what();
    return int(e.code());
  }
  return 0;
}

}  // namespace

TEST(unit_dtype_dispatch_refuses_unknown) {
  for (unsigned id : {0u, 3u, 7u, 13u, 255u}) {  // 3 and 7 are storage types: not code types
    const auto t = static_cast<hpcz::DType>(id);
    const std::string number = "dtype " + std::to_string(id);
    std::string msg;
    bool called = false;
    CHECK(error_of([&] { hpcz::detail::dispatch_dtype(t, [&](auto) { called = true; }); }, msg) ==
          int(hpcz::ErrorCode::invalid_argument));
    CHECK(!called);
    CHECK(msg.find(number) != std::string::npos);
    CHECK(msg.find("float32") != std::string::npos);  // the message lists what is supported
    msg.clear();
    CHECK(error_of([&] { (void)hpcz::detail::dtype_index(t); }, msg) == int(hpcz::ErrorCode::invalid_argument));
    CHECK(msg.find(number) != std::string::npos);
    if (id == 3 || id == 7) continue;  // an API dtype (float16, int16): its size and number are known
    msg.clear();
    CHECK(error_of([&] { (void)hpcz::dtype_size(t); }, msg) == int(hpcz::ErrorCode::invalid_argument));
    CHECK(msg.find(number) != std::string::npos);
    CHECK(!hpcz::dtype_of_id(id));
  }
}

TEST(unit_dtype_compress_refuses_unknown) {
  const std::vector<float> v(64, 1.0f);
  hpcz::Options o;
  o.backend = hpcz::Backend::cpu;
  std::string msg;
  CHECK(error_of([&] { hpcz::compress(v.data(), static_cast<hpcz::DType>(13), {64}, o); }, msg) ==
        int(hpcz::ErrorCode::invalid_argument));
  CHECK(msg.find("dtype 13") != std::string::npos);
}

TEST(unit_dtype_traits_agree) {
  unsigned seen = 0;
  hpcz::detail::for_each_dtype([&](auto tr) {
    using Tr = decltype(tr);
    using T = typename Tr::value_type;
    CHECK(hpcz::detail::kDTypeIndex<T> == seen);
    CHECK(hpcz::detail::dtype_index(Tr::dtype) == seen);
    ++seen;
    CHECK(hpcz::dtype_size(Tr::dtype) == sizeof(T));
    CHECK(Tr::bits == 8 * sizeof(T) && sizeof(typename Tr::bits_type) == sizeof(T));
    CHECK(std::string(hpcz::dtype_name(Tr::dtype)) == Tr::name);
    CHECK(std::string(hpcz::dtype_short_name(Tr::dtype)) == Tr::short_name);
    CHECK(hpcz::parse_dtype(Tr::name) == Tr::dtype && hpcz::parse_dtype(Tr::short_name) == Tr::dtype);
    CHECK(hpcz::dtype_of_id(unsigned(Tr::dtype)) == Tr::dtype);
    CHECK(Tr::digits == std::numeric_limits<T>::digits);
    CHECK(hpcz::detail::from_bits<T>(Tr::max_finite_bits) == std::numeric_limits<T>::max());
    CHECK(std::isnan(hpcz::detail::from_bits<T>(Tr::quiet_nan_bits)));
    // dispatch_dtype reaches this type, and only it, for its DType
    CHECK(hpcz::detail::dispatch_dtype(Tr::dtype, [](auto u) { return unsigned(decltype(u)::bits); }) == Tr::bits);
  });
  CHECK(seen == hpcz::detail::kDTypeCount);
  // Every API dtype: its storage traits name it, size it, and name a code type the codecs take.
  unsigned api = 0;
  hpcz::detail::for_each_storage([&](auto tr) {
    using Tr = decltype(tr);
    using S = typename Tr::storage_type;
    ++api;
    CHECK(unsigned(Tr::dtype) == api);  // numbered in order
    CHECK(hpcz::dtype_size(Tr::dtype) == sizeof(S));
    CHECK(std::string(hpcz::dtype_name(Tr::dtype)) == Tr::name);
    CHECK(hpcz::parse_dtype(Tr::name) == Tr::dtype && hpcz::parse_dtype(Tr::short_name) == Tr::dtype);
    const hpcz::DType code = hpcz::detail::code_dtype(Tr::dtype);
    CHECK(code == hpcz::DType::f32 || code == hpcz::DType::f64);
    CHECK(hpcz::detail::code_dtype_or_self(Tr::dtype) == code);
    CHECK(sizeof(typename Tr::code_type) == hpcz::dtype_size(code));
    CHECK(hpcz::detail::is_storage_type(Tr::dtype) == (code != Tr::dtype));
  });
  CHECK(hpcz::dtype_names().size() == api);
}
