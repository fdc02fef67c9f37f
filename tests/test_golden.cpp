// Golden archives: old archives keep decoding, and today's encoder still writes the same bytes
// (a format change must be deliberate: bump the version, keep the old decoder, add a new golden).
// Regenerate with HPCZ_WRITE_GOLDEN=1 only when the format is meant to change.
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "common.hpp"

using namespace testutil;

namespace {
struct Golden {
  const char* file;
  hpcz::DType dtype;
  hpcz::BoundMode mode;
  double bound;
  hpcz::Codec codec;
  bool second_stage = false;  // format version 2
};
const Golden kGolden[] = {
    {"ncar_ts_20x64x128_rel1e-3_v1.hpcz", hpcz::DType::f32, hpcz::BoundMode::rel, 1e-3, hpcz::Codec::fast},
    {"ncar_ts_20x64x128_f64_abs1e-2_v1.hpcz", hpcz::DType::f64, hpcz::BoundMode::abs, 1e-2, hpcz::Codec::fast},
    {"ncar_ts_20x64x128_ratio_rel1e-3_v1.hpcz", hpcz::DType::f32, hpcz::BoundMode::rel, 1e-3, hpcz::Codec::ratio},
    {"ncar_ts_20x64x128_ratio_f64_abs1e-2_v1.hpcz", hpcz::DType::f64, hpcz::BoundMode::abs, 1e-2, hpcz::Codec::ratio},
    {"ncar_ts_20x64x128_ratio_rel1e-2_stage2_v2.hpcz", hpcz::DType::f32, hpcz::BoundMode::rel, 1e-2, hpcz::Codec::ratio, true},
    {"ncar_ts_20x64x128_rel1e-2_stage2_v2.hpcz", hpcz::DType::f32, hpcz::BoundMode::rel, 1e-2, hpcz::Codec::fast, true},
    {"ncar_ts_20x64x128_interp_rel1e-2_v1.hpcz", hpcz::DType::f32, hpcz::BoundMode::rel, 1e-2, hpcz::Codec::interp},
    {"ncar_ts_20x64x128_interp_f64_abs1_v1.hpcz", hpcz::DType::f64, hpcz::BoundMode::abs, 1.0, hpcz::Codec::interp}};

// The first 20 time steps of the bundled sample (as f64 for the f64 golden: exact conversion).
std::vector<uint8_t> golden_input(hpcz::DType t) {
  auto raw = read_all(harness::data_dir_bundled() + "/climate-ncar_csm_b003_ts_100x64x128_f32.bin");
  raw.resize(20 * 64 * 128 * 4);
  if (t == hpcz::DType::f32) return raw;
  std::vector<double> d(raw.size() / 4);
  for (size_t i = 0; i < d.size(); ++i) d[i] = reinterpret_cast<const float*>(raw.data())[i];
  return as_bytes(d);
}
}  // namespace

TEST(golden_archives) {
  for (const Golden& g : kGolden) {
    auto input = golden_input(g.dtype);
    REQUIRE(input.size() == 20 * 64 * 128 * hpcz::dtype_size(g.dtype));
    hpcz::Options o;
    o.mode = g.mode;
    o.bound = g.bound;
    o.codec = g.codec;
    o.second_stage = g.second_stage;
    o.backend = hpcz::Backend::cpu;
    auto now = hpcz::compress(input.data(), g.dtype, {20, 64, 128}, o);
    const std::string path = std::string(HPCZ_SOURCE_DIR) + "/tests/golden/" + g.file;
    if (std::getenv("HPCZ_WRITE_GOLDEN")) {
      std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(now.data()), now.size());
      std::fprintf(stderr, "  wrote %s\n", path.c_str());
    }
    auto golden = read_all(path);
    REQUIRE(!golden.empty());
    std::vector<uint8_t> back;
    auto info = hpcz::decompress(golden.data(), golden.size(), back, hpcz::Backend::cpu);
    CHECK(info.version == (g.second_stage ? 2 : 1) && info.second_stage == g.second_stage);
    CHECK((info.dims == std::vector<uint64_t>{20, 64, 128}));
    CHECK(strict_check(input, back, g.dtype, info.eb_abs).violations == 0);
    CHECK_MSG(now == golden, g.file << ": the encoder no longer writes the golden bytes");
    if (g.codec == hpcz::Codec::interp) {  // the golden holds interpolation chunks, not only Lorenzo ones
      const auto ai = hpcz::inspect(golden.data(), golden.size());
      bool interp_chunk = false;
      for (const auto& c : ai.chunks) interp_chunk |= (golden[c.offset + 12] & 0xff) == 2;
      CHECK_MSG(interp_chunk, g.file << ": no interpolation chunk");
    }
    if (hpcz::resolve_backend(hpcz::Backend::automatic, g.codec) == hpcz::Backend::gpu) {
      std::vector<uint8_t> gb;
      hpcz::decompress(golden.data(), golden.size(), gb, hpcz::Backend::gpu);
      CHECK(gb == back);
    }
  }
}
