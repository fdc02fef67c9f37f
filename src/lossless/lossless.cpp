// Lossless codecs behind hpcz::lossless_*: ORC RLE v1/v2 over integer elements and Deflate.
//
// Compression (CPU) cuts the input into chunks of opt.chunk_bytes, encoded independently in parallel:
// RLE chunks go into an "HZLC" container (header, chunk table, ORC streams; docs/FORMAT.md section 8),
// Deflate chunks become gzip members that carry their own size in an "HZ" extra field, so the file is
// ordinary gzip and the chunk boundaries are found without decoding. Decompression finds the chunks
// and decodes them all at once, on the GPU (one warp per chunk, lossless_cuda.cu) or on the CPU
// (OpenMP), with the same shared decoders (orc_rle.hpp, inflate.hpp) and the same results.
// Streams without a chunk index (a raw ORC stream, gzip from other tools, zlib, raw Deflate) decode
// serially on the CPU.
#include <cstring>
#include <string>

#include "common/error.hpp"
#include "common/parallel.hpp"  // its fork handlers: this file has OpenMP regions
#include "format/checksum.hpp"
#include "format/header.hpp"
#include "hpcz/hpcz.hpp"
#include "lossless/cpu_sinks.hpp"
#include "lossless/inflate.hpp"
#include "lossless/lossless_internal.hpp"
#include "lossless/orc_rle.hpp"
#if HPCZ_HAS_ZLIB
#include <zlib.h>
#endif

namespace hpcz {
namespace {

using detail::load_u32_le;
using detail::load_u64_le;
using detail::store_u32_le;
using detail::store_u64_le;
using lossless::ChunkRef;

lossless::IntType int_type(const LosslessOptions& o) {
  if (o.elem_bytes != 1 && o.elem_bytes != 2 && o.elem_bytes != 4 && o.elem_bytes != 8)
    fail(ErrorCode::invalid_argument, "element size must be 1, 2, 4 or 8 bytes");
  return {o.elem_bytes, o.is_signed};
}

std::vector<int64_t> read_ints(const uint8_t* d, size_t n, lossless::IntType t) {
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t u = 0;
    for (int b = 0; b < t.bytes; ++b) u |= uint64_t(d[i * t.bytes + b]) << (8 * b);
    if (t.is_signed && t.bytes < 8 && (u >> (8 * t.bytes - 1))) u |= ~t.mask();  // sign-extend
    v[i] = int64_t(u);
  }
  return v;
}

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
    case lossless::InflateStatus::output_full: return "decoded data larger than recorded";
    default: return "Deflate error";
  }
}

uint32_t crc32_of(const uint8_t* d, uint64_t n) {
#if HPCZ_HAS_ZLIB
  uLong c = crc32(0L, Z_NULL, 0);
  while (n) {  // zlib counts in 32 bits
    const uInt k = n > (1u << 30) ? (1u << 30) : uInt(n);
    c = crc32(c, d, k);
    d += k;
    n -= k;
  }
  return uint32_t(c);
#else
  return lossless::crc32_update(0, d, n);
#endif
}

// ---- one chunk on the CPU (the reference for the GPU decoder) ------------------------------------
// Decodes into out (cap bytes); n: the bytes written, also when it stops at output_overflow (the first
// n bytes of the chunk's output: steps that would cross cap write nothing, none writes more than 512).
LosslessStatus decode_chunk_bytes(const LosslessOptions& o, const uint8_t* in, uint64_t in_size, uint8_t* out,
                                  uint64_t cap, uint64_t& n) {
  n = 0;
  if (o.codec == LosslessCodec::deflate) {
    lossless::BitReader br{lossless::PtrSource{in}, in_size};
    lossless::ByteSink sink{out, cap};
    lossless::SerialCtx ctx;
    lossless::InflateTables t;
    const auto s = lossless::inflate_raw(br, sink, ctx, t);
    n = sink.n;
    if (s == lossless::InflateStatus::output_full) return LosslessStatus::output_overflow;
    return s == lossless::InflateStatus::ok ? LosslessStatus::ok : LosslessStatus::corrupt;
  }
  const lossless::IntType t = int_type(o);
  lossless::Reader r{lossless::PtrSource{in}, in_size};
  lossless::IntSink sink{t, out, cap / uint64_t(t.bytes)};
  const bool ok = o.codec == LosslessCodec::rle1 ? lossless::decode_rle1(r, t, sink) : lossless::decode_rle2(r, t, sink);
  n = sink.n * uint64_t(t.bytes);
  if (!ok) return sink.err == lossless::SinkError::overflow ? LosslessStatus::output_overflow : LosslessStatus::corrupt;
  return LosslessStatus::ok;
}

