// The combined bound modes (abs_and_rel, abs_or_rel, as SZ3 defines them): the bound each settles to,
// the strict guarantee on real fields in every codec, with and without the second stage, CPU and GPU
// bytes alike, and the format version they need.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "codecs/ratio_class/pw_log_sides.hpp"
#include "common.hpp"
#include "format/header.hpp"
#include "quant/bound.hpp"
#include "quant/logmap_cpu.hpp"

using namespace testutil;

namespace {
// An archive whose header was edited, its checksum made right again, decoded on the CPU: the error
// code (0: decoded).
// The code of the error f throws (invalid_argument's 0 stands for none thrown).
template <class F> hpcz::ErrorCode error_of(F&& f) {
  try {
    f();
  } catch (const hpcz::Error& e) {
    return e.code();
  }
  return hpcz::ErrorCode(0);
}

int sealed_decode_error(std::vector<uint8_t> a) {
  hpcz::detail::store_u32_le(&a[hpcz::format::kOffHeaderChecksum], hpcz::format::header_checksum(a.data()));
  try {
    std::vector<uint8_t> out;
    hpcz::decompress(a.data(), a.size(), out, hpcz::Backend::cpu);
  } catch (const hpcz::Error& e) {
    return int(e.code());
  }
  return 0;
}
}  // namespace

// The settled bound: the smaller of the two (and) or the larger (or); without a range the rel part is 0.
TEST(unit_combined_bound_settles) {
  using hpcz::BoundMode;
  using hpcz::quant::absolute_bound;
  using hpcz::quant::rel_bound;
  const double rel = rel_bound(1e-3, true, -2.0, 6.0);
  CHECK(rel > 0 && rel <= 8e-3);
  CHECK(absolute_bound(BoundMode::abs_and_rel, 1e-3, 1e-4, true, -2.0, 6.0) == 1e-4);
  CHECK(absolute_bound(BoundMode::abs_and_rel, 1e-3, 1.0, true, -2.0, 6.0) == rel);
  CHECK(absolute_bound(BoundMode::abs_or_rel, 1e-3, 1e-4, true, -2.0, 6.0) == rel);
  CHECK(absolute_bound(BoundMode::abs_or_rel, 1e-3, 1.0, true, -2.0, 6.0) == 1.0);
  CHECK(absolute_bound(BoundMode::abs_and_rel, 1e-3, 0.5, false, 0.0, 0.0) == 0.0);
  CHECK(absolute_bound(BoundMode::abs_or_rel, 1e-3, 0.5, false, 0.0, 0.0) == 0.5);
  // A template carries the absolute part in eb_abs; settling an archive's bound again gives it back.
  hpcz::format::HeaderFields h{};
  h.dtype = hpcz::DType::f32;
  h.mode = BoundMode::abs_and_rel;
  h.bound = 1e-3;
  h.eb_abs = 1e-4;
  const auto b = hpcz::quant::settle(hpcz::quant::bound_of(h), hpcz::quant::range_key(-2.0), hpcz::quant::range_key(6.0), 0.0);
  CHECK(b.eb_abs == 1e-4 && b.step > 0 && b.step <= 2e-4);
  hpcz::quant::store(h, b);
  const auto again = hpcz::quant::settle(hpcz::quant::bound_of(h), hpcz::quant::range_key(-2.0), hpcz::quant::range_key(6.0), 0.0);
  CHECK(again.eb_abs == b.eb_abs && again.step == b.step);
  CHECK(hpcz::format::archive_version(hpcz::Codec::ratio, false, BoundMode::abs_or_rel) == 6);
  CHECK(hpcz::format::archive_version(hpcz::Codec::fast, true, BoundMode::rel) == 5);
}

namespace {

long double asked_of(const Field& f, const hpcz::Options& o) {
  return f.dtype == hpcz::DType::f32 ? requested_bound(reinterpret_cast<const float*>(f.bytes.data()), f.n(), o)
                                     : requested_bound(reinterpret_cast<const double*>(f.bytes.data()), f.n(), o);
}
// rel 1e-3 of f's range.
double rel_part(const Field& f) {
  hpcz::Options probe;
  probe.mode = hpcz::BoundMode::rel;
  probe.bound = 1e-3;
  return double(asked_of(f, probe));
}

// Requests whose abs part binds and whose rel part binds, for both modes, on field f.
std::vector<hpcz::Options> combined_requests(const Field& f, hpcz::Codec codec) {
  const double rel = rel_part(f);
  std::vector<hpcz::Options> out;
  for (hpcz::BoundMode m : {hpcz::BoundMode::abs_and_rel, hpcz::BoundMode::abs_or_rel})
    for (double abs : {0.25 * rel, 4 * rel}) {
      hpcz::Options o;
      o.mode = m;
      o.bound = 1e-3;
      o.abs_bound = abs;
      o.codec = codec;
      out.push_back(o);
    }
  return out;
}

}  // namespace

