// libFuzzer target for the encoders: arbitrary bytes become an array and options, which must compress
// on the CPU and come back within the bound (checked with the tests' strict_check, not the library's
// own test), NaN, Inf and fill values bit for bit, within max_compressed_size. Any failure aborts.
// Layout of an input: byte 0 picks dtype (bit 0), codec (bit 1: ratio, with bit 7 interp; else fast),
// abs or rel (bit 2), a fill value (bit 3), the second stage (bit 4) and the rank (bits 5-6, plus 1); byte 1 the bound's exponent;
// byte 2 the radius; bytes 3-4 the fastest extents; the rest are the values, raw.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common.hpp"
#include "hpcz/hpcz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const uint8_t mode = data[0];
  const hpcz::DType t = mode & 1 ? hpcz::DType::f64 : hpcz::DType::f32;
  const size_t vb = hpcz::dtype_size(t);
  const uint64_t n = (size - 5) / vb;
  if (n == 0) return 0;
  hpcz::Options o;
  o.codec = mode & 2 ? (mode & 128 ? hpcz::Codec::interp : hpcz::Codec::ratio) : hpcz::Codec::fast;
  o.mode = mode & 4 ? hpcz::BoundMode::abs : hpcz::BoundMode::rel;
  o.bound = std::pow(10.0, -double(data[1] % 16) / 2 - (o.mode == hpcz::BoundMode::abs ? -3 : 0));
  if (mode & 8) o.fill = -9999.0;
  o.second_stage = mode & 16;
  o.radius = 1u << (data[2] % 12);
  o.backend = hpcz::Backend::cpu;
  // Dims: rank 1-4, the fastest extents from bytes 3 and 4, the slowest takes what is left.
  const int rank = 1 + ((mode >> 5) & 3);
  std::vector<uint64_t> dims(rank, 1);
  uint64_t rest = n;
  for (int k = rank - 1; k > 0; --k) {
    const uint64_t e = 1 + data[3 + (k & 1)] % 40;
    if (rest % e) continue;
    dims[k] = e;
    rest /= e;
  }
  dims[0] = rest;
  std::vector<uint8_t> in(data + 5, data + 5 + n * vb);
  std::vector<uint8_t> archive, back;
  try {
    archive = hpcz::compress(in.data(), t, dims, o);
  } catch (const hpcz::Error& e) {
    std::fprintf(stderr, "compress refused: %s\n", e.what());
    std::abort();
  }
  if (archive.size() > hpcz::max_compressed_size(n, t)) {
    std::fprintf(stderr, "archive of %zu bytes over max_compressed_size\n", archive.size());
    std::abort();
  }
  hpcz::ArchiveInfo info;
  try {
    info = hpcz::decompress(archive.data(), archive.size(), back, hpcz::Backend::cpu);
  } catch (const hpcz::Error& e) {
    std::fprintf(stderr, "an archive hpcz wrote does not decode: %s\n", e.what());
    std::abort();
  }
  const testutil::Check c = testutil::strict_check(in, back, t, info.eb_abs, o.fill);
  if (c.violations) {
    std::fprintf(stderr, "%llu values outside the bound %g\n", (unsigned long long)c.violations, info.eb_abs);
    std::abort();
  }
  return 0;
}
