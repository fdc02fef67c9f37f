// Golden archives: old archives keep decoding, and today's encoder still writes the same bytes
// (a format change must be deliberate: bump the version, keep the old decoder, add a new golden).
// Regenerate with HPCZ_WRITE_GOLDEN=1 only when the format is meant to change.
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "codecs/fast/chunk.hpp"
#include "common/storage.hpp"
#include "common.hpp"

using namespace testutil;

namespace {
struct Golden {
  const char* file;
  hpcz::DType dtype;
  hpcz::BoundMode mode;
  double bound;
  hpcz::Codec codec;
  bool second_stage;  // format version 2 or later
  uint16_t version;
  bool current;       // today's encoder writes these bytes (else: an older version, decoded only)
  bool above295 = false;  // input: max(ts - 295 K, 0), zero over 70% of the field (a sparse field)
  double abs_bound = 0;   // abs_and_rel, abs_or_rel: the absolute part (bound: the rel factor)
};
using hpcz::BoundMode;
using hpcz::Codec;
using hpcz::DType;
const Golden kGolden[] = {
    {"ncar_ts_20x64x128_rel1e-3_v1.hpcz", DType::f32, BoundMode::rel, 1e-3, Codec::fast, false, 1, false},
    {"ncar_ts_20x64x128_f64_abs1e-2_v1.hpcz", DType::f64, BoundMode::abs, 1e-2, Codec::fast, false, 1, false},
    {"ncar_ts_20x64x128_rel1e-2_stage2_v2.hpcz", DType::f32, BoundMode::rel, 1e-2, Codec::fast, true, 2, false},
    // Version 3: fast chunks with two-level blocks (rel 1e-2 holds some) and sparse chunks (abs 5).
    {"ncar_ts_20x64x128_rel1e-3_v3.hpcz", DType::f32, BoundMode::rel, 1e-3, Codec::fast, false, 3, false},
    {"ncar_ts_20x64x128_rel1e-2_v3.hpcz", DType::f32, BoundMode::rel, 1e-2, Codec::fast, false, 3, false},
    {"ncar_ts_20x64x128_f64_abs1e-2_v3.hpcz", DType::f64, BoundMode::abs, 1e-2, Codec::fast, false, 3, false},
    {"ncar_ts_20x64x128_rel1e-2_stage2_v3.hpcz", DType::f32, BoundMode::rel, 1e-2, Codec::fast, true, 3, false},
    {"ncar_ts_20x64x128_abs5_v3.hpcz", DType::f32, BoundMode::abs, 5.0, Codec::fast, false, 3, false},
    // Version 4: lane blocks (the sparse field's edges), and the bytes of the version 3 set.
    {"ncar_ts_20x64x128_above295_abs5e-2_v4.hpcz", DType::f32, BoundMode::abs, 5e-2, Codec::fast, false, 4, false, true},
    {"ncar_ts_20x64x128_rel1e-2_v4.hpcz", DType::f32, BoundMode::rel, 1e-2, Codec::fast, false, 4, false},
    {"ncar_ts_20x64x128_f64_abs1e-2_v4.hpcz", DType::f64, BoundMode::abs, 1e-2, Codec::fast, false, 4, false},
    {"ncar_ts_20x64x128_rel1e-2_stage2_v4.hpcz", DType::f32, BoundMode::rel, 1e-2, Codec::fast, true, 4, false},
    {"ncar_ts_20x64x128_abs5_v4.hpcz", DType::f32, BoundMode::abs, 5.0, Codec::fast, false, 4, false},
    // Version 5: HPCZ-SUM32 chunk checksums; today's bytes of the version 4 set.
    {"ncar_ts_20x64x128_above295_abs5e-2_v5.hpcz", DType::f32, BoundMode::abs, 5e-2, Codec::fast, false, 5, true, true},
    {"ncar_ts_20x64x128_rel1e-2_v5.hpcz", DType::f32, BoundMode::rel, 1e-2, Codec::fast, false, 5, false},
    {"ncar_ts_20x64x128_f64_abs1e-2_v5.hpcz", DType::f64, BoundMode::abs, 1e-2, Codec::fast, false, 5, true},
    {"ncar_ts_20x64x128_rel1e-2_stage2_v5.hpcz", DType::f32, BoundMode::rel, 1e-2, Codec::fast, true, 5, false},
    {"ncar_ts_20x64x128_abs5_v5.hpcz", DType::f32, BoundMode::abs, 5.0, Codec::fast, false, 5, true},
    {"ncar_ts_20x64x128_ratio_rel1e-3_v1.hpcz", DType::f32, BoundMode::rel, 1e-3, Codec::ratio, false, 1, false},
    {"ncar_ts_20x64x128_ratio_f64_abs1e-2_v1.hpcz", DType::f64, BoundMode::abs, 1e-2, Codec::ratio, false, 1, true},
    {"ncar_ts_20x64x128_ratio_rel1e-2_stage2_v2.hpcz", DType::f32, BoundMode::rel, 1e-2, Codec::ratio, true, 2, false},
    {"ncar_ts_20x64x128_interp_rel1e-2_v1.hpcz", DType::f32, BoundMode::rel, 1e-2, Codec::interp, false, 1, false},
    {"ncar_ts_20x64x128_interp_f64_abs1_v1.hpcz", DType::f64, BoundMode::abs, 1.0, Codec::interp, false, 1, true},
    // Rel bounds whose eb_abs is rounded toward zero (_rz; the same format versions): the rel archives
    // above were written when it was rounded to nearest, and keep decoding as they are.
    {"ncar_ts_20x64x128_rel1e-2_v5_rz.hpcz", DType::f32, BoundMode::rel, 1e-2, Codec::fast, false, 5, true},
    {"ncar_ts_20x64x128_rel1e-2_stage2_v5_rz.hpcz", DType::f32, BoundMode::rel, 1e-2, Codec::fast, true, 5, true},
    {"ncar_ts_20x64x128_ratio_rel1e-3_v1_rz.hpcz", DType::f32, BoundMode::rel, 1e-3, Codec::ratio, false, 1, true},
    {"ncar_ts_20x64x128_ratio_rel1e-2_stage2_v2_rz.hpcz", DType::f32, BoundMode::rel, 1e-2, Codec::ratio, true, 2, true},
    {"ncar_ts_20x64x128_interp_rel1e-2_v1_rz.hpcz", DType::f32, BoundMode::rel, 1e-2, Codec::interp, false, 1, true},
    // Version 6: the combined bound modes, each part deciding once.
    {"ncar_ts_20x64x128_abs_and_rel_5e-2_1e-3_v6.hpcz", DType::f32, BoundMode::abs_and_rel, 1e-3, Codec::fast, false, 6,
     true, false, 5e-2},
    {"ncar_ts_20x64x128_ratio_abs_or_rel_1e-2_1e-3_stage2_v6.hpcz", DType::f32, BoundMode::abs_or_rel, 1e-3,
     Codec::ratio, true, 6, true, false, 1e-2},
    {"ncar_ts_20x64x128_interp_f64_abs_and_rel_1_1e-2_v6.hpcz", DType::f64, BoundMode::abs_and_rel, 1e-2,
     Codec::interp, false, 6, true, false, 1.0},
    // Version 6: pointwise-relative bounds (the fast codec), f32 and f64, the sparse field's zeros too.
    {"ncar_ts_20x64x128_pw_rel1e-3_v6.hpcz", DType::f32, BoundMode::pw_rel, 1e-3, Codec::fast, false, 6, true},
    {"ncar_ts_20x64x128_above295_pw_rel1e-2_v6.hpcz", DType::f32, BoundMode::pw_rel, 1e-2, Codec::fast, false, 6, true,
     true},
    {"ncar_ts_20x64x128_f64_pw_rel1e-4_stage2_v6.hpcz", DType::f64, BoundMode::pw_rel, 1e-4, Codec::fast, true, 6, true},
    // Version 6: quality targets (the PSNR achieved in bytes 13..15).
    {"ncar_ts_20x64x128_psnr60_v6.hpcz", DType::f32, BoundMode::psnr, 60.0, Codec::fast, false, 6, true},
    {"ncar_ts_20x64x128_interp_nrmse1e-2_v6.hpcz", DType::f32, BoundMode::nrmse, 1e-2, Codec::interp, false, 6, true},
    {"ncar_ts_20x64x128_ratio_f64_psnr80_stage2_v6.hpcz", DType::f64, BoundMode::psnr, 80.0, Codec::ratio, true, 6, true},
    // Version 7: storage types (golden_input makes them from the sample), each codec, lossless integers.
    {"ncar_ts_20x64x128_bf16_rel1e-2_v7.hpcz", DType::bf16, BoundMode::rel, 1e-2, Codec::fast, false, 7, true},
    // Written before the float16 code bound took the gap next to min |x| (quant::code_bound): decoded only.
    {"ncar_ts_20x64x128_ratio_f16_abs5e-2_v7.hpcz", DType::f16, BoundMode::abs, 5e-2, Codec::ratio, false, 7, false},
    {"ncar_ts_20x64x128_f16_abs0_v7.hpcz", DType::f16, BoundMode::abs, 0.0, Codec::fast, false, 7, true},
    {"ncar_ts_20x64x128_ratio_i16_abs0_stage2_v7.hpcz", DType::i16, BoundMode::abs, 0.0, Codec::ratio, true, 7, true},
    {"ncar_ts_20x64x128_u8_abs1_v7.hpcz", DType::u8, BoundMode::abs, 1.0, Codec::fast, false, 7, true},
    {"ncar_ts_20x64x128_interp_i32_rel1e-2_v7.hpcz", DType::i32, BoundMode::rel, 1e-2, Codec::interp, false, 7, true},
    // Version 8: pw_rel in the ratio-class codecs (log chunks, kind 3): the sparse field's zeros as the
    // interp codec's masked specials, and as the ratio codec's placed ones.
    {"ncar_ts_20x64x128_above295_interp_pw_rel1e-2_v8.hpcz", DType::f32, BoundMode::pw_rel, 1e-2, Codec::interp, false, 8,
     true, true},
    {"ncar_ts_20x64x128_above295_ratio_f64_pw_rel1e-3_stage2_v8.hpcz", DType::f64, BoundMode::pw_rel, 1e-3, Codec::ratio,
     true, 8, true, true},
    {"ncar_ts_20x64x128_interp_pw_rel1e-2_v8.hpcz", DType::f32, BoundMode::pw_rel, 1e-2, Codec::interp, false, 8, true},
    // Version 8 too: pw_rel and the combined modes on storage types (their code factor and bound).
    {"ncar_ts_20x64x128_f16_pw_rel1e-2_v8.hpcz", DType::f16, BoundMode::pw_rel, 1e-2, Codec::fast, false, 8, true},
    {"ncar_ts_20x64x128_ratio_bf16_pw_rel1e-3_v8.hpcz", DType::bf16, BoundMode::pw_rel, 1e-3, Codec::ratio, false, 8,
     true},
    {"ncar_ts_20x64x128_ratio_i16_abs_and_rel_4_1e-3_v8.hpcz", DType::i16, BoundMode::abs_and_rel, 1e-3, Codec::ratio,
     false, 8, true, false, 4.0},
    // Version 9: int64 and uint64.
    {"ncar_ts_20x64x128_i64_abs0_v9.hpcz", DType::i64, BoundMode::abs, 0.0, Codec::fast, false, 9, true},
    {"ncar_ts_20x64x128_interp_u64_abs2_stage2_v9.hpcz", DType::u64, BoundMode::abs, 2.0, Codec::interp, true, 9, true}};

// Values of a storage array y off x by more than eb (abs 0: bit for bit), or with pw > 0 by more than
// pw |x| (zeros and non-finite values bit for bit), widened exactly.
uint64_t storage_violations(const std::vector<uint8_t>& x, const std::vector<uint8_t>& y, DType t, long double eb,
                            double pw = 0) {
  return hpcz::detail::dispatch_storage(t, [&](auto tr) {
    using Tr = decltype(tr);
    using S = typename Tr::storage_type;
    uint64_t bad = x.size() != y.size();
    for (size_t i = 0; !bad && i < x.size() / sizeof(S); ++i) {
      S a, b;
      std::memcpy(&a, &x[i * sizeof(S)], sizeof(S));
      std::memcpy(&b, &y[i * sizeof(S)], sizeof(S));
      const long double wa = (long double)Tr::widen(a), d = std::fabs((long double)Tr::widen(b) - wa);
      if (pw > 0) bad += wa == 0 || !std::isfinite(wa) ? std::memcmp(&a, &b, sizeof(S)) != 0 : !(d <= pw * std::fabs(wa));
      else bad += eb == 0 ? std::memcmp(&a, &b, sizeof(S)) != 0 : !(d <= eb);
    }
    return bad;
  });
}

// Every value within bound x |x| (zeros and non-finite values as their bits), in long double.
template <class T> uint64_t pw_violations(const T* x, const T* y, uint64_t n, double r) {
  uint64_t bad = 0;
  for (uint64_t i = 0; i < n; ++i) {
    if (x[i] == T(0) || !std::isfinite(x[i])) {
      bad += std::memcmp(&x[i], &y[i], sizeof(T)) != 0;
      continue;
    }
    bad += !(std::fabs((long double)y[i] - (long double)x[i]) <= (long double)r * std::fabs((long double)x[i]));
  }
  return bad;
}

// The number of sparse chunks (first byte 0xff) in a fast archive.
int sparse_chunks(const std::vector<uint8_t>& a) {
  int n = 0;
  for (const auto& c : hpcz::inspect(a.data(), a.size()).chunks) n += a[c.offset] == 0xff;
  return n;
}

// Whether a plain fast archive (no sparse chunk) holds a two-level block (code 0x7d or 0x7e, with or without the flag).
bool has_two_level_block(const std::vector<uint8_t>& a) {
  const auto info = hpcz::inspect(a.data(), a.size());
  for (uint64_t c = 0; c < info.chunks.size(); ++c) {
    const uint64_t count = std::min<uint64_t>(info.chunk_values, info.n_values - c * info.chunk_values);
    for (uint64_t b = 0; b < (count + 31) / 32; ++b) {
      const uint8_t m = a[info.chunks[c].offset + b] & 0x7f;
      if (m == 0x7d || m == 0x7e) return true;
    }
  }
  return false;
}

// The number of lane blocks (code 0xfc) in a fast archive's chunks, either chunk form.
int lane_blocks(const std::vector<uint8_t>& a) {
  const auto info = hpcz::inspect(a.data(), a.size());
  int n = 0;
  for (uint64_t c = 0; c < info.chunks.size(); ++c) {
    const uint64_t count = std::min<uint64_t>(info.chunk_values, info.n_values - c * info.chunk_values);
    const uint32_t nb = uint32_t((count + 31) / 32);
    std::vector<uint8_t> codes(nb);
    uint32_t head;
    if (!hpcz::fast::chunk_codes(a.data() + info.chunks[c].offset, uint32_t(info.chunks[c].size), nb, codes.data(), head))
      return -1;
    for (uint8_t code : codes) n += code == hpcz::fast::kCodeLanes;
  }
  return n;
}

// A golden row's options (both tables), on the CPU backend.
template <class Row>
hpcz::Options golden_options(const Row& g) {
  hpcz::Options o;
  o.mode = g.mode;
  o.bound = g.bound;
  o.codec = g.codec;
  o.second_stage = g.second_stage;
  o.backend = hpcz::Backend::cpu;
  if constexpr (std::is_same_v<Row, Golden>) o.abs_bound = g.abs_bound;
  return o;
}

// The first 20 time steps of the bundled sample (as f64 for the f64 golden: exact conversion), or
// the sparse field made from them.
std::vector<uint8_t> golden_input(hpcz::DType t, bool above295) {
  auto raw = read_all(harness::data_dir_bundled() + "/climate-ncar_csm_b003_ts_100x64x128_f32.bin");
  raw.resize(20 * 64 * 128 * 4);
  if (above295) {
    float* f = reinterpret_cast<float*>(raw.data());
    for (size_t i = 0; i < raw.size() / 4; ++i) f[i] = f[i] > 295.f ? f[i] - 295.f : 0.f;
  }
  if (t == hpcz::DType::f32) return raw;
  if (hpcz::detail::is_storage_type(t)) {  // float16, bfloat16 narrowed; integers: the values scaled, rounded
    const float* f = reinterpret_cast<const float*>(raw.data());
    return hpcz::detail::dispatch_storage(t, [&](auto tr) {
      using Tr = decltype(tr);
      using S = typename Tr::storage_type;
      using C = typename Tr::code_type;
      std::vector<uint8_t> out(raw.size() / 4 * sizeof(S));
      for (size_t i = 0; i < raw.size() / 4; ++i) {
        const double x = f[i];
        const S s = Tr::is_integer ? Tr::narrow(C(std::round(t == hpcz::DType::u8 ? 2 * (x - 190) : (x - 250) * 100)))
                                   : Tr::narrow(C(x));
        std::memcpy(&out[i * sizeof(S)], &s, sizeof(S));
      }
      return out;
    });
  }
  std::vector<double> d(raw.size() / 4);
  for (size_t i = 0; i < d.size(); ++i) d[i] = reinterpret_cast<const float*>(raw.data())[i];
  return as_bytes(d);
}
}  // namespace

