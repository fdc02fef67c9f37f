// Damaged archives: every one must give hpcz::Error (corrupt or unsupported), never a crash, a hang or
// silently wrong data. Run under ASan/UBSan in CI.
#include <cstdio>
#include <cstdlib>
#include <random>

#include "codecs/fast/chunk.hpp"
#include "codecs/ratio_class/pw_log_chunk.hpp"
#include "common.hpp"
#include "format/checksum.hpp"
#include "format/header.hpp"

using namespace testutil;

namespace {

std::vector<uint8_t> sample_archive(hpcz::DType t = hpcz::DType::f32, hpcz::Codec codec = hpcz::Codec::fast) {
  auto fields = real_fields();
  const Field& f = fields.front();
  hpcz::Options o;
  o.bound = 1e-3;
  o.backend = hpcz::Backend::cpu;
  o.codec = codec;
  if (t == hpcz::DType::f32 && f.dtype == t) return hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
  std::vector<double> d(100000);
  for (size_t i = 0; i < d.size(); ++i) d[i] = std::sin(i * 0.001) * 100;
  return hpcz::compress(d.data(), hpcz::DType::f64, {d.size()}, o);
}

// Which error a damaged archive gives on each backend (0 if it decoded), and its message.
int decode_error(const std::vector<uint8_t>& a, hpcz::Backend b, std::string* msg = nullptr) {
  std::vector<uint8_t> out;
  try {
    hpcz::decompress(a.data(), a.size(), out, b);
    return 0;
  } catch (const hpcz::Error& e) {
    if (msg) *msg = e.what();
    return int(e.code());
  }
}

// sealed: the archive's checksums were made valid again, so the error must come from the decoders'
// own rules, not from a checksum.
void expect_rejected(const std::vector<uint8_t>& a, const std::string& what, bool sealed = false) {
  std::string msg;
  int c = decode_error(a, hpcz::Backend::cpu, &msg);
  CHECK_MSG(c == int(hpcz::ErrorCode::corrupt_archive) || c == int(hpcz::ErrorCode::unsupported), what << " cpu " << c);
  if (sealed) CHECK_MSG(msg.find("checksum") == std::string::npos, what << ": sealed, yet " << msg);
  if (hpcz::gpu_available()) {
    int g = decode_error(a, hpcz::Backend::gpu, &msg);
    CHECK_MSG(g == int(hpcz::ErrorCode::corrupt_archive) || g == int(hpcz::ErrorCode::unsupported), what << " gpu " << g);
    if (sealed) CHECK_MSG(msg.find("chunk checksum") == std::string::npos, what << ": sealed, yet on the GPU " << msg);
  }
}

void reseal_header(std::vector<uint8_t>& a) {
  hpcz::detail::store_u32_le(&a[hpcz::format::kOffHeaderChecksum], hpcz::format::header_checksum(a.data()));
}

// After chunk c's bytes were changed in place: its checksum, the table's and the header's made valid
// again, so that only the chunk's own rules can reject it.
void reseal_chunk(std::vector<uint8_t>& a, const hpcz::ArchiveInfo& info, uint64_t c) {
  const auto& e = info.chunks[c];
  hpcz::detail::store_u32_le(&a[hpcz::format::kHeaderBytes + 16 * c + 12],
                             hpcz::format::chunk_checksum(info.codec, info.version, &a[e.offset], e.size));
  hpcz::detail::store_u32_le(&a[136], hpcz::format::checksum(&a[hpcz::format::kHeaderBytes], info.n_chunks * 16));
  reseal_header(a);
}

// A 1-D f32 fast archive at an absolute bound, by the CPU backend.
std::vector<uint8_t> fast_abs_cpu(const std::vector<float>& x, double bound) {
  hpcz::Options o;
  o.mode = hpcz::BoundMode::abs;
  o.bound = bound;
  o.backend = hpcz::Backend::cpu;
  return hpcz::compress(x.data(), hpcz::DType::f32, {x.size()}, o);
}

}  // namespace

