// Round trips of real fields at every bound: the strict guarantee, the ratio, CPU/GPU byte identity.
#include <cstdio>

#include "common.hpp"

using namespace testutil;

namespace {
struct B {
  hpcz::BoundMode mode;
  double v;
  const char* label;
};
const B kBounds[] = {{hpcz::BoundMode::rel, 1e-2, "rel 1e-2"}, {hpcz::BoundMode::rel, 1e-3, "rel 1e-3"},
                     {hpcz::BoundMode::rel, 1e-4, "rel 1e-4"}, {hpcz::BoundMode::rel, 1e-5, "rel 1e-5"},
                     {hpcz::BoundMode::abs, 1e-1, "abs 1e-1"}, {hpcz::BoundMode::abs, 1e-4, "abs 1e-4"}};

void roundtrip_fields(hpcz::Backend backend) {
  auto fields = real_fields();
  REQUIRE(!fields.empty());
  std::fprintf(stderr, "  %zu fields (shared data: %s)\n", fields.size(),
               harness::data_dir_shared().empty() ? "absent" : harness::data_dir_shared().c_str());
  for (const Field& f : fields) {
    double prev_cr = 1e300;
    for (const B& b : kBounds) {
      hpcz::Options o;
      o.mode = b.mode;
      o.bound = b.v;
      o.backend = backend;
      auto a = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
      std::vector<uint8_t> back;
      auto info = hpcz::decompress(a.data(), a.size(), back, backend);
      Check c = strict_check(f.bytes, back, f.dtype, info.eb_abs);
      double cr = double(f.bytes.size()) / double(a.size());
      std::fprintf(stderr, "  %-55s %-9s CR %8.3f  max err/eb %.4f\n", f.name.c_str(), b.label, cr, c.worst);
      CHECK_MSG(c.violations == 0, f.name << " " << b.label << ": " << c.violations << " values outside the bound");
      CHECK(info.dims == f.dims);
      CHECK(a.size() <= hpcz::max_compressed_size(f.n(), f.dtype));
      if (b.mode == hpcz::BoundMode::rel) {
        CHECK_MSG(cr <= prev_cr * 1.0001, f.name << ": a tighter bound gave a smaller archive");
        prev_cr = cr;
        if (b.v == 1e-2) CHECK_MSG(cr > 2.0, f.name << ": CR " << cr << " at rel 1e-2");
      }
    }
  }
}
}  // namespace

TEST(roundtrip_real_fields_cpu) { roundtrip_fields(hpcz::Backend::cpu); }

TEST(roundtrip_real_fields_gpu_matches_cpu) {
  if (!hpcz::gpu_available()) {
    std::fprintf(stderr, "  no GPU: skipped\n");
    return;
  }
  roundtrip_fields(hpcz::Backend::gpu);
  for (const Field& f : real_fields()) {
    for (const B& b : kBounds) {
      hpcz::Options o;
      o.mode = b.mode;
      o.bound = b.v;
      o.backend = hpcz::Backend::cpu;
      auto ac = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
      o.backend = hpcz::Backend::gpu;
      auto ag = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
      CHECK_MSG(ac == ag, f.name << " " << b.label << ": GPU and CPU archives differ (" << ac.size() << " vs "
                                 << ag.size() << " bytes)");
      std::vector<uint8_t> bc, bg;
      hpcz::decompress(ac.data(), ac.size(), bc, hpcz::Backend::cpu);
      hpcz::decompress(ac.data(), ac.size(), bg, hpcz::Backend::gpu);
      CHECK_MSG(bc == bg, f.name << " " << b.label << ": GPU and CPU decodes differ");
    }
  }
}

TEST(roundtrip_fill_levitus) {
  for (const Field& f : real_fields()) {
    if (f.name.find("levitus") == std::string::npos) continue;
    for (auto backend : {hpcz::Backend::cpu, hpcz::Backend::gpu}) {
      if (backend == hpcz::Backend::gpu && !hpcz::gpu_available()) continue;
      hpcz::Options o;
      o.bound = 1e-3;
      o.fill = -1e10;
      o.backend = backend;
      auto a = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
      std::vector<uint8_t> back;
      auto info = hpcz::decompress(a.data(), a.size(), back, backend);
      CHECK(info.range_valid && info.range_min > -3 && info.range_max < 31);  // the fill is out of the range
      CHECK(info.eb_abs < 0.04);
      Check c = strict_check(f.bytes, back, f.dtype, info.eb_abs, o.fill);
      CHECK(c.violations == 0);
      std::fprintf(stderr, "  levitus --fill -1e10 rel 1e-3: eb %.4g CR %.3f\n", info.eb_abs,
                   double(f.bytes.size()) / a.size());
      CHECK(double(f.bytes.size()) / a.size() > 3);
    }
  }
}