TEST(roundtrip_combined_bounds_real_fields) {
  const auto fields = real_fields();
  REQUIRE(!fields.empty());
  uint64_t coded = 0, gpu_checked = 0;
  for (const Field& f : fields) {
    for (hpcz::Codec codec : {hpcz::Codec::fast, hpcz::Codec::ratio, hpcz::Codec::interp}) {
      for (hpcz::Options o : combined_requests(f, codec)) {
        o.backend = hpcz::Backend::cpu;
        const double rel = rel_part(f);
        o.second_stage = codec == hpcz::Codec::ratio && o.abs_bound > rel;  // version 6 with the stage flag
        const auto a = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
        const hpcz::ArchiveInfo info = hpcz::inspect_header(a.data(), a.size());
        CHECK(info.mode == o.mode && info.version == 6 && info.bound == o.bound && info.second_stage == o.second_stage);
        const long double asked = asked_of(f, o);
        CHECK_MSG(eb_within_request(info.eb_abs, asked), f.name << ": eb_abs " << info.eb_abs << " above the request");
        // Where the abs part decides, it is the bound itself.
        const bool abs_decides = (o.mode == hpcz::BoundMode::abs_and_rel) == (o.abs_bound < rel);
        if (abs_decides) CHECK_MSG(info.eb_abs == o.abs_bound, f.name << ": eb_abs " << info.eb_abs << " not the abs part");
        std::vector<uint8_t> back;
        hpcz::decompress(a.data(), a.size(), back, hpcz::Backend::cpu);
        const Check c = strict_check(f.bytes, back, f.dtype, info.eb_abs);
        CHECK_MSG(c.violations == 0, f.name << " " << hpcz::codec_name(codec) << " " << hpcz::bound_mode_name(o.mode) << ": "
                                            << c.violations << " values outside the bound");
        if (hpcz::gpu_available()) {
          o.backend = hpcz::Backend::gpu;
          const auto g = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
          CHECK_MSG(g == a, f.name << " " << hpcz::codec_name(codec) << ": GPU and CPU archives differ");
          std::vector<uint8_t> gback;
          hpcz::decompress(a.data(), a.size(), gback, hpcz::Backend::gpu);
          CHECK_MSG(gback == back, f.name << ": GPU and CPU decodes differ");
          ++gpu_checked;
        }
        ++coded;
      }
    }
  }
  std::fprintf(stderr, "  %llu archives within their combined bounds, %llu of them identical on the GPU\n",
               (unsigned long long)coded, (unsigned long long)gpu_checked);
}

// A combined mode needs version 6: the same archive marked version 5 is refused as corrupt, and a
// reader of version 5 would have refused version 6 as a newer format.
TEST(corrupt_combined_mode_below_version_6) {
  const auto fields = real_fields();
  REQUIRE(!fields.empty());
  const Field& f = fields.front();
  hpcz::Options o;
  o.mode = hpcz::BoundMode::abs_or_rel;
  o.abs_bound = 0.5;
  o.backend = hpcz::Backend::cpu;
  for (hpcz::Codec codec : {hpcz::Codec::fast, hpcz::Codec::ratio}) {
    o.codec = codec;
    auto a = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
    a[hpcz::format::kOffVersion] = 5;
    hpcz::detail::store_u32_le(&a[hpcz::format::kOffHeaderChecksum], hpcz::format::header_checksum(a.data()));
    bool refused = false;
    try {
      std::vector<uint8_t> out;
      hpcz::decompress(a.data(), a.size(), out, hpcz::Backend::cpu);
    } catch (const hpcz::Error& e) {
      refused = e.code() == hpcz::ErrorCode::corrupt_archive;
    }
    CHECK_MSG(refused, hpcz::codec_name(codec) << ": a combined mode in a version-5 archive was not refused as corrupt");
    a[hpcz::format::kOffVersion] = uint8_t(hpcz::format::kVersion + 1);
    hpcz::detail::store_u32_le(&a[hpcz::format::kOffHeaderChecksum], hpcz::format::header_checksum(a.data()));
    refused = false;
    try {
      std::vector<uint8_t> out;
      hpcz::decompress(a.data(), a.size(), out, hpcz::Backend::cpu);
    } catch (const hpcz::Error& e) {
      refused = e.code() == hpcz::ErrorCode::unsupported;
    }
    CHECK_MSG(refused, hpcz::codec_name(codec) << ": a version newer than kVersion was not refused as unsupported");
  }
}

// A request's absolute part is checked like the bound.
TEST(unit_combined_bound_refuses_bad_abs) {
  const float v[4] = {1, 2, 3, 4};
  hpcz::Options o;
  o.mode = hpcz::BoundMode::abs_and_rel;
  o.backend = hpcz::Backend::cpu;
  for (double bad : {-1.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    o.abs_bound = bad;
    bool refused = false;
    try {
      hpcz::compress(v, hpcz::DType::f32, {4}, o);
    } catch (const hpcz::Error& e) {
      refused = e.code() == hpcz::ErrorCode::invalid_argument;
    }
    CHECK_MSG(refused, "abs_bound " << bad << " accepted");
  }
}

// ---- pointwise-relative bounds -----------------------------------------------------------------------

namespace {

// |xr - x| <= r |x| decided in integers, apart from the library's arithmetic: each double as m 2^e
// (m < 2^53), the product r |x| as a 106-bit integer, both sides aligned by their exponents.
int bit_length(unsigned __int128 v) {
  int n = 0;
  while (v) v >>= 1, ++n;
  return n;
}
void split(double v, unsigned __int128& m, int& e) {
  uint64_t u;
  std::memcpy(&u, &v, 8);
  const int biased = int(u >> 52 & 0x7ff);
  m = (u & 0xfffffffffffffull) | (biased ? uint64_t(1) << 52 : 0);
  e = (biased ? biased : 1) - 1075;
}
// a 2^ea <= b 2^eb for nonnegative integers a, b.
bool le_scaled(unsigned __int128 a, int ea, unsigned __int128 b, int eb) {
  if (a == 0) return true;
  if (b == 0) return false;
  const int la = bit_length(a) + ea, lb = bit_length(b) + eb;
  if (la != lb) return la < lb;
  const int shift = ea - eb;  // the same top bit: shifted, the one with the larger exponent stays in 128 bits
  return shift >= 0 ? (a << shift) <= b : a <= (b << -shift);
}
template <class T> bool pw_within_exact(T x, T xr, double r) {
  if (x == T(0) || !std::isfinite(x)) return std::memcmp(&x, &xr, sizeof(T)) == 0;
  if (!std::isfinite(xr) || std::signbit(x) != std::signbit(xr)) return false;
  const long double dl = std::fabs((long double)xr - (long double)x);  // exact: same sign, |xr| close to |x|
  const double d = double(dl);
  if ((long double)d != dl) return false;  // not close: certainly outside
  unsigned __int128 md, mr, mx;
  int ed, er, ex;
  split(d, md, ed);
  split(r, mr, er);
  split(std::fabs(double(x)), mx, ex);
  return le_scaled(md, ed, mr * mx, er + ex);
}

// Values that stress the pointwise bound: both signs of zero, subnormals, the smallest and largest
// normals, powers of two and their neighbours, NaN, Inf, runs, alternating signs, and a real field.
template <class T> std::vector<T> adversarial_values(const Field& f) {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {T(0), -T(0), L::denorm_min(), -L::denorm_min(), L::min(), -L::min(), L::max(), -L::max(),
                      L::quiet_NaN(), L::infinity(), -L::infinity(), T(1), T(-1), std::nextafter(T(2), T(0)),
                      std::nextafter(T(2), T(4)), T(1e-30), T(-1e30)};
  for (int e = L::min_exponent - L::digits - 2; e < L::max_exponent; e += 7) {
    const T p = std::ldexp(T(1), e);
    for (T s : {T(1), T(-1)}) v.insert(v.end(), {s * p, s * std::nextafter(p, T(0)), s * std::nextafter(p, L::infinity()), s * T(1.5) * p});
  }
  for (int i = 0; i < 300; ++i) v.push_back(T(3.25));  // a constant run
  for (int i = 0; i < 300; ++i) v.push_back(T(i % 2 ? -1 : 1) * T(1 + i));
  const uint64_t n = std::min<uint64_t>(f.n(), 200000);
  for (uint64_t i = 0; i < n; ++i)
    v.push_back(f.dtype == hpcz::DType::f32 ? T(reinterpret_cast<const float*>(f.bytes.data())[i])
                                            : T(reinterpret_cast<const double*>(f.bytes.data())[i]));
  uint32_t rng = 7;
  for (int i = 0; i < 20000; ++i) {  // random bit patterns: every binade, subnormals, NaN payloads
    rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
    uint64_t u = (uint64_t(rng) << 32) ^ (uint64_t(rng) * 0x9e3779b97f4a7c15ull);
    T t;
    if constexpr (sizeof(T) == 4) {
      const uint32_t b = uint32_t(u);
      std::memcpy(&t, &b, 4);
    } else {
      std::memcpy(&t, &u, 8);
    }
    v.push_back(t);
  }
  return v;
}

template <class T>
uint64_t pw_violations(const std::vector<T>& x, const std::vector<uint8_t>& back, double r) {
  uint64_t bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    T y;
    std::memcpy(&y, back.data() + i * sizeof(T), sizeof(T));
    bad += !pw_within_exact(x[i], y, r);
  }
  return bad;
}

}  // namespace

