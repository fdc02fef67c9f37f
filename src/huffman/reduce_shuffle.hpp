// Tian et al.'s reduce-shuffle merge: the codewords of a tile of symbols concatenated into a dense bit
// stream without a scan over the symbols. Shared by the CUDA encoder (ratio_cuda.cuh, encode_kernel with
// HPCZ_RATIO_ENCODER=reduce-shuffle) and the host reference below, which the tests compare with the
// plain concatenation of stream.hpp.
//
// Reduce: r iterations merge neighbouring codewords pairwise, so each cell holds 2^r consecutive
// codewords, right-aligned in 64 bits. Tian et al. pick r from the entropy so that the mean cell fits a
// 32-bit word, and cells longer than the word need a fallback. Picked that way (mean cell <= 32 bits),
// 8.6% of the real fields' 4096-symbol tiles had a cell over 64 bits (era5 at rel 1e-3: 47%), because
// long codes cluster where the field is rough. So r is picked per tile instead: the largest in [2, 4]
// at which no cell of the tile exceeds 64 bits (r = 2 always fits: 4 x 14 bits), which costs two
// block-wide votes and needs no fallback.
//
// Shuffle: cell k sits left-aligned in words [2k, 2k + 2) of a buffer, its length in len[k]. Iteration
// s merges each group of 2^(s+1) cells: the right half's dense bits (at word offset G = 2^(s+1) in the
// group) move to follow the left half's, in place. Every destination word is gathered from at most two
// right-half words and the left half's last partial word, so an iteration is one read phase and one
// write phase (a barrier after each on the GPU), no atomics. After log2(cells) iterations the tile's
// stream starts at bit 0 of word 0, and words past its end are 0.
#pragma once
#include "common/hd.hpp"
#include "huffman/codebook.hpp"

