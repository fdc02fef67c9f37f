// Storage types (float16, bfloat16, the integers): coded as their code type under a bound that stays
// strict once narrowed. Their conversions, the guarantee on arrays made from the real fields in every
// codec (CPU and GPU bytes alike), each type's extremes, the refusals and the front-end paths.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <algorithm>
#include <random>
#include <tuple>

#include "common.hpp"
#include "common/storage.hpp"
#include "format/header.hpp"
#include "hpcz/hpcz.h"
#include "quant/bound.hpp"

#ifdef HPCZ_HAS_CUDA
#include <cuda_runtime.h>
#endif

using namespace testutil;
using hpcz::DType;
using hpcz::detail::BFloat16;
using hpcz::detail::Half;
using hpcz::detail::StorageTraits;

namespace {

// A storage array's value i widened to double (exact for every storage type).
double widened(const std::vector<uint8_t>& a, DType t, uint64_t i) {
  return hpcz::detail::dispatch_storage(t, [&](auto tr) {
    using Tr = decltype(tr);
    using S = typename Tr::storage_type;
    S s;
    std::memcpy(&s, a.data() + i * sizeof(S), sizeof(S));
    return double(Tr::widen(s));
  });
}

// The absolute bound a request asks for on a storage array (rel: of max - min of the finite, non-fill
// values), in long double: every decoded value must be within it.
long double asked_bound(const std::vector<uint8_t>& a, DType t, const hpcz::Options& o) {
  if (o.mode == hpcz::BoundMode::abs) return o.bound;
  if (o.mode == hpcz::BoundMode::abs_and_rel || o.mode == hpcz::BoundMode::abs_or_rel) {
    hpcz::Options rel = o;
    rel.mode = hpcz::BoundMode::rel;
    const long double r = asked_bound(a, t, rel), b = o.abs_bound;
    return o.mode == hpcz::BoundMode::abs_and_rel ? std::min(r, b) : std::max(r, b);
  }
  const uint64_t n = a.size() / hpcz::dtype_size(t);
  long double mn = 0, mx = 0;
  bool any = false;
  for (uint64_t i = 0; i < n; ++i) {
    const double v = widened(a, t, i);
    if (!std::isfinite(v) || (o.fill && v == *o.fill)) continue;
    mn = any ? std::min<long double>(mn, v) : v;
    mx = any ? std::max<long double>(mx, v) : v;
    any = true;
  }
  return any ? (long double)o.bound * (mx - mn) : 0.0L;
}

// Values outside the bound: finite, non-fill values off by more than eb (exactly: the widened values
// are doubles, their difference is exact in long double); the others, and every value under eb == 0,
// as their bits.
uint64_t violations(const std::vector<uint8_t>& x, const std::vector<uint8_t>& y, DType t, long double eb,
                    const std::optional<double>& fill, double pw = 0) {
  if (x.size() != y.size()) return ~0ull;
  const size_t w = hpcz::dtype_size(t);
  const uint64_t n = x.size() / w;
  uint64_t bad = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const double a = widened(x, t, i), b = widened(y, t, i);
    if (!std::isfinite(a) || (fill && a == *fill) || eb == 0 || (pw > 0 && a == 0)) {
      bad += std::memcmp(&x[i * w], &y[i * w], w) != 0;
      continue;
    }
    // pw: within pw x |a| (the product in long double, 64 bits for 53 x 53: a hair generous at most)
    bad += !(std::fabs((long double)b - (long double)a) <= (pw > 0 ? (long double)pw * std::fabs((long double)a) : eb));
  }
  return bad;
}

// Arrays of each storage type made from a real field: float16 and bfloat16 its values narrowed (float16
// clamped to its range), the integers its values mapped onto part of the type's range, and a uint8
// mask (above the median: 1).
template <class T> std::vector<double> values_of(const Field& f) {
  std::vector<double> v(f.n());
  const T* p = reinterpret_cast<const T*>(f.bytes.data());
  for (uint64_t i = 0; i < f.n(); ++i) v[i] = double(p[i]);
  return v;
}
std::vector<uint8_t> storage_array(const Field& f, DType t, bool mask = false) {
  const std::vector<double> v = f.dtype == DType::f64 ? values_of<double>(f) : values_of<float>(f);
  double mn = INFINITY, mx = -INFINITY;
  for (double x : v)
    if (std::isfinite(x)) mn = std::min(mn, x), mx = std::max(mx, x);
  std::vector<double> sorted;
  if (mask) {
    sorted = v;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  }
  return hpcz::detail::dispatch_storage(t, [&](auto tr) {
    using Tr = decltype(tr);
    using S = typename Tr::storage_type;
    using C = typename Tr::code_type;
    std::vector<uint8_t> out(v.size() * sizeof(S));
    for (size_t i = 0; i < v.size(); ++i) {
      S s;
      if constexpr (Tr::is_integer) {
        // A quarter of the type's range around its middle (int32, uint32: 2^20 levels), as a
        // digitiser's counts (int64, uint64: around 0 and 2^19, within the +-2^53 they take); the
        // mask: 0 and 1.
        const double span = std::min(Tr::highest - Tr::lowest, 1048576.0) * 0.25;
        const double mid = Tr::may_round ? (Tr::lowest < 0 ? 0.0 : 524288.0) : 0.5 * (Tr::lowest + Tr::highest);
        const double u = mx > mn ? (v[i] - mn) / (mx - mn) : 0.5;
        s = mask ? S(v[i] > sorted[sorted.size() / 2] ? 1 : 0) : Tr::narrow(C(std::round(mid + (u - 0.5) * span)));
      } else {
        s = Tr::narrow(C(v[i]));
      }
      std::memcpy(&out[i * sizeof(S)], &s, sizeof(S));
    }
    return out;
  });
}

