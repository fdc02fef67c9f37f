// Arrays built to break a compressor: special values, extreme magnitudes, tiny bounds, odd lengths.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <random>

#include "common.hpp"
#include "common/hd.hpp"

using namespace testutil;

namespace {

// Round trip on the CPU (and the GPU when present, which must write the same bytes).
// Both codecs: each must keep the guarantee on every case.
template <class T>
void roundtrip_codec(const std::vector<T>& v, std::vector<uint64_t> dims, hpcz::Options o, const char* what,
                     double min_cr);
template <class T>
void roundtrip(const std::vector<T>& v, std::vector<uint64_t> dims, hpcz::Options o, const char* what,
               double min_cr = 0) {
  for (auto codec : {hpcz::Codec::fast, hpcz::Codec::ratio}) {
    o.codec = codec;
    // Huffman spends at least one bit per value, so the ratio mode tops out at 8 * sizeof(T).
    const double floor_cr = codec == hpcz::Codec::ratio ? std::min(min_cr, 0.8 * 8 * sizeof(T)) : min_cr;
    roundtrip_codec(v, dims, o, what, floor_cr);
  }
}
template <class T>
void roundtrip_codec(const std::vector<T>& v, std::vector<uint64_t> dims, hpcz::Options o, const char* what,
                     double min_cr) {
  const hpcz::DType t = sizeof(T) == 8 ? hpcz::DType::f64 : hpcz::DType::f32;
  auto bytes = as_bytes(v);
  o.backend = hpcz::Backend::cpu;
  auto a = hpcz::compress(v.data(), t, dims, o);
  CHECK_MSG(a.size() <= hpcz::max_compressed_size(v.size(), t), what);
  std::vector<uint8_t> back;
  auto info = hpcz::decompress(a.data(), a.size(), back, hpcz::Backend::cpu);
  Check c = strict_check(bytes, back, t, info.eb_abs, o.fill);
  CHECK_MSG(c.violations == 0, what << ": " << c.violations << " violations");
  if (min_cr > 0) CHECK_MSG(double(bytes.size()) / a.size() >= min_cr, what << ": CR " << double(bytes.size()) / a.size());
  if (hpcz::gpu_available()) {
    o.backend = hpcz::Backend::gpu;
    auto g = hpcz::compress(v.data(), t, dims, o);
    CHECK_MSG(g == a, what << ": GPU archive differs from CPU archive");
    std::vector<uint8_t> gb;
    hpcz::decompress(a.data(), a.size(), gb, hpcz::Backend::gpu);
    CHECK_MSG(gb == back, what << ": GPU decode differs");
  }
}

hpcz::Options rel(double e) {
  hpcz::Options o;
  o.mode = hpcz::BoundMode::rel;
  o.bound = e;
  return o;
}
hpcz::Options abs_(double e) {
  hpcz::Options o;
  o.mode = hpcz::BoundMode::abs;
  o.bound = e;
  return o;
}

template <class T> std::vector<T> smooth(size_t n, double scale = 1.0) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = T(scale * (std::sin(i * 0.01) + 0.5 * std::cos(i * 0.0037)));
  return v;
}

template <class T> void special_values() {
  auto v = smooth<T>(100003);
  std::mt19937 rng(7);
  const T specials[] = {std::numeric_limits<T>::quiet_NaN(), -std::numeric_limits<T>::quiet_NaN(),
                        std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                        std::numeric_limits<T>::denorm_min(), -std::numeric_limits<T>::denorm_min(),
                        std::numeric_limits<T>::min(), T(-0.0), std::numeric_limits<T>::max(),
                        std::numeric_limits<T>::lowest()};
  for (int k = 0; k < 3000; ++k) v[rng() % v.size()] = specials[rng() % 10];
  // a NaN with a payload must come back bit for bit
  typename hpcz::detail::Bits<T>::type nanbits = hpcz::detail::to_bits(std::numeric_limits<T>::quiet_NaN()) | 0x5;
  v[17] = hpcz::detail::from_bits<T>(nanbits);
  roundtrip(v, {v.size()}, rel(1e-3), "special values rel");
  roundtrip(v, {v.size()}, abs_(1e-2), "special values abs");
}

}  // namespace

TEST(adv_special_values_f32) { special_values<float>(); }
TEST(adv_special_values_f64) { special_values<double>(); }

