// ORC integer run-length encodings v1 and v2: the specification's worked examples, round trips on
// integer columns derived from the real fields, every width and sign, and damaged streams.
#include <cstdio>
#include <functional>
#include <random>

#include "common.hpp"
#include "lossless/orc_rle.hpp"

using namespace hpcz::lossless;

namespace {
template <class Dec>
bool decode_all(Dec dec, const std::vector<uint8_t>& s, IntType t, std::vector<int64_t>& out, size_t cap = 1u << 24) {
  out.clear();
  return dec(s.data(), s.size(), t, [&](int64_t v) {
    if (out.size() >= cap) return false;
    out.push_back(v);
    return true;
  });
}
// The first n values of an f32 field times scale, rounded (0 where not finite): an integer column.
std::vector<int64_t> quantized(const testutil::Field& f, size_t n, double scale) {
  const float* x = reinterpret_cast<const float*>(f.bytes.data());
  std::vector<int64_t> q(n);
  for (size_t i = 0; i < n; ++i) q[i] = std::isfinite(x[i]) ? int64_t(std::llround(double(x[i]) * scale)) : 0;
  return q;
}
bool d1(const uint8_t* p, uint64_t n, IntType t, const std::function<bool(int64_t)>& e) { return decode_rle1(p, n, t, e); }
bool d2(const uint8_t* p, uint64_t n, IntType t, const std::function<bool(int64_t)>& e) { return decode_rle2(p, n, t, e); }
}  // namespace

TEST(unit_orc_rle_spec_examples) {
  const IntType u64{8, false};
  std::vector<int64_t> out;
  // RLE v1: 100 sevens; 100 down to 1; the first five primes as literals.
  std::vector<int64_t> sevens(100, 7), down(100);
  for (int k = 0; k < 100; ++k) down[k] = 100 - k;
  CHECK((encode_rle1(sevens, u64) == std::vector<uint8_t>{0x61, 0x00, 0x07}));
  CHECK((encode_rle1(down, u64) == std::vector<uint8_t>{0x61, 0xff, 0x64}));
  CHECK(decode_all(d1, {0x61, 0x00, 0x07}, u64, out) && out == sevens);
  CHECK(decode_all(d1, {0x61, 0xff, 0x64}, u64, out) && out == down);
  CHECK(decode_all(d1, {0xfb, 0x02, 0x03, 0x04, 0x07, 0x0b}, u64, out) && (out == std::vector<int64_t>{2, 3, 4, 7, 11}));
  // RLE v2: short repeat, direct, patched base, delta.
  std::vector<int64_t> rep(5, 10000);
  CHECK((encode_rle2(rep, u64) == std::vector<uint8_t>{0x0a, 0x27, 0x10}));
  CHECK(decode_all(d2, {0x0a, 0x27, 0x10}, u64, out) && out == rep);
  std::vector<int64_t> direct{23713, 43806, 57005, 48879};
  const std::vector<uint8_t> direct_bytes{0x5e, 0x03, 0x5c, 0xa1, 0xab, 0x1e, 0xde, 0xad, 0xbe, 0xef};
  CHECK(encode_rle2(direct, u64) == direct_bytes);
  CHECK(decode_all(d2, direct_bytes, u64, out) && out == direct);
  std::vector<int64_t> patched{2030, 2000, 2020, 1000000, 2040, 2050, 2060, 2070, 2080, 2090,
                               2100, 2110, 2120, 2130, 2140, 2150, 2160, 2170, 2180, 2190};
  const std::vector<uint8_t> patched_bytes{0x8e, 0x13, 0x2b, 0x21, 0x07, 0xd0, 0x1e, 0x00, 0x14, 0x70, 0x28, 0x32, 0x3c, 0x46,
                                           0x50, 0x5a, 0x64, 0x6e, 0x78, 0x82, 0x8c, 0x96, 0xa0, 0xaa, 0xb4, 0xbe, 0xfc, 0xe8};
  CHECK(decode_all(d2, patched_bytes, u64, out) && out == patched);
  CHECK(decode_all(d2, encode_rle2(patched, u64), u64, out) && out == patched);
  std::vector<int64_t> primes{2, 3, 5, 7, 11, 13, 17, 19, 23, 29};
  const std::vector<uint8_t> delta_bytes{0xc6, 0x09, 0x02, 0x02, 0x22, 0x42, 0x42, 0x46};
  CHECK(encode_rle2(primes, u64) == delta_bytes);
  CHECK(decode_all(d2, delta_bytes, u64, out) && out == primes);
}