// The integer check itself, on cases it must decide both ways.
TEST(unit_pw_rel_exact_check) {
  CHECK(pw_within_exact(1.0f, 1.001f, 1e-3) == (std::fabs(double(1.001f) - 1.0) <= 1e-3));
  CHECK(pw_within_exact(2.0, 2.0 + 2e-3, 1e-3));
  CHECK(!pw_within_exact(2.0, std::nextafter(2.0 + 2e-3, 3.0), 1e-3));
  CHECK(pw_within_exact(-0.0f, -0.0f, 0.1) && !pw_within_exact(-0.0f, 0.0f, 0.1) && !pw_within_exact(1.0f, -1.0f, 0.5));
  CHECK(!pw_within_exact(1e-30f, 0.0f, 0.5) && pw_within_exact(1e-30f, 1e-30f, 1e-9));
}

// The log2 transform's maps: within a few ulps of the library's log2 and exp2, each other's inverse,
// the bound's margin covering their error.
TEST(unit_pw_log_maps) {
  uint64_t u = 12345;
  double worst_log = 0, worst_exp = 0;
  for (int i = 0; i < 200000; ++i) {
    u = u * 6364136223846793005ull + 1442695040888963407ull;
    const double x = std::ldexp(1.0 + double(u >> 11) * 0x1p-53, int(u % 2090) - 1070);  // normals and subnormals
    const double l = hpcz::quant::log2_det(x), ref = std::log2(x);
    worst_log = std::max(worst_log, std::fabs(l - ref) / std::max(1.0, std::fabs(ref)));
    const double y = double(int64_t(u % 2000001) - 1000000) * 1e-3;  // [-1000, 1000]
    const double e = hpcz::quant::exp2_det(y), eref = std::exp2(y);
    worst_exp = std::max(worst_exp, std::fabs(e - eref) / eref);
  }
  CHECK_MSG(worst_log < 0x1p-50, "log2_det off by " << worst_log);
  CHECK_MSG(worst_exp < 0x1p-49, "exp2_det off by " << worst_exp);
  CHECK(hpcz::quant::exp2_det(0.0) == 1.0 && hpcz::quant::exp2_det(10.0) == 1024.0 && hpcz::quant::log2_det(8.0) == 3.0);
  CHECK(hpcz::quant::exp2_det(-2000.0) == 0.0 && std::isinf(hpcz::quant::exp2_det(2000.0)) &&
        std::isnan(hpcz::quant::exp2_det(std::nan(""))));
  for (double r : {0.5, 1e-2, 1e-4, 1e-6}) {  // the bound is below log2(1 + r), by little more than the margin
    const double b32 = hpcz::quant::pw_log_bound<float>(r), b64 = hpcz::quant::pw_log_bound<double>(r);
    CHECK(b32 > 0 && b32 < b64 && b64 < std::log1p(r) / std::log(2.0) && b64 > std::log1p(r) / std::log(2.0) * (1 - 1e-5));
  }
}