LosslessStatus decode_chunk_cpu(const LosslessOptions& o, const uint8_t* in, uint64_t in_size, uint8_t* out,
                                uint64_t cap, uint64_t& out_size) {
  const LosslessStatus s = decode_chunk_bytes(o, in, in_size, out, cap, out_size);
  if (s != LosslessStatus::ok) out_size = 0;
  return s;
}

#if HPCZ_HAS_ZLIB
std::vector<uint8_t> raw_deflate(const uint8_t* d, size_t size);
#endif

}  // namespace

namespace lossless {
void decode_chunks_checked(const LosslessOptions& o, const uint8_t* blob, uint64_t blob_size,
                           const std::vector<ChunkRef>& chunks, uint8_t* out, uint64_t out_size,
                           const std::vector<uint64_t>& names) {
  std::vector<uint64_t> sizes(chunks.size());
  std::vector<LosslessStatus> st(chunks.size());
  if (resolve_backend(o.backend) == Backend::gpu) {
    lossless::decode_chunks_gpu(o, blob, blob_size, chunks, out, out_size, sizes, st);
  } else {  // (16 chunks a step: with no more, one thread would take them all)
#pragma omp parallel for schedule(dynamic, 16) if (chunks.size() > 16)
    for (long long i = 0; i < (long long)chunks.size(); ++i) {
      const ChunkRef& c = chunks[size_t(i)];
      st[size_t(i)] = decode_chunk_cpu(o, blob + c.in_offset, c.in_size, out + c.out_offset, c.out_capacity, sizes[size_t(i)]);
    }
  }
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (st[i] == LosslessStatus::ok && sizes[i] == chunks[i].out_capacity) continue;
    const std::string what = st[i] == LosslessStatus::ok ? "decoded size differs from the recorded one"
                             : st[i] == LosslessStatus::output_overflow ? "decoded data larger than recorded"
                                                                        : "malformed or truncated stream";
    fail(ErrorCode::corrupt_archive, "corrupt chunk " + std::to_string(names.empty() ? i : names[i]) + ": " + what);
  }
}

uint64_t decode_prefix(const LosslessOptions& o, const uint8_t* in, uint64_t in_size, uint8_t* out, uint64_t want) {
  // Room for one more step than wanted (a Deflate match is 258 bytes at most, an RLE run 512 values): a
  // stream stopped for room has then written at least `want` bytes.
  std::vector<uint8_t> buf(want + 1024);
  uint64_t n = 0;
  const LosslessStatus s = decode_chunk_bytes(o, in, in_size, buf.data(), buf.size(), n);
  if (s == LosslessStatus::corrupt || (s == LosslessStatus::output_overflow && n < want))
    fail(ErrorCode::corrupt_archive, "corrupt chunk: malformed or truncated stream");
  n = std::min(n, want);
  std::memcpy(out, buf.data(), n);
  return n;
}

std::vector<uint8_t> encode_chunk(const uint8_t* data, size_t size, const LosslessOptions& o) {
  if (o.codec == LosslessCodec::deflate) {
#if HPCZ_HAS_ZLIB
    return raw_deflate(data, size);
#else
    return {};
#endif
  }
  const IntType t = int_type(o);
  if (size % size_t(t.bytes))
    fail(ErrorCode::invalid_argument, "input size " + std::to_string(size) + " is not a multiple of the element size");
  return o.codec == LosslessCodec::rle1 ? encode_rle1(read_ints(data, size / size_t(t.bytes), t), t)
                                        : encode_rle2(read_ints(data, size / size_t(t.bytes), t), t);
}
}  // namespace lossless

