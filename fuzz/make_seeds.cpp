// Writes a starting corpus for the fuzzers: streams made by hpcz::lossless_compress from small
// patterned arrays (runs, ramps, noise, outliers), one directory per codec. For rle1/rle2 each file
// starts with the fuzz target's element-type byte (bits 0-1: log2 of the element size; bit 2: signed).
// Small archives of both lossy codecs go to OUTDIR/archive.
// Usage: make_seeds OUTDIR (writes OUTDIR/rle1, OUTDIR/rle2, OUTDIR/deflate, OUTDIR/archive, which must exist).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "hpcz/hpcz.hpp"

namespace {

constexpr size_t kMaxSeed = 4096;  // the fuzzers run with -max_len=4096
int written = 0;

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  if (bytes.size() > kMaxSeed) return;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) { std::perror(path.c_str()); return; }
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  ++written;
}

// Pattern p, element i, as a 64-bit value (truncated to the element type by the caller).
int64_t pattern(int p, size_t i, uint64_t& rng) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  const int64_t r = int64_t(rng >> 33);
  switch (p) {
    case 0: return 7;                                   // one long run
    case 1: return int64_t(i) * 3 - 100;                // fixed delta
    case 2: return int64_t(i / 13) * 5;                 // runs of 13, stepping
    case 3: return r % 50 - 25;                         // small noise
    case 4: return (i % 17 == 5) ? 1000000 + r : 2000 + int64_t(i) % 7;  // outliers (patched base)
    case 5: return (i & 1) ? -int64_t(i) : int64_t(i) * 1000;            // alternating signs, growing
    default: return r;                                  // full-width noise
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) { std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]); return 2; }
  const std::string dir = argv[1];
  const size_t counts[] = {1, 10, 100, 600};
  for (int codec = 0; codec < 2; ++codec)
    for (int lg = 0; lg < 4; ++lg)
      for (int sgn = 0; sgn < 2; ++sgn)
        for (int p = 0; p < 7; ++p)
          for (size_t n : counts) {
            hpcz::LosslessOptions o;
            o.codec = codec == 0 ? hpcz::LosslessCodec::rle1 : hpcz::LosslessCodec::rle2;
            o.elem_bytes = 1 << lg;
            o.is_signed = sgn != 0;
            std::vector<uint8_t> raw;
            uint64_t rng = 12345 + p;
            for (size_t i = 0; i < n; ++i) {
              const uint64_t v = uint64_t(pattern(p, i, rng));
              for (int b = 0; b < o.elem_bytes; ++b) raw.push_back(uint8_t(v >> (8 * b)));
            }
            try {
              std::vector<uint8_t> seed{uint8_t(lg | (sgn << 2))};
              const auto enc = hpcz::lossless_compress(raw.data(), raw.size(), o);
              seed.insert(seed.end(), enc.begin(), enc.end());
              write_file(dir + (codec == 0 ? "/rle1/" : "/rle2/") + "gen_" + std::to_string(lg) + "_" +
                             std::to_string(sgn) + "_" + std::to_string(p) + "_" + std::to_string(n), seed);
            } catch (const hpcz::Error& e) {
              std::fprintf(stderr, "make_seeds: rle: %s\n", e.what());
            }
          }
  for (int p = 0; p < 7; ++p)
    for (size_t n : counts) {
      std::vector<uint8_t> raw;
      uint64_t rng = 777 + p;
      for (size_t i = 0; i < n * 4; ++i) raw.push_back(uint8_t(pattern(p, i, rng) & (p == 6 ? 0xff : 0x3f)));
      try {
        hpcz::LosslessOptions o;
        o.codec = hpcz::LosslessCodec::deflate;
        write_file(dir + "/deflate/gen_" + std::to_string(p) + "_" + std::to_string(n),
                   hpcz::lossless_compress(raw.data(), raw.size(), o));
      } catch (const hpcz::Error& e) {  // built without zlib: run.sh adds gzip-made seeds anyway
        std::fprintf(stderr, "make_seeds: deflate: %s\n", e.what());
        break;
      }
    }
  // Archives (fuzz_archive): both codecs, f32 and f64, ranks 1 to 4, smooth and noisy data (raw
  // chunks), NaN and Inf (exceptions), a fill value, spikes (outliers), steps over zeros (the fast
  // codec's two-level blocks and sparse chunks), scattered nonzero values among zeros (lane blocks),
  // and the second stage.
  const std::vector<std::vector<uint64_t>> shapes = {{300}, {12, 25}, {4, 6, 9}, {2, 3, 4, 5}, {1}, {33}};
  int k = 0;
  for (const auto& dims : shapes)
    for (int dt = 0; dt < 2; ++dt)
      for (int codec = 0; codec < 3; ++codec)
        for (int p = 0; p < 6; ++p) {
          uint64_t n = 1;
          for (uint64_t d : dims) n *= d;
          std::vector<double> x(n);
          uint64_t rng = 99 + p;
          for (uint64_t i = 0; i < n; ++i) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            const double noise = double(rng >> 40) / double(1 << 24);
            x[i] = p == 1 ? noise : 20 + 3 * std::sin(0.1 * double(i)) + 0.01 * noise;  // noise: raw chunks
            if (p == 2 && i % 37 == 3) x[i] = i % 2 ? std::nan("") : -HUGE_VAL;        // exceptions
            if (p == 3 && i % 29 == 7) x[i] = 1e4 * noise;                             // outliers
            if (p == 4) x[i] = i % 64 < 8 ? 3.0 : 0.0;                                  // steps, zero blocks
            if (p == 5) x[i] = i % 5 ? 0.0 : double(i % 29) + 0.25;                    // lane blocks
          }
          std::vector<uint8_t> raw(n * (dt ? 8 : 4));
          for (uint64_t i = 0; i < n; ++i) {
            if (dt) std::memcpy(&raw[8 * i], &x[i], 8);
            else { const float f = float(x[i]); std::memcpy(&raw[4 * i], &f, 4); }
          }
          hpcz::Options o;
          o.codec = codec == 2 ? hpcz::Codec::interp : (codec ? hpcz::Codec::ratio : hpcz::Codec::fast);
          o.backend = hpcz::Backend::cpu;
          o.bound = p == 3 ? 1e-4 : 1e-2;
          o.mode = p == 2 ? hpcz::BoundMode::abs : hpcz::BoundMode::rel;
          if (p == 0 && dims.size() == 2) o.fill = 20.0;
          o.second_stage = (k % 3) == 0;
          try {
            write_file(dir + "/archive/gen_" + std::to_string(k++),
                       hpcz::compress(raw.data(), dt ? hpcz::DType::f64 : hpcz::DType::f32, dims, o));
          } catch (const hpcz::Error& e) {
            std::fprintf(stderr, "make_seeds: archive: %s\n", e.what());
          }
        }
  // Storage types (format version 7; int64: 9): float16 and int16 ramps with specials, uint8 steps, each codec.
  for (int codec = 0; codec < 3; ++codec)
    for (hpcz::DType t : {hpcz::DType::f16, hpcz::DType::bf16, hpcz::DType::i16, hpcz::DType::u8, hpcz::DType::i32,
                          hpcz::DType::i64}) {
      const uint64_t n = 700;
      const size_t w = hpcz::dtype_size(t);
      std::vector<uint8_t> raw(n * w);
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t v = 0;  // its first w bytes (little-endian)
        if (t == hpcz::DType::f16) v = i % 41 == 3 ? 0x7e01u : uint32_t(0x4000 + (i * 3) % 900);  // NaN payloads
        else if (t == hpcz::DType::bf16) v = i % 43 == 5 ? 0xff80u : uint32_t(0x4100 + (i * 7) % 300);
        else if (t == hpcz::DType::u8) v = uint32_t(i % 64 < 8 ? 200 : i % 5);
        else v = uint64_t(int64_t(int32_t(300 * std::sin(0.05 * double(i))) - int32_t(i % 3)));
        std::memcpy(&raw[i * w], &v, w);
      }
      hpcz::Options o;
      o.codec = codec == 2 ? hpcz::Codec::interp : (codec ? hpcz::Codec::ratio : hpcz::Codec::fast);
      o.backend = hpcz::Backend::cpu;
      o.mode = codec == 1 ? hpcz::BoundMode::abs : hpcz::BoundMode::rel;
      o.bound = codec == 1 ? 0.0 : 1e-2;
      o.second_stage = t == hpcz::DType::i16;
      try {
        write_file(dir + "/archive/gen_" + std::to_string(k++), hpcz::compress(raw.data(), t, {n}, o));
      } catch (const hpcz::Error& e) {
        std::fprintf(stderr, "make_seeds: archive: %s\n", e.what());
      }
    }
  // Format version 8: pw_rel's log chunks (interp: specials masked; ratio: placed), both signs, zeros,
  // NaN and a fill value among the values, f32 and f64; and pw_rel on a float16 array.
  for (int codec = 1; codec < 3; ++codec)
    for (int dt = 0; dt < 2; ++dt) {
      const uint64_t n = 900;
      std::vector<double> x(n);
      for (uint64_t i = 0; i < n; ++i) {
        x[i] = (i / 100 % 2 ? -1 : 1) * std::exp(std::sin(0.03 * double(i)) * 4);
        if (i % 17 == 2) x[i] = 0.0;
        if (i % 53 == 9) x[i] = i % 2 ? std::nan("") : -5.0;  // -5: the fill value
      }
      std::vector<uint8_t> raw(n * (dt ? 8 : 4));
      for (uint64_t i = 0; i < n; ++i) {
        if (dt) std::memcpy(&raw[8 * i], &x[i], 8);
        else { const float f = float(x[i]); std::memcpy(&raw[4 * i], &f, 4); }
      }
      hpcz::Options o;
      o.codec = codec == 2 ? hpcz::Codec::interp : hpcz::Codec::ratio;
      o.backend = hpcz::Backend::cpu;
      o.mode = hpcz::BoundMode::pw_rel;
      o.bound = dt ? 1e-4 : 1e-2;
      o.fill = -5.0;
      try {
        write_file(dir + "/archive/gen_" + std::to_string(k++),
                   hpcz::compress(raw.data(), dt ? hpcz::DType::f64 : hpcz::DType::f32, {30, 30}, o));
      } catch (const hpcz::Error& e) {
        std::fprintf(stderr, "make_seeds: archive: %s\n", e.what());
      }
    }
  {
    std::vector<uint16_t> h(600);
    for (size_t i = 0; i < h.size(); ++i) h[i] = uint16_t(i % 31 == 4 ? 0x8000 : 0x3c00 + (i * 5) % 2000);
    hpcz::Options o;
    o.backend = hpcz::Backend::cpu;
    o.mode = hpcz::BoundMode::pw_rel;
    o.bound = 1e-2;
    try {
      write_file(dir + "/archive/gen_" + std::to_string(k++), hpcz::compress(h.data(), hpcz::DType::f16, {h.size()}, o));
    } catch (const hpcz::Error& e) {
      std::fprintf(stderr, "make_seeds: archive: %s\n", e.what());
    }
  }
  std::printf("make_seeds: %d seeds in %s\n", written, dir.c_str());
  return 0;
}