// The vectorized passes of the log2 transform (logmap_cpu.cpp) give the scalar maps' bits at every
// instruction-set level this CPU has: log2 of every kind of value, exp2 across and beyond its range
// (NaN, +-Inf, +-kLogMax, halves), the encoder's check on both sides of the bound.
template <class T> void check_log_runs_every_level() {
  using U = typename hpcz::detail::Bits<T>::type;
  const uint64_t n = 100003;  // not a multiple of the passes' blocks
  std::vector<T> x(n);
  std::vector<uint8_t> regular(n);
  std::vector<double> y(n), yr(n);
  uint64_t u = 777;
  auto next = [&] { return u = u * 6364136223846793005ull + 1442695040888963407ull; };
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t k = next();
    x[i] = hpcz::detail::from_bits<T>(U(k >> (64 - 8 * sizeof(T))));  // every kind of bits
    if (i % 7 == 0) x[i] = T(double(k % 1000) - 500.0);                 // whole numbers and zero
    regular[i] = std::isnormal(x[i]);
  }
  const double special = std::nan("");
  std::vector<double> y0(n), y1(n);
  hpcz::quant::log2_abs_run(x.data(), regular.data(), n, special, y0.data(), 0);
  for (uint64_t i = 0; i < n; i += 997)
    CHECK(!regular[i] || hpcz::detail::to_bits(y0[i]) == hpcz::detail::to_bits(hpcz::quant::log2_det(std::fabs(double(x[i])))));
  for (uint64_t i = 0; i < n; ++i) {  // exp2's arguments: the logs, nudged across the bound, and edges
    const double e = double(int64_t(next() % 2001) - 1000) * 0x1p-30;
    yr[i] = regular[i] ? y0[i] + e : double(int64_t(next() % 2400001) - 1200000) * 1e-3;
    if (i % 101 == 0) yr[i] = std::nan("");
    if (i % 103 == 0) yr[i] = (i & 1 ? 1 : -1) * (i % 3 ? hpcz::quant::kLogMax : HUGE_VAL);
    if (i % 107 == 0) yr[i] = double(int64_t(next() % 2001) - 1000) + 0.5;
  }
  std::vector<T> e0(n), e1(n);
  std::vector<uint8_t> f0(regular), f1;
  hpcz::quant::exp2_run(yr.data(), n, e0.data(), 0);
  hpcz::quant::pw_log_check_run(x.data(), yr.data(), n, 1e-3, f0.data(), 0);
  uint64_t outside = 0, inside = 0;
  for (uint64_t i = 0; i < n; ++i) outside += f0[i] == 2, inside += f0[i] == 1;
  CHECK_MSG(outside > 1000 && inside > 1000, "the check's cases: " << inside << " within, " << outside << " beyond");
  for (int level = 1; level <= hpcz::quant::logmap_simd_best(); ++level) {
    hpcz::quant::log2_abs_run(x.data(), regular.data(), n, special, y1.data(), level);
    hpcz::quant::exp2_run(yr.data(), n, e1.data(), level);
    f1 = regular;
    hpcz::quant::pw_log_check_run(x.data(), yr.data(), n, 1e-3, f1.data(), level);
    uint64_t bad_log = 0, bad_exp = 0;
    for (uint64_t i = 0; i < n; ++i) {
      bad_log += hpcz::detail::to_bits(y0[i]) != hpcz::detail::to_bits(y1[i]);
      bad_exp += hpcz::detail::to_bits(e0[i]) != hpcz::detail::to_bits(e1[i]);
    }
    CHECK_MSG(bad_log == 0 && bad_exp == 0 && f0 == f1,
              "level " << level << ": " << bad_log << " logs, " << bad_exp << " exps differ; checks " << (f0 == f1 ? "agree" : "differ"));
    if (sizeof(T) == sizeof(double)) {  // in place
      std::vector<double> in_place(yr);
      hpcz::quant::exp2_run(in_place.data(), n, in_place.data(), level);
      CHECK(std::memcmp(in_place.data(), e0.data(), n * sizeof(double)) == 0);
    }
  }
}

TEST(unit_pw_log_runs_every_level) {
  check_log_runs_every_level<float>();
  check_log_runs_every_level<double>();
}

// The log chunks' side sections walked in spans, each from the state pw_carry finds for it (as the GPU's
// threads walk them), are the one walk's: the same entries, bytes and state, placed or not, over
// adversarial values with specials, both signs, runs and patches, cut in spans of random lengths.
template <class T> void check_walk_spans(const std::vector<T>& x, bool placed, uint32_t seed) {
  using namespace hpcz::ratio;
  const uint32_t n = uint32_t(x.size());
  const PwParams w{1e-3, true, -999.0};
  std::vector<uint8_t> flags(n);
  uint32_t rng = seed;
  auto next = [&] { return rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5; };
  for (uint32_t i = 0; i < n; ++i) flags[i] = pw_regular(x[i], w) ? (next() % 50 == 0 ? 2 : 1) : 0;
  PwWalk<T> one;
  std::vector<uint8_t> runs(16 * n + 16), signs(8 * n + 16), patches(16 * n + 16);
  one.r.p = runs.data(), one.s.p = signs.data(), one.p.p = patches.data();
  one.span(x.data(), flags.data(), 0, n, placed);
  const PwWalkState<T> before_finish = one.st;
  one.finish(placed);
  one.tally();
  // Spans of 0 to 3000 values, short ones often.
  std::vector<uint32_t> cuts = {0};
  while (cuts.back() < n) cuts.push_back(std::min<uint32_t>(n, cuts.back() + (next() % 4 ? next() % 40 : next() % 3000)));
  std::vector<PwWalkState<T>> at(cuts.size());  // at[k]: the state before span k
  for (size_t k = 0; k + 1 < cuts.size(); ++k)
    at[k + 1] = pw_carry(at[k], pw_span_facts(x.data(), flags.data(), cuts[k], cuts[k + 1]), placed);
  const PwWalkState<T>& end = at.back();
  CHECK(end.run_negative == before_finish.run_negative && end.sign_run == before_finish.sign_run &&
        end.run_len == before_finish.run_len && end.last_patch == before_finish.last_patch &&
        (!end.run_len || hpcz::detail::to_bits(end.run_value) == hpcz::detail::to_bits(before_finish.run_value)) &&
        (!placed || (end.gap == before_finish.gap && (!end.run_len || end.run_gap == before_finish.run_gap))));
  std::vector<uint8_t> r2(runs.size()), s2(signs.size()), p2(patches.size());
  uint64_t ro = 0, so = 0, po = 0, regular = 0, negatives = 0, n_runs = 0, n_signs = 0, n_patches = 0;
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {  // each span written where the spans before it end
    PwWalk<T> span;
    span.st = at[k];
    span.r.p = r2.data() + ro, span.s.p = s2.data() + so, span.p.p = p2.data() + po;
    span.span(x.data(), flags.data(), cuts[k], cuts[k + 1], placed);
    ro += span.r.bytes, so += span.s.bytes, po += span.p.bytes;
    regular += span.z.regular, negatives += span.z.negatives;
    n_runs += span.z.n_runs, n_signs += span.z.n_sign_runs, n_patches += span.z.n_patches;
  }
  PwWalk<T> last;
  last.st = end;
  last.r.p = r2.data() + ro, last.s.p = s2.data() + so, last.p.p = p2.data() + po;
  last.finish(placed);
  ro += last.r.bytes, so += last.s.bytes, n_runs += last.z.n_runs, n_signs += last.z.n_sign_runs;
  CHECK_MSG(ro == one.z.runs_bytes && so == one.z.sign_bytes && po == one.z.patch_bytes && regular == one.z.regular &&
                negatives == one.z.negatives && n_runs == one.z.n_runs && n_signs == one.z.n_sign_runs &&
                n_patches == one.z.n_patches,
            (placed ? "placed" : "not placed") << ": span counts differ from the one walk's");
  CHECK(std::memcmp(r2.data(), runs.data(), ro) == 0 && std::memcmp(s2.data(), signs.data(), so) == 0 &&
        std::memcmp(p2.data(), patches.data(), po) == 0);
  CHECK_MSG(one.z.n_runs > 10 && one.z.n_sign_runs > 10 && one.z.n_patches > 10,
            "the walk's cases: " << one.z.n_runs << " runs, " << one.z.n_sign_runs << " sign runs, " << one.z.n_patches << " patches");
}