TEST(adv_lengths_and_ranks) {
  for (size_t n : {size_t(0), size_t(1), size_t(31), size_t(32), size_t(33), size_t(1009), size_t(65537), size_t(100003)}) {
    auto v = smooth<float>(n);
    roundtrip(v, {n}, rel(1e-3), "length f32");
    auto d = smooth<double>(n);
    roundtrip(d, {n}, abs_(1e-5), "length f64");
  }
  auto v = smooth<float>(2 * 3 * 5 * 7 * 11 * 13);
  roundtrip(v, {30030}, rel(1e-4), "rank 1");
  roundtrip(v, {30, 1001}, rel(1e-4), "rank 2");
  roundtrip(v, {30, 77, 13}, rel(1e-4), "rank 3");
  roundtrip(v, {6, 5, 77, 13}, rel(1e-4), "rank 4");
  roundtrip(v, {1, 1, 1, 30030}, rel(1e-4), "rank 4 with unit extents");
}

TEST(adv_constant_arrays) {
  std::vector<float> c(50000, 3.25f);
  roundtrip(c, {c.size()}, rel(1e-3), "constant, rel (zero range: exact)", 20);
  roundtrip(c, {c.size()}, abs_(1e-3), "constant, abs", 20);
  std::vector<double> z(50000, 0.0);
  roundtrip(z, {z.size()}, abs_(1e-3), "zeros f64", 100);
}

TEST(adv_white_noise_cannot_overrun) {
  std::mt19937 rng(1);
  std::vector<float> v(200000);
  for (auto& x : v) x = hpcz::detail::from_bits<float>(rng() & 0x7f7fffffu);  // random finite bit patterns
  roundtrip(v, {v.size()}, abs_(1e-3), "random bits");
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> d(100000);
  for (auto& x : d) x = u(rng);
  roundtrip(d, {d.size()}, rel(1e-7), "uniform noise f64 at a tight bound");
}

TEST(adv_extreme_magnitudes) {
  for (double scale : {1e30, 1e-30, 1e300, 1e-300}) {
    auto d = smooth<double>(40000, scale);
    roundtrip(d, {d.size()}, rel(1e-4), "f64 extreme scale rel");
    roundtrip(d, {d.size()}, abs_(1e-3), "f64 extreme scale abs");
  }
  for (double scale : {1e30, 1e-30, 1e38}) {
    auto v = smooth<float>(40000, scale);
    roundtrip(v, {v.size()}, rel(1e-4), "f32 extreme scale rel");
    roundtrip(v, {v.size()}, abs_(1e-3), "f32 extreme scale abs");
    roundtrip(v, {v.size()}, abs_(1e35), "f32 huge abs bound");
  }
}

TEST(adv_bound_below_ulp) {
  auto v = smooth<float>(40000, 1000.0);
  roundtrip(v, {v.size()}, abs_(1e-9), "f32 bound far below ulp");
  roundtrip(v, {v.size()}, abs_(0.0), "f32 bound zero");
  auto d = smooth<double>(40000, 1.0);
  roundtrip(d, {d.size()}, abs_(1e-300), "f64 bound far below ulp");
  roundtrip(d, {d.size()}, abs_(1e300), "f64 enormous bound");
}

TEST(adv_all_nan_and_fill_only) {
  std::vector<float> v(1000, std::numeric_limits<float>::quiet_NaN());
  roundtrip(v, {v.size()}, rel(1e-3), "all NaN");
  std::vector<float> f(1000, -9999.0f);
  hpcz::Options o = rel(1e-3);
  o.fill = -9999.0;
  roundtrip(f, {f.size()}, o, "fill only");
  auto a = hpcz::compress(f.data(), hpcz::DType::f32, {f.size()}, o);
  CHECK(!hpcz::inspect(a.data(), a.size()).range_valid);
}

TEST(adv_invalid_requests) {
  std::vector<float> v(10, 1.0f);
  auto expect_invalid = [&](std::vector<uint64_t> dims, hpcz::Options o) {
    try {
      hpcz::compress(v.data(), hpcz::DType::f32, dims, o);
      CHECK(false);
    } catch (const hpcz::Error& e) {
      CHECK(e.code() == hpcz::ErrorCode::invalid_argument);
    }
  };
  expect_invalid({}, rel(1e-3));
  expect_invalid({1, 1, 1, 1, 10}, rel(1e-3));
  expect_invalid({10}, rel(-1));
  expect_invalid({10}, rel(std::numeric_limits<double>::quiet_NaN()));
  expect_invalid({10}, rel(std::numeric_limits<double>::infinity()));
}
