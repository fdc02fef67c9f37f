// A stored chunk's form under the lossless second stage (FORMAT.md 13): what archive.cpp needs of it to
// check a chunk table, below second_stage.cpp, which writes and reads the stage.
#pragma once
#include <algorithm>
#include <cstdint>

#include "lossless/lossless_internal.hpp"

namespace hpcz::pipeline {

enum StageTag : uint8_t { kStored = 0, kDeflate = 1, kRle2 = 2 };
constexpr int kPieceLog2 = 14;                    // 16 KiB of plain chunk per piece (what the encoder writes)
constexpr int kMinPieceLog2 = 10, kMaxPieceLog2 = 24;
constexpr uint64_t kStageHeader = 1 + 1 + 4;      // tag, piece size log2, plain size; then a u32 per piece

// The most plain bytes a stored chunk of `stored` bytes can hold, whatever its tag: a chunk table entry
// of a staged archive is refused where this cannot reach the codec's chunk_min.
inline uint64_t stage_plain_bound(uint64_t stored) {
  const uint64_t as_is = stored ? stored - 1 : 0;  // tag 0
  // Tags 1, 2: at least one piece (a plain chunk is never empty), its 4-byte size, then encoded bytes.
  const uint64_t over = kStageHeader + 4, coded = stored > over ? lossless::kMaxDeflateExpansion * (stored - over) : 0;
  return std::max(as_is, coded);
}

}  // namespace hpcz::pipeline