TEST(unit_orc_rle_round_trips) {
  // Integer columns derived from the real fields (quantized values, their differences, byte values),
  // plus constructed ones, at every width and sign.
  std::vector<std::vector<int64_t>> cols;
  for (const auto& f : testutil::real_fields()) {
    if (f.dtype != hpcz::DType::f32) continue;
    const size_t n = std::min<uint64_t>(f.n(), 200000);
    const std::vector<int64_t> q = quantized(f, n, 100);
    std::vector<int64_t> dq(n), b(n);
    for (size_t i = 0; i < n; ++i) {
      dq[i] = i ? q[i] - q[i - 1] : q[i];
      b[i] = f.bytes[i];
    }
    cols.push_back(q);
    cols.push_back(dq);
    cols.push_back(b);
  }
  std::mt19937_64 rng(3);
  std::vector<int64_t> noise(50000), runs, mono(3000), spikes(20000);
  for (auto& v : noise) v = int64_t(rng());
  for (int k = 0; k < 2000; ++k) runs.insert(runs.end(), 1 + rng() % 40, int64_t(rng() % 5) - 2);
  for (size_t k = 0; k < mono.size(); ++k) mono[k] = int64_t(k * k);
  for (size_t k = 0; k < spikes.size(); ++k) spikes[k] = k % 97 ? int64_t(rng() % 100) : int64_t(rng() % 100000000);
  cols.push_back(noise); cols.push_back(runs); cols.push_back(mono); cols.push_back(spikes);
  size_t checked = 0;
  for (const auto& col : cols)
    for (int bytes : {1, 2, 4, 8})
      for (bool sgn : {false, true}) {
        const IntType t{bytes, sgn};
        std::vector<int64_t> c(col.size());
        for (size_t i = 0; i < col.size(); ++i) {  // the column as this type would hold it
          const uint64_t m = t.mask();
          uint64_t u = uint64_t(col[i]) & m;
          c[i] = sgn && bytes < 8 && (u >> (8 * bytes - 1)) ? int64_t(u | ~m) : int64_t(u);
        }
        std::vector<int64_t> out;
        const auto e1 = encode_rle1(c, t), e2 = encode_rle2(c, t);
        CHECK_MSG(decode_all(d1, e1, t, out) && out == c, "rle1 bytes " << bytes << " signed " << sgn);
        CHECK_MSG(decode_all(d2, e2, t, out) && out == c, "rle2 bytes " << bytes << " signed " << sgn);
        ++checked;
      }
  std::fprintf(stderr, "  %zu column/type pairs round-tripped in both versions\n", checked);
}