TEST(corrupt_truncation_everywhere) {
  for (auto codec : {hpcz::Codec::fast, hpcz::Codec::ratio, hpcz::Codec::interp})
  for (auto t : {hpcz::DType::f32, hpcz::DType::f64}) {
    auto a = sample_archive(t, codec);
    auto info = hpcz::inspect(a.data(), a.size());
    std::vector<size_t> cuts;
    for (size_t k = 0; k <= info.data_offset + 64 && k < a.size(); ++k) cuts.push_back(k);  // every header/table byte
    for (size_t k = info.data_offset; k < a.size(); k += 997) cuts.push_back(k);
    cuts.push_back(a.size() - 1);
    for (size_t k : cuts) {
      std::vector<uint8_t> b(a.begin(), a.begin() + k);
      expect_rejected(b, "truncated");
    }
    auto longer = a;
    longer.push_back(0);
    expect_rejected(longer, "trailing byte");
  }
}

TEST(corrupt_bit_flips_header_and_table) {
  auto a = sample_archive();
  auto info = hpcz::inspect(a.data(), a.size());
  for (size_t bit = 0; bit < info.data_offset * 8; bit += (bit < 1024 ? 1 : 7)) {
    auto b = a;
    b[bit / 8] ^= uint8_t(1u << (bit % 8));
    expect_rejected(b, "header/table bit " + std::to_string(bit));
  }
}

TEST(corrupt_bit_flips_payload) {
  for (auto codec : {hpcz::Codec::fast, hpcz::Codec::ratio, hpcz::Codec::interp}) {
  auto a = sample_archive(hpcz::DType::f32, codec);
  auto info = hpcz::inspect(a.data(), a.size());
  std::mt19937_64 rng(42);
  const char* env = std::getenv("HPCZ_FLIP_TRIALS");  // fewer under the sanitizers in CI
  const int trials = env ? std::atoi(env) : 1500;
  for (int k = 0; k < trials; ++k) {
    auto b = a;
    size_t pos = info.data_offset + rng() % (a.size() - info.data_offset);
    b[pos] ^= uint8_t(1u << (rng() % 8));
    if (k % 3 == 0) b[info.data_offset + rng() % (a.size() - info.data_offset)] ^= 0xff;  // and a second byte
    expect_rejected(b, "payload flip at " + std::to_string(pos));
  }
  }
}

// A ratio archive marked with a version no writer gives the codec (3 to 5: the fast codec's only),
// sealed: rejected on both backends. (Version 6, the combined bound modes', is the ratio codec's too.)
TEST(corrupt_ratio_archive_at_a_fast_version) {
  const auto a = sample_archive(hpcz::DType::f32, hpcz::Codec::ratio);
  for (uint8_t v = 3; v <= 5; ++v) {
    auto b = a;
    b[4] = v;
    reseal_header(b);
    expect_rejected(b, "ratio archive at version " + std::to_string(v));
  }
}

TEST(corrupt_magic_and_version) {
  auto a = sample_archive();
  auto b = a;
  b[0] = 'X';
  expect_rejected(b, "magic");
  b = a;
  b[4] = uint8_t(hpcz::format::kVersion + 1);  // a newer version, correctly sealed: unsupported, not corrupt
  reseal_header(b);
  CHECK(decode_error(b, hpcz::Backend::cpu) == int(hpcz::ErrorCode::unsupported));
  b[4] = 0;
  reseal_header(b);
  CHECK(decode_error(b, hpcz::Backend::cpu) == int(hpcz::ErrorCode::corrupt_archive));
  std::vector<uint8_t> empty;
  expect_rejected(empty, "empty");
}

TEST(corrupt_sealed_but_wrong_fields) {
  // Header fields changed and the header checksum recomputed: the field checks must catch them.
  auto a = sample_archive();
  struct Edit { size_t at; uint8_t v; const char* what; };
  for (Edit e : {Edit{8, 3, "dtype"}, Edit{8, 2, "dtype f64 (chunk size then wrong)"}, Edit{9, 0, "rank 0"},
                 Edit{9, 5, "rank 5"}, Edit{10, 9, "mode"}, Edit{11, 7, "codec"}, Edit{12, 0x80, "flags"},
                 Edit{16, 0xff, "dims"}, Edit{48, 1, "n_values"}, Edit{104, 1, "chunk values"},
                 Edit{108, 31, "block values"}, Edit{112, 9, "chunk count"}, Edit{120, 1, "archive size"},
                 Edit{71, 0xff, "eb NaN"}, Edit{103, 0x10, "step above 2 eb"}, Edit{96, 1, "step not an f32"},
                 Edit{130, 1, "reserved"}, Edit{136, 1, "table checksum"}}) {
    auto b = a;
    b[e.at] ^= e.v ? e.v : 0xff;
    if (e.at == 9) b[9] = e.v;
    reseal_header(b);
    expect_rejected(b, e.what);
  }
}

