// The Huffman bit stream and its gap array (Rivera et al.'s self-synchronization made explicit), shared
// by the CPU and CUDA coders.
//
// Bits are numbered from 0; bit p is bit (31 - p % 32) of word p / 32 (most significant first), words
// stored little-endian. Codewords are written back to back, most significant bit first.
// The stream is cut into subsequences of kSubBits bits. gap[s] is the offset of the first codeword that
// starts inside subsequence s (kNoStart if none does: only the last subsequence can be so), so a
// decoder can start at any subsequence. Subsequences group into sequences of kSeqSubs; seq_first[j] is
// the index of the first symbol that starts in sequence j, which places every thread block's output
// without a scan across blocks.
#pragma once
#include "common/hd.hpp"
#include "huffman/codebook.hpp"

namespace hpcz::huffman {

using hpcz::detail::div_ceil;

constexpr uint32_t kSubBits = 1024;  // one decoder thread's share; its gap costs 4 bits per 1024
constexpr uint32_t kSeqSubs = 128;   // one decoder thread block's share (128 Kibit)
constexpr uint32_t kNoStart = 15;    // gap value of a subsequence in which no codeword starts
static_assert(kMaxLen <= 15 && kMaxLen < int(kNoStart), "gaps are nibbles below kNoStart");

HPCZ_HD uint32_t n_subsequences(uint32_t total_bits) { return uint32_t(div_ceil(total_bits, kSubBits)); }
HPCZ_HD uint32_t n_sequences(uint32_t total_bits) { return uint32_t(div_ceil(n_subsequences(total_bits), kSeqSubs)); }
HPCZ_HD uint32_t n_words(uint32_t total_bits) { return uint32_t(div_ceil(total_bits, 32)); }

// Where a chunk's stream sits, for the GPU coders (encode_kernels.cuh, decode_kernels.cuh): its size in
// bits and the byte offsets of its sequence starts, gaps and words from the chunk's start (the codec's
// chunk layout places them).
struct StreamPlace {
  uint32_t total_bits, seq_first, gaps, bits;
};

HPCZ_HD uint32_t get_nibble(const uint8_t* p, uint32_t i) { return (p[i >> 1] >> ((i & 1) * 4)) & 15; }

// The codeword's two word contributions at bit position pos: (high into word pos/32, low into the next).
HPCZ_HD void code_bits(uint32_t code, uint32_t len, uint32_t pos, uint32_t& hi, uint32_t& lo) {
  const uint64_t v = uint64_t(code) << (64 - len - (pos & 31));
  hi = uint32_t(v >> 32);
  lo = uint32_t(v);
}

// The next kMaxLen bits at pos; word(i) gives stream word i (0 past the last).
template <class Words> HPCZ_HD uint32_t peek_bits(Words&& word, uint32_t pos) {
  const uint32_t i = pos >> 5;
  const uint64_t a = word(i), b = word(i + 1);
  return uint32_t(((a << 32 | b) << (pos & 31)) >> (64 - kMaxLen));
}

// Decodes the codewords that start in [from, limit) (limit <= total_bits), stopping at the first start
// at or after limit. emit(sym) per symbol. Returns the position reached (the first start >= limit, or
// total_bits), or ~0u if a codeword is invalid or runs past total_bits.
// The entry of the codeword at pos (0 if none: corrupt data).
template <class Words>
HPCZ_HD uint32_t decode_one(Words&& word, const uint32_t* fast, const CanonicalRanges& ranges, const uint16_t* sorted,
                            uint32_t pos) {
  return decode_entry(fast, ranges, sorted, peek_bits(word, pos));
}

// decode_run for a counter: returns the position reached (as decode_run) and adds the symbols to n,
// several at a time through the multi table where the whole group lies before limit. lookup(window)
// gives decode_entry's entry (from whichever tables the caller holds).
template <class Words, class Lookup>
HPCZ_HD uint32_t count_run_by(Words&& word, uint32_t total_bits, const uint16_t* multi, Lookup&& lookup, uint32_t from,
                              uint32_t limit, uint32_t& n) {
  uint32_t pos = from;
  while (pos < limit) {
    const uint32_t window = peek_bits(word, pos);
    const uint32_t m = multi[window >> (kMaxLen - kFastBits)], adv = m >> 8;
    if (adv && adv <= limit - pos) {
      pos += adv;
      n += m & 0xff;
      continue;
    }
    const uint32_t len = entry_length(lookup(window));
    if (len == 0 || len > total_bits - pos) return ~0u;
    ++n;
    pos += len;
  }
  return pos;
}
template <class Words>
HPCZ_HD uint32_t count_run(Words&& word, uint32_t total_bits, const uint32_t* fast, const uint16_t* multi,
                           const CanonicalRanges& ranges, const uint16_t* sorted, uint32_t from, uint32_t limit,
                           uint32_t& n) {
  return count_run_by(word, total_bits, multi, [&](uint32_t w) { return decode_entry(fast, ranges, sorted, w); }, from,
                      limit, n);
}

// One or two codewords per lookup: the second, when the entry has one, is the codeword that a lookup
// at its start would give, so it is taken under the same rules (it starts before limit and ends
// before total_bits, else the run is corrupt).
template <class Words, class Emit>
HPCZ_HD uint32_t decode_run(Words&& word, uint32_t total_bits, const uint32_t* fast, const CanonicalRanges& ranges,
                            const uint16_t* sorted, uint32_t from, uint32_t limit, Emit&& emit) {
  uint32_t pos = from;
  while (pos < limit) {
    const uint32_t e = decode_one(word, fast, ranges, sorted, pos);
    const uint32_t len = entry_length(e);
    if (len == 0 || len > total_bits - pos) return ~0u;
    emit(entry_symbol(e));
    pos += len;
    const uint32_t len2 = entry_length2(e);
    if (len2 && pos < limit) {
      if (len2 > total_bits - pos) return ~0u;
      emit(entry_symbol2(e));
      pos += len2;
    }
  }
  return pos;
}

// Where decoding of subsequence s starts, from its gap (total_bits if no codeword starts in it).
HPCZ_HD uint32_t subsequence_start(const uint8_t* gaps, uint32_t s, uint32_t total_bits) {
  const uint32_t g = get_nibble(gaps, s);
  const uint64_t p = uint64_t(s) * kSubBits + g;
  return g == kNoStart || p >= total_bits ? total_bits : uint32_t(p);
}

// Index of the first symbol of sequence j, count for j >= the number of sequences: seq_first[j]
// (little-endian u32s), except for a sequence in which no codeword starts, which has no symbols.
// Only the last sequence can be one, when it holds nothing but the tail of the last codeword; its
// entry is not a symbol index (the encoders leave 0), so it is taken as count (docs/FORMAT.md 7.4).
HPCZ_HD uint32_t sequence_first(const uint8_t* seq_first, const uint8_t* gaps, uint32_t j, uint32_t total_bits,
                                uint32_t count) {
  if (j >= n_sequences(total_bits) || subsequence_start(gaps, j * kSeqSubs, total_bits) == total_bits) return count;
  return detail::load_u32_le(seq_first + 4 * j);
}

}  // namespace hpcz::huffman