// The requests each type is coded under: lossless and a few bounds for the integers, rel bounds (and an
// abs one) for the half types.
std::vector<hpcz::Options> storage_requests(DType t) {
  std::vector<hpcz::Options> out;
  auto add = [&](hpcz::BoundMode m, double b) {
    hpcz::Options o;
    o.mode = m;
    o.bound = b;
    out.push_back(o);
  };
  if (hpcz::quant::storage_is_integer(t)) {
    add(hpcz::BoundMode::abs, 0);
    add(hpcz::BoundMode::abs, 2);
    add(hpcz::BoundMode::rel, 1e-3);
  } else {
    add(hpcz::BoundMode::rel, 1e-2);
    add(hpcz::BoundMode::rel, 1e-3);
    add(hpcz::BoundMode::abs, 0);
    add(hpcz::BoundMode::abs, 0.05);
  }
  return out;
}

constexpr DType kStorageTypes[] = {DType::f16, DType::bf16, DType::i8,  DType::u8,  DType::i16,
                                   DType::u16, DType::i32,  DType::u32, DType::i64, DType::u64};

#ifdef HPCZ_HAS_CUDA
// Device memory freed at scope end.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { REQUIRE(cudaMalloc(&p, bytes ? bytes : 1) == cudaSuccess); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};
std::vector<uint8_t> to_host(const void* d, size_t n) {
  std::vector<uint8_t> h(n);
  if (n) REQUIRE(cudaMemcpy(h.data(), d, n, cudaMemcpyDeviceToHost) == cudaSuccess);
  return h;
}