TEST(corrupt_sealed_but_malformed_chunk) {
  // A chunk with a valid checksum but an impossible block code: the decoders' own checks must catch it.
  auto a = sample_archive();
  auto info = hpcz::inspect(a.data(), a.size());
  const auto& e = info.chunks[0];
  for (uint8_t bad : {uint8_t(0xff), uint8_t(0x1f), uint8_t(0xfc)}) {
    auto b = a;
    b[e.offset] = bad;  // first block's code
    uint32_t sum = hpcz::format::chunk_checksum(info.codec, info.version, &b[e.offset], e.size);
    hpcz::detail::store_u32_le(&b[hpcz::format::kHeaderBytes + 12], sum);
    uint32_t tsum = hpcz::format::checksum(&b[hpcz::format::kHeaderBytes], info.n_chunks * 16);
    hpcz::detail::store_u32_le(&b[136], tsum);
    reseal_header(b);
    expect_rejected(b, "malformed code " + std::to_string(int(bad)), true);
  }
}

TEST(corrupt_sealed_table_reordered) {
  // Two chunk entries swapped, table and header checksums recomputed: the table rules must catch it
  // on both backends (the GPU reads the table itself).
  auto a = sample_archive();
  auto info = hpcz::inspect(a.data(), a.size());
  REQUIRE(info.n_chunks >= 2);
  auto b = a;
  for (int k = 0; k < 16; ++k) std::swap(b[hpcz::format::kHeaderBytes + k], b[hpcz::format::kHeaderBytes + 16 + k]);
  uint32_t tsum = hpcz::format::checksum(&b[hpcz::format::kHeaderBytes], info.n_chunks * 16);
  hpcz::detail::store_u32_le(&b[136], tsum);
  reseal_header(b);
  expect_rejected(b, "swapped chunk entries", true);
}

TEST(corrupt_ratio_sealed_but_malformed_chunk) {
  // Ratio-mode chunks with valid checksums but broken structure: the decoders' own checks must catch
  // each on both backends (a change that still decodes to valid symbols is only caught by checksums).
  for (auto t : {hpcz::DType::f32, hpcz::DType::f64}) {
    auto a = sample_archive(t, hpcz::Codec::ratio);
    auto info = hpcz::inspect(a.data(), a.size());
    const auto& e = info.chunks[0];
    const uint32_t nsym = 2 * info.block_values;
    const uint32_t bits = hpcz::detail::load_u32_le(&a[e.offset]);
    const uint32_t nseq = (((bits + 1023) / 1024) + 127) / 128;
    const size_t lengths = e.offset + 16, seq_first = lengths + ((nsym / 2 + 3) & ~3u), gaps = seq_first + 4 * nseq;
    struct Edit { size_t at; uint8_t x; const char* what; };
    for (Edit ed : {Edit{e.offset, 1, "total bits"}, Edit{e.offset + 4, 1, "outlier count"},
                    Edit{e.offset + 8, 1, "exception count"}, Edit{e.offset + 12, 2, "chunk kind"},
                    Edit{lengths + nsym / 4, 0xff, "code lengths"}, Edit{seq_first, 5, "sequence start"},
                    Edit{gaps, 3, "gap of subsequence 0"}, Edit{gaps + 1, 0x77, "gaps of subsequences 2, 3"}}) {
      auto b = a;
      b[ed.at] ^= ed.x;
      uint32_t sum = hpcz::format::chunk_checksum(info.codec, info.version, &b[e.offset], e.size);
      hpcz::detail::store_u32_le(&b[hpcz::format::kHeaderBytes + 12], sum);
      uint32_t tsum = hpcz::format::checksum(&b[hpcz::format::kHeaderBytes], info.n_chunks * 16);
      hpcz::detail::store_u32_le(&b[136], tsum);
      reseal_header(b);
      expect_rejected(b, std::string("ratio ") + ed.what, true);
    }
  }
}

