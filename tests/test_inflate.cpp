// Our Deflate decoder (RFC 1951, gzip and zlib framing) against zlib's encoder: stored, fixed and dynamic
// blocks, every framing, multi-member gzip; damaged streams give an error, never a crash.
#include <cstdio>
#include <random>

#include "common.hpp"
#include "lossless/cpu_sinks.hpp"
#include "lossless/inflate.hpp"
#if HPCZ_TEST_ZLIB
#include <zlib.h>
#endif

#if HPCZ_TEST_ZLIB
namespace {
// windowBits: -15 raw, 15 zlib, 31 gzip. strategy Z_FIXED forces fixed Huffman blocks; level 0 stored.
std::vector<uint8_t> zlib_deflate(const std::vector<uint8_t>& in, int level, int window_bits, int strategy) {
  z_stream z{};
  deflateInit2(&z, level, Z_DEFLATED, window_bits, 8, strategy);
  std::vector<uint8_t> out(deflateBound(&z, in.size()) + 64);
  z.next_in = const_cast<uint8_t*>(in.data());
  z.avail_in = uInt(in.size());
  z.next_out = out.data();
  z.avail_out = uInt(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::vector<uint8_t> ours(const std::vector<uint8_t>& s, bool& ok) {
  try {
    ok = true;
    return hpcz::lossless_decompress(s.data(), s.size(), {hpcz::LosslessCodec::deflate, 1, false});
  } catch (const hpcz::Error& e) {
    ok = false;
    return {};
  }
}
}  // namespace
#endif

TEST(unit_inflate_matches_zlib) {
#if !HPCZ_TEST_ZLIB
  std::fprintf(stderr, "  built without zlib: skipped\n");
#else
  std::vector<std::vector<uint8_t>> inputs;
  inputs.push_back({});
  inputs.push_back(testutil::read_all(std::string(HPCZ_SOURCE_DIR) + "/README.md"));
  inputs.push_back(testutil::read_all(std::string(HPCZ_SOURCE_DIR) + "/src/ratio/ratio_cuda.cuh"));
  for (const auto& f : testutil::real_fields()) inputs.push_back(std::vector<uint8_t>(f.bytes.begin(), f.bytes.begin() + std::min<size_t>(f.bytes.size(), 1 << 20)));
  std::mt19937 rng(4);
  std::vector<uint8_t> noise(300000), reps(500000);
  for (auto& b : noise) b = uint8_t(rng());
  for (size_t i = 0; i < reps.size(); ++i) reps[i] = uint8_t("abcab"[i % 5] + (i % 4099 == 0));
  inputs.push_back(noise);
  inputs.push_back(reps);
  int cases = 0;
  for (const auto& in : inputs)
    for (int wb : {-15, 15, 31})
      for (auto [level, strategy] : {std::pair{0, Z_DEFAULT_STRATEGY}, std::pair{1, Z_FIXED}, std::pair{6, Z_DEFAULT_STRATEGY},
                                     std::pair{9, Z_DEFAULT_STRATEGY}, std::pair{6, Z_HUFFMAN_ONLY}, std::pair{6, Z_RLE}}) {
        const auto s = zlib_deflate(in, level, wb, strategy);
        bool ok = false;
        const auto out = ours(s, ok);
        CHECK_MSG(ok && out == in, "input " << in.size() << " bytes, window bits " << wb << ", level " << level
                                           << ", strategy " << strategy);
        ++cases;
      }
  // Two gzip members back to back decode as their concatenation (what `gzip -c a b` writes).
  auto g1 = zlib_deflate(inputs[1], 6, 31, Z_DEFAULT_STRATEGY), g2 = zlib_deflate(inputs[2], 9, 31, Z_DEFAULT_STRATEGY);
  g1.insert(g1.end(), g2.begin(), g2.end());
  bool ok = false;
  auto both = ours(g1, ok);
  auto want = inputs[1];
  want.insert(want.end(), inputs[2].begin(), inputs[2].end());
  CHECK(ok && both == want);
  std::fprintf(stderr, "  %d zlib streams decoded\n", cases + 1);
#endif
}

TEST(unit_inflate_damaged_streams) {
#if HPCZ_TEST_ZLIB
  const auto in = testutil::read_all(std::string(HPCZ_SOURCE_DIR) + "/README.md");
  std::mt19937_64 rng(6);
  const char* env = std::getenv("HPCZ_FLIP_TRIALS");
  const int trials = env ? std::atoi(env) : 1500;
  for (int wb : {-15, 15, 31}) {
    const auto s = zlib_deflate(in, 9, wb, Z_DEFAULT_STRATEGY);
    bool ok = false;
    for (size_t cut = 0; cut < s.size(); cut += 1 + cut / 16) {
      ours(std::vector<uint8_t>(s.begin(), s.begin() + cut), ok);
      CHECK_MSG(!ok || wb == -15, "truncated at " << cut << " decoded");  // raw Deflate has no length check
    }
    for (int k = 0; k < trials; ++k) {
      auto b = s;
      b[rng() % b.size()] ^= uint8_t(1u << (rng() % 8));
      auto out = ours(b, ok);
      if (ok && wb != -15) CHECK(out == in);  // framed: a flip that decodes must be caught by the checksum
    }
  }
#endif
}

namespace {
// Over every 15-bit window: the table holds exactly the codes of up to kLutBits bits, and past them
// walk_long (which resumes at kLutBits + 1) finds what the full canonical walk finds.
template <class Code>
int check_walks(const std::vector<uint8_t>& lengths, const char* what) {
  auto h = std::make_unique<Code>();
  if (hpcz::lossless::build_code(*h, lengths.data(), int(lengths.size())) < 0) return 0;  // oversubscribed
  for (uint32_t i = 0; i < (1u << Code::kLutBits); ++i) h->lut[i] = hpcz::lossless::lut_entry(*h, i);
  int long_hits = 0;
  for (uint32_t w = 0; w < (1u << 15); ++w) {
    const uint32_t full = hpcz::lossless::walk_code(*h, w, 15), e = h->lut[w & ((1u << Code::kLutBits) - 1)];
    if (e) {
      CHECK_MSG(e == full, what << ": table entry of window " << w);
    } else {
      const uint32_t l = hpcz::lossless::walk_long(*h, w);
      CHECK_MSG(l == full, what << ": long walk of window " << w << " gives " << l << ", the full walk " << full);
      long_hits += l != 0;
    }
  }
  return long_hits;
}
}  // namespace

TEST(unit_inflate_long_codes_resume_past_the_table) {
  // Random codes with lengths up to 15 (complete and incomplete), for each table size the decoder uses.
  std::mt19937 rng(3);
  int codes = 0, long_hits = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int n = trial % 2 ? 288 : 30;
    std::vector<uint8_t> len(n, 0);
    for (auto& l : len) l = uint8_t(rng() % 3 ? 0 : 1 + std::min<uint32_t>(14, uint32_t(std::geometric_distribution<int>(0.25)(rng)) + trial % 9));
    if (trial % 5 == 0) {  // a complete deep code: the caterpillar 1, 2, ..., 14, 15, 15
      std::fill(len.begin(), len.end(), 0);
      for (int k = 0; k < 15; ++k) len[k] = uint8_t(k + 1);
      len[15] = 15;
    }
    const int a = check_walks<hpcz::lossless::LitCode>(len, "lit"), b = check_walks<hpcz::lossless::DistCode>(len, "dist");
    const int c = check_walks<hpcz::lossless::LenCode>(len, "len");
    codes += a + b + c > 0;
    long_hits += a + b + c;
  }
  std::fprintf(stderr, "  %d codes with codes past the table, %d windows decoded by the long walk\n", codes, long_hits);
  CHECK(codes > 50 && long_hits > 1000);
}

namespace {
struct RawResult {
  hpcz::lossless::InflateStatus status;
  uint64_t produced, consumed;
  std::vector<uint8_t> out;
};
// A raw Deflate stream into a buffer of cap bytes, with or without inflate_codes' fast zone.
template <bool kFastZone>
RawResult inflate_into(const std::vector<uint8_t>& s, uint64_t cap) {
  namespace ll = hpcz::lossless;
  RawResult r{};
  r.out.assign(cap + 1, 0xa5);  // one guard byte past the capacity
  ll::BitReader br{ll::PtrSource{s.data()}, s.size()};
  ll::ByteSink sink{r.out.data(), cap};
  ll::SerialCtx ctx;
  auto t = std::make_unique<ll::InflateTables>();
  r.status = ll::inflate_raw<kFastZone>(br, sink, ctx, *t);
  r.produced = sink.n;
  r.consumed = br.consumed();
  return r;
}
}  // namespace

// The fast zone skips the input-end and capacity tests where no step can reach either: on whole,
// truncated and bit-flipped streams and on outputs too small by a little or a lot, it must give the
// status, the bytes and the input position of the decoder that tests every step.
TEST(unit_inflate_fast_zone_matches_checked) {
#if HPCZ_TEST_ZLIB
  std::vector<std::vector<uint8_t>> inputs;
  inputs.push_back(testutil::read_all(std::string(HPCZ_SOURCE_DIR) + "/README.md"));
  for (const auto& f : testutil::real_fields())
    inputs.push_back(std::vector<uint8_t>(f.bytes.begin(), f.bytes.begin() + std::min<size_t>(f.bytes.size(), 96 << 10)));
  std::mt19937_64 rng(11);
  int cases = 0, fast_stops = 0;
  auto compare = [&](const std::vector<uint8_t>& s, uint64_t cap, const char* what) {
    const RawResult a = inflate_into<true>(s, cap), b = inflate_into<false>(s, cap);
    CHECK_MSG(a.status == b.status && a.produced == b.produced && a.consumed == b.consumed && a.out == b.out,
              what << ": fast zone status " << int(a.status) << " after " << a.produced << " bytes, checked "
                   << int(b.status) << " after " << b.produced << " (capacity " << cap << ")");
    ++cases;
    fast_stops += a.status != hpcz::lossless::InflateStatus::ok;
  };
  for (const auto& in : inputs)
    for (int level : {1, 6, 9}) {
      const auto s = zlib_deflate(in, level, -15, level == 1 ? Z_FIXED : Z_DEFAULT_STRATEGY);
      const uint64_t n = in.size();
      for (uint64_t cap : {n, n + 1000, n - 1, n - 37, n - 258, n - 600, n / 2, n / 3 + 5, uint64_t(700), uint64_t(3)})
        compare(s, cap, "whole stream");
      for (int k = 0; k < 12; ++k) compare(std::vector<uint8_t>(s.begin(), s.begin() + rng() % s.size()), n, "truncated");
      for (int k = 0; k < 40; ++k) {
        auto b = s;
        for (int f = 0; f < 1 + k % 3; ++f) b[rng() % b.size()] ^= uint8_t(1u << (rng() % 8));
        compare(b, n, "flipped");
        compare(b, n - 1 - rng() % 2000, "flipped, short output");
      }
    }
  std::fprintf(stderr, "  %d streams and capacities, %d ending in an error, same on both\n", cases, fast_stops);
  CHECK(cases > 300 && fast_stops > 150);
#endif
}
