// Arrays built to break a compressor: special values, extreme magnitudes, tiny bounds, odd lengths.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <random>

#include "common.hpp"
#include "common/hd.hpp"
#include "quant/range.hpp"
#include "quant/range_cpu.hpp"

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
  for (auto codec : {hpcz::Codec::fast, hpcz::Codec::ratio, hpcz::Codec::interp}) {
    o.codec = codec;
    // Huffman spends at least one bit per value, so the ratio mode tops out at 8 * sizeof(T).
    const double floor_cr = codec != hpcz::Codec::fast ? std::min(min_cr, 0.8 * 8 * sizeof(T)) : min_cr;
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
  // The bound the archive keeps is the one asked for, not a looser one.
  // Into a caller's buffer: the same values; one byte short is refused.
  std::vector<uint8_t> mine(back.size() + 1, 0xa5);
  hpcz::decompress(a.data(), a.size(), mine.data(), back.size(), hpcz::Backend::cpu);
  CHECK_MSG(std::equal(back.begin(), back.end(), mine.begin()) && mine.back() == 0xa5, what << ": decode into a buffer differs");
  if (!back.empty()) {
    bool refused = false;
    try {
      hpcz::decompress(a.data(), a.size(), mine.data(), back.size() - 1, hpcz::Backend::cpu);
    } catch (const hpcz::Error& e) {
      refused = e.code() == hpcz::ErrorCode::invalid_argument;
    }
    CHECK_MSG(refused, what << ": a buffer too small was not refused");
  }
  const long double want = requested_bound(v.data(), v.size(), o);
  CHECK_MSG(eb_within_request(info.eb_abs, want), what << ": eb_abs " << info.eb_abs << " above the requested " << double(want));
  if (min_cr > 0) CHECK_MSG(double(bytes.size()) / a.size() >= min_cr, what << ": CR " << double(bytes.size()) / a.size());
  if (hpcz::resolve_backend(hpcz::Backend::automatic, o.codec) == hpcz::Backend::gpu) {  // a GPU with this codec
    o.backend = hpcz::Backend::gpu;
    auto g = hpcz::compress(v.data(), t, dims, o);
    CHECK_MSG(g == a, what << ": GPU archive differs from CPU archive");
    std::vector<uint8_t> gb;
    hpcz::decompress(a.data(), a.size(), gb, hpcz::Backend::gpu);
    CHECK_MSG(gb == back, what << ": GPU decode differs");
    hpcz::decompress(a.data(), a.size(), mine.data(), back.size(), hpcz::Backend::gpu);
    CHECK_MSG(std::equal(back.begin(), back.end(), mine.begin()), what << ": GPU decode into a buffer differs");
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

// A 3-D field with infinities and extreme finite values but no NaN: its chunks have no mask, so the
// interpolation codec's first sampling stage predicts from these values (order_estimate_symbols).
template <class T> void special_values_3d() {
  const uint64_t n = 40;
  std::vector<T> v(n * n * n);
  for (uint64_t z = 0; z < n; ++z)
    for (uint64_t y = 0; y < n; ++y)
      for (uint64_t x = 0; x < n; ++x) v[(z * n + y) * n + x] = T(std::sin(0.1 * x) * std::cos(0.07 * y) + 0.01 * z);
  std::mt19937 rng(11);
  const T inf = std::numeric_limits<T>::infinity();
  for (int k = 0; k < 500; ++k) v[rng() % v.size()] = k % 2 ? inf : -inf;
  roundtrip(v, {n, n, n}, rel(1e-2), "3-D infinities rel");
  const T extremes[] = {std::numeric_limits<T>::max(), std::numeric_limits<T>::lowest(), std::numeric_limits<T>::denorm_min()};
  for (int k = 0; k < 300; ++k) v[rng() % v.size()] = extremes[k % 3];
  roundtrip(v, {n, n, n}, abs_(1e-2), "3-D infinities and extremes abs");
}

}  // namespace

TEST(adv_special_values_f32) { special_values<float>(); }
TEST(adv_special_values_f64) { special_values<double>(); }
TEST(adv_special_values_3d_without_nan) {
  special_values_3d<float>();
  special_values_3d<double>();
}

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
  // A range wider than DBL_MAX (both signs near it): max - min overflows in double, yet rel bounds must
  // still mean bound * (max - min), here about 3e302 at 1e-6, not DBL_MAX.
  {
    auto d = smooth<double>(40000, 1e308);  // from -1.5e308 to 1.5e308
    std::mt19937_64 rng(5);
    for (size_t i = 0; i < d.size(); i += 97) d[i] = hpcz::detail::from_bits<double>(rng() & 0x7fefffffffffffffull) * ((i & 1) ? -1 : 1);
    roundtrip(d, {d.size()}, rel(1e-6), "f64 range beyond DBL_MAX rel");
    roundtrip(d, {200, 200}, rel(1e-2), "f64 range beyond DBL_MAX rel, 2-D");
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

// Bounds down to the smallest denormal, and 0, on arrays of signed zeros, of one repeated value and
// of smooth values with zeros of both signs: every archive must read back (compress checks it too),
// and a bound of 0 must give every value back bit for bit.
template <class T> void tiny_bounds(const std::vector<double>& bounds) {
  const size_t n = 5000;
  const T tiny = std::numeric_limits<T>::denorm_min();
  std::vector<std::pair<const char*, std::vector<T>>> arrays = {
      {"all -0", std::vector<T>(n, T(-0.0))},
      {"all +0", std::vector<T>(n, T(0.0))},
      {"all one value", std::vector<T>(n, T(3.5))},
      {"all one denormal", std::vector<T>(n, T(-7) * tiny)},
  };
  std::vector<T> mixed = smooth<T>(n, 1e-3);
  for (size_t i = 0; i < n; i += 7) mixed[i] = (i / 7) % 2 ? T(-0.0) : T(0.0);
  arrays.push_back({"smooth with signed zeros", mixed});
  for (const auto& [name, v] : arrays)
    for (double b : bounds)
      for (bool relative : {false, true}) {
        char bound[32];
        std::snprintf(bound, sizeof bound, "%g", b);
        const std::string what = std::string(sizeof(T) == 4 ? "f32 " : "f64 ") + name + (relative ? " rel " : " abs ") + bound;
        roundtrip(v, {v.size()}, relative ? rel(b) : abs_(b), what.c_str());
      }
}

TEST(adv_tiny_bounds_and_signed_zeros) {
  tiny_bounds<float>({0.0, 1.5e-45, 1e-40, 1e-39, 1e-38, 1e-30, 1e-3});
  tiny_bounds<double>({0.0, 4.9e-324, 1e-310, 1e-300, 1e-3});
}

// Runs of values with no q (NaN, the fill value) of every length around the block (32), warp (1,024)
// and round (8,192 f32 values) sizes, so that the chain a block starts from must be found far back,
// across blocks, warps and rounds, or is the chunk's 0 (the GPU encoder finds it by other means than
// the CPU's running value).
TEST(adv_chain_across_runs_without_q) {
  auto v = smooth<float>(4 * 16384 + 77, 100.0);
  std::mt19937 rng(11);
  const size_t runs[] = {1, 31, 32, 33, 1023, 1024, 1025, 8191, 8192, 8193, 12000};
  size_t i = 5;
  for (int k = 0; i < v.size(); ++k) {
    const size_t len = runs[rng() % (sizeof runs / sizeof runs[0])];
    const float bad = k % 2 ? std::numeric_limits<float>::quiet_NaN() : -9999.0f;
    for (size_t j = i; j < std::min(v.size(), i + len); ++j) v[j] = bad;
    i += len + 1 + rng() % 700;  // then a stretch of real values
  }
  hpcz::Options o = rel(1e-3);
  o.fill = -9999.0;
  roundtrip(v, {v.size()}, o, "runs without q, fill and NaN");
  roundtrip(v, {v.size()}, abs_(0.5), "runs without q, NaN (fill values coded)");
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

// Random cases from a fixed seed: shapes of every rank (unit extents, primes, planes from tiny to
// thousands of values), data from smooth to white noise with special values mixed in, magnitudes from
// 1e-30 to 1e30 and near the type's largest, abs and rel bounds, a fill value, the second stage and
// other radii. Each case: the strict bound on the CPU and, with a GPU, the same bytes from it.
namespace {
template <class T> std::vector<T> random_field(std::mt19937_64& r, uint64_t n, int kind) {
  std::normal_distribution<double> N(0, 1);
  std::uniform_real_distribution<double> U(0, 1);
  const double mag = kind == 7 ? std::numeric_limits<T>::max() / 8 : std::pow(10.0, int(r() % 61) - 30);
  std::vector<T> v(n);
  double walk = 0;
  for (uint64_t i = 0; i < n; ++i) {
    double x;
    switch (kind) {
      case 0: x = std::sin(0.01 * double(i)) + 1e-3 * N(r); break;    // smooth
      case 1: walk += N(r); x = walk; break;                            // random walk
      case 2: x = double((i / 97) % 3); break;                          // steps
      case 3: x = 42; break;                                            // constant
      case 4: x = N(r); break;                                          // white noise
      case 5: x = i % 13 == 0 ? 1e6 * N(r) : std::cos(0.003 * double(i)); break;  // spikes
      case 6: x = U(r) < 0.5 ? 0 : N(r); break;                         // sparse
      default: x = N(r); break;                                         // near the largest value
    }
    v[i] = T(x * mag);
    if (kind >= 5 && U(r) < 0.01) {
      const T special[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                           -std::numeric_limits<T>::infinity(), std::numeric_limits<T>::denorm_min(), T(-1e10)};
      v[i] = special[r() % 5];
    }
  }
  return v;
}
}  // namespace

TEST(adv_random_round_trips) {
  std::mt19937_64 r(20261123);
  int cases = 0;
  while (cases < 120) {
    const int rank = 1 + int(r() % 4);
    std::vector<uint64_t> dims(rank);
    uint64_t n = 1;
    for (auto& d : dims) {
      const int k = int(r() % 10);
      d = k == 0 ? 1 : k < 4 ? 1 + r() % 8 : 2 + r() % 400;
      n *= d;
    }
    if (n > 200000) continue;
    const int kind = int(r() % 8);
    hpcz::Options o;
    o.mode = r() % 3 ? hpcz::BoundMode::rel : hpcz::BoundMode::abs;
    o.bound = std::pow(10.0, -0.5 - 6.5 * double(r() % 1000) / 1000);
    if (r() % 4 == 0) o.fill = -1e10;
    o.second_stage = r() % 5 == 0;
    const uint32_t radii[] = {1, 2, 16, 2048};
    if (r() % 3 == 0) o.radius = radii[r() % 4];
    char what[160];
    std::snprintf(what, sizeof what, "random case %d (rank %d, n %llu, kind %d, %s %g)", cases, rank,
                  (unsigned long long)n, kind, o.mode == hpcz::BoundMode::rel ? "rel" : "abs", o.bound);
    if (r() % 2) {
      const auto v = random_field<float>(r, n, kind);
      if (o.mode == hpcz::BoundMode::abs) o.bound *= kind == 7 ? 1e37 : 1;
      roundtrip(v, dims, o, what);
    } else {
      const auto v = random_field<double>(r, n, kind);
      if (o.mode == hpcz::BoundMode::abs) o.bound *= kind == 7 ? 1e300 : 1;
      roundtrip(v, dims, o, what);
    }
    ++cases;
  }
  std::fprintf(stderr, "  %d random cases, both codecs%s\n", cases, hpcz::gpu_available() ? ", GPU == CPU checked" : "");
}

// A chunk whose last sequence holds nothing but the tail of its last codeword (total_bits mod 131072
// in [1, 13]): no codeword starts there, so its seq_first entry is not a symbol index. Decoders take
// it as count (docs/FORMAT.md 7.4); before, every decoder rejected the chunk that every encoder wrote.
// Found by review: zeros with two ones, abs 0.5, so every symbol but two is the 1-bit central one.
TEST(adv_ratio_empty_last_sequence) {
  const uint64_t n = 131070;
  std::vector<float> v(n, 0.0f);
  v[5] = v[n - 1] = 1.0f;
  hpcz::Options o = abs_(0.5);
  o.codec = hpcz::Codec::ratio;
  o.backend = hpcz::Backend::cpu;
  const auto a = hpcz::compress(v.data(), hpcz::DType::f32, {n}, o);
  const auto info = hpcz::inspect(a.data(), a.size());
  const uint32_t total_bits = hpcz::detail::load_u32_le(a.data() + info.chunks[0].offset);
  CHECK_MSG(total_bits % 131072 >= 1 && total_bits % 131072 <= 13, "the case needs its last codeword to cross a sequence: "
                                                                      << total_bits << " bits");
  roundtrip_codec(v, {n}, o, "ratio, empty last sequence", 0);  // CPU, and GPU == CPU both ways
}

namespace {

// The scalar definition of the CPU's range pass, which the vectorized fold must equal key for key.
template <class T, class K>
void reference_keys(const T* v, uint64_t n, bool has_fill, T fill, K& nmin, K& nmax) {
  for (uint64_t i = 0; i < n; ++i)
    if (hpcz::quant::in_range_set(v[i], has_fill, fill)) {
      nmin = std::min(nmin, hpcz::quant::narrow_key(v[i]));
      nmax = std::max(nmax, hpcz::quant::narrow_key(v[i]));
    }
}

template <class T>
void check_fold(const std::vector<T>& v, bool has_fill, T fill, const std::string& what) {
  using K = typename hpcz::detail::Bits<T>::type;
  // Every start and length near the vector width, the step's whole-sample size, then the whole array.
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t s = 0; s < std::min<size_t>(v.size(), 9); ++s)
    for (size_t n = 0; s + n <= v.size() && n < 40; ++n) spans.push_back({s, n});
  spans.push_back({0, std::min<size_t>(v.size(), hpcz::quant::kStepSamples)});
  spans.push_back({0, v.size()});
  for (auto [s, n] : spans) {
    K a = ~K(0), b = 0, ra = ~K(0), rb = 0;
    hpcz::quant::fold_range_keys(v.data() + s, n, has_fill, fill, a, b);
    reference_keys(v.data() + s, n, has_fill, fill, ra, rb);
    if (a != ra || b != rb) {
      CHECK_MSG(false, what + " at " + std::to_string(s) + "+" + std::to_string(n));
      return;
    }
    // An array of at most kStepSamples values is all sample: the step's sample from its range keys.
    if (n <= hpcz::quant::kStepSamples && hpcz::quant::step_samples_from_range<T>(a, b) !=
        hpcz::quant::fold_step_samples(v.data() + s, 0, n, n, has_fill, fill, uint64_t(0))) {
      CHECK_MSG(false, what + ": step sample at " + std::to_string(s) + "+" + std::to_string(n));
      return;
    }
  }
}

template <class T>
void check_fold_cases(const char* type) {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const T den = std::numeric_limits<T>::denorm_min(), big = std::numeric_limits<T>::max();
  std::mt19937 rng(7);
  std::vector<T> mixed;
  const T specials[] = {nan, -nan, inf, -inf, T(0), -T(0), den, -den, big, -big, T(-1e10), T(1.5), T(-2.25)};
  for (int i = 0; i < 400; ++i) mixed.push_back(specials[rng() % 13]);
  const std::string t = type;
  check_fold(mixed, false, T(0), t + " specials");
  check_fold(mixed, true, T(-1e10), t + " specials, fill -1e10");
  check_fold(mixed, true, T(0), t + " specials, fill 0 (takes -0 too)");
  check_fold(mixed, true, nan, t + " specials, fill NaN");
  check_fold(std::vector<T>(50, nan), false, T(0), t + " all NaN");
  check_fold(std::vector<T>(50, T(-1e10)), true, T(-1e10), t + " all fill");
  std::vector<T> negative(77);
  for (auto& x : negative) x = -T(rng() % 1000) / T(7);
  check_fold(negative, false, T(0), t + " negative");
}

}  // namespace

// The vectorized range pass gives the scalar definition's keys: special values, fill values, every
// alignment and tail, and the real fields.
TEST(adv_range_fold_matches_scalar) {
  check_fold_cases<float>("f32");
  check_fold_cases<double>("f64");
  for (const Field& f : real_fields()) {
    if (f.dtype == hpcz::DType::f32) {
      std::vector<float> v(f.n());
      std::memcpy(v.data(), f.bytes.data(), f.bytes.size());
      check_fold(v, false, 0.0f, f.name);
      check_fold(v, true, v[v.size() / 2], f.name + " with a fill value");
    } else {
      std::vector<double> v(f.n());
      std::memcpy(v.data(), f.bytes.data(), f.bytes.size());
      check_fold(v, false, 0.0, f.name);
      check_fold(v, true, v[v.size() / 2], f.name + " with a fill value");
    }
  }
}