// The decoder in spans (pw_plan_spans, pw_place_span, as the GPU's threads decode) gives decode_pw_places'
// values, and refuses what it refuses, over the side sections check_walk_spans' arrays make, and over
// those sections with bytes changed.
template <class T> void check_place_spans(const std::vector<T>& x, bool placed, uint32_t seed) {
  using namespace hpcz::ratio;
  const uint32_t n = uint32_t(x.size()), span = 1000;
  const PwParams w{1e-3, true, -999.0};
  std::vector<uint8_t> flags(n);
  uint32_t rng = seed;
  auto next = [&] { return rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5; };
  uint64_t negatives = 0, special = 0;
  for (uint32_t i = 0; i < n; ++i) {
    flags[i] = pw_regular(x[i], w) ? (next() % 50 == 0 ? 2 : 1) : 0;
    negatives += flags[i] && x[i] < T(0), special += !flags[i];
  }
  const PwSideSizes z = pw_side_sizes(x.data(), flags.data(), n, placed, false, negatives, true);
  std::vector<uint8_t> sides(z.total());
  pw_write_sides(x.data(), flags.data(), n, placed, z, sides.data());
  std::vector<T> mag(n);  // the decoded magnitudes: |x|, a special's NaN (placed: a stand-in's)
  for (uint32_t i = 0; i < n; ++i) mag[i] = flags[i] ? (x[i] < T(0) ? -x[i] : x[i]) : (placed ? T(7) : std::numeric_limits<T>::quiet_NaN());
  int refused_both = 0, decoded = 0;
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<uint8_t> b = sides;
    if (trial) b[next() % b.size()] ^= uint8_t(1u << (next() % 8));  // a changed bit in the lists
    const uint32_t rs = uint32_t(z.runs_section());
    SideReader runs{b.data(), b.data() + rs}, rest{b.data() + rs, b.data() + b.size()};
    std::vector<T> one(mag);
    uint32_t n_runs = 0;
    uint64_t sp = special;
    bool ok1 = runs.varint(n_runs) && (!placed || pw_placed_specials<T>(runs, n_runs, n, sp));
    SignReader signs;
    ok1 = ok1 && signs.open(z.sign_kind, rest, n - sp) && decode_pw_places(runs, n_runs, placed, n, signs, one.data()) &&
          signs.close() && apply_pw_patches(rest, n, one.data());
    std::vector<T> two(mag);
    const uint32_t n_spans = (n + span - 1) / span;
    std::vector<uint32_t> nan(n_spans, 0);
    for (uint32_t i = 0; i < n; ++i) nan[i / span] += two[i] != two[i];
    std::vector<PwPlaceState<T>> states(n_spans + 1);
    uint32_t patches_at = 0;
    const uint32_t rest_size = uint32_t(b.size() - rs);
    bool ok2 = pw_plan_spans<T>(b.data(), rs, b.data() + rs, rest_size, z.sign_kind, placed, n, span, nan.data(),
                                states.data(), patches_at);
    if (ok2) {
      for (uint32_t k = 0; k < n_spans; ++k)
        pw_place_span<T>(b.data(), rs, b.data() + rs, rest_size, b.data() + rs, z.sign_kind, placed, states[k], k * span,
                         std::min(n, (k + 1) * span), two.data());
      SideReader patches{b.data() + rs + patches_at, b.data() + b.size()};
      ok2 = apply_pw_patches(patches, n, two.data());
    }
    CHECK_MSG(ok1 == ok2, (placed ? "placed" : "not placed") << " trial " << trial << ": the whole decoder "
                                                             << (ok1 ? "decodes" : "refuses") << ", the spans do not");
    if (ok1 && ok2) {
      CHECK(std::memcmp(one.data(), two.data(), n * sizeof(T)) == 0);
      ++decoded;
      if (trial == 0)
        for (uint32_t i = 0; i < n; ++i) CHECK(hpcz::detail::to_bits(one[i]) == hpcz::detail::to_bits(x[i]));
    } else {
      ++refused_both;
    }
  }
  CHECK_MSG(decoded > 1 && refused_both > 1, "the trials' cases: " << decoded << " decoded, " << refused_both << " refused");
}