// Archives with the lossless second stage (version 2): every truncation and flip is an error, and so
// are stage headers that are sealed (checksums recomputed) but wrong.
TEST(corrupt_second_stage) {
  auto f = real_fields();
  REQUIRE(!f.empty());
  std::mt19937_64 rng(17);
  for (hpcz::Codec codec : {hpcz::Codec::ratio, hpcz::Codec::fast}) {
    hpcz::Options o;
    o.bound = 1e-2;
    o.codec = codec;
    o.second_stage = true;
    o.backend = hpcz::Backend::cpu;
    const Field& fd = f[0];
    const auto a = hpcz::compress(fd.bytes.data(), fd.dtype, fd.dims, o);
    auto rejected = [](const std::vector<uint8_t>& b) {
      std::vector<uint8_t> out;
      try {
        hpcz::decompress(b.data(), b.size(), out, hpcz::Backend::cpu);
      } catch (const hpcz::Error& e) {
        return e.code() == hpcz::ErrorCode::corrupt_archive;
      }
      return false;
    };
    const int trials = std::getenv("HPCZ_FLIP_TRIALS") ? std::atoi(std::getenv("HPCZ_FLIP_TRIALS")) : 300;
    int bad = 0;
    for (int k = 0; k < trials; ++k) {
      auto b = a;
      if (k % 2) b.resize(rng() % b.size());
      else b[rng() % b.size()] ^= uint8_t(1 + rng() % 255);
      bad += !rejected(b);
    }
    CHECK_MSG(bad == 0, bad << " damaged staged archives were not rejected");
    // Sealed but wrong: an unknown tag, and an inner size beyond what the codec allows.
    const auto info = hpcz::inspect(a.data(), a.size());
    for (int what = 0; what < 2; ++what) {
      auto b = a;
      const uint64_t at = info.chunks[0].offset;
      if (what == 0) b[at] = 7;
      else if (b[at] != 0 && info.chunks[0].size >= 6) hpcz::detail::store_u32_le(&b[at + 2], 0x7fffffffu);
      else continue;
      hpcz::detail::store_u32_le(&b[hpcz::kHeaderSize + 12], hpcz::format::chunk_checksum(info.codec, info.version, &b[at], info.chunks[0].size));
      hpcz::detail::store_u32_le(&b[136], hpcz::format::checksum(&b[hpcz::kHeaderSize], 16 * info.n_chunks));
      hpcz::detail::store_u32_le(&b[hpcz::format::kOffHeaderChecksum], hpcz::format::header_checksum(b.data()));
      CHECK_MSG(rejected(b), "sealed staged archive with a wrong " << (what ? "inner size" : "tag") << " accepted");
    }
  }
}

TEST(corrupt_sealed_sparse_chunk_malformed) {
  // A sparse chunk (format version 3: marker, bitmap, listed codes) with a valid checksum but a bitmap
  // that lists more codes than the chunk holds, or sets a bit past the last block: both decoders
  // reject it. Mostly zeros, so every chunk takes the sparse form.
  std::vector<float> x(3 * 16384 + 900, 0.0f);
  for (size_t i = 0; i < x.size(); i += 997) x[i] = float(i % 13);
  const auto a = fast_abs_cpu(x, 0.01);
  const auto info = hpcz::inspect(a.data(), a.size());
  REQUIRE(info.n_chunks == 4);
  for (const auto& e : info.chunks) REQUIRE(a[e.offset] == 0xff);
  auto reseal = [&](std::vector<uint8_t>& b, uint64_t c) { reseal_chunk(b, info, c); };
  {  // every bitmap bit of chunk 0 set: 512 listed codes in a chunk far smaller than that
    auto b = a;
    for (uint32_t k = 0; k < 512 / 8; ++k) b[info.chunks[0].offset + 1 + k] = 0xff;
    reseal(b, 0);
    expect_rejected(b, "sparse bitmap listing more codes than the chunk holds", true);
  }
  {  // the last chunk holds 900 values, 29 blocks: bit 31 of its bitmap is past them
    auto b = a;
    const uint64_t last = info.n_chunks - 1;
    b[info.chunks[last].offset + 1 + 3] |= 0x80;
    reseal(b, last);
    expect_rejected(b, "sparse bitmap bit past the last block", true);
  }
  std::vector<uint8_t> back;
  hpcz::decompress(a.data(), a.size(), back, hpcz::Backend::cpu);
  CHECK(strict_check(as_bytes(x), back, hpcz::DType::f32, 0.01).violations == 0);
}

