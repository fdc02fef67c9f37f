// The lossless second stage: a pass over each chunk's encoded bytes with the better
// of Deflate and ORC RLE v2, or none, recorded per chunk (docs/FORMAT.md section 13).
//
// It wraps a finished archive: the chunk table then describes the stored (wrapped) chunks, and the
// header says version 2 with the second-stage flag. An encoded chunk is cut into pieces of 2^k plain
// bytes, each encoded alone: a lossy chunk is megabytes, and one warp per piece rather than per chunk
// is what lets the GPU decode the stage in parallel. Decoding checks every stage header first, each
// size against the bytes that are there (read_stage_head), then unwraps (the pieces of a codec in
// batches, one GPU warp each, or OpenMP on the CPU) into the plain archive, whose own checks and
// decoder then run unchanged, or on the CPU a run of plain chunks at a time straight into the values.
// Both backends write the same wrapped bytes: the plain archive is byte-identical, and the wrap runs
// on the CPU with deterministic encoders.
#include <algorithm>
#include <cstring>
#include <string>

#include "common/parallel.hpp"
#include "format/checksum.hpp"
#include "format/header.hpp"
#include "lossless/lossless_internal.hpp"
#include "pipeline/internal.hpp"
#include "pipeline/stage_layout.hpp"

namespace hpcz::pipeline {
namespace {

using detail::load_u32_le;
using detail::store_u32_le;
using detail::store_u64_le;

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

}  // namespace

std::vector<std::vector<uint8_t>> stage_chunks(const uint8_t* const* src, const uint32_t* size, uint64_t n,
                                               const RunEach& run) {
  // Every piece of every chunk with each codec is one task: a chunk of megabytes is hundreds of
  // pieces, so one chunk keeps every thread busy. Chunks go in groups of about kGroupBytes, so that the
  // pieces' two encodings held at once stay small beside the archive.
  constexpr LosslessCodec kCodecs[2] = {LosslessCodec::deflate, LosslessCodec::rle2};
  constexpr uint64_t piece = uint64_t(1) << kPieceLog2, kGroupBytes = uint64_t(64) << 20;
  std::vector<std::vector<uint8_t>> out(n);
  std::vector<uint64_t> first;  // a group's chunk's first task
  std::vector<std::vector<uint8_t>> z;
  for (uint64_t c0 = 0, c1 = 0; c0 < n; c0 = c1) {
    uint64_t bytes = 0;
    first.assign(1, 0);
    for (c1 = c0; c1 < n && (c1 == c0 || bytes + size[c1] <= kGroupBytes); ++c1) {
      bytes += size[c1];
      first.push_back(first.back() + 2 * ((uint64_t(size[c1]) + piece - 1) / piece));
    }
    z.assign(first.back(), {});
    run(first.back(), [&](uint64_t task) {
      const uint64_t g = uint64_t(std::upper_bound(first.begin(), first.end(), task) - first.begin()) - 1, c = c0 + g;
      const uint64_t pieces = (first[g + 1] - first[g]) / 2, j = task - first[g], k = j % pieces;
      LosslessOptions o;
      o.codec = kCodecs[j / pieces];
      const uint64_t len = std::min<uint64_t>(piece, size[c] - k * piece);
      z[task] = lossless::encode_chunk(src[c] + k * piece, len, o);
    });
    for (uint64_t c = c0; c < c1; ++c) {
      const uint64_t g = c - c0, pieces = (first[g + 1] - first[g]) / 2;
      std::vector<uint8_t>& best = out[c];
      best.assign(1 + uint64_t(size[c]), kStored);
      if (size[c]) std::memcpy(&best[1], src[c], size[c]);
      for (uint64_t m = 0; m < 2; ++m) {  // the codecs in order: the first of equal sizes is kept
        const std::vector<uint8_t>* part = &z[first[g] + m * pieces];
        uint64_t total = kStageHeader + 4 * pieces;
        bool available = true;
        for (uint64_t k = 0; k < pieces; ++k) {
          available = available && !part[k].empty();  // empty: the codec is not in this build
          total += part[k].size();
        }
        if (!available || total >= best.size()) continue;
        std::vector<uint8_t> w(kStageHeader + 4 * pieces);
        w.reserve(total);
        w[0] = m == 0 ? kDeflate : kRle2;
        w[1] = kPieceLog2;
        store_u32_le(&w[2], size[c]);
        for (uint64_t k = 0; k < pieces; ++k) {
          store_u32_le(&w[kStageHeader + 4 * k], uint32_t(part[k].size()));
          w.insert(w.end(), part[k].begin(), part[k].end());
        }
        best.swap(w);
      }
    }
  }
  return out;
}

std::vector<uint8_t> add_second_stage(const std::vector<uint8_t>& plain) {
  const ArchiveInfo info = parse_archive(plain.data(), plain.size(), true);
  if (info.second_stage) fail(ErrorCode::invalid_argument, "the archive already has the second stage");
  const size_t n = info.chunks.size();
  std::vector<const uint8_t*> src(n);
  std::vector<uint32_t> size(n);
  for (size_t c = 0; c < n; ++c) src[c] = plain.data() + info.chunks[c].offset, size[c] = info.chunks[c].size;
  const int threads = threads_for(info.n_values * dtype_size(info.dtype));
  const std::vector<std::vector<uint8_t>> stored =
      stage_chunks(src.data(), size.data(), n, [&](uint64_t tasks, const std::function<void(uint64_t)>& fn) {
        for_each_index(int64_t(tasks), threads, 4, [&](int64_t k) { fn(uint64_t(k)); });
      });
  std::vector<uint8_t> out(plain.begin(), plain.begin() + info.data_offset);
  for (size_t c = 0; c < n; ++c) {
    format::write_chunk_entry(&out[format::kHeaderBytes + 16 * c], out.size(), uint32_t(stored[c].size()),
                              format::chunk_checksum(info.codec, format::archive_version(info.codec, true, info.mode, info.dtype), stored[c].data(),
                                                     stored[c].size()));
    out.insert(out.end(), stored[c].begin(), stored[c].end());
  }
  reseal(out, format::archive_version(info.codec, true, info.mode, info.dtype), true, n);
  return out;
}

StageHead read_stage_head(const uint8_t* s, uint32_t size, const ArchiveInfo& info, uint64_t c) {
  auto bad = [&](const std::string& m) {
    fail(ErrorCode::corrupt_archive, "corrupt archive: chunk " + std::to_string(c) + ": " + m);
  };
  const codecs::CodecOps& codec = codecs::get(info.codec);
  const format::HeaderFields h = header_of(info);
  const uint64_t least = codec.chunk_min(h, c), most = codec.chunk_bound(h, c);
  StageHead sh;
  if (size < 1) bad("no second-stage tag");
  sh.tag = s[0];
  if (sh.tag == kStored) {
    sh.plain = size - 1;
  } else {
    if (sh.tag != kDeflate && sh.tag != kRle2) bad("unknown second-stage tag " + std::to_string(sh.tag));
    if (size < kStageHeader) bad("truncated second-stage header");
    sh.log2 = s[1];
    if (sh.log2 < kMinPieceLog2 || sh.log2 > kMaxPieceLog2) bad("second-stage piece size 2^" + std::to_string(sh.log2));
    sh.plain = load_u32_le(s + 2);
  }
  if (sh.plain > most) bad("second stage claims a chunk larger than the codec allows");
  if (sh.plain < least)
    bad("second stage claims a chunk of " + std::to_string(sh.plain) + " bytes, below the " + std::to_string(least) +
        " its values need");
  if (sh.tag == kStored) return sh;
  const uint64_t piece = uint64_t(1) << sh.log2;
  sh.pieces = (sh.plain + piece - 1) / piece;
  if (sh.pieces > (size - kStageHeader) / 4) bad("second-stage piece table beyond the chunk");
  // Every piece must be long enough to decode to its plain length: checked for all of them before any
  // is decoded, and so before anything is allocated for the chunk.
  const uint64_t expansion = sh.tag == kDeflate ? lossless::kMaxDeflateExpansion : lossless::kMaxRleValuesPerByte;
  uint64_t at = kStageHeader + 4 * sh.pieces;
  for (uint64_t j = 0; j < sh.pieces; ++j) {
    const uint64_t len = load_u32_le(s + kStageHeader + 4 * j), out = std::min(piece, sh.plain - j * piece);
    if (len > size - at) bad("second-stage piece beyond the chunk");
    if (out > expansion * len)
      bad("second-stage piece " + std::to_string(j) + " of " + std::to_string(len) + " bytes cannot decode to " +
          std::to_string(out) + " (" + (sh.tag == kDeflate ? "Deflate" : "ORC RLE v2") + " expands " +
          std::to_string(expansion) + ":1 at most)");
    at += len;
  }
  if (at != size) bad("second-stage pieces do not fill the chunk");
  return sh;
}

uint64_t stage_head_bytes(const uint8_t* s, uint32_t size) {
  if (size < kStageHeader || (s[0] != kDeflate && s[0] != kRle2)) return std::min<uint64_t>(size, kStageHeader);
  if (s[1] < kMinPieceLog2 || s[1] > kMaxPieceLog2) return kStageHeader;
  const uint64_t piece = uint64_t(1) << s[1], pieces = (load_u32_le(s + 2) + piece - 1) / piece;
  return std::min<uint64_t>(size, kStageHeader + 4 * pieces);
}

uint64_t stage_plain_head(const uint8_t* s, const StageHead& sh, uint8_t* out, uint64_t want) {
  want = std::min(want, sh.plain);
  if (sh.tag == kStored) {
    std::memcpy(out, s + 1, want);
    return want;
  }
  LosslessOptions o;
  o.codec = sh.tag == kDeflate ? LosslessCodec::deflate : LosslessCodec::rle2;
  o.backend = Backend::cpu;
  const uint64_t at = kStageHeader + 4 * sh.pieces, len = load_u32_le(s + kStageHeader);  // the first piece
  want = std::min(want, uint64_t(1) << sh.log2);
  if (lossless::decode_prefix(o, s + at, len, out, want) < want)
    fail(ErrorCode::corrupt_archive, "corrupt chunk: its first second-stage piece decodes to too few bytes");
  return want;
}

void check_stage_heads(const uint8_t* a, const ArchiveInfo& info) {
  for (uint64_t c = 0; c < info.chunks.size(); ++c) read_stage_head(a + info.chunks[c].offset, info.chunks[c].size, info, c);
}

StagePieces second_stage_pieces(const uint8_t* a, const ArchiveInfo& info) {
  StagePieces p;
  const size_t n = info.chunks.size();
  p.plain_size.resize(n);
  uint64_t dense[2] = {0, 0};
  for (size_t c = 0; c < n; ++c) {
    const ChunkEntry& e = info.chunks[c];
    const uint8_t* s = a + e.offset;
    if (!format::checksum_matches(format::chunk_checksum(info.codec, info.version, s, e.size), e.checksum))
      fail(ErrorCode::corrupt_archive, "corrupt archive: chunk " + std::to_string(c) + ": checksum mismatch");
    const StageHead sh = read_stage_head(s, e.size, info, c);
    p.plain_size[c] = sh.plain;
    if (sh.tag == kStored) continue;
    const uint64_t piece = uint64_t(1) << sh.log2;
    uint64_t at = kStageHeader + 4 * sh.pieces;
    const int k = sh.tag == kDeflate ? 0 : 1;
    for (uint64_t j = 0; j < sh.pieces; ++j) {
      const uint64_t len = load_u32_le(s + kStageHeader + 4 * j), out = std::min(piece, sh.plain - j * piece);
      p.refs[k].push_back({e.offset + at, len, dense[k], out});
      p.chunk_of[k].push_back(c);
      dense[k] += out;
      at += len;
    }
  }
  p.dense[0] = dense[0];
  p.dense[1] = dense[1];
  return p;
}

namespace {

// The plain bytes of chunks [c0, c1) of a staged archive (p: its pieces), back to back into dst, which
// holds their plain sizes: chunks stored as they are copied, the pieces of each codec decoded in batches
// of at most batch_bytes decoded bytes (densely into scratch, then placed: a GPU batch copies back its
// whole output), so that the scratch stays that size whatever the archive's.
void unstage(const uint8_t* a, const ArchiveInfo& info, const StagePieces& p, uint64_t c0, uint64_t c1,
             Backend backend, uint64_t batch_bytes, uint8_t* dst, std::vector<uint8_t>& scratch) {
  std::vector<uint64_t> place(c1 - c0 + 1, 0);
  for (uint64_t c = c0; c < c1; ++c) place[c - c0 + 1] = place[c - c0] + p.plain_size[c];
  for (uint64_t c = c0; c < c1; ++c)
    if (a[info.chunks[c].offset] == kStored) std::memcpy(dst + place[c - c0], a + info.chunks[c].offset + 1, p.plain_size[c]);
  for (int k = 0; k < 2; ++k) {
    const std::vector<lossless::ChunkRef>& refs = p.refs[k];
    const std::vector<uint64_t>& of = p.chunk_of[k];
    const size_t first = size_t(std::lower_bound(of.begin(), of.end(), c0) - of.begin());
    const size_t last = size_t(std::lower_bound(of.begin(), of.end(), c1) - of.begin());
    LosslessOptions o;
    o.codec = k == 0 ? LosslessCodec::deflate : LosslessCodec::rle2;
    o.backend = backend;
    uint64_t within = 0;  // bytes of the current chunk already placed
    for (size_t j0 = first, j1; j0 < last; j0 = j1) {
      const uint64_t base = refs[j0].out_offset;
      for (j1 = j0 + 1; j1 < last && refs[j1].out_offset + refs[j1].out_capacity - base <= batch_bytes;) ++j1;
      // The batch's input: the archive's bytes from its first piece to its last (what a GPU copies in).
      const uint64_t from = refs[j0].in_offset, to = refs[j1 - 1].in_offset + refs[j1 - 1].in_size;
      std::vector<lossless::ChunkRef> batch(refs.begin() + j0, refs.begin() + j1);
      for (lossless::ChunkRef& r : batch) r.in_offset -= from, r.out_offset -= base;
      const uint64_t bytes = batch.back().out_offset + batch.back().out_capacity;
      scratch.resize(bytes);
      lossless::decode_chunks_checked(o, a + from, to - from, batch, scratch.data(), bytes,
                                      {of.begin() + j0, of.begin() + j1});
      for (size_t j = j0; j < j1; ++j) {
        if (j == first || of[j - 1] != of[j]) within = 0;
        std::memcpy(dst + place[of[j] - c0] + within, scratch.data() + batch[j - j0].out_offset, refs[j].out_capacity);
        within += refs[j].out_capacity;
      }
    }
  }
}

}  // namespace

std::vector<uint8_t> remove_second_stage(const uint8_t* a, size_t size, const ArchiveInfo& info, Backend backend,
                                         uint64_t batch_bytes) {
  (void)size;
  const StagePieces p = second_stage_pieces(a, info);  // every size checked against the bytes behind it
  const size_t n = info.chunks.size();
  uint64_t total = info.data_offset;
  std::vector<uint64_t> place(n);
  for (size_t c = 0; c < n; ++c) {
    place[c] = total;
    total += p.plain_size[c];
  }
  std::vector<uint8_t> out(total), scratch;
  std::memcpy(out.data(), a, info.data_offset);
  unstage(a, info, p, 0, n, backend, batch_bytes, out.data() + info.data_offset, scratch);
  for (size_t c = 0; c < n; ++c)
    format::write_chunk_entry(&out[format::kHeaderBytes + 16 * c], place[c], uint32_t(p.plain_size[c]),
                              format::chunk_checksum(info.codec, format::archive_version(info.codec, false, info.mode, info.dtype), &out[place[c]],
                                                     p.plain_size[c]));
  reseal(out, format::archive_version(info.codec, false, info.mode, info.dtype), false, n);
  return out;
}

void decompress_staged_cpu(const uint8_t* a, const ArchiveInfo& info, void* out, uint64_t batch_bytes) {
  const StagePieces p = second_stage_pieces(a, info);
  const size_t n = info.chunks.size();
  format::HeaderFields h = header_of(info);
  h.version = format::archive_version(info.codec, false, info.mode, info.dtype);
  h.flags &= uint8_t(~format::kFlagSecondStage);
  const uint64_t chunk_bytes = uint64_t(h.chunk_values) * dtype_size(h.dtype);
  std::vector<uint8_t> plain, scratch;
  std::vector<ChunkEntry> entries;
  for (uint64_t c0 = 0, c1; c0 < n; c0 = c1) {  // runs of chunks of at most batch_bytes plain bytes (or one)
    uint64_t bytes = p.plain_size[c0];
    for (c1 = c0 + 1; c1 < n && bytes + p.plain_size[c1] <= batch_bytes; ++c1) bytes += p.plain_size[c1];
    plain.resize(bytes);
    unstage(a, info, p, c0, c1, Backend::cpu, batch_bytes, plain.data(), scratch);
    if (c1 == n) std::vector<uint8_t>().swap(scratch);  // not needed again: freed before the values are decoded
    entries.resize(c1 - c0);
    for (uint64_t c = c0, at = 0; c < c1; at += p.plain_size[c++])
      entries[c - c0] = {at, uint32_t(p.plain_size[c]), format::chunk_checksum(h.codec, h.version, &plain[at], p.plain_size[c])};
    decode_chunks_cpu(plain.data(), h, entries, c0, static_cast<uint8_t*>(out) + c0 * chunk_bytes);
  }
}

}  // namespace hpcz::pipeline