TEST(unit_pw_place_spans_agree) {
  const auto fields = real_fields();
  REQUIRE(!fields.empty());
  for (bool placed : {false, true})
    for (uint32_t seed : {3u, 777u}) {
      check_place_spans(adversarial_values<float>(fields.front()), placed, seed);
      auto d = adversarial_values<double>(fields.front());
      for (size_t i = 0; i < d.size(); i += 97) d[i] = -999.0;
      check_place_spans(d, placed, seed);
    }
}

TEST(unit_pw_walk_spans_agree) {
  const auto fields = real_fields();
  REQUIRE(!fields.empty());
  for (bool placed : {false, true})
    for (uint32_t seed : {1u, 99u, 12345u}) {
      check_walk_spans(adversarial_values<float>(fields.front()), placed, seed);
      auto d = adversarial_values<double>(fields.front());
      for (size_t i = 0; i < d.size(); i += 97) d[i] = -999.0;  // the fill value: specials amid regular values
      for (size_t i = 500; i < 900; ++i) d[i] = 0.0;           // a long run
      check_walk_spans(d, placed, seed);
    }
}

// Every value of adversarial arrays, f32 and f64, within r |x| (zeros, NaN, Inf as their bits), on
// the CPU and, where present, the GPU with the same bytes.
// The ratio and interp codecs (the log2 transform, format version 8) from their smallest factor, 1e-6.
TEST(adv_pw_rel_every_value) {
  const auto fields = real_fields();
  REQUIRE(!fields.empty());
  for (hpcz::Codec codec : {hpcz::Codec::fast, hpcz::Codec::ratio, hpcz::Codec::interp})
  for (double r : {0.5, 1e-2, 1e-3, 1e-5, 1e-6, 1e-7, 1e-12}) {
    if (codec != hpcz::Codec::fast && r < 1e-6) continue;
    for (hpcz::DType t : {hpcz::DType::f32, hpcz::DType::f64}) {
      hpcz::Options o;
      o.mode = hpcz::BoundMode::pw_rel;
      o.bound = r;
      o.codec = codec;
      o.backend = hpcz::Backend::cpu;
      std::vector<uint8_t> raw;
      uint64_t n = 0, bad = 0;
      std::vector<float> xf;
      std::vector<double> xd;
      if (t == hpcz::DType::f32) xf = adversarial_values<float>(fields.front()), raw = as_bytes(xf), n = xf.size();
      else xd = adversarial_values<double>(fields.front()), raw = as_bytes(xd), n = xd.size();
      const auto a = hpcz::compress(raw.data(), t, {n}, o);
      const auto info = hpcz::inspect_header(a.data(), a.size());
      const double eb = codec == hpcz::Codec::fast ? r
                        : t == hpcz::DType::f32 ? hpcz::quant::pw_log_bound<float>(r) : hpcz::quant::pw_log_bound<double>(r);
      CHECK(info.mode == hpcz::BoundMode::pw_rel && info.version == (codec == hpcz::Codec::fast ? 6 : 8) &&
            info.bound == r && info.eb_abs == eb);
      std::vector<uint8_t> back;
      hpcz::decompress(a.data(), a.size(), back, hpcz::Backend::cpu);
      bad = t == hpcz::DType::f32 ? pw_violations(xf, back, r) : pw_violations(xd, back, r);
      CHECK_MSG(bad == 0, hpcz::codec_name(codec) << " " << hpcz::dtype_short_name(t) << " pw_rel " << r << ": " << bad
                                                 << " of " << n << " values outside");
      if (hpcz::gpu_available()) {  // the log transform's side sections: specials, both signs, patches
        o.backend = hpcz::Backend::gpu;
        CHECK_MSG(hpcz::compress(raw.data(), t, {n}, o) == a,
                  hpcz::codec_name(codec) << " pw_rel " << r << ": GPU and CPU archives differ");
        std::vector<uint8_t> gback;
        hpcz::decompress(a.data(), a.size(), gback, hpcz::Backend::gpu);
        CHECK_MSG(gback == back, hpcz::codec_name(codec) << " pw_rel " << r << ": GPU and CPU decodes differ");
      }
    }
  }
}

// Real fields at 1e-2, 1e-3, 1e-4: every value within r |x|, the ratio reported, CPU and GPU alike.
TEST(roundtrip_pw_rel_real_fields) {
  const auto fields = real_fields();
  REQUIRE(!fields.empty());
  for (const Field& f : fields)
  for (hpcz::Codec codec : {hpcz::Codec::fast, hpcz::Codec::ratio, hpcz::Codec::interp}) {
    for (double r : {1e-2, 1e-3, 1e-4}) {
      hpcz::Options o;
      o.mode = hpcz::BoundMode::pw_rel;
      o.bound = r;
      o.codec = codec;
      o.backend = hpcz::Backend::cpu;
      const auto a = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
      std::vector<uint8_t> back;
      hpcz::decompress(a.data(), a.size(), back, hpcz::Backend::cpu);
      uint64_t bad = 0;
      if (f.dtype == hpcz::DType::f32) {
        std::vector<float> x(f.n());
        std::memcpy(x.data(), f.bytes.data(), f.bytes.size());
        bad = pw_violations(x, back, r);
      } else {
        std::vector<double> x(f.n());
        std::memcpy(x.data(), f.bytes.data(), f.bytes.size());
        bad = pw_violations(x, back, r);
      }
      CHECK_MSG(bad == 0, f.name << " pw_rel " << r << ": " << bad << " values outside r |x|");
      CHECK_MSG(a.size() < f.bytes.size(), f.name << " pw_rel " << r << ": no smaller than the input");
      if (hpcz::gpu_available()) {
        o.backend = hpcz::Backend::gpu;
        CHECK_MSG(hpcz::compress(f.bytes.data(), f.dtype, f.dims, o) == a,
                  f.name << " " << hpcz::codec_name(codec) << " pw_rel " << r << ": GPU and CPU archives differ");
        std::vector<uint8_t> gback;
        hpcz::decompress(a.data(), a.size(), gback, hpcz::Backend::gpu);
        CHECK_MSG(gback == back, f.name << " " << hpcz::codec_name(codec) << " pw_rel " << r << ": GPU and CPU decodes differ");
      }
      std::fprintf(stderr, "  %-44s %-6s pw_rel %-6g CR %6.2f\n", f.name.c_str(), hpcz::codec_name(codec), r,
                   double(f.bytes.size()) / double(a.size()));
    }
  }
}