TEST(unit_orc_rle_damaged_streams) {
  // Truncation at every byte and random flips: a clean false or a decode, never a read past the end
  // (ASan in CI), never a value outside the type.
  std::mt19937_64 rng(8);
  std::vector<int64_t> col(3000);
  for (size_t k = 0; k < col.size(); ++k) col[k] = k % 50 < 20 ? 7 : int64_t(rng() % 3000) - 1500;
  for (bool v2 : {false, true}) {
    const IntType t{2, true};
    const auto s = v2 ? encode_rle2(col, t) : encode_rle1(col, t);
    std::vector<int64_t> out;
    for (size_t cut = 0; cut < s.size(); ++cut) {
      std::vector<uint8_t> b(s.begin(), s.begin() + cut);
      const bool ok = v2 ? decode_all(d2, b, t, out) : decode_all(d1, b, t, out);
      CHECK(!ok || out.size() < col.size());
    }
    for (int k = 0; k < 2000; ++k) {
      auto b = s;
      b[rng() % b.size()] ^= uint8_t(1u << (rng() % 8));
      const bool ok = v2 ? decode_all(d2, b, t, out) : decode_all(d1, b, t, out);
      if (ok)
        for (int64_t v : out) CHECK(v >= -32768 && v < 32768);
    }
  }
  // Varints longer than 64 bits are rejected.
  std::vector<int64_t> out;
  CHECK(!decode_all(d1, {0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, {8, false}, out));
}

namespace {
// RLE v1 decoded through a source with window8() (run headers parsed from one 8-byte window, as on
// the GPU) or byte by byte.
template <bool kWindowed>
bool decode_v1(const std::vector<uint8_t>& s, IntType t, std::vector<int64_t>& out) {
  out.clear();
  auto emit = [&](int64_t v) {
    if (out.size() >= (1u << 22)) return false;
    out.push_back(v);
    return true;
  };
  ReaderT<PtrSourceT<kWindowed>> r{PtrSourceT<kWindowed>{s.data()}, s.size()};
  EmitSink<decltype(emit)> sink{t, emit};
  return decode_rle1(r, t, sink);
}
}  // namespace

TEST(unit_orc_rle1_windowed_runs_match_bytewise) {
  // The windowed run path must decode exactly what the byte-by-byte path decodes, and fail where it
  // fails: on streams of the real fields' columns at every width and sign, on every truncation of
  // some, on bit flips, and on random bytes.
  std::vector<std::vector<int64_t>> cols;
  for (const auto& f : testutil::real_fields()) {
    if (f.dtype != hpcz::DType::f32) continue;
    for (double scale : {1.0, 100.0, 1e5})  // run-rich to run-poor
      cols.push_back(quantized(f, std::min<uint64_t>(f.n(), 50000), scale));
  }
  std::mt19937_64 rng(11);
  std::vector<int64_t> runs;
  for (int k = 0; k < 3000; ++k) {
    const int64_t d = int64_t(rng() % 7) - 3, v0 = int64_t(rng() % (1ull << (rng() % 50)));
    for (int j = 0, len = 1 + int(rng() % 20); j < len; ++j) runs.push_back(v0 + j * d);
  }
  cols.push_back(runs);
  size_t streams = 0, values = 0;
  std::vector<int64_t> a, b;
  auto same = [&](const std::vector<uint8_t>& s, IntType t) {
    const bool ok_w = decode_v1<true>(s, t, a), ok_b = decode_v1<false>(s, t, b);
    CHECK(ok_w == ok_b);
    CHECK(a == b);
    ++streams;
    values += a.size();
  };
  for (const auto& col : cols)
    for (int bytes : {1, 2, 4, 8})
      for (bool sgn : {false, true}) {
        const IntType t{bytes, sgn};
        const auto s = encode_rle1(col, t);
        same(s, t);
        for (int k = 0; k < 20; ++k) {
          std::vector<uint8_t> cut(s.begin(), s.begin() + rng() % (s.size() + 1));
          same(cut, t);
          auto flipped = s;
          for (int j = 0; j < 4; ++j) flipped[rng() % flipped.size()] ^= uint8_t(1u << (rng() % 8));
          same(flipped, t);
        }
      }
  for (int k = 0; k < 2000; ++k) {
    std::vector<uint8_t> s(rng() % 64);
    for (auto& c : s) c = uint8_t(rng() % 4 ? rng() % 0x80 : rng());  // mostly run headers and short varints
    same(s, IntType{int(1u << (rng() % 4)), bool(rng() & 1)});
  }
  std::fprintf(stderr, "  %zu streams, %zu values: windowed == byte by byte\n", streams, values);
}
