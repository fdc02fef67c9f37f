// Per-length symbol counts of a canonical book, summed by a block scan: the GPU codebook builder gives
// each symbol its rank within its length from them, and the decoder's table build its place in
// (length, symbol) order (codebook.hpp, step 3).
#pragma once
#include "huffman/codebook.hpp"

namespace hpcz::huffman {

struct LenCounts {
  uint16_t n[kMaxLen + 1];
};
struct LenCountsAdd {
  __device__ LenCounts operator()(const LenCounts& a, const LenCounts& b) const {
    LenCounts r;
#pragma unroll
    for (int l = 0; l <= kMaxLen; ++l) r.n[l] = uint16_t(a.n[l] + b.n[l]);
    return r;
  }
};

}  // namespace hpcz::huffman