TEST(golden_archives) {
  for (const Golden& g : kGolden) {
    auto input = golden_input(g.dtype, g.above295);
    REQUIRE(input.size() == 20 * 64 * 128 * hpcz::dtype_size(g.dtype));
    const hpcz::Options o = golden_options(g);
    auto now = hpcz::compress(input.data(), g.dtype, {20, 64, 128}, o);
    const std::string path = std::string(HPCZ_SOURCE_DIR) + "/tests/golden/" + g.file;
    if (g.current && std::getenv("HPCZ_WRITE_GOLDEN")) {
      std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(now.data()), now.size());
      std::fprintf(stderr, "  wrote %s\n", path.c_str());
    }
    auto golden = read_all(path);
    REQUIRE(!golden.empty());
    std::vector<uint8_t> back;
    auto info = hpcz::decompress(golden.data(), golden.size(), back, hpcz::Backend::cpu);
    CHECK_MSG(info.version == g.version && info.second_stage == g.second_stage, g.file << ": version " << info.version);
    CHECK((info.dims == std::vector<uint64_t>{20, 64, 128}));
    if (g.mode == BoundMode::pw_rel && hpcz::detail::is_storage_type(g.dtype))
      CHECK_MSG(storage_violations(input, back, g.dtype, 0, g.bound) == 0, g.file << ": values outside the pointwise bound");
    else if (g.mode == BoundMode::pw_rel)
      CHECK_MSG((g.dtype == DType::f32 ? pw_violations(reinterpret_cast<const float*>(input.data()),
                                                        reinterpret_cast<const float*>(back.data()), input.size() / 4, g.bound)
                                        : pw_violations(reinterpret_cast<const double*>(input.data()),
                                                        reinterpret_cast<const double*>(back.data()), input.size() / 8,
                                                        g.bound)) == 0,
                g.file << ": values outside the pointwise bound");
    else if (hpcz::detail::is_storage_type(g.dtype))  // the bound asked for, on the values narrowed back
      CHECK_MSG(storage_violations(input, back, g.dtype,
                                   g.mode == BoundMode::abs ? (long double)g.bound
                                   : g.mode == BoundMode::abs_and_rel
                                       ? std::min((long double)g.abs_bound,
                                                  (long double)g.bound * ((long double)info.range_max - info.range_min))
                                       : (long double)g.bound * ((long double)info.range_max - info.range_min)) == 0,
                g.file << ": values outside the bound");
    else
      CHECK(strict_check(input, back, g.dtype, info.eb_abs).violations == 0);
    if (g.current) CHECK_MSG(now == golden, g.file << ": the encoder no longer writes the golden bytes");
    if (g.current && g.mode == BoundMode::rel && !hpcz::detail::is_storage_type(g.dtype))  // never above bound * range
      CHECK(eb_within_request(info.eb_abs, (long double)g.bound * ((long double)info.range_max - info.range_min)));
    if (g.current && (g.mode == BoundMode::abs_and_rel || g.mode == BoundMode::abs_or_rel) &&
        !hpcz::detail::is_storage_type(g.dtype)) {  // a storage type's eb_abs is its code bound (3.1)
      const long double asked = g.dtype == DType::f32
                                    ? requested_bound(reinterpret_cast<const float*>(input.data()), input.size() / 4, o)
                                    : requested_bound(reinterpret_cast<const double*>(input.data()), input.size() / 8, o);
      CHECK_MSG(eb_within_request(info.eb_abs, asked), g.file << ": eb_abs above the request");
      CHECK_MSG(info.mode == g.mode && info.bound == g.bound, g.file << ": mode or bound");
    }
    if (g.mode == BoundMode::psnr || g.mode == BoundMode::nrmse) {
      const double target = g.mode == BoundMode::psnr ? g.bound : -20 * std::log10(g.bound);
      CHECK_MSG(info.psnr_achieved && *info.psnr_achieved >= target, g.file << ": the PSNR achieved");
    }
    if (g.codec == Codec::fast && g.version >= 3 && !g.second_stage && g.mode == BoundMode::rel && g.bound == 1e-2)
      CHECK_MSG(sparse_chunks(golden) == 0 && has_two_level_block(golden), g.file << ": no two-level block");
    if (g.codec == Codec::fast && g.mode == BoundMode::abs && g.bound == 5.0)
      CHECK_MSG(sparse_chunks(golden) > 0, g.file << ": no sparse chunk");
    if (g.above295 && g.codec == Codec::fast)
      CHECK_MSG(lane_blocks(golden) > 100, g.file << ": " << lane_blocks(golden) << " lane blocks");
    if (g.codec != Codec::fast && !g.second_stage) {  // the chunk kinds the row is there for
      const auto ai = hpcz::inspect(golden.data(), golden.size());
      bool interp_chunk = false, log_chunk = false;
      for (const auto& c : ai.chunks) {
        const uint8_t kind = golden[c.offset + 12];
        log_chunk |= kind == 3;  // a log chunk (pw_rel), its inner chunk after 16 bytes
        interp_chunk |= (kind == 3 ? golden[c.offset + 16 + 12] : kind) == 2;
      }
      if (g.codec == Codec::interp) CHECK_MSG(interp_chunk, g.file << ": no interpolation chunk");
      CHECK_MSG(log_chunk == (g.mode == BoundMode::pw_rel), g.file << ": log chunks");
    }
    if (hpcz::resolve_backend(hpcz::Backend::automatic, g.codec, g.mode) == hpcz::Backend::gpu) {
      std::vector<uint8_t> gb;
      hpcz::decompress(golden.data(), golden.size(), gb, hpcz::Backend::gpu);
      CHECK(gb == back);
    }
  }
}

