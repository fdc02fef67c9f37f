// The lossless second stage (issue 4, item 5): a pass over each chunk's encoded bytes with the better
// of Deflate and ORC RLE v2, or none, recorded per chunk (docs/FORMAT.md section 13).
//
// It wraps a finished archive: the chunk table then describes the stored (wrapped) chunks, and the
// header says version 2 with the second-stage flag. Decoding unwraps first (all chunks at once, one
// GPU warp each through the lossless framework, or OpenMP on the CPU) into the plain archive, whose own
// checks and decoder then run unchanged. Both backends write the same wrapped bytes: the plain archive
// is byte-identical, and the wrap runs on the CPU with deterministic encoders.
#include <cstring>
#include <string>

#include "format/checksum.hpp"
#include "format/header.hpp"
#include "lossless/lossless_internal.hpp"
#include "pipeline/internal.hpp"

namespace hpcz::pipeline {
namespace {

using detail::load_u32_le;
using detail::load_u64_le;
using detail::store_u32_le;
using detail::store_u64_le;

enum StageTag : uint8_t { kStored = 0, kDeflate = 1, kRle2 = 2 };
constexpr uint64_t kTagBytes = 1, kInnerSizeBytes = 4;

// Rewrites version, flag, archive size and both checksums of a header whose table is at a + 144.
void reseal(std::vector<uint8_t>& a, uint16_t version, bool staged, uint64_t n_chunks) {
  a[4] = uint8_t(version);
  a[5] = uint8_t(version >> 8);
  a[12] = uint8_t(staged ? (a[12] | format::kFlagSecondStage) : (a[12] & ~format::kFlagSecondStage));
  store_u64_le(&a[120], a.size());
  store_u32_le(&a[136], format::checksum(&a[format::kHeaderBytes], n_chunks * format::kChunkEntryBytes));
  store_u32_le(&a[140], format::checksum(a.data(), 140));
}

}  // namespace

std::vector<uint8_t> add_second_stage(const std::vector<uint8_t>& plain) {
  const ArchiveInfo info = parse_archive(plain.data(), plain.size(), true);
  if (info.version != 1) fail(ErrorCode::invalid_argument, "the second stage applies to plain (version 1) archives");
  const size_t n = info.chunks.size();
  std::vector<std::vector<uint8_t>> stored(n);
#pragma omp parallel for schedule(dynamic, 1)
  for (long long c = 0; c < (long long)n; ++c) {
    const ChunkEntry& e = info.chunks[size_t(c)];
    const uint8_t* src = plain.data() + e.offset;
    LosslessOptions o;
    o.chunk_bytes = e.size ? e.size : 1;  // one piece: the whole chunk
    o.backend = Backend::cpu;
    std::vector<uint8_t> best(src, src + e.size);
    uint8_t tag = kStored;
    for (LosslessCodec codec : {LosslessCodec::deflate, LosslessCodec::rle2}) {
      o.codec = codec;
      const std::vector<uint8_t> z = lossless::encode_chunk(src, e.size, o);
      if (kInnerSizeBytes + z.size() < best.size()) {
        best.assign(kInnerSizeBytes, 0);
        store_u32_le(best.data(), e.size);
        best.insert(best.end(), z.begin(), z.end());
        tag = codec == LosslessCodec::deflate ? kDeflate : kRle2;
      }
    }
    best.insert(best.begin(), tag);
    stored[size_t(c)] = std::move(best);
  }
  std::vector<uint8_t> out(plain.begin(), plain.begin() + info.data_offset);
  for (size_t c = 0; c < n; ++c) {
    format::write_chunk_entry(&out[format::kHeaderBytes + 16 * c], out.size(), uint32_t(stored[c].size()),
                              format::checksum(stored[c].data(), stored[c].size()));
    out.insert(out.end(), stored[c].begin(), stored[c].end());
  }
  reseal(out, 2, true, n);
  return out;
}

std::vector<uint8_t> remove_second_stage(const uint8_t* a, size_t size, const ArchiveInfo& info, Backend backend) {
  auto bad = [](uint64_t c, const std::string& m) {
    fail(ErrorCode::corrupt_archive, "corrupt archive: chunk " + std::to_string(c) + ": " + m);
  };
  const size_t n = info.chunks.size();
  const uint32_t vb = uint32_t(dtype_size(info.dtype));
  // Where each chunk's plain bytes go, and which need decoding (by codec).
  std::vector<uint64_t> inner(n);
  std::vector<lossless::ChunkRef> by_codec[2];
  std::vector<uint64_t> which[2];
  uint64_t dense[2] = {0, 0};
  uint64_t total = info.data_offset;
  for (size_t c = 0; c < n; ++c) {
    const ChunkEntry& e = info.chunks[c];
    if (format::checksum(a + e.offset, e.size) != e.checksum) bad(c, "checksum mismatch");
    if (e.size < kTagBytes) bad(c, "no second-stage tag");
    const uint8_t tag = a[e.offset];
    const uint64_t count = std::min<uint64_t>(info.chunk_values, info.n_values - c * info.chunk_values);
    const uint64_t most = plain_chunk_bound(info, count, vb);
    if (tag == kStored) {
      inner[c] = e.size - kTagBytes;
    } else if (tag == kDeflate || tag == kRle2) {
      if (e.size < kTagBytes + kInnerSizeBytes) bad(c, "truncated second-stage header");
      inner[c] = load_u32_le(a + e.offset + kTagBytes);
      if (inner[c] > most) bad(c, "second stage claims a chunk larger than the codec allows");
      const int k = tag == kDeflate ? 0 : 1;
      // Decoded densely per codec (the batch output is one buffer), placed afterwards.
      by_codec[k].push_back({e.offset + kTagBytes + kInnerSizeBytes, e.size - kTagBytes - kInnerSizeBytes, dense[k], inner[c]});
      dense[k] += inner[c];
      which[k].push_back(c);
    } else {
      bad(c, "unknown second-stage tag " + std::to_string(tag));
    }
    total += inner[c];
  }
  std::vector<uint8_t> out(total);
  std::memcpy(out.data(), a, info.data_offset);
  uint64_t at = info.data_offset;
  std::vector<uint64_t> place(n);
  for (size_t c = 0; c < n; ++c) {  // stored chunks: copied
    const ChunkEntry& e = info.chunks[c];
    if (a[e.offset] == kStored) std::memcpy(&out[at], a + e.offset + kTagBytes, inner[c]);
    place[c] = at;
    at += inner[c];
  }
  for (int k = 0; k < 2; ++k) {
    if (by_codec[k].empty()) continue;
    LosslessOptions o;
    o.codec = k == 0 ? LosslessCodec::deflate : LosslessCodec::rle2;
    o.backend = backend;
    std::vector<uint8_t> decoded(dense[k]);
    lossless::decode_chunks_checked(o, a, size, by_codec[k], decoded.data(), decoded.size(), which[k]);
    for (size_t j = 0; j < which[k].size(); ++j)
      std::memcpy(&out[place[which[k][j]]], decoded.data() + by_codec[k][j].out_offset, by_codec[k][j].out_capacity);
  }
  at = info.data_offset;
  for (size_t c = 0; c < n; ++c) {
    format::write_chunk_entry(&out[format::kHeaderBytes + 16 * c], at, uint32_t(inner[c]), format::checksum(&out[at], inner[c]));
    at += inner[c];
  }
  reseal(out, 1, false, n);
  return out;
}

}  // namespace hpcz::pipeline
