// Lossless codecs on the CPU, behind hpcz::lossless_compress / lossless_decompress: ORC RLE v1 and v2
// over integer elements (raw ORC streams, so other ORC readers can read them), and Deflate with gzip
// framing through zlib (decoding accepts gzip, zlib or raw Deflate).
#include <cstring>
#include <string>

#include "hpcz/hpcz.hpp"
#include "lossless/orc_rle.hpp"
#if HPCZ_HAS_ZLIB
#include <zlib.h>
#endif

namespace hpcz {
namespace {

[[noreturn]] void fail(ErrorCode c, const std::string& m) { throw Error(c, m); }

lossless::IntType int_type(const LosslessOptions& o) {
  if (o.elem_bytes != 1 && o.elem_bytes != 2 && o.elem_bytes != 4 && o.elem_bytes != 8)
    fail(ErrorCode::invalid_argument, "element size must be 1, 2, 4 or 8 bytes");
  return {o.elem_bytes, o.is_signed};
}

std::vector<int64_t> read_ints(const uint8_t* d, size_t size, lossless::IntType t) {
  if (size % size_t(t.bytes))
    fail(ErrorCode::invalid_argument, "input size " + std::to_string(size) + " is not a multiple of the element size");
  std::vector<int64_t> v(size / size_t(t.bytes));
  for (size_t i = 0; i < v.size(); ++i) {
    uint64_t u = 0;
    for (int b = 0; b < t.bytes; ++b) u |= uint64_t(d[i * t.bytes + b]) << (8 * b);
    if (t.is_signed && t.bytes < 8 && (u >> (8 * t.bytes - 1))) u |= ~t.mask();  // sign-extend
    v[i] = int64_t(u);
  }
  return v;
}

#if HPCZ_HAS_ZLIB
std::vector<uint8_t> zlib_run(const uint8_t* d, size_t size, bool compress) {
  z_stream z;
  std::memset(&z, 0, sizeof z);
  // 15 + 16: gzip framing when compressing; 15 + 32: detect gzip or zlib when decompressing.
  int rc = compress ? deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) : inflateInit2(&z, 15 + 32);
  if (rc != Z_OK) fail(ErrorCode::invalid_argument, "zlib init failed");
  const bool raw = !compress && !(size >= 2 && ((d[0] == 0x1f && d[1] == 0x8b) || ((d[0] & 0x0f) == 8 && (d[0] * 256 + d[1]) % 31 == 0)));
  if (raw) {  // neither gzip nor zlib framing: a raw Deflate stream
    inflateEnd(&z);
    std::memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -15) != Z_OK) fail(ErrorCode::invalid_argument, "zlib init failed");
  }
  std::vector<uint8_t> out;
  size_t in_done = 0;
  uint8_t buf[1 << 16];
  for (;;) {
    if (z.avail_in == 0 && in_done < size) {
      const size_t n = size - in_done < (1u << 30) ? size - in_done : (1u << 30);
      z.next_in = const_cast<uint8_t*>(d + in_done);
      z.avail_in = uInt(n);
      in_done += n;
    }
    z.next_out = buf;
    z.avail_out = sizeof buf;
    rc = compress ? deflate(&z, in_done == size ? Z_FINISH : Z_NO_FLUSH) : inflate(&z, Z_NO_FLUSH);
    out.insert(out.end(), buf, buf + (sizeof buf - z.avail_out));
    if (rc == Z_STREAM_END) break;
    if (rc == Z_BUF_ERROR && z.avail_in == 0 && in_done == size) {
      if (compress) continue;
      (compress ? deflateEnd(&z) : inflateEnd(&z));
      fail(ErrorCode::corrupt_archive, "truncated Deflate stream");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      const std::string msg = z.msg ? z.msg : "zlib error";
      (compress ? deflateEnd(&z) : inflateEnd(&z));
      fail(ErrorCode::corrupt_archive, "corrupt Deflate stream: " + msg);
    }
  }
  (compress ? deflateEnd(&z) : inflateEnd(&z));
  return out;
}
#endif

}  // namespace

std::vector<uint8_t> lossless_compress(const uint8_t* data, size_t size, const LosslessOptions& o) {
  if (o.codec == LosslessCodec::deflate) {
#if HPCZ_HAS_ZLIB
    return zlib_run(data, size, true);
#else
    fail(ErrorCode::backend_unavailable, "this hpcz was built without zlib (Deflate)");
#endif
  }
  const lossless::IntType t = int_type(o);
  const auto v = read_ints(data, size, t);
  return o.codec == LosslessCodec::rle1 ? lossless::encode_rle1(v, t) : lossless::encode_rle2(v, t);
}

std::vector<uint8_t> lossless_decompress(const uint8_t* data, size_t size, const LosslessOptions& o) {
  if (o.codec == LosslessCodec::deflate) {
#if HPCZ_HAS_ZLIB
    return zlib_run(data, size, false);
#else
    fail(ErrorCode::backend_unavailable, "this hpcz was built without zlib (Deflate)");
#endif
  }
  const lossless::IntType t = int_type(o);
  std::vector<uint8_t> out;
  auto put = [&](int64_t v) {
    for (int b = 0; b < t.bytes; ++b) out.push_back(uint8_t(uint64_t(v) >> (8 * b)));
    return true;
  };
  const bool ok = o.codec == LosslessCodec::rle1 ? lossless::decode_rle1(data, size, t, put)
                                                 : lossless::decode_rle2(data, size, t, put);
  if (!ok) fail(ErrorCode::corrupt_archive, "corrupt or truncated ORC RLE stream (or a value outside the element type)");
  return out;
}

}  // namespace hpcz