namespace {
// Arrays of a Zarr or HDF5 chunk's size (16 to 128 KiB), which the CPU backend codes on the calling
// thread: the bytes the encoder wrote when it coded them with all its threads (written at ba053ac).
struct SmallGolden {
  const char* file;
  hpcz::DType dtype;
  hpcz::BoundMode mode;
  double bound;
  hpcz::Codec codec;
  bool second_stage;
  std::vector<uint64_t> dims;
  bool current = true;  // else written by an older encoder, decoded only
};
const SmallGolden kSmallGolden[] = {
    {"small_4096_rel1e-3_v5.hpcz", DType::f32, BoundMode::rel, 1e-3, Codec::fast, false, {4096}, false},
    {"small_4096_rel1e-2_stage2_v5.hpcz", DType::f32, BoundMode::rel, 1e-2, Codec::fast, true, {4096}},
    {"small_2x64x128_abs5e-2_v5.hpcz", DType::f32, BoundMode::abs, 5e-2, Codec::fast, false, {2, 64, 128}},
    {"small_2x64x128_f64_abs1e-2_v5.hpcz", DType::f64, BoundMode::abs, 1e-2, Codec::fast, false, {2, 64, 128}},
    {"small_32x128_ratio_rel1e-3_v1.hpcz", DType::f32, BoundMode::rel, 1e-3, Codec::ratio, false, {32, 128}, false},
    {"small_2x64x128_ratio_f64_abs1e-2_v1.hpcz", DType::f64, BoundMode::abs, 1e-2, Codec::ratio, false, {2, 64, 128}},
    {"small_32x128_interp_rel1e-3_v1.hpcz", DType::f32, BoundMode::rel, 1e-3, Codec::interp, false, {32, 128}, false},
    {"small_2x64x128_interp_f64_abs1e-1_v1.hpcz", DType::f64, BoundMode::abs, 1e-1, Codec::interp, false, {2, 64, 128}},
    // eb_abs rounded toward zero (the three above without _rz were written when it was rounded to nearest)
    {"small_4096_rel1e-3_v5_rz.hpcz", DType::f32, BoundMode::rel, 1e-3, Codec::fast, false, {4096}},
    {"small_32x128_ratio_rel1e-3_v1_rz.hpcz", DType::f32, BoundMode::rel, 1e-3, Codec::ratio, false, {32, 128}},
    {"small_32x128_interp_rel1e-3_v1_rz.hpcz", DType::f32, BoundMode::rel, 1e-3, Codec::interp, false, {32, 128}}};
}  // namespace

TEST(golden_small_arrays) {
  for (const SmallGolden& g : kSmallGolden) {
    uint64_t n = 1;
    for (uint64_t d : g.dims) n *= d;
    auto input = golden_input(g.dtype, false);
    input.resize(n * hpcz::dtype_size(g.dtype));
    const hpcz::Options o = golden_options(g);
    const auto now = hpcz::compress(input.data(), g.dtype, g.dims, o);
    const std::string path = std::string(HPCZ_SOURCE_DIR) + "/tests/golden/" + g.file;
    if (g.current && std::getenv("HPCZ_WRITE_GOLDEN")) {
      std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(now.data()), now.size());
      std::fprintf(stderr, "  wrote %s\n", path.c_str());
    }
    const auto golden = read_all(path);
    REQUIRE(!golden.empty());
    if (g.current) CHECK_MSG(now == golden, g.file << ": the encoder no longer writes the golden bytes");
    std::vector<uint8_t> back;
    const auto info = hpcz::decompress(golden.data(), golden.size(), back, hpcz::Backend::cpu);
    CHECK(info.dims == g.dims);
    CHECK(strict_check(input, back, g.dtype, info.eb_abs).violations == 0);
  }
}