namespace hpcz::huffman {

constexpr int kMinReduce = 2, kMaxReduce = 4;  // 4: a thread's 16 symbols (the encoder's kPerThread)
static_assert(kMaxLen * (1 << kMinReduce) <= 64, "r = kMinReduce cells never overflow");

// One thread's share of a tile: 16 consecutive code lengths (0 past the end). Bit 0: a cell of r = 3
// (8 codewords) exceeds 64 bits; bit 1: a cell of r = 4 (the 16) does.
HPCZ_HD uint32_t cell_overflows(const uint32_t (&len)[16]) {
  uint32_t lo = 0, hi = 0;
  for (int k = 0; k < 8; ++k) lo += len[k], hi += len[k + 8];
  return uint32_t(lo > 64 || hi > 64) | uint32_t(lo + hi > 64) << 1;
}

// The tile's factor from the OR of its threads' cell_overflows.
HPCZ_HD int reduce_factor(uint32_t overflows) { return !(overflows & 2) ? 4 : !(overflows & 1) ? 3 : kMinReduce; }

// Host form: the factor of sym[0..n) (n <= 4096).
inline int tile_reduce_factor(const uint16_t* sym, uint32_t n, const uint8_t* len) {
  uint32_t over = 0;
  for (uint32_t t = 0; t < n; t += 16) {
    uint32_t l[16];
    for (uint32_t k = 0; k < 16; ++k) l[k] = t + k < n ? len[sym[t + k]] : 0;
    over |= cell_overflows(l);
  }
  return reduce_factor(over);
}

// A cell: bits right-aligned; len may exceed 64 (then the bits are meaningless: the factor is too large).
struct Cell {
  uint64_t bits = 0;
  uint32_t len = 0;
};

HPCZ_HD Cell append_code(Cell c, uint32_t code, uint32_t len) {
  c.bits = (c.bits << len) | code;  // len <= 14
  c.len += len;
  return c;
}

// The two buffer words of a cell that fits (len <= 64), left-aligned.
HPCZ_HD void cell_words(const Cell& c, uint32_t& hi, uint32_t& lo) {
  const uint64_t v = c.len == 0 ? 0 : c.bits << (64 - c.len);
  hi = uint32_t(v >> 32);
  lo = uint32_t(v);
}

// One group's merge: the left half holds left_bits bits from the group's word 0, the right half
// right_bits from word G. a, o: the left's end as word and bit; n_right: the right half's words;
// dest_end: the group-relative word after the last one the merged right half touches.
struct MergeStep {
  uint32_t a, o, n_right, dest_end;
};

HPCZ_HD MergeStep merge_step(uint32_t left_bits, uint32_t right_bits) {
  MergeStep m;
  m.a = left_bits >> 5;
  m.o = left_bits & 31;
  m.n_right = (right_bits + 31) >> 5;
  m.dest_end = m.a + m.n_right + (m.o ? 1 : 0);
  return m;
}

// Destination word a + j (j < dest_end - a) of a merge: right-half words prev = R[j - 1] (0 for j = 0)
// and cur = R[j] (0 for j >= n_right), and for j = 0 the left half's partial word `left`.
HPCZ_HD uint32_t merged_word(const MergeStep& m, uint32_t j, uint32_t left, uint32_t prev, uint32_t cur) {
  const uint32_t from_prev = (j > 0 && m.o) ? prev << (32 - m.o) : 0u;
  return (j == 0 ? left : 0u) | from_prev | (cur >> m.o);
}

// Host reference: the r-reduced cells of sym[0..n) (n <= 2^12) and their shuffle into words[0..2C)
// (C = 2^12 >> r cells, zeroed here). False if a cell overflows. The same steps as the kernel: all reads
// of an iteration before any write.
inline bool reduce_shuffle_tile(const uint16_t* sym, uint32_t n, const uint32_t* code, const uint8_t* len, int r,
                                uint32_t* words /*[2 * (4096 >> r)]*/, uint32_t* cell_len /*[4096 >> r]*/) {
  const uint32_t cells = 4096u >> r, per = 1u << r;
  for (uint32_t k = 0; k < cells; ++k) {
    Cell c;
    for (uint32_t i = k * per; i < (k + 1) * per && i < n; ++i) c = append_code(c, code[sym[i]], len[sym[i]]);
    if (c.len > 64) return false;
    cell_words(c, words[2 * k], words[2 * k + 1]);
    cell_len[k] = c.len;
  }
  uint32_t vals[4096], zero[4096];
  for (uint32_t G = 2; G <= cells; G *= 2) {  // group of G cells = 2G words; right half at word G
    uint32_t nv = 0, nz = 0;
    for (uint32_t g = 0; g < cells / G; ++g) {  // read phase
      const uint32_t* w = words + 2 * G * g;
      const MergeStep m = merge_step(cell_len[g * G], cell_len[g * G + G / 2]);
      for (uint32_t j = 0; j < G; ++j) {
        const uint32_t prev = j >= 1 && j - 1 < m.n_right ? w[G + j - 1] : 0, cur = j < m.n_right ? w[G + j] : 0;
        if (m.a + j < m.dest_end) vals[nv++] = merged_word(m, j, j == 0 ? w[m.a] : 0, prev, cur);
        if (j < m.n_right && G + j >= m.dest_end) zero[nz++] = 2 * G * g + G + j;
      }
      if (m.n_right == G && m.o) vals[nv++] = merged_word(m, G, 0, w[2 * G - 1], 0);  // past the items
    }
    nv = 0;
    for (uint32_t k = 0; k < nz; ++k) words[zero[k]] = 0;  // write phase
    for (uint32_t g = 0; g < cells / G; ++g) {
      uint32_t* w = words + 2 * G * g;
      const MergeStep m = merge_step(cell_len[g * G], cell_len[g * G + G / 2]);
      for (uint32_t j = 0; j < G; ++j)
        if (m.a + j < m.dest_end) w[m.a + j] = vals[nv++];
      if (m.n_right == G && m.o) w[m.a + G] = vals[nv++];
      cell_len[g * G] += cell_len[g * G + G / 2];
    }
  }
  return true;
}

}  // namespace hpcz::huffman