namespace {

void decode_chunks(const LosslessOptions& o, const uint8_t* blob, uint64_t blob_size, const std::vector<ChunkRef>& chunks,
                   uint8_t* out, uint64_t out_size) {
  lossless::decode_chunks_checked(o, blob, blob_size, chunks, out, out_size, {});
}

// ---- the HZLC container (RLE) ----------------------------------------------------------------------
constexpr uint8_t kContainerMagic[4] = {'H', 'Z', 'L', 'C'};
// Version 2: a chunk whose size equals its elements' bytes is those bytes, stored as they are (written
// only when coding would not shrink a chunk: random data grew by a third in ORC RLE v1). Files with no
// such chunk are still written as version 1, which every reader takes.
constexpr uint16_t kContainerVersion = 2;
constexpr uint16_t kContainerVersionNoRaw = 1;
constexpr uint64_t kContainerHeader = 48;

bool is_container(const uint8_t* d, size_t size) { return size >= 4 && std::memcmp(d, kContainerMagic, 4) == 0; }

std::vector<uint8_t> rle_compress(const uint8_t* data, size_t size, const LosslessOptions& o) {
  const lossless::IntType t = int_type(o);
  if (size % size_t(t.bytes))
    fail(ErrorCode::invalid_argument, "input size " + std::to_string(size) + " is not a multiple of the element size");
  if (o.chunk_bytes < uint32_t(t.bytes) || o.chunk_bytes % uint32_t(t.bytes))
    fail(ErrorCode::invalid_argument, "chunk size must be a positive multiple of the element size");
  const uint64_t n = size / uint64_t(t.bytes), per = o.chunk_bytes / uint32_t(t.bytes);
  const uint64_t n_chunks = (n + per - 1) / per;
  std::vector<std::vector<uint8_t>> enc(n_chunks);
  bool any_raw = false;
#pragma omp parallel for schedule(dynamic, 4) reduction(|| : any_raw)
  for (long long c = 0; c < (long long)n_chunks; ++c) {
    const uint64_t first = uint64_t(c) * per, cnt = std::min<uint64_t>(per, n - first);
    const uint8_t* src = data + first * uint64_t(t.bytes);
    const size_t raw = size_t(cnt * uint64_t(t.bytes));
    enc[size_t(c)] = lossless::encode_chunk(src, raw, o);
    if (enc[size_t(c)].size() >= raw) {  // coding does not pay: the bytes themselves (version 2)
      enc[size_t(c)].assign(src, src + raw);
      any_raw = true;
    }
  }
  uint64_t total = kContainerHeader + 16 * n_chunks;
  for (auto& e : enc) total += e.size();
  std::vector<uint8_t> a(total, 0);
  std::memcpy(a.data(), kContainerMagic, 4);
  a[4] = uint8_t(any_raw ? kContainerVersion : kContainerVersionNoRaw);
  a[6] = o.codec == LosslessCodec::rle1 ? 1 : 2;
  a[7] = uint8_t(t.bytes);
  a[8] = t.is_signed ? 1 : 0;
  store_u32_le(&a[12], uint32_t(per));
  store_u64_le(&a[16], n);
  store_u64_le(&a[24], n_chunks);
  store_u64_le(&a[32], total);
  uint64_t at = kContainerHeader + 16 * n_chunks;
  for (uint64_t c = 0; c < n_chunks; ++c) {
    const auto& e = enc[c];
    if (e.size() > 0xffffffffull) fail(ErrorCode::invalid_argument, "chunk too large");
    format::write_chunk_entry(&a[kContainerHeader + 16 * c], at, uint32_t(e.size()), format::checksum(e.data(), e.size()));
    if (!e.empty()) std::memcpy(&a[at], e.data(), e.size());
    at += e.size();
  }
  store_u32_le(&a[40], format::checksum(&a[kContainerHeader], 16 * n_chunks));
  store_u32_le(&a[44], format::checksum(a.data(), 44));
  return a;
}

std::vector<uint8_t> rle_decompress_container(const uint8_t* d, size_t size, const LosslessOptions& o) {
  auto bad = [](const std::string& m) { fail(ErrorCode::corrupt_archive, "corrupt HZLC container: " + m); };
  if (size < kContainerHeader) bad("truncated header");
  if (load_u32_le(d + 44) != format::checksum(d, 44)) bad("header checksum mismatch");
  const uint32_t version = d[4] | uint32_t(d[5]) << 8;
  if (version < kContainerVersionNoRaw || version > kContainerVersion)
    fail(ErrorCode::unsupported, "HZLC container version " + std::to_string(version) + " (this hpcz reads 1 and 2)");
  const int codec = d[6], bytes = d[7], sgn = d[8];
  if ((codec != 1 && codec != 2) || (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) || sgn > 1 || d[9] || d[10] || d[11])
    bad("invalid codec, element size or reserved bytes");
  const LosslessCodec want = codec == 1 ? LosslessCodec::rle1 : LosslessCodec::rle2;
  if (want != o.codec) bad(std::string("it holds ") + (codec == 1 ? "rle1" : "rle2") + " data, not the requested codec");
  LosslessOptions co = o;  // the container's own type wins over --elem / --signed
  co.elem_bytes = bytes;
  co.is_signed = sgn != 0;
  const uint64_t per = load_u32_le(d + 12), n = load_u64_le(d + 16), n_chunks = load_u64_le(d + 24);
  if (per == 0 || n_chunks != (n + per - 1) / per) bad("chunk count does not match the element count");
  if (load_u64_le(d + 32) != size) bad("size " + std::to_string(size) + " differs from the recorded " + std::to_string(load_u64_le(d + 32)));
  if (n_chunks > (size - kContainerHeader) / 16) bad("chunk table larger than the file");
  if (n > (uint64_t(1) << 62) / uint64_t(bytes)) bad("element count too large");
  if (load_u32_le(d + 40) != format::checksum(d + kContainerHeader, 16 * n_chunks)) bad("chunk table checksum mismatch");
  std::vector<ChunkRef> chunks, raw;  // coded chunks, and (version 2) chunks stored as they are
  std::vector<uint64_t> names;        // the coded chunks' numbers, for error messages
  chunks.reserve(n_chunks);
  uint64_t at = kContainerHeader + 16 * n_chunks;
  for (uint64_t c = 0; c < n_chunks; ++c) {
    const uint8_t* e = d + kContainerHeader + 16 * c;
    const uint64_t off = load_u64_le(e), len = load_u32_le(e + 8);
    if (off != at || len > size - at) bad("chunk " + std::to_string(c) + " is not where the table says");
    if (load_u32_le(e + 12) != format::checksum(d + off, len)) bad("chunk " + std::to_string(c) + " checksum mismatch");
    const uint64_t first = c * per, cnt = std::min<uint64_t>(per, n - first);
    // No ORC run yields more than 128 values per byte (a 4-byte delta run of 512), so a larger claim
    // is damage; checked before anything is allocated for it.
    if (cnt > lossless::kMaxRleValuesPerByte * len) bad("chunk " + std::to_string(c) + " claims more values than its bytes can hold");
    const ChunkRef ref{off, len, first * uint64_t(bytes), cnt * uint64_t(bytes)};
    if (version >= 2 && len == ref.out_capacity) {
      raw.push_back(ref);
    } else {
      chunks.push_back(ref);
      names.push_back(c);
    }
    at += len;
  }
  if (at != size) bad("trailing bytes after the last chunk");
  std::vector<uint8_t> out(n * uint64_t(bytes));
  // The coded chunks first: a GPU decode copies back all of out, the raw chunks' places included.
  if (!chunks.empty()) lossless::decode_chunks_checked(co, d, size, chunks, out.data(), out.size(), names);
  for (const ChunkRef& r : raw) std::memcpy(out.data() + r.out_offset, d + r.in_offset, r.in_size);
  return out;
}

// ---- indexed gzip (Deflate) ------------------------------------------------------------------------
// Member: 1f 8b 08 04 (FEXTRA), MTIME 0, XFL 0, OS 255, XLEN 16, subfield 'H' 'Z' LEN 12: the member's
// total size, its index in its file and the file's member count; then raw Deflate, CRC-32 and ISIZE.
// The index and count make a file cut at a member boundary an error (it would otherwise be a shorter
// valid gzip file), while files concatenated with cat still read: each is a complete group.
// Before, hpcz wrote LEN 4 (the size alone, XLEN 8, a 20-byte header); those files still read.
constexpr uint64_t kMemberHeader = 28, kMemberHeaderSizeOnly = 20;

#if HPCZ_HAS_ZLIB
std::vector<uint8_t> raw_deflate(const uint8_t* d, size_t size) {
  z_stream z;
  std::memset(&z, 0, sizeof z);
  if (deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    fail(ErrorCode::invalid_argument, "zlib init failed");
  std::vector<uint8_t> out(deflateBound(&z, uLong(size)));
  z.next_in = const_cast<uint8_t*>(d);
  z.avail_in = uInt(size);
  z.next_out = out.data();
  z.avail_out = uInt(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(out.size() - z.avail_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) fail(ErrorCode::invalid_argument, "zlib deflate failed");
  return out;
}

std::vector<uint8_t> gzip_compress(const uint8_t* data, size_t size, const LosslessOptions& o) {
  if (o.chunk_bytes == 0 || o.chunk_bytes > (1u << 30)) fail(ErrorCode::invalid_argument, "chunk size must be 1 byte to 1 GiB");
  const uint64_t per = o.chunk_bytes, n_chunks = size ? (size + per - 1) / per : 1;  // an empty input is one empty member
  if (n_chunks > 0xffffffffull) fail(ErrorCode::invalid_argument, "more than 2^32 - 1 Deflate chunks: use larger chunks");
  std::vector<std::vector<uint8_t>> members(n_chunks);
#pragma omp parallel for schedule(dynamic, 4)
  for (long long c = 0; c < (long long)n_chunks; ++c) {
    const uint64_t first = uint64_t(c) * per, cnt = std::min<uint64_t>(per, size - first);
    const std::vector<uint8_t> body = raw_deflate(data + first, cnt);
    std::vector<uint8_t>& m = members[size_t(c)];
    m.assign(kMemberHeader + body.size() + 8, 0);
    const uint8_t head[16] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 255, 16, 0, 'H', 'Z', 12, 0};
    std::memcpy(m.data(), head, 16);
    store_u32_le(&m[16], uint32_t(m.size()));
    store_u32_le(&m[20], uint32_t(c));
    store_u32_le(&m[24], uint32_t(n_chunks));
    std::memcpy(&m[kMemberHeader], body.data(), body.size());
    store_u32_le(&m[kMemberHeader + body.size()], crc32_of(data + first, cnt));
    store_u32_le(&m[kMemberHeader + body.size() + 4], uint32_t(cnt));
  }
  std::vector<uint8_t> out;
  for (auto& m : members) out.insert(out.end(), m.begin(), m.end());
  return out;
}
#endif

// The member list of an indexed gzip file, or false if it is not one (then the file is decoded
// serially, which also reports most damage). Throws when indexed members do not form complete groups:
// a file cut at a member boundary, or members lost or spliced.
bool index_gzip(const uint8_t* d, size_t size, std::vector<ChunkRef>& chunks, uint64_t& out_total) {
  chunks.clear();
  out_total = 0;
  uint64_t at = 0, group_next = 0, group_count = 0;  // the open group of indexed members (count 0: none)
  auto bad_group = [&](const std::string& what) {
    fail(ErrorCode::corrupt_archive, "corrupt or truncated Deflate file: gzip member " + std::to_string(chunks.size()) + " " + what);
  };
  while (at < size) {
    if (size - at < kMemberHeaderSizeOnly + 8) break;
    const uint8_t* m = d + at;
    if (m[0] != 0x1f || m[1] != 0x8b || m[2] != 8 || m[3] != 4 || m[11] != 0 || m[12] != 'H' || m[13] != 'Z' || m[15] != 0)
      break;
    uint64_t head;
    if (m[10] == 16 && m[14] == 12 && size - at >= kMemberHeader + 8) {
      head = kMemberHeader;
      const uint32_t index = load_u32_le(m + 20), count = load_u32_le(m + 24);
      if (group_count == 0 && index == 0) group_count = count;  // a new group starts
      if (count == 0 || index != group_next || count != group_count)
        bad_group("says it is number " + std::to_string(index) + " of " + std::to_string(count) + " where number " +
                  std::to_string(group_next) + " of " + std::to_string(group_count) + " was due");
      if (++group_next == group_count) group_next = group_count = 0;
    } else if (m[10] == 8 && m[14] == 4) {
      head = kMemberHeaderSizeOnly;  // written before member groups existed: nothing to count
      if (group_count) bad_group("lacks the index its group needs");
    } else {
      break;
    }
    const uint64_t len = load_u32_le(m + 16);
    if (len < head + 8 || len > size - at) break;
    const uint64_t isize = load_u32_le(m + len - 4), body = len - head - 8;
    // Deflate expands at most 1032:1 (a 258-byte match in under 2 bits, RFC 1951), so a larger claim
    // is damage: refuse it before allocating for it (the serial decoder then reports the error).
    if (isize > lossless::kMaxDeflateExpansion * body + 16) break;
    chunks.push_back({at + head, body, out_total, isize});
    out_total += isize;
    at += len;
  }
  if (at < size || chunks.empty()) return false;  // the serial decoder reads it or says what is wrong
  if (group_count)
    bad_group("is missing: the file ends after " + std::to_string(group_next) + " of the " + std::to_string(group_count) +
              " members of a group");
  return true;
}

// Whole-stream decoding on the CPU: gzip (any number of members), zlib or raw Deflate.
std::vector<uint8_t> inflate_serial(const uint8_t* d, size_t size) {
  using lossless::InflateStatus;
  std::vector<uint8_t> out;
  lossless::ByteSink sink{nullptr, 0, &out};
  lossless::SerialCtx ctx;
  lossless::InflateTables tables;
  auto bad = [&](InflateStatus s) { fail(ErrorCode::corrupt_archive, std::string("corrupt Deflate data: ") + inflate_message(s)); };
  auto run = [&](const uint8_t* p, uint64_t n) {
    lossless::BitReader br{lossless::PtrSource{p}, n};
    const InflateStatus s = lossless::inflate_raw(br, sink, ctx, tables);
    if (s != InflateStatus::ok) bad(s);
    br.align();
    return br.consumed();
  };
  const bool gzip = size >= 2 && d[0] == 0x1f && d[1] == 0x8b;
  const bool zlib = !gzip && size >= 2 && (d[0] & 0x0f) == 8 && (d[0] >> 4) <= 7 && (d[0] * 256 + d[1]) % 31 == 0;
  if (!gzip && !zlib) {
    run(d, size);
    return out;
  }
  if (zlib) {
    if (d[1] & 0x20) fail(ErrorCode::unsupported, "zlib stream with a preset dictionary");
    const uint64_t at = 2 + run(d + 2, size - 2);
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
    const uint64_t end = p + run(d + p, size - p);
    if (end + 8 > size) bad(InflateStatus::truncated);
    if (load_u32_le(d + end) != crc32_of(out.data() + start, out.size() - start) ||
        load_u32_le(d + end + 4) != uint32_t(out.size() - start))
      bad(InflateStatus::bad_checksum);
    at = end + 8;
  }
  return out;
}

std::vector<uint8_t> inflate_any(const uint8_t* d, size_t size, const LosslessOptions& o) {
  std::vector<ChunkRef> chunks;
  uint64_t total = 0;
  if (!index_gzip(d, size, chunks, total)) return inflate_serial(d, size);
  std::vector<uint8_t> out(total);
  decode_chunks(o, d, size, chunks, out.data(), out.size());
  std::vector<int> crc_bad(chunks.size(), 0);
#pragma omp parallel for schedule(dynamic, 16)
  for (long long i = 0; i < (long long)chunks.size(); ++i) {
    const ChunkRef& c = chunks[size_t(i)];
    crc_bad[size_t(i)] = load_u32_le(d + c.in_offset + c.in_size) != crc32_of(out.data() + c.out_offset, c.out_capacity);
  }
  for (size_t i = 0; i < chunks.size(); ++i)
    if (crc_bad[i]) fail(ErrorCode::corrupt_archive, "corrupt Deflate data: CRC-32 mismatch in gzip member " + std::to_string(i));
  return out;
}

}  // namespace

std::vector<uint8_t> lossless_compress(const uint8_t* data, size_t size, const LosslessOptions& o) {
  if (o.codec == LosslessCodec::deflate) {
#if HPCZ_HAS_ZLIB
    return gzip_compress(data, size, o);
#else
    fail(ErrorCode::backend_unavailable, "this hpcz was built without zlib (Deflate)");
#endif
  }
  return rle_compress(data, size, o);
}

std::vector<uint8_t> lossless_decompress(const uint8_t* data, size_t size, const LosslessOptions& o) {
  if (o.codec == LosslessCodec::deflate) return inflate_any(data, size, o);
  if (is_container(data, size)) return rle_decompress_container(data, size, o);
  // A raw ORC stream: no index, so serially, into a growing buffer.
  const lossless::IntType t = int_type(o);
  std::vector<uint8_t> out;
  lossless::Reader r{lossless::PtrSource{data}, size};
  lossless::IntSink sink{t, nullptr, 0, &out};
  const bool ok = o.codec == LosslessCodec::rle1 ? lossless::decode_rle1(r, t, sink) : lossless::decode_rle2(r, t, sink);
  if (!ok) fail(ErrorCode::corrupt_archive, "corrupt or truncated ORC RLE stream (or a value outside the element type)");
  return out;
}

void lossless_decompress_batch(const LosslessOptions& o, const uint8_t* const* in, const uint64_t* in_sizes,
                               uint8_t* const* out, const uint64_t* out_capacity, uint64_t* out_sizes,
                               LosslessStatus* status, size_t n_chunks) {
  if (o.codec != LosslessCodec::deflate) int_type(o);  // validates elem_bytes
#pragma omp parallel for schedule(dynamic, 16)
  for (long long i = 0; i < (long long)n_chunks; ++i)
    status[i] = decode_chunk_cpu(o, in[i], in_sizes[i], out[i], out_capacity[i], out_sizes[i]);
}

}  // namespace hpcz