// compress_device and decompress_device of a device-resident storage array (widened and narrowed on
// the GPU) against the host calls' archive a and values back (int64, uint64: decompress_device only).
void device_calls_match(const std::string& what, const std::vector<uint8_t>& x, DType t, const std::vector<uint64_t>& dims,
                        const hpcz::Options& o, const std::vector<uint8_t>& a, const std::vector<uint8_t>& back) {
  const uint64_t n = x.size() / hpcz::dtype_size(t);
  const size_t cap = hpcz::max_compressed_size(n, t), ws = hpcz::compress_device_workspace_size(t, dims, o);
  DeviceBuffer d_x(x.size()), d_a(cap), d_ws(ws), d_size(8), d_status(4), d_back(x.size());
  REQUIRE(cudaMemcpy(d_x.p, x.data(), x.size(), cudaMemcpyHostToDevice) == cudaSuccess);
  if (!hpcz::format::is_wide_integer(t)) {  // int64, uint64: compress_device refuses them (their values unchecked)
    hpcz::compress_device(d_x.p, t, dims, o, d_a.p, cap, static_cast<uint64_t*>(d_size.p), d_ws.p, ws, nullptr);
    uint64_t size = 0;
    REQUIRE(cudaMemcpy(&size, d_size.p, 8, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK_MSG(size == a.size() && to_host(d_a.p, std::min<uint64_t>(size, cap)) == a,
              what << ": compress_device's archive differs from compress()'s");
  }
  const hpcz::ArchiveInfo info = hpcz::inspect(a.data(), a.size());
  const size_t dws = hpcz::decompress_device_workspace_size(info);
  DeviceBuffer d_dws(dws);
  REQUIRE(cudaMemcpy(d_a.p, a.data(), a.size(), cudaMemcpyHostToDevice) == cudaSuccess);
  hpcz::decompress_device(info, d_a.p, d_back.p, static_cast<uint32_t*>(d_status.p), d_dws.p, dws, nullptr);
  uint32_t status = 1;
  REQUIRE(cudaMemcpy(&status, d_status.p, 4, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK_MSG(status == 0 && to_host(d_back.p, x.size()) == back, what << ": decompress_device's values differ");
}
#endif

// Codes a storage array on the CPU, checks the guarantee, the header and (with a GPU) the GPU's bytes.
// Returns the archive.
std::vector<uint8_t> coded_and_checked(const std::string& what, const std::vector<uint8_t>& x, DType t,
                                       const std::vector<uint64_t>& dims, hpcz::Options o, uint64_t& gpu_checked) {
  o.backend = hpcz::Backend::cpu;
  const auto a = hpcz::compress(x.data(), t, dims, o);
  const hpcz::ArchiveInfo info = hpcz::inspect(a.data(), a.size());
  const bool pw = o.mode == hpcz::BoundMode::pw_rel, combined = hpcz::quant::mode_combined(o.mode);
  const uint16_t version = hpcz::format::is_wide_integer(t) ? 9 : (pw || combined ? 8 : 7);
  CHECK_MSG(info.dtype == t && info.version == version && info.mode == o.mode && info.bound == o.bound,
            what << ": header dtype " << int(info.dtype) << " version " << info.version);
  std::vector<uint8_t> back;
  hpcz::decompress(a.data(), a.size(), back, hpcz::Backend::cpu);
  const uint64_t bad = violations(x, back, t, pw ? 1.0L : asked_bound(x, t, o), o.fill, pw ? o.bound : 0.0);
  CHECK_MSG(bad == 0, what << ": " << bad << " values outside the bound");
  if (hpcz::gpu_available()) {
    o.backend = hpcz::Backend::gpu;
    const auto g = hpcz::compress(x.data(), t, dims, o);
    CHECK_MSG(g == a, what << ": GPU and CPU archives differ");
    std::vector<uint8_t> gback;
    hpcz::decompress(a.data(), a.size(), gback, hpcz::Backend::gpu);
    CHECK_MSG(gback == back, what << ": GPU and CPU decodes differ");
#ifdef HPCZ_HAS_CUDA
    if (!o.second_stage) device_calls_match(what, x, t, dims, o, a, back);
#endif
    ++gpu_checked;
  }
  return a;
}

}  // namespace

// pw_rel (the code factor: half the factor, strict once narrowed) and the combined modes on every
// storage type, in every codec, on the first real field (the extremes: adv_storage_types_extremes):
// version 8, every value within its bound, CPU and GPU bytes alike where the GPU codes them.
TEST(roundtrip_storage_types_pw_rel_and_combined) {
  const auto fields = real_fields();
  REQUIRE(!fields.empty());
  uint64_t gpu_checked = 0, coded = 0;
  for (DType t : kStorageTypes) {
    const std::vector<uint8_t> x = storage_array(fields.front(), t);
    for (hpcz::Codec codec : {hpcz::Codec::fast, hpcz::Codec::ratio, hpcz::Codec::interp}) {
      std::vector<hpcz::Options> requests;
      for (double r : {1e-2, 1e-3}) {
        hpcz::Options o;
        o.mode = hpcz::BoundMode::pw_rel;
        o.bound = r;
        requests.push_back(o);
      }
      for (hpcz::BoundMode m : {hpcz::BoundMode::abs_and_rel, hpcz::BoundMode::abs_or_rel}) {
        hpcz::Options o;
        o.mode = m;
        o.bound = 1e-3;
        o.abs_bound = hpcz::quant::storage_is_integer(t) ? 3 : 0.05;
        requests.push_back(o);
      }
      for (hpcz::Options o : requests) {
        o.codec = codec;
        const std::string what = std::string(hpcz::dtype_name(t)) + " " + hpcz::codec_name(codec) + " " +
                                 hpcz::bound_mode_name(o.mode) + " " + std::to_string(o.bound);
        const auto a = coded_and_checked(what, x, t, fields.front().dims, o, gpu_checked);
        if (o.mode == hpcz::BoundMode::pw_rel && o.bound == 1e-2)
          std::fprintf(stderr, "  %-8s %-6s pw_rel 0.01 CR %7.2f\n", hpcz::dtype_name(t), hpcz::codec_name(codec),
                       double(x.size()) / double(a.size()));
        ++coded;
      }
    }
  }
  std::fprintf(stderr, "  %llu archives within their bounds, %llu identical on the GPU\n", (unsigned long long)coded,
               (unsigned long long)gpu_checked);
}

// Widening then narrowing gives every float16 and bfloat16 pattern back (NaN payloads, -0, subnormals);
// narrowing rounds to the nearest value, ties to even, and clamps into the finite range; integers round
// and clamp (NaN: 0).
TEST(unit_storage_conversions_exact) {
  uint32_t bad = 0;
  for (uint32_t b = 0; b < 65536; ++b) {
    bad += StorageTraits<Half>::narrow(StorageTraits<Half>::widen(Half{uint16_t(b)})).bits != b;
    bad += StorageTraits<BFloat16>::narrow(StorageTraits<BFloat16>::widen(BFloat16{uint16_t(b)})).bits != b;
  }
  CHECK_MSG(bad == 0, bad << " float16/bfloat16 patterns not given back");
  // Nearest, ties to even: the value halfway between 1 and the next float16 (1 + 2^-10) goes to 1; a hair
  // above it, up.
  CHECK(hpcz::detail::float_to_half(1.0f + 0x1p-11f) == 0x3c00);
  CHECK(hpcz::detail::float_to_half(1.0f + 0x1p-11f + 0x1p-20f) == 0x3c01);
  CHECK(hpcz::detail::float_to_half(1.0f + 3 * 0x1p-11f) == 0x3c02);  // tie between 0x3c01 and 0x3c02: even
  CHECK(hpcz::detail::float_to_half(0x1p-25f) == 0x0000);              // tie with the smallest subnormal: 0
  CHECK(hpcz::detail::float_to_half(0x1.8p-25f) == 0x0001);
  CHECK(hpcz::detail::float_to_half(-1e9f) == 0xfbff);  // clamped to -65504, not -Inf
  CHECK(hpcz::detail::float_to_half(-INFINITY) == 0xfc00);
  CHECK(hpcz::detail::float_to_bfloat16(1.0f + 0x1p-8f) == 0x3f80);  // tie: even
  CHECK(hpcz::detail::float_to_bfloat16(1.0f + 3 * 0x1p-8f) == 0x3f82);
  CHECK(hpcz::detail::float_to_bfloat16(3.4e38f) == 0x7f7f);
  // Every float16 and bfloat16 value as a float, then the nearest: against a search of the neighbours.
  std::mt19937 rng(7);
  uint32_t far = 0;
  for (int k = 0; k < 200000; ++k) {
    const float f = std::ldexp(std::uniform_real_distribution<float>(-1, 1)(rng), int(rng() % 40) - 26);
    const uint16_t h = hpcz::detail::float_to_half(f);
    const double got = std::fabs(double(hpcz::detail::half_to_float(h)) - f);
    for (int d : {-1, 1}) {
      const uint16_t nb = uint16_t(h + d);
      if ((nb & 0x7c00) == 0x7c00 || ((nb ^ h) & 0x8000)) continue;
      far += std::fabs(double(hpcz::detail::half_to_float(nb)) - f) < got;
    }
  }
  CHECK_MSG(far == 0, far << " float16 narrowings not the nearest");
  CHECK(StorageTraits<int8_t>::narrow(-129.4f) == -128 && StorageTraits<int8_t>::narrow(126.6f) == 127);
  CHECK(StorageTraits<uint8_t>::narrow(-3.0f) == 0 && StorageTraits<uint8_t>::narrow(255.6f) == 255);
  CHECK(StorageTraits<int16_t>::narrow(NAN) == 0 && StorageTraits<uint32_t>::narrow(5e9) == 4294967295u);
  CHECK(StorageTraits<int32_t>::narrow(-2147483648.6) == std::numeric_limits<int32_t>::min());
  // The 64-bit types: their limits are not doubles (2^63 - 1, 2^64 - 1); beyond them, the limits.
  CHECK(StorageTraits<int64_t>::narrow(0x1p63) == std::numeric_limits<int64_t>::max() &&
        StorageTraits<int64_t>::narrow(1e300) == std::numeric_limits<int64_t>::max() &&
        StorageTraits<int64_t>::narrow(-0x1p63) == std::numeric_limits<int64_t>::min() &&
        StorageTraits<int64_t>::narrow(-0x1p53 - 2.0) == -(int64_t(1) << 53) - 2 &&
        StorageTraits<int64_t>::narrow(-7.5) == -8 && StorageTraits<int64_t>::narrow(NAN) == 0);
  CHECK(StorageTraits<uint64_t>::narrow(0x1p64) == std::numeric_limits<uint64_t>::max() &&
        StorageTraits<uint64_t>::narrow(0x1p63) == uint64_t(1) << 63 && StorageTraits<uint64_t>::narrow(-1.0) == 0 &&
        StorageTraits<uint64_t>::narrow(9007199254740993.0) == uint64_t(1) << 53);
  CHECK(StorageTraits<int64_t>::widens_exactly(int64_t(1) << 53) && StorageTraits<int64_t>::widens_exactly(-(int64_t(1) << 53)) &&
        !StorageTraits<int64_t>::widens_exactly((int64_t(1) << 53) + 1) &&
        !StorageTraits<int64_t>::widens_exactly(std::numeric_limits<int64_t>::min()) &&
        StorageTraits<uint64_t>::widens_exactly(uint64_t(1) << 53) && !StorageTraits<uint64_t>::widens_exactly((uint64_t(1) << 53) + 1));
}

// int64 and uint64 arrays with a value beyond +-2^53 (no float64 of its own) are refused by name, on
// every host path; at 2^53 itself they code; the device calls refuse the types (they cannot check).
TEST(adv_wide_integers_beyond_2_53_refused) {
  const uint64_t n = 5000;
  std::vector<int64_t> a(n);
  for (uint64_t i = 0; i < n; ++i) a[i] = int64_t(i * 37 % 1001) - 500;
  a[17] = int64_t(1) << 53;
  a[18] = -(int64_t(1) << 53);
  hpcz::Options o;
  o.mode = hpcz::BoundMode::abs;
  o.bound = 0;
  for (hpcz::Codec c : {hpcz::Codec::fast, hpcz::Codec::ratio, hpcz::Codec::interp}) {
    o.codec = c;
    const std::vector<uint8_t> z = hpcz::compress(a.data(), DType::i64, {n}, o);
    std::vector<int64_t> back(n);
    hpcz::decompress(z.data(), z.size(), back.data(), n * 8);
    CHECK_MSG(back == a, "int64 at +-2^53, lossless, codec " << int(c));
    CHECK(hpcz::inspect(z.data(), z.size()).version == 9);
  }
  a[4321] = (int64_t(1) << 53) + 1;
  try {
    (void)hpcz::compress(a.data(), DType::i64, {n}, o);
    CHECK_MSG(false, "an int64 beyond 2^53 was coded");
  } catch (const hpcz::Error& e) {
    CHECK(e.code() == hpcz::ErrorCode::invalid_argument && std::string(e.what()).find("index 4321") != std::string::npos);
  }
  std::vector<uint8_t> buf(hpcz::max_compressed_size(n, DType::i64));  // into a buffer: the GPU's own path
  for (hpcz::Backend b : {hpcz::Backend::cpu, hpcz::Backend::automatic}) {
    hpcz::Options ob = o;
    ob.backend = b;
    int code = 0;
    try {
      (void)hpcz::compress(a.data(), DType::i64, {n}, ob, buf.data(), buf.size());
    } catch (const hpcz::Error& e) {
      code = int(e.code());
    }
    CHECK_MSG(code == int(hpcz::ErrorCode::invalid_argument), "an int64 beyond 2^53 was coded into a buffer");
  }
  std::vector<uint64_t> u(n, 7);
  u[99] = std::numeric_limits<uint64_t>::max();
  const std::vector<hpcz::ArrayRef> arrays = {{u.data(), DType::u64, {n}}, {a.data(), DType::i64, {n}}};
  std::vector<std::vector<uint8_t>> archives;
  const std::vector<hpcz::ItemStatus> st = hpcz::compress_batch(arrays, o, archives);
  const int bad = int(hpcz::ErrorCode::invalid_argument);
  CHECK(st.size() == 2 && st[0].code == bad && st[1].code == bad && st[0].message.find("index 99") != std::string::npos);
#ifdef HPCZ_HAS_CUDA
  if (hpcz::gpu_available()) {
    bool refused = false;
    try {
      hpcz::compress_device(nullptr, DType::u64, {n}, o, nullptr, 0, nullptr, nullptr, 0, nullptr);
    } catch (const hpcz::Error& e) {
      refused = e.code() == hpcz::ErrorCode::invalid_argument;
    }
    CHECK(refused);
  }
#endif
}

// The code bound: integers just below floor(eb) + 1/2; half types eb / 2 at least, eb less the half
// spacing at the top of the range where that is larger; 0 stays 0 (the values' bits).
TEST(unit_storage_code_bound) {
  using hpcz::quant::code_bound;
  CHECK(code_bound(DType::i16, 0.0, true, 0, 100) < 0.5 && code_bound(DType::i16, 0.0, true, 0, 100) > 0.4999);
  CHECK(code_bound(DType::u8, 2.7, true, 0, 100) < 2.5 && code_bound(DType::u8, 2.7, true, 0, 100) > 2.4999);
  CHECK(code_bound(DType::f32, 0.3, true, 0, 100) == 0.3);
  CHECK(code_bound(DType::f16, 0.0, true, 0, 100) == 0.0);
  // float16 values up to 1 + 0.01: spacing 2^-10 above 1, half of it 2^-11.
  const double c = code_bound(DType::f16, 0.01, true, -1.0, 1.0);
  CHECK(c < 0.01 - 0x1p-11 && c > 0.01 - 0x1p-11 - 1e-15);
  // A bound below the spacing at the top: eb / 2.
  CHECK(code_bound(DType::bf16, 1e-3, true, 0.0, 1000.0) == 0.5e-3);
  CHECK(code_bound(DType::f16, 1.0, true, 0.0, 60000.0) == 0.5);
  // No value near zero: below half the smallest gap next to a value >= min |x| (the values come back
  // exact), whatever eb; at a binade's first value the gap below is half as wide.
  CHECK(code_bound(DType::f16, 0.01, true, 240.0, 310.0) == hpcz::quant::below(0.0625));
  CHECK(code_bound(DType::f16, 0.0, true, 256.0, 300.0) == hpcz::quant::below(0.0625));
  CHECK(code_bound(DType::bf16, 1e-3, true, -5.0, -2.0) == hpcz::quant::below(0x1p-8));
  CHECK(code_bound(DType::f16, 0.0, true, -1.0, 300.0) == 0.0);
  CHECK(code_bound(DType::f16, 40.0, true, 240.0, 310.0) == 40.0 - 0.125 - 0x1p-47);
  // Every float16 and bfloat16 value at or above m (m: powers of two, subnormals, others), moved by the
  // largest code error the bound allows (a float within it), narrows back to itself.
  uint64_t moved = 0, off = 0;
  for (DType t : {DType::f16, DType::bf16}) {
    for (uint16_t mb : {0x0001, 0x0200, 0x0400, 0x3c00, 0x3c01, 0x5bff, 0x7800, 0x0081, 0x3f80}) {
      const bool half = t == DType::f16;
      auto value = [&](uint16_t b) { return half ? hpcz::detail::half_to_float(b) : hpcz::detail::bfloat16_to_float(b); };
      auto bits = [&](float f) { return half ? hpcz::detail::float_to_half(f) : hpcz::detail::float_to_bfloat16(f); };
      const double m = value(mb), c = code_bound(t, 0.0, true, m, half ? 65504.0 : 3.0e38);
      if (!(c > 0)) continue;
      for (uint32_t b = mb; b < (half ? 0x7c00u : 0x7f80u); ++b) {
        const float x = value(uint16_t(b));
        for (int dir : {-1, 1}) {
          float y = float(double(x) + dir * c);
          if (std::fabs(double(y) - double(x)) > c) y = std::nextafter(y, x);
          off += bits(y) != b;
          ++moved;
        }
      }
    }
  }
  CHECK_MSG(off == 0 && moved > 100000, off << " of " << moved << " values moved within the exact bound narrow elsewhere");
}

// Arrays of every storage type made from the real fields, in every codec: every value within the bound
// asked for (integers at abs 0: exact), the archive version 7 with its dtype, CPU and GPU bytes alike.
TEST(roundtrip_storage_types_real_fields) {
  const auto fields = real_fields();
  REQUIRE(!fields.empty());
  uint64_t coded = 0, gpu_checked = 0;
  for (const Field& f : fields) {
    for (DType t : kStorageTypes) {
      const std::vector<uint8_t> x = storage_array(f, t);
      for (hpcz::Codec codec : {hpcz::Codec::fast, hpcz::Codec::ratio, hpcz::Codec::interp}) {
        for (hpcz::Options o : storage_requests(t)) {
          o.codec = codec;
          const std::string what = f.name + " " + hpcz::dtype_name(t) + " " + hpcz::codec_name(codec) + " " +
                                   hpcz::bound_mode_name(o.mode) + " " + std::to_string(o.bound);
          const auto a = coded_and_checked(what, x, t, f.dims, o, gpu_checked);
          if (f.name.rfind("climate-ncar", 0) == 0 && o.bound != 0 && codec != hpcz::Codec::interp)
            std::fprintf(stderr, "  %-8s %-6s %-3s %-6g CR %7.2f\n", hpcz::dtype_name(t), hpcz::codec_name(codec),
                         hpcz::bound_mode_name(o.mode), o.bound, double(x.size()) / double(a.size()));
          ++coded;
        }
      }
    }
    // A uint8 mask, lossless.
    const std::vector<uint8_t> m = storage_array(f, DType::u8, true);
    hpcz::Options o;
    o.mode = hpcz::BoundMode::abs;
    o.bound = 0;
    for (hpcz::Codec codec : {hpcz::Codec::fast, hpcz::Codec::ratio}) {
      o.codec = codec;
      coded_and_checked(f.name + " uint8 mask", m, DType::u8, f.dims, o, gpu_checked);
    }
  }
  std::fprintf(stderr, "  %llu storage-type archives within their bounds, %llu identical on the GPU\n",
               (unsigned long long)coded, (unsigned long long)gpu_checked);
}

// Each type's extremes: its smallest and largest values, zeros of both signs, float16 and bfloat16
// subnormals, NaN with payloads and Inf, a fill value, constant arrays and single values, under abs 0
// (every value itself) and loose bounds, in every codec.
TEST(adv_storage_types_extremes) {
  uint64_t gpu_checked = 0;
  for (DType t : kStorageTypes) {
    const size_t w = hpcz::dtype_size(t);
    std::vector<std::vector<uint8_t>> arrays;
    std::vector<uint64_t> specials;  // bit patterns
    if (t == DType::f16)
      specials = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7d23, 0xfe01, 0x3c00};
    else if (t == DType::bf16)
      specials = {0x0000, 0x8000, 0x0001, 0x807f, 0x0080, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffc3, 0x3f80};
    else
      hpcz::detail::dispatch_storage(t, [&](auto tr) {
        using Tr = decltype(tr);
        using S = typename Tr::storage_type;
        if constexpr (Tr::is_integer) {
          // int64, uint64: their extremes are those they take, +-2^53 (0 for uint64).
          const double lo = Tr::may_round ? (Tr::lowest < 0 ? -0x1p53 : 0.0) : Tr::lowest;
          const double hi = Tr::may_round ? 0x1p53 : Tr::highest;
          for (double v : {lo, hi, 0.0, 1.0, lo + 1, hi - 1, std::floor(hi / 3)}) {
            S s = S(v);
            uint64_t b = 0;
            std::memcpy(&b, &s, sizeof s);
            specials.push_back(b);
          }
        }
      });
    // Specials spread through a ramp (so that blocks mix them with coded values), all of them alone,
    // a constant array, a single value.
    std::vector<uint8_t> ramp(4096 * w);
    for (size_t i = 0; i < 4096; ++i) {
      uint64_t b = specials[(i * 7) % specials.size()];
      if (i % 5) b = hpcz::detail::dispatch_storage(t, [&](auto tr) {
          using Tr = decltype(tr);
          using S = typename Tr::storage_type;
          using C = typename Tr::code_type;
          const S s = Tr::narrow(C(Tr::is_integer ? double(i % 100) : std::sin(i * 0.01) * 3.0));
          uint64_t u = 0;
          std::memcpy(&u, &s, sizeof s);
          return u;
        });
      std::memcpy(&ramp[i * w], &b, w);
    }
    arrays.push_back(ramp);
    std::vector<uint8_t> only(specials.size() * w);
    for (size_t i = 0; i < specials.size(); ++i) std::memcpy(&only[i * w], &specials[i], w);
    arrays.push_back(only);
    arrays.push_back(std::vector<uint8_t>(1000 * w, 0));
    std::memcpy(arrays.back().data(), &specials.back(), w);
    std::vector<uint8_t> constant(300 * w);
    for (size_t i = 0; i < 300; ++i) std::memcpy(&constant[i * w], &specials.back(), w);
    arrays.push_back(constant);
    arrays.push_back(std::vector<uint8_t>(only.begin(), only.begin() + w));
    for (size_t k = 0; k < arrays.size(); ++k) {
      const auto& x = arrays[k];
      for (hpcz::Codec codec : {hpcz::Codec::fast, hpcz::Codec::ratio, hpcz::Codec::interp}) {
        for (double b : {0.0, 0.5, 3.0, 1e9}) {
          for (hpcz::BoundMode m : {hpcz::BoundMode::abs, hpcz::BoundMode::rel}) {
            hpcz::Options o;
            o.mode = m;
            o.bound = m == hpcz::BoundMode::rel ? std::min(b, 0.5) : b;
            o.codec = codec;
            const std::string what = std::string(hpcz::dtype_name(t)) + " array " + std::to_string(k) + " " +
                                     hpcz::codec_name(codec) + " " + hpcz::bound_mode_name(m) + " " + std::to_string(b);
            coded_and_checked(what, x, t, {x.size() / w}, o, gpu_checked);
          }
        }
        for (double r : {0.5, 1e-2, 1e-6}) {  // pw_rel, and abs_or_rel (abs 0.5 or the range's r)
          for (hpcz::BoundMode m : {hpcz::BoundMode::pw_rel, hpcz::BoundMode::abs_or_rel}) {
            hpcz::Options o;
            o.mode = m;
            o.bound = r;
            o.abs_bound = 0.5;
            o.codec = codec;
            const std::string what = std::string(hpcz::dtype_name(t)) + " array " + std::to_string(k) + " " +
                                     hpcz::codec_name(codec) + " " + hpcz::bound_mode_name(m) + " " + std::to_string(r);
            coded_and_checked(what, x, t, {x.size() / w}, o, gpu_checked);
          }
        }
      }
    }
    // A fill value of the type (its largest finite value), kept bit for bit.
    hpcz::Options o;
    o.mode = hpcz::BoundMode::rel;
    o.bound = 1e-2;
    o.fill = widened(only, t, t == DType::f16 || t == DType::bf16 ? 6 : 1);
    coded_and_checked(std::string(hpcz::dtype_name(t)) + " fill", ramp, t, {4096}, o, gpu_checked);
  }
}

// The request and the archive: a fill value that is no value of the type is refused; a storage type's archive marked below version 7
// (int64's: below 9) is refused as corrupt. (The device calls take storage types: their workspace holds the code values.)
TEST(corrupt_storage_type_refusals) {
  std::vector<int16_t> v(500);
  for (size_t i = 0; i < v.size(); ++i) v[i] = int16_t(i * 37 % 1000 - 500);
  auto error_of = [&](hpcz::Options o) {
    o.backend = hpcz::Backend::cpu;
    try {
      hpcz::compress(v.data(), DType::i16, {v.size()}, o);
    } catch (const hpcz::Error& e) {
      return int(e.code());
    }
    return 0;
  };
  hpcz::Options o;
  o = hpcz::Options{};
  o.fill = 0.5;
  CHECK(error_of(o) == int(hpcz::ErrorCode::invalid_argument));
  o.fill = 40000;
  CHECK(error_of(o) == int(hpcz::ErrorCode::invalid_argument));
  o.fill = -500;
  CHECK(error_of(o) == 0);

  o = hpcz::Options{};
  o.backend = hpcz::Backend::cpu;
  std::vector<uint8_t> a = hpcz::compress(v.data(), DType::i16, {v.size()}, o);
  CHECK(a[hpcz::format::kOffDType] == uint8_t(DType::i16) && a[hpcz::format::kOffVersion] == 7);
  a[hpcz::format::kOffVersion] = 6;
  hpcz::detail::store_u32_le(&a[hpcz::format::kOffHeaderChecksum], hpcz::format::header_checksum(a.data()));
  int code = 0;
  try {
    std::vector<uint8_t> out;
    hpcz::decompress(a.data(), a.size(), out, hpcz::Backend::cpu);
  } catch (const hpcz::Error& e) {
    code = int(e.code());
  }
  CHECK(code == int(hpcz::ErrorCode::corrupt_archive));
  // An int64 array's archive needs version 9; its fill values are int64 values (2^63 is not one).
  std::vector<int64_t> w(v.begin(), v.end());
  std::vector<uint64_t> wu(v.size());
  for (size_t i = 0; i < wu.size(); ++i) wu[i] = i % 1000;
  for (const auto& [t, fill, ok] : {std::tuple{DType::i64, 0x1p63, false}, std::tuple{DType::i64, -0x1p63, true},
                                    std::tuple{DType::u64, 0x1p64, false}, std::tuple{DType::u64, 0x1p63, true},
                                    std::tuple{DType::u64, -1.0, false}}) {
    hpcz::Options f = o;
    f.fill = fill;
    int fill_code = 0;
    try {
      (void)hpcz::compress(t == DType::i64 ? static_cast<const void*>(w.data()) : wu.data(), t, {w.size()}, f);
    } catch (const hpcz::Error& e) {
      fill_code = int(e.code());
    }
    CHECK_MSG(fill_code == (ok ? 0 : int(hpcz::ErrorCode::invalid_argument)), hpcz::dtype_name(t) << " fill " << fill);
  }
  std::vector<uint8_t> b = hpcz::compress(w.data(), DType::i64, {w.size()}, o);
  CHECK(b[hpcz::format::kOffDType] == uint8_t(DType::i64) && b[hpcz::format::kOffVersion] == 9);
  b[hpcz::format::kOffVersion] = 8;
  hpcz::detail::store_u32_le(&b[hpcz::format::kOffHeaderChecksum], hpcz::format::header_checksum(b.data()));
  code = 0;
  try {
    std::vector<uint8_t> out;
    hpcz::decompress(b.data(), b.size(), out, hpcz::Backend::cpu);
  } catch (const hpcz::Error& e) {
    code = int(e.code());
  }
  CHECK(code == int(hpcz::ErrorCode::corrupt_archive));
  // The device calls widen into their workspace: it holds the code values.
  if (hpcz::gpu_available())
    CHECK(hpcz::compress_device_workspace_size(DType::f16, {1000}, hpcz::Options{}) >= 4000 &&
          hpcz::compress_device_workspace_size(DType::i32, {1000}, hpcz::Options{}) >= 8000);
}

// The other paths a storage array takes: the second stage, the host batch (mixed with float32 arrays),
// the streaming calls and a PSNR target, each giving compress()'s bytes or the bound.
TEST(roundtrip_storage_types_paths) {
  const auto fields = real_fields();
  REQUIRE(!fields.empty());
  const Field& f = fields.front();
  const std::vector<uint8_t> h = storage_array(f, DType::f16), i = storage_array(f, DType::i16);
  hpcz::Options o;
  o.backend = hpcz::Backend::cpu;
  o.mode = hpcz::BoundMode::rel;
  o.bound = 1e-3;
  o.codec = hpcz::Codec::ratio;
  o.second_stage = true;
  const auto staged = hpcz::compress(i.data(), DType::i16, f.dims, o);
  const hpcz::ArchiveInfo si = hpcz::inspect(staged.data(), staged.size());
  CHECK(si.second_stage && si.version == 7 && si.dtype == DType::i16);
  std::vector<uint8_t> back;
  hpcz::decompress(staged.data(), staged.size(), back, hpcz::Backend::cpu);
  CHECK(violations(i, back, DType::i16, asked_bound(i, DType::i16, o), std::nullopt) == 0);
  // The stage sizes read the chunks as the codec wrote them (float32 values for int16; a uint32 array's
  // float64), their sum the archive's size.
  for (DType t : {DType::i16, DType::u32}) {
    const std::vector<uint8_t> x = storage_array(f, t);
    hpcz::Options r;
    r.codec = hpcz::Codec::ratio;
    r.backend = hpcz::Backend::cpu;
    const auto a = hpcz::compress(x.data(), t, f.dims, r);
    const hpcz::StageSizes z = hpcz::stage_sizes(a.data(), a.size());
    CHECK_MSG(z.header_and_table + z.codebook + z.gap_metadata + z.codes + z.outliers + z.exceptions + z.raw_chunks ==
                  a.size(),
              hpcz::dtype_name(t) << ": stage sizes do not add up to the archive");
  }

  o.second_stage = false;
  o.codec = hpcz::Codec::fast;
  const std::vector<hpcz::ArrayRef> arrays = {{h.data(), DType::f16, f.dims}, {f.bytes.data(), f.dtype, f.dims},
                                              {i.data(), DType::i16, f.dims}};
  std::vector<std::vector<uint8_t>> archives;
  const auto st = hpcz::compress_batch(arrays, o, archives);
  for (size_t k = 0; k < arrays.size(); ++k) {
    CHECK(st[k].ok());
    const auto one = hpcz::compress(arrays[k].data, arrays[k].dtype, arrays[k].dims, o);
    CHECK_MSG(archives[k] == one, "batch item " << k << " differs from compress()");
  }
  std::vector<std::vector<uint8_t>> outs(arrays.size());
  std::vector<hpcz::ArchiveRef> refs;
  std::vector<hpcz::OutputRef> out_refs;
  for (size_t k = 0; k < arrays.size(); ++k) {
    outs[k].resize(f.n() * hpcz::dtype_size(arrays[k].dtype));
    refs.push_back({archives[k].data(), archives[k].size()});
    out_refs.push_back({outs[k].data(), outs[k].size()});
  }
  const auto ds = hpcz::decompress_batch(refs, out_refs, hpcz::Backend::cpu);
  for (size_t k = 0; k < arrays.size(); ++k) {
    CHECK(ds[k].ok());
    std::vector<uint8_t> one;
    hpcz::decompress(archives[k].data(), archives[k].size(), one, hpcz::Backend::cpu);
    CHECK_MSG(outs[k] == one, "batch decode " << k << " differs from decompress()");
  }

  auto src = hpcz::memory_source(h.data(), h.size());
  std::vector<uint8_t> streamed;
  struct VecSink : hpcz::Sink {
    std::vector<uint8_t>& v;
    explicit VecSink(std::vector<uint8_t>& x) : v(x) {}
    void write(uint64_t off, const void* s, size_t n) override {
      if (v.size() < off + n) v.resize(off + n);
      std::memcpy(v.data() + off, s, n);
    }
  } sink(streamed);
  hpcz::compress_stream(*src, DType::f16, f.dims, o, sink);
  CHECK(streamed == archives[0]);
  auto asrc = hpcz::memory_source(streamed.data(), streamed.size());
  std::vector<uint8_t> values;
  VecSink vs(values);
  hpcz::decompress_stream(*asrc, vs, hpcz::Backend::cpu);
  CHECK(values == outs[0]);

  o.mode = hpcz::BoundMode::psnr;
  o.bound = 70;
  for (DType t : {DType::f16, DType::i16}) {
    const auto& x = t == DType::f16 ? h : i;
    const auto a = hpcz::compress(x.data(), t, f.dims, o);
    const hpcz::ArchiveInfo info = hpcz::inspect(a.data(), a.size());
    std::vector<uint8_t> y;
    hpcz::decompress(a.data(), a.size(), y, hpcz::Backend::cpu);
    const hpcz::Metrics m = hpcz::compare(x.data(), y.data(), t, f.n());
    CHECK_MSG(info.psnr_achieved && *info.psnr_achieved >= 70 && m.psnr >= 70,
              hpcz::dtype_name(t) << ": PSNR " << m.psnr << " below the target 70 dB");
  }
}

// The C API takes the storage types by their numbers (HPCZ_F16 ... HPCZ_U32): an int16 array lossless,
// its dtype read back by hpcz_inspect.
TEST(roundtrip_storage_types_c_api) {
  std::vector<int16_t> v(5000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = int16_t(std::lround(3000 * std::sin(i * 0.01)) - (i % 7));
  const uint64_t dims[1] = {v.size()};
  hpcz_options o{};
  o.mode = HPCZ_ABS;
  o.bound = 0;
  o.backend = HPCZ_CPU;
  std::vector<uint8_t> a(hpcz_max_compressed_size(v.size(), HPCZ_I16));
  REQUIRE(!a.empty());
  size_t size = 0;
  CHECK(hpcz_compress(v.data(), HPCZ_I16, dims, 1, &o, a.data(), a.size(), &size) == HPCZ_OK);
  int dtype = 0, ndims = 0;
  uint64_t d[4], n = 0;
  CHECK(hpcz_inspect(a.data(), size, &dtype, &ndims, d, &n) == HPCZ_OK);
  CHECK(dtype == HPCZ_I16 && ndims == 1 && n == v.size());
  std::vector<int16_t> back(v.size());
  CHECK(hpcz_decompress(a.data(), size, back.data(), back.size() * sizeof(int16_t), HPCZ_CPU) == HPCZ_OK);
  CHECK(back == v);
  CHECK(size < v.size() * sizeof(int16_t));
}

#ifdef HPCZ_HAS_CUDA
// A device batch mixing every storage type with float32 arrays, in each codec: each archive
// compress()'s bytes on the CPU, each decoded array the CPU decoder's values.
TEST(roundtrip_storage_types_device_batch) {
  if (!hpcz::gpu_available()) return;
  const auto fields = real_fields();
  REQUIRE(!fields.empty());
  const Field& f = fields.front();
  std::vector<std::pair<DType, std::vector<uint8_t>>> xs;
  for (DType t : kStorageTypes)  // int64, uint64: the device calls refuse them
    if (!hpcz::format::is_wide_integer(t)) xs.push_back({t, storage_array(f, t)});
  if (f.dtype == DType::f32) xs.insert(xs.begin() + 3, {DType::f32, f.bytes});
  for (hpcz::Codec codec : {hpcz::Codec::fast, hpcz::Codec::ratio, hpcz::Codec::interp}) {
    hpcz::Options o;
    o.codec = codec;
    o.mode = hpcz::BoundMode::abs;
    o.bound = 2;  // a lossy bound for every type (the half types' values span far more)
    std::vector<std::unique_ptr<DeviceBuffer>> bufs;
    std::vector<hpcz::ArrayRef> arrays;
    std::vector<void*> outs, backs;
    std::vector<size_t> caps;
    for (const auto& [t, x] : xs) {
      bufs.push_back(std::make_unique<DeviceBuffer>(x.size()));
      REQUIRE(cudaMemcpy(bufs.back()->p, x.data(), x.size(), cudaMemcpyHostToDevice) == cudaSuccess);
      arrays.push_back({bufs.back()->p, t, f.dims});
      caps.push_back(hpcz::max_compressed_size(f.n(), t));
      bufs.push_back(std::make_unique<DeviceBuffer>(caps.back()));
      outs.push_back(bufs.back()->p);
      bufs.push_back(std::make_unique<DeviceBuffer>(x.size()));
      backs.push_back(bufs.back()->p);
    }
    const size_t n = arrays.size();
    const size_t ws = hpcz::compress_device_batch_workspace_size(arrays, o);
    DeviceBuffer d_ws(ws), d_sizes(8 * n), d_status(4 * n);
    hpcz::compress_device_batch(arrays, o, outs.data(), caps.data(), static_cast<uint64_t*>(d_sizes.p), d_ws.p, ws, nullptr);
    const std::vector<uint8_t> sizes = to_host(d_sizes.p, 8 * n);
    std::vector<hpcz::ArchiveInfo> infos;
    std::vector<const void*> ins;
    std::vector<std::vector<uint8_t>> cpu_backs;
    hpcz::Options cpu = o;
    cpu.backend = hpcz::Backend::cpu;
    for (size_t i = 0; i < n; ++i) {
      const auto ref = hpcz::compress(xs[i].second.data(), xs[i].first, f.dims, cpu);
      uint64_t size = 0;
      std::memcpy(&size, &sizes[8 * i], 8);
      CHECK_MSG(size == ref.size() && to_host(outs[i], std::min<uint64_t>(size, caps[i])) == ref,
                hpcz::codec_name(codec) << " " << hpcz::dtype_name(xs[i].first) << ": the device batch's archive differs");
      infos.push_back(hpcz::inspect(ref.data(), ref.size()));
      ins.push_back(outs[i]);
      cpu_backs.emplace_back();
      hpcz::decompress(ref.data(), ref.size(), cpu_backs.back(), hpcz::Backend::cpu);
    }
    const size_t dws = hpcz::decompress_device_batch_workspace_size(infos);
    DeviceBuffer d_dws(dws);
    hpcz::decompress_device_batch(infos, ins.data(), backs.data(), static_cast<uint32_t*>(d_status.p), d_dws.p, dws, nullptr);
    const std::vector<uint8_t> st = to_host(d_status.p, 4 * n);
    for (size_t i = 0; i < n; ++i) {
      uint32_t s = 1;
      std::memcpy(&s, &st[4 * i], 4);
      CHECK_MSG(s == 0 && to_host(backs[i], xs[i].second.size()) == cpu_backs[i],
                hpcz::codec_name(codec) << " " << hpcz::dtype_name(xs[i].first) << ": the device batch's values differ");
    }
  }
}
#endif