// pw_rel requests the library refuses, and archives that claim it wrongly.
TEST(corrupt_pw_rel_refusals) {
  const float v[4] = {1, 2, 3, 4};
  auto refused = [&](hpcz::Options o) {
    try {
      hpcz::compress(v, hpcz::DType::f32, {4}, o);
    } catch (const hpcz::Error& e) {
      return e.code() == hpcz::ErrorCode::invalid_argument;
    }
    return false;
  };
  hpcz::Options o;
  o.mode = hpcz::BoundMode::pw_rel;
  o.backend = hpcz::Backend::cpu;
  for (double r : {0.0, 1.0, -1e-3, 2.0}) {
    o.bound = r;
    CHECK_MSG(refused(o), "pw_rel " << r << " accepted");
  }
  o.bound = 1e-7;  // below the log2 transform's smallest factor
  o.codec = hpcz::Codec::ratio;
  CHECK(refused(o));
  o.codec = hpcz::Codec::interp;
  CHECK(refused(o));
  // A log-transform archive: its version, factor, bound and step are checked against each other.
  o.bound = 1e-3;
  const auto logged = hpcz::compress(v, hpcz::DType::f32, {4}, o);
  CHECK(sealed_decode_error(logged) == 0);
  auto b = logged;
  b[hpcz::format::kOffVersion] = 7;
  CHECK(sealed_decode_error(b) == int(hpcz::ErrorCode::corrupt_archive));
  b = logged;
  hpcz::format::store_f64_le(&b[hpcz::format::kOffEbAbs], 1e-3);  // eb_abs is the logs' bound
  CHECK(sealed_decode_error(b) == int(hpcz::ErrorCode::corrupt_archive));
  b = logged;
  hpcz::format::store_f64_le(&b[hpcz::format::kOffBound], 1e-7);
  CHECK(sealed_decode_error(b) == int(hpcz::ErrorCode::corrupt_archive));
  o.codec = hpcz::Codec::fast;
  const auto good = hpcz::compress(v, hpcz::DType::f32, {4}, o);
  CHECK(sealed_decode_error(good) == 0);
  auto a = good;
  hpcz::format::store_f64_le(&a[hpcz::format::kOffStep], 3.0);  // not the width the factor gives
  CHECK(sealed_decode_error(a) == int(hpcz::ErrorCode::corrupt_archive));
  a = good;
  hpcz::format::store_f64_le(&a[hpcz::format::kOffEbAbs], 2e-3);  // eb_abs is the factor
  CHECK(sealed_decode_error(a) == int(hpcz::ErrorCode::corrupt_archive));
  a = good;
  a[hpcz::format::kOffVersion] = 5;
  CHECK(sealed_decode_error(a) == int(hpcz::ErrorCode::corrupt_archive));
}

// ---- quality targets ------------------------------------------------------------------------------------

namespace {
// The PSNR of y against x over the finite, non-fill values, in long double (infinite where exact).
template <class T> long double psnr_of(const T* x, const T* y, uint64_t n) {
  long double mn = 0, mx = 0, sse = 0;
  uint64_t k = 0;
  for (uint64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) continue;
    mn = k ? std::min(mn, (long double)x[i]) : x[i];
    mx = k ? std::max(mx, (long double)x[i]) : x[i];
    const long double d = (long double)y[i] - (long double)x[i];
    sse += d * d;
    ++k;
  }
  if (sse == 0) return std::numeric_limits<long double>::infinity();
  return 20 * std::log10(mx - mn) - 10 * std::log10(sse / k);
}
long double psnr_of(const Field& f, const std::vector<uint8_t>& back) {
  return f.dtype == hpcz::DType::f32
             ? psnr_of(reinterpret_cast<const float*>(f.bytes.data()), reinterpret_cast<const float*>(back.data()), f.n())
             : psnr_of(reinterpret_cast<const double*>(f.bytes.data()), reinterpret_cast<const double*>(back.data()), f.n());
}
}  // namespace

// PSNR and NRMSE targets on real fields in every codec: met (measured here, apart from the library),
// the PSNR recorded in the archive a lower bound of it, within 0.1 dB, and the same bytes on the GPU.
TEST(roundtrip_quality_targets_real_fields) {
  const auto fields = real_fields();
  REQUIRE(!fields.empty());
  uint64_t coded = 0;
  for (const Field& f : fields) {
    for (hpcz::Codec codec : {hpcz::Codec::fast, hpcz::Codec::ratio, hpcz::Codec::interp}) {
      for (const auto& [mode, bound] : {std::pair{hpcz::BoundMode::psnr, 40.0}, std::pair{hpcz::BoundMode::psnr, 70.0},
                                        std::pair{hpcz::BoundMode::nrmse, 1e-4}}) {
        hpcz::Options o;
        o.mode = mode;
        o.bound = bound;
        o.codec = codec;
        o.backend = hpcz::Backend::cpu;
        const auto a = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
        const auto info = hpcz::inspect_header(a.data(), a.size());
        std::vector<uint8_t> back;
        hpcz::decompress(a.data(), a.size(), back, hpcz::Backend::cpu);
        const long double target = mode == hpcz::BoundMode::psnr ? bound : -20 * std::log10((long double)bound);
        const long double got = psnr_of(f, back);
        const std::string what = f.name + " " + hpcz::codec_name(codec) + " " + hpcz::bound_mode_name(mode) + " " +
                                 std::to_string(bound);
        CHECK_MSG(info.version == 6 && info.mode == mode && info.bound == bound && info.psnr_achieved, what << ": header");
        CHECK_MSG(got >= target, what << ": PSNR " << double(got) << " below the target");
        CHECK_MSG(*info.psnr_achieved >= double(target) && *info.psnr_achieved <= got + 1e-9L &&
                      (std::isinf(got) ? std::isinf(*info.psnr_achieved) : *info.psnr_achieved > got - 0.1L),
                  what << ": recorded " << *info.psnr_achieved << " against " << double(got));
        CHECK_MSG(strict_check(f.bytes, back, f.dtype, info.eb_abs).violations == 0, what << ": outside eb_abs");
        if (hpcz::gpu_available()) {
          o.backend = hpcz::Backend::gpu;
          CHECK_MSG(hpcz::compress(f.bytes.data(), f.dtype, f.dims, o) == a, what << ": GPU and CPU archives differ");
        }
        ++coded;
      }
    }
  }
  std::fprintf(stderr, "  %llu archives at their quality targets\n", (unsigned long long)coded);
}

