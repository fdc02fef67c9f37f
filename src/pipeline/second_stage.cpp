// The lossless second stage: a pass over each chunk's encoded bytes with the better
// of Deflate and ORC RLE v2, or none, recorded per chunk (docs/FORMAT.md section 13).
//
// It wraps a finished archive: the chunk table then describes the stored (wrapped) chunks, and the
// header says version 2 with the second-stage flag. An encoded chunk is cut into pieces of 2^k plain
// bytes, each encoded alone: a lossy chunk is megabytes, and one warp per piece rather than per chunk
// is what lets the GPU decode the stage in parallel. Decoding unwraps first (all pieces of a codec in
// one batch, one GPU warp each, or OpenMP on the CPU) into the plain archive, whose own checks and
// decoder then run unchanged. Both backends write the same wrapped bytes: the plain archive is
// byte-identical, and the wrap runs on the CPU with deterministic encoders.
#include <cstring>
#include <string>

#include "common/parallel.hpp"
#include "format/checksum.hpp"
#include "format/header.hpp"
#include "lossless/lossless_internal.hpp"
#include "pipeline/internal.hpp"

namespace hpcz::pipeline {
namespace {

using detail::load_u32_le;
using detail::store_u32_le;
using detail::store_u64_le;

enum StageTag : uint8_t { kStored = 0, kDeflate = 1, kRle2 = 2 };
constexpr int kPieceLog2 = 14;                    // 16 KiB of plain chunk per piece (what the encoder writes)
constexpr int kMinPieceLog2 = 10, kMaxPieceLog2 = 24;
constexpr uint64_t kStageHeader = 1 + 1 + 4;      // tag, piece size log2, plain size; then a u32 per piece

// Rewrites version, flag, archive size and both checksums of a header whose table is at a + 144.
void reseal(std::vector<uint8_t>& a, uint16_t version, bool staged, uint64_t n_chunks) {
  using namespace format;
  a[kOffVersion] = uint8_t(version);
  a[kOffVersion + 1] = uint8_t(version >> 8);
  a[kOffFlags] = uint8_t(staged ? (a[kOffFlags] | kFlagSecondStage) : (a[kOffFlags] & ~kFlagSecondStage));
  store_u64_le(&a[kOffArchiveSize], a.size());
  store_u32_le(&a[kOffTableChecksum], checksum(&a[kHeaderBytes], n_chunks * kChunkEntryBytes));
  store_u32_le(&a[kOffHeaderChecksum], header_checksum(a.data()));
}

// A chunk encoded piece by piece with one codec: the stored form (tag onwards), or empty if the codec
// is unavailable in this build.
std::vector<uint8_t> encode_pieces(const uint8_t* src, uint32_t size, LosslessCodec codec) {
  const uint64_t piece = uint64_t(1) << kPieceLog2, n = (size + piece - 1) / piece;
  std::vector<uint8_t> out(kStageHeader + 4 * n);
  out[0] = codec == LosslessCodec::deflate ? kDeflate : kRle2;
  out[1] = kPieceLog2;
  store_u32_le(&out[2], size);
  LosslessOptions o;
  o.codec = codec;
  for (uint64_t k = 0; k < n; ++k) {
    const uint64_t len = std::min<uint64_t>(piece, size - k * piece);
    const std::vector<uint8_t> z = lossless::encode_chunk(src + k * piece, len, o);
    if (z.empty() && len) return {};
    store_u32_le(&out[kStageHeader + 4 * k], uint32_t(z.size()));
    out.insert(out.end(), z.begin(), z.end());
  }
  return out;
}

}  // namespace

std::vector<uint8_t> stage_chunk(const uint8_t* src, uint32_t size) {
  std::vector<uint8_t> best(1 + uint64_t(size), kStored);
  if (size) std::memcpy(&best[1], src, size);
  for (LosslessCodec codec : {LosslessCodec::deflate, LosslessCodec::rle2}) {
    std::vector<uint8_t> z = encode_pieces(src, size, codec);
    if (!z.empty() && z.size() < best.size()) best.swap(z);
  }
  return best;
}

std::vector<uint8_t> add_second_stage(const std::vector<uint8_t>& plain) {
  const ArchiveInfo info = parse_archive(plain.data(), plain.size(), true);
  if (info.second_stage) fail(ErrorCode::invalid_argument, "the archive already has the second stage");
  const size_t n = info.chunks.size();
  std::vector<std::vector<uint8_t>> stored(n);
  for_each_index(int64_t(n), threads_for(info.n_values * dtype_size(info.dtype)), 1, [&](int64_t c) {
    stored[size_t(c)] = stage_chunk(plain.data() + info.chunks[size_t(c)].offset, info.chunks[size_t(c)].size);
  });
  std::vector<uint8_t> out(plain.begin(), plain.begin() + info.data_offset);
  for (size_t c = 0; c < n; ++c) {
    format::write_chunk_entry(&out[format::kHeaderBytes + 16 * c], out.size(), uint32_t(stored[c].size()),
                              format::chunk_checksum(format::archive_version(info.codec, true), stored[c].data(),
                                                     stored[c].size()));
    out.insert(out.end(), stored[c].begin(), stored[c].end());
  }
  reseal(out, format::archive_version(info.codec, true), true, n);
  return out;
}

StagePieces second_stage_pieces(const uint8_t* a, const ArchiveInfo& info) {
  auto bad = [](uint64_t c, const std::string& m) {
    fail(ErrorCode::corrupt_archive, "corrupt archive: chunk " + std::to_string(c) + ": " + m);
  };
  StagePieces p;
  const size_t n = info.chunks.size();
  const codecs::CodecOps& codec = codecs::get(info.codec);
  const format::HeaderFields h = header_of(info);
  p.plain_size.resize(n);
  uint64_t dense[2] = {0, 0};
  for (size_t c = 0; c < n; ++c) {
    const ChunkEntry& e = info.chunks[c];
    const uint8_t* s = a + e.offset;
    if (!format::checksum_matches(format::chunk_checksum(info.version, s, e.size), e.checksum)) bad(c, "checksum mismatch");
    if (e.size < 1) bad(c, "no second-stage tag");
    if (s[0] == kStored) {
      p.plain_size[c] = e.size - 1;
      continue;
    }
    if (s[0] != kDeflate && s[0] != kRle2) bad(c, "unknown second-stage tag " + std::to_string(s[0]));
    if (e.size < kStageHeader) bad(c, "truncated second-stage header");
    const int lg = s[1];
    if (lg < kMinPieceLog2 || lg > kMaxPieceLog2) bad(c, "second-stage piece size 2^" + std::to_string(lg));
    const uint64_t plain = load_u32_le(s + 2);
    if (plain > codec.chunk_bound(h, c)) bad(c, "second stage claims a chunk larger than the codec allows");
    const uint64_t piece = uint64_t(1) << lg, np = (plain + piece - 1) / piece;
    if (np > (e.size - kStageHeader) / 4) bad(c, "second-stage piece table beyond the chunk");
    uint64_t at = kStageHeader + 4 * np;
    const int k = s[0] == kDeflate ? 0 : 1;
    for (uint64_t j = 0; j < np; ++j) {
      const uint64_t len = load_u32_le(s + kStageHeader + 4 * j), out = std::min<uint64_t>(piece, plain - j * piece);
      if (len > e.size - at) bad(c, "second-stage piece beyond the chunk");
      p.refs[k].push_back({e.offset + at, len, dense[k], out});
      p.chunk_of[k].push_back(c);
      dense[k] += out;
      at += len;
    }
    if (at != e.size) bad(c, "second-stage pieces do not fill the chunk");
    p.plain_size[c] = plain;
  }
  p.dense[0] = dense[0];
  p.dense[1] = dense[1];
  return p;
}

std::vector<uint8_t> remove_second_stage(const uint8_t* a, size_t size, const ArchiveInfo& info, Backend backend) {
  const StagePieces p = second_stage_pieces(a, info);
  const size_t n = info.chunks.size();
  uint64_t total = info.data_offset;
  std::vector<uint64_t> place(n);
  for (size_t c = 0; c < n; ++c) {
    place[c] = total;
    total += p.plain_size[c];
  }
  std::vector<uint8_t> out(total);
  std::memcpy(out.data(), a, info.data_offset);
  for (size_t c = 0; c < n; ++c)  // chunks stored as they are
    if (a[info.chunks[c].offset] == kStored) std::memcpy(&out[place[c]], a + info.chunks[c].offset + 1, p.plain_size[c]);
  for (int k = 0; k < 2; ++k) {  // the pieces of each codec in one batch, decoded densely, then placed
    if (p.refs[k].empty()) continue;
    LosslessOptions o;
    o.codec = k == 0 ? LosslessCodec::deflate : LosslessCodec::rle2;
    o.backend = backend;
    std::vector<uint8_t> decoded(p.dense[k]);
    lossless::decode_chunks_checked(o, a, size, p.refs[k], decoded.data(), decoded.size(), p.chunk_of[k]);
    uint64_t within = 0;  // bytes of the current chunk already placed
    for (size_t j = 0; j < p.refs[k].size(); ++j) {
      const uint64_t c = p.chunk_of[k][j];
      if (j == 0 || p.chunk_of[k][j - 1] != c) within = 0;
      std::memcpy(&out[place[c] + within], decoded.data() + p.refs[k][j].out_offset, p.refs[k][j].out_capacity);
      within += p.refs[k][j].out_capacity;
    }
  }
  for (size_t c = 0; c < n; ++c)
    format::write_chunk_entry(&out[format::kHeaderBytes + 16 * c], place[c], uint32_t(p.plain_size[c]),
                              format::chunk_checksum(format::archive_version(info.codec, false), &out[place[c]],
                                                     p.plain_size[c]));
  reseal(out, format::archive_version(info.codec, false), false, n);
  return out;
}

}  // namespace hpcz::pipeline