TEST(corrupt_sealed_lane_block_malformed) {
  // Lane blocks (format version 4: code 0xfc, descriptors ending the chunk) with a valid checksum but
  // a descriptor whose width is past 32, whose width or lane mask no longer matches the chunk's size,
  // or a lane block's code changed: both decoders reject it.
  std::vector<float> x(2 * 16384 + 500, 0.0f);
  for (size_t i = 0; i < x.size(); i += 5) x[i] = float(i % 29) + 0.25f;  // a few nonzero lanes a block
  const auto a = fast_abs_cpu(x, 0.01);
  const auto info = hpcz::inspect(a.data(), a.size());
  REQUIRE(info.n_chunks == 3);
  const auto& e = info.chunks[0];
  REQUIRE(a[e.offset] == hpcz::fast::kCodeLanes && a[e.offset + 1] == hpcz::fast::kCodeLanes);
  auto reseal = [&](std::vector<uint8_t>& b) { reseal_chunk(b, info, 0); };
  const uint64_t last_desc = e.offset + e.size - 5;  // the chunk's last lane descriptor
  REQUIRE(a[last_desc + 4] >= 1 && a[last_desc + 4] <= 24);
  {
    auto b = a;
    b[last_desc + 4] = 33;
    reseal(b);
    expect_rejected(b, "lane descriptor width 33", true);
  }
  {
    auto b = a;
    b[last_desc + 4] += 8;  // every coded lane a byte longer
    reseal(b);
    expect_rejected(b, "lane descriptor width that does not match the chunk's size", true);
  }
  {
    auto b = a;
    hpcz::detail::store_u32_le(&b[last_desc], ~0u);
    reseal(b);
    expect_rejected(b, "lane descriptor mask that does not match the chunk's size", true);
  }
  {
    auto b = a;
    b[e.offset] = 0;  // one lane block fewer: the descriptors no longer line up with the payloads
    reseal(b);
    expect_rejected(b, "a lane block's code changed to plain", true);
  }
  std::vector<uint8_t> back;
  hpcz::decompress(a.data(), a.size(), back, hpcz::Backend::cpu);
  CHECK(strict_check(as_bytes(x), back, hpcz::DType::f32, 0.01).violations == 0);
}

// pw_rel's log chunks (kind 3: header words, inner chunk, specials, signs, patches), sealed: broken
// header words are refused on both backends; any other sealed flip either fails or decodes, never
// crashes or reads outside the chunk (ASan in CI).
TEST(corrupt_sealed_pw_log_chunk) {
  auto fields = real_fields();
  const Field& f = fields.front();
  for (hpcz::Codec codec : {hpcz::Codec::interp, hpcz::Codec::ratio}) {
    hpcz::Options o;
    o.mode = hpcz::BoundMode::pw_rel;
    o.bound = 1e-3;
    o.codec = codec;
    o.backend = hpcz::Backend::cpu;
    // The field's first 32768 values, with zeros (specials) and sign changes among them.
    const uint64_t m = std::min<uint64_t>(f.n(), 32768), vb = f.bytes.size() / f.n();
    std::vector<uint8_t> in(f.bytes.begin(), f.bytes.begin() + m * vb);
    if (f.dtype == hpcz::DType::f32) {
      float* x = reinterpret_cast<float*>(in.data());
      for (uint64_t i = 0; i < m; i += 7) x[i] = i % 3 ? 0.f : -x[i];
    }
    const auto a = hpcz::compress(in.data(), f.dtype, {m}, o);
    const auto info = hpcz::inspect(a.data(), a.size());
    const auto& e = info.chunks[0];
    REQUIRE(hpcz::detail::load_u32_le(&a[e.offset + 12]) == 3);
    const uint32_t inner = hpcz::detail::load_u32_le(&a[e.offset]);
    struct Edit { size_t at; uint32_t value; const char* what; };
    for (Edit ed : {Edit{e.offset, inner + 1, "inner size"}, Edit{e.offset, 0xffffffffu, "inner size beyond the chunk"},
                    Edit{e.offset + 4, 0xfffffff0u, "specials size"}, Edit{e.offset + 8, 4, "sign kind"},
                    Edit{e.offset + 8, 0x200, "header flag"}, Edit{e.offset + 12, 5, "chunk kind"}}) {
      auto b = a;
      hpcz::detail::store_u32_le(&b[ed.at], ed.value);
      reseal_chunk(b, info, 0);
      expect_rejected(b, std::string(hpcz::codec_name(codec)) + " log chunk " + ed.what, true);
    }
    std::mt19937 rng(11);
    for (int k = 0; k < 200; ++k) {
      auto b = a;
      const size_t at = e.offset + rng() % e.size;
      b[at] ^= uint8_t(1u << (rng() % 8));
      reseal_chunk(b, info, 0);
      const int c = decode_error(b, hpcz::Backend::cpu);
      CHECK_MSG(c == 0 || c == int(hpcz::ErrorCode::corrupt_archive), "flip at " << at - e.offset << ": error " << c);
    }
  }
}