// Targets the library refuses, and paths that cannot meet a whole-array target (a device call, a
// batch); a quality archive marked below version 6, or a rel archive with bytes 13..15 set, is corrupt.
TEST(corrupt_quality_refusals) {
  const auto fields = real_fields();
  REQUIRE(!fields.empty());
  const Field& f = fields.front();
  auto refused = [&](hpcz::Options o) {
    try {
      hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
    } catch (const hpcz::Error& e) {
      return e.code() == hpcz::ErrorCode::invalid_argument;
    }
    return false;
  };
  hpcz::Options o;
  o.backend = hpcz::Backend::cpu;
  for (auto [mode, bound] : {std::pair{hpcz::BoundMode::psnr, 0.0}, std::pair{hpcz::BoundMode::psnr, -3.0},
                             std::pair{hpcz::BoundMode::nrmse, 0.0}, std::pair{hpcz::BoundMode::nrmse, 1.0}}) {
    o.mode = mode;
    o.bound = bound;
    CHECK_MSG(refused(o), hpcz::bound_mode_name(mode) << " " << bound << " accepted");
  }
  o.mode = hpcz::BoundMode::psnr;
  o.bound = 50;
  std::vector<hpcz::ArrayRef> arrays{{f.bytes.data(), f.dtype, f.dims}};
  bool batch_refused = false;
  try {
    std::vector<std::vector<uint8_t>> archives;
    const auto st = hpcz::compress_batch(arrays, o, archives);
    batch_refused = !st.empty() && st[0].code == int(hpcz::ErrorCode::invalid_argument);
  } catch (const hpcz::Error& e) {
    batch_refused = e.code() == hpcz::ErrorCode::invalid_argument;
  }
  CHECK_MSG(batch_refused, "a batch took a whole-array target");
  bool device_refused = false;
  try {
    hpcz::compress_device_workspace_size(f.dtype, f.dims, o);
  } catch (const hpcz::Error& e) {
    device_refused = e.code() == hpcz::ErrorCode::invalid_argument ||
                     (!hpcz::gpu_available() && e.code() == hpcz::ErrorCode::backend_unavailable);  // a CPU build
  }
  CHECK_MSG(device_refused, "a device call took a whole-array target");
  const auto good = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
  CHECK(sealed_decode_error(good) == 0);
  auto a = good;
  a[hpcz::format::kOffVersion] = 5;
  CHECK(sealed_decode_error(a) == int(hpcz::ErrorCode::corrupt_archive));
  hpcz::Options rel;
  rel.backend = hpcz::Backend::cpu;
  a = hpcz::compress(f.bytes.data(), f.dtype, f.dims, rel);
  a[hpcz::format::kOffReserved + 1] = 1;
  CHECK(sealed_decode_error(a) == int(hpcz::ErrorCode::corrupt_archive));
}

// Quality targets on f64 fields scaled to the ends of the doubles (tiny ranges, huge ones, and both
// signs near DBL_MAX, whose max - min overflows): met, and recorded as the finite value they are.
TEST(adv_quality_extreme_magnitudes) {
  const auto fields = real_fields();
  REQUIRE(!fields.empty());
  const Field& f = fields.front();
  const uint64_t n = std::min<uint64_t>(f.n(), 65536);
  for (double scale : {1e-290, 1e-200, 1e150, 1e300, -1.0}) {
    std::vector<double> v(n);
    double mx = 0;
    for (uint64_t i = 0; i < n; ++i) {
      v[i] = f.dtype == hpcz::DType::f32 ? double(reinterpret_cast<const float*>(f.bytes.data())[i])
                                         : reinterpret_cast<const double*>(f.bytes.data())[i];
      mx = std::max(mx, std::fabs(v[i]));
    }
    for (uint64_t i = 0; i < n; ++i)  // scale -1: values of both signs filling the doubles' range
      v[i] = scale > 0 ? v[i] * scale : (v[i] / mx) * std::numeric_limits<double>::max() * (i % 2 ? -1 : 1);
    hpcz::Options o;
    o.mode = hpcz::BoundMode::psnr;
    o.bound = 60;
    o.backend = hpcz::Backend::cpu;
    const auto a = hpcz::compress(v.data(), hpcz::DType::f64, {n}, o);
    const auto info = hpcz::inspect_header(a.data(), a.size());
    std::vector<uint8_t> back;
    hpcz::decompress(a.data(), a.size(), back, hpcz::Backend::cpu);
    const long double got = psnr_of(v.data(), reinterpret_cast<const double*>(back.data()), n);
    CHECK_MSG(got >= 60 && std::isfinite(*info.psnr_achieved) && *info.psnr_achieved <= got + 1e-9L &&
                  *info.psnr_achieved > got - 0.1L && a.size() < v.size() * 8,
              "scale " << scale << ": PSNR " << double(got) << ", recorded " << *info.psnr_achieved << ", "
                       << a.size() << " bytes");
  }
}
