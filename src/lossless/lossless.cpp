// Lossless codecs on the CPU, behind hpcz::lossless_compress / lossless_decompress: ORC RLE v1 and v2
// over integer elements (raw ORC streams, so other ORC readers can read them), and Deflate with gzip
// framing through zlib; Deflate decoding is our own (inflate.hpp: gzip, zlib or raw Deflate), the
// reference for the GPU decoder to come.
#include <cstring>
#include <string>

#include "hpcz/hpcz.hpp"
#include "lossless/inflate.hpp"
#include "lossless/orc_rle.hpp"
#include "pipeline/internal.hpp"
#if HPCZ_HAS_ZLIB
#include <zlib.h>
#endif

namespace hpcz {
namespace {

using pipeline::fail;

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

// Output sink for inflate on the CPU: grows a vector; back-references are checked against it.
struct VectorOut {
  std::vector<uint8_t>& v;
  bool put(uint8_t b) { v.push_back(b); return true; }
  lossless::InflateStatus copy(uint32_t dist, uint32_t len) {
    if (dist == 0 || dist > v.size()) return lossless::InflateStatus::bad_distance;
    const size_t from = v.size() - dist;
    for (uint32_t k = 0; k < len; ++k) v.push_back(v[from + k]);
    return lossless::InflateStatus::ok;
  }
};

const char* inflate_message(lossless::InflateStatus s) {
  switch (s) {
    case lossless::InflateStatus::truncated: return "truncated Deflate stream";
    case lossless::InflateStatus::bad_block_type: return "invalid Deflate block type";
    case lossless::InflateStatus::bad_stored_length: return "stored block length check failed";
    case lossless::InflateStatus::bad_code_lengths: return "invalid Huffman code lengths";
    case lossless::InflateStatus::bad_symbol: return "invalid literal/length symbol";
    case lossless::InflateStatus::bad_distance: return "invalid distance";
    case lossless::InflateStatus::bad_header: return "invalid gzip or zlib header";
    case lossless::InflateStatus::bad_checksum: return "checksum mismatch";
    default: return "Deflate error";
  }
}

// Our own decoder (the reference for the GPU one): gzip (any number of members), zlib or raw Deflate.
std::vector<uint8_t> inflate_framed(const uint8_t* d, size_t size) {
  using lossless::InflateStatus;
  std::vector<uint8_t> out;
  VectorOut sink{out};
  auto bad = [&](InflateStatus s) { fail(ErrorCode::corrupt_archive, std::string("corrupt Deflate data: ") + inflate_message(s)); };
  const bool gzip = size >= 2 && d[0] == 0x1f && d[1] == 0x8b;
  const bool zlib = !gzip && size >= 2 && (d[0] & 0x0f) == 8 && (d[0] >> 4) <= 7 && (d[0] * 256 + d[1]) % 31 == 0;
  if (!gzip && !zlib) {
    lossless::BitReader br{d, size};
    const InflateStatus s = lossless::inflate_raw(br, sink);
    if (s != InflateStatus::ok) bad(s);
    return out;
  }
  if (zlib) {
    if (d[1] & 0x20) fail(ErrorCode::unsupported, "zlib stream with a preset dictionary");
    lossless::BitReader br{d + 2, size - 2};
    const InflateStatus s = lossless::inflate_raw(br, sink);
    if (s != InflateStatus::ok) bad(s);
    br.align();
    const uint64_t at = 2 + br.pos - uint64_t(br.count / 8);
    if (at + 4 > size) bad(InflateStatus::truncated);
    const uint32_t want = uint32_t(d[at]) << 24 | uint32_t(d[at + 1]) << 16 | uint32_t(d[at + 2]) << 8 | d[at + 3];
    if (want != lossless::adler32(out.data(), out.size())) bad(InflateStatus::bad_checksum);
    return out;
  }
  uint64_t at = 0;
  while (at < size) {  // gzip members, back to back
    if (size - at < 18 || d[at] != 0x1f || d[at + 1] != 0x8b || d[at + 2] != 8 || (d[at + 3] & 0xe0))
      bad(InflateStatus::bad_header);
    const uint8_t flg = d[at + 3];
    uint64_t p = at + 10;
    if (flg & 4) {  // FEXTRA
      if (p + 2 > size) bad(InflateStatus::truncated);
      p += 2 + (uint64_t(d[p]) | uint64_t(d[p + 1]) << 8);
    }
    for (int f : {8, 16})  // FNAME, FCOMMENT: zero-terminated
      if (flg & f) {
        while (p < size && d[p]) ++p;
        ++p;
      }
    if (flg & 2) p += 2;  // FHCRC
    if (p > size) bad(InflateStatus::truncated);
    const size_t start = out.size();
    lossless::BitReader br{d + p, size - p};
    const InflateStatus s = lossless::inflate_raw(br, sink);
    if (s != InflateStatus::ok) bad(s);
    br.align();
    const uint64_t end = p + br.pos - uint64_t(br.count / 8);
    if (end + 8 > size) bad(InflateStatus::truncated);
    auto le32 = [&](uint64_t q) { return uint32_t(d[q]) | uint32_t(d[q + 1]) << 8 | uint32_t(d[q + 2]) << 16 | uint32_t(d[q + 3]) << 24; };
    if (le32(end) != lossless::crc32_update(0, out.data() + start, out.size() - start) ||
        le32(end + 4) != uint32_t(out.size() - start))
      bad(InflateStatus::bad_checksum);
    at = end + 8;
  }
  return out;
}

#if HPCZ_HAS_ZLIB
// gzip-framed Deflate through zlib (level 6).
std::vector<uint8_t> gzip_deflate(const uint8_t* d, size_t size) {
  z_stream z;
  std::memset(&z, 0, sizeof z);
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    fail(ErrorCode::invalid_argument, "zlib init failed");
  std::vector<uint8_t> out;
  size_t in_done = 0;
  uint8_t buf[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (z.avail_in == 0 && in_done < size) {  // zlib counts input in 32 bits: feed at most 1 GiB at a time
      const size_t n = size - in_done < (size_t(1) << 30) ? size - in_done : (size_t(1) << 30);
      z.next_in = const_cast<uint8_t*>(d + in_done);
      z.avail_in = uInt(n);
      in_done += n;
    }
    z.next_out = buf;
    z.avail_out = sizeof buf;
    rc = deflate(&z, in_done == size ? Z_FINISH : Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
      deflateEnd(&z);
      fail(ErrorCode::invalid_argument, "zlib deflate failed");
    }
    out.insert(out.end(), buf, buf + (sizeof buf - z.avail_out));
  }
  deflateEnd(&z);
  return out;
}
#endif

}  // namespace

std::vector<uint8_t> lossless_compress(const uint8_t* data, size_t size, const LosslessOptions& o) {
  if (o.codec == LosslessCodec::deflate) {
#if HPCZ_HAS_ZLIB
    return gzip_deflate(data, size);
#else
    fail(ErrorCode::backend_unavailable, "this hpcz was built without zlib (Deflate)");
#endif
  }
  const lossless::IntType t = int_type(o);
  const auto v = read_ints(data, size, t);
  return o.codec == LosslessCodec::rle1 ? lossless::encode_rle1(v, t) : lossless::encode_rle2(v, t);
}

std::vector<uint8_t> lossless_decompress(const uint8_t* data, size_t size, const LosslessOptions& o) {
  if (o.codec == LosslessCodec::deflate) return inflate_framed(data, size);
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
