// The combined bound modes (abs_and_rel, abs_or_rel, as SZ3 defines them): the bound each settles to,
// the strict guarantee on real fields in every codec, with and without the second stage, CPU and GPU
// bytes alike, and the format version they need.
#include <cstdio>

#include "common.hpp"
#include "format/header.hpp"
#include "quant/bound.hpp"

using namespace testutil;

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
    a[hpcz::format::kOffVersion] = 7;
    hpcz::detail::store_u32_le(&a[hpcz::format::kOffHeaderChecksum], hpcz::format::header_checksum(a.data()));
    refused = false;
    try {
      std::vector<uint8_t> out;
      hpcz::decompress(a.data(), a.size(), out, hpcz::Backend::cpu);
    } catch (const hpcz::Error& e) {
      refused = e.code() == hpcz::ErrorCode::unsupported;
    }
    CHECK_MSG(refused, hpcz::codec_name(codec) << ": version 7 was not refused as unsupported");
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
