// The C API (for bindings): round trips in both codecs, status codes, the out-of-space protocol.
#include <cstring>
#include <vector>

#include "common.hpp"
#include "hpcz/hpcz.h"

TEST(unit_c_api_round_trip_and_status) {
  std::vector<float> v(50000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(std::sin(i * 0.01) * 10);
  const uint64_t dims[2] = {250, 200};
  for (int codec : {0, int(HPCZ_FAST), int(HPCZ_RATIO)}) {
    hpcz_options o;
    std::memset(&o, 0, sizeof o);
    o.mode = HPCZ_ABS;
    o.bound = 1e-3;
    o.backend = HPCZ_CPU;
    o.codec = codec;
    std::vector<uint8_t> out(hpcz_max_compressed_size(v.size(), HPCZ_F32));
    size_t size = 0;
    // Too small a buffer: HPCZ_OUT_OF_SPACE and the size needed.
    CHECK(hpcz_compress(v.data(), HPCZ_F32, dims, 2, &o, out.data(), 10, &size) == HPCZ_OUT_OF_SPACE);
    CHECK(size > 10);
    REQUIRE(hpcz_compress(v.data(), HPCZ_F32, dims, 2, &o, out.data(), out.size(), &size) == HPCZ_OK);
    int dtype = 0, ndims = 0;
    uint64_t d[4] = {0, 0, 0, 0}, n = 0;
    CHECK(hpcz_inspect(out.data(), size, &dtype, &ndims, d, &n) == HPCZ_OK);
    CHECK(dtype == HPCZ_F32 && ndims == 2 && d[0] == 250 && d[1] == 200 && n == v.size());
    std::vector<float> back(v.size());
    CHECK(hpcz_decompress(out.data(), size, back.data(), back.size() * 4, HPCZ_CPU) == HPCZ_OK);
    auto c = testutil::strict_check(v.data(), back.data(), v.size(), 1e-3, std::nullopt);
    CHECK(c.violations == 0);
    out[size / 2] ^= 0x40;  // damaged: a status, never a crash
    CHECK(hpcz_decompress(out.data(), size, back.data(), back.size() * 4, HPCZ_CPU) == HPCZ_CORRUPT_ARCHIVE);
    CHECK(std::strlen(hpcz_last_error()) > 0);
  }
  hpcz_options bad;
  std::memset(&bad, 0, sizeof bad);
  bad.mode = HPCZ_REL;
  bad.bound = 1e-3;
  bad.codec = 7;
  std::vector<uint8_t> out(hpcz_max_compressed_size(v.size(), HPCZ_F32));
  size_t size = 0;
  CHECK(hpcz_compress(v.data(), HPCZ_F32, dims, 2, &bad, out.data(), out.size(), &size) == HPCZ_INVALID_ARGUMENT);
  bad.codec = HPCZ_RATIO;
  bad.radius = 5000;
  CHECK(hpcz_compress(v.data(), HPCZ_F32, dims, 2, &bad, out.data(), out.size(), &size) == HPCZ_INVALID_ARGUMENT);
}