// A log chunk's side sections that claim more than the chunk holds, fed to the decoder directly (its
// inner chunk stood in for): placed runs whose gaps and lengths pass the values, sign bits for fewer
// regular values than the walk meets, a patch past the end. Each is refused before anything is read
// or written out of bounds (ASan in CI).
TEST(corrupt_pw_log_side_sections) {
  using namespace hpcz::ratio;
  const uint32_t n = 4096;
  auto chunk = [&](uint32_t signs_word, const std::vector<uint8_t>& specials, const std::vector<uint8_t>& rest) {
    std::vector<uint8_t> c(16, 0);
    hpcz::detail::store_u32_le(&c[0], 0);  // inner size 0: the stand-in decoder below fills y
    hpcz::detail::store_u32_le(&c[4], uint32_t(specials.size()));
    hpcz::detail::store_u32_le(&c[8], signs_word);
    hpcz::detail::store_u32_le(&c[12], kKindPwLog);
    c.insert(c.end(), specials.begin(), specials.end());
    c.insert(c.end(), rest.begin(), rest.end());
    return c;
  };
  auto decodes = [&](const std::vector<uint8_t>& c) {
    std::vector<float> out(n);
    const std::unique_ptr<uint8_t[]> exact(new uint8_t[c.size()]);  // no slack after the chunk: a read past it is caught
    std::memcpy(exact.get(), c.data(), c.size());
    return decode_pw_chunk<float>(exact.get(), uint32_t(c.size()), n, out.data(), 1, [&](const uint8_t*, uint32_t, double* y) {
      for (uint32_t i = 0; i < n; ++i) y[i] = 1.0;
      return true;
    });
  };
  auto varint = [](std::vector<uint8_t>& d, uint32_t v) {
    uint8_t b[5];
    d.insert(d.end(), b, put_varint(b, v));
  };
  auto put_f32 = [](std::vector<uint8_t>& d, float v) {
    uint8_t b[4];
    hpcz::detail::store_value_le<float>(b, v);
    d.insert(d.end(), b, b + 4);
  };
  // Placed runs: one special after a gap of 2000, then a run of 4000 (past 4096 in all), sign bits for the
  // 4096 - 4001 regular values the lengths alone leave.
  std::vector<uint8_t> sp, rest;
  varint(sp, 2), varint(sp, 2000), varint(sp, 0), put_f32(sp, 0.f);
  varint(sp, 0), varint(sp, 3999), put_f32(sp, 1.f);
  rest.assign((n - 4001 + 7) / 8, 0);
  varint(rest, 0);
  CHECK(!decodes(chunk(kSignsBits | kPwPlaced, sp, rest)));
  // A well-formed one decodes (the stand-ins above are right), then each field broken in turn.
  sp.clear(), rest.clear();
  varint(sp, 1), varint(sp, 10), varint(sp, 5), put_f32(sp, 0.f);
  rest.assign((n - 6 + 7) / 8, 0);
  varint(rest, 0);
  CHECK(decodes(chunk(kSignsBits | kPwPlaced, sp, rest)));
  CHECK(!decodes(chunk(kSignsBits, sp, rest)));  // not placed: the NaN count (0) is not the runs' 6
  auto more = rest;
  more.push_back(0);
  CHECK(!decodes(chunk(kSignsBits | kPwPlaced, sp, more)));  // a byte after the patches
  auto patch = std::vector<uint8_t>(rest.begin(), rest.end() - 1);
  varint(patch, 1), varint(patch, n), put_f32(patch, 2.f);
  CHECK(!decodes(chunk(kSignsBits | kPwPlaced, sp, patch)));  // a patch past the end
  std::vector<uint8_t> short_bits(rest.begin(), rest.begin() + 3);
  CHECK(!decodes(chunk(kSignsBits | kPwPlaced, sp, short_bits)));  // fewer sign bytes than regular values
  std::vector<uint8_t> runs_signs;
  varint(runs_signs, 2), varint(runs_signs, 100), varint(runs_signs, 50), varint(runs_signs, 0);
  CHECK(!decodes(chunk(kSignsRuns | kPwPlaced, sp, runs_signs)));  // sign runs short of the regular values
}
