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

// ---- Self-synchronization (Rivera et al.'s second decoder) -----------------------------------------
// A Huffman decoder started at an arbitrary bit soon falls onto the true codeword boundaries (the
// self-synchronization Klein and Wiseman describe), so a decoder can find where each subsequence's
// codewords start without the gap array: decode from a guess, let the guess converge.
//
// kNoSync: a decoding met an invalid codeword (from a wrong guess, or from a true start in a corrupt
// stream).
constexpr uint32_t kNoSync = ~0u;
// With early exit: a decoding records its first kSyncRecord codeword starts (start[k] has k symbols
// before it). A restart from another bit stops as soon as it lands on a recorded start: decoding from a
// given bit always continues the same way, so from there on it is the recorded decoding (same exit,
// the recorded count less the symbols before that start).
constexpr uint32_t kSyncRecord = 16;
// The decode tables by parts (a kernel stages some of them in shared memory).
struct TableRefs {
  const uint32_t* fast;
  const uint16_t* multi;
  const CanonicalRanges* ranges;
  const uint16_t* sorted;
  HPCZ_HD static TableRefs of(const DecodeTables& t) { return {t.fast, t.multi, &t.ranges, t.sorted}; }
};
struct SyncPath {
  uint32_t start[kSyncRecord];
  uint32_t recorded;  // entries of start[]
  uint32_t n;         // symbols from the first start to the exit
  uint32_t exit;      // first codeword start at or after the limit, or kNoSync
};

template <class Words>
HPCZ_HD void sync_decode(Words&& word, uint32_t total_bits, const TableRefs& t, uint32_t from, uint32_t limit,
                         SyncPath& p) {
  uint32_t pos = from, k = 0;
  while (pos < limit && k < kSyncRecord) {
    const uint32_t len = entry_length(decode_one(word, t.fast, *t.ranges, t.sorted, pos));
    p.start[k++] = pos;
    if (len == 0 || len > total_bits - pos) {
      p.recorded = k;
      p.n = k;
      p.exit = kNoSync;
      return;
    }
    pos += len;
  }
  p.recorded = k;
  uint32_t n = k;
  p.exit = pos < limit ? count_run(word, total_bits, t.fast, t.multi, *t.ranges, t.sorted, pos, limit, n) : pos;
  p.n = n;
}

// Decodes from `from` again, reusing p (a decoding of the same subsequence from another bit). True if
// it met the recorded decoding (the early exit).
template <class Words>
HPCZ_HD bool sync_restart(Words&& word, uint32_t total_bits, const TableRefs& t, uint32_t from, uint32_t limit,
                          SyncPath& p) {
  uint32_t fresh[kSyncRecord];
  uint32_t pos = from, steps = 0, i = 0;
  while (pos < limit && steps < kSyncRecord) {
    while (i < p.recorded && p.start[i] < pos) ++i;
    if (i < p.recorded && p.start[i] == pos) {  // synchronized with the recorded decoding
      // The record becomes the fresh starts, then the old ones from the meeting point on.
      const uint32_t keep = p.recorded - i < kSyncRecord - steps ? p.recorded - i : kSyncRecord - steps;
      if (steps > i) {
        for (uint32_t k = keep; k-- > 0;) p.start[steps + k] = p.start[i + k];  // moving up: back to front
      } else {
        for (uint32_t k = 0; k < keep; ++k) p.start[steps + k] = p.start[i + k];
      }
      for (uint32_t k = 0; k < steps; ++k) p.start[k] = fresh[k];
      p.recorded = steps + keep;
      p.n = p.n - i + steps;
      return true;
    }
    const uint32_t len = entry_length(decode_one(word, t.fast, *t.ranges, t.sorted, pos));
    fresh[steps++] = pos;
    if (len == 0 || len > total_bits - pos) {
      for (uint32_t k = 0; k < steps; ++k) p.start[k] = fresh[k];
      p.recorded = steps;
      p.n = steps;
      p.exit = kNoSync;
      return false;
    }
    pos += len;
  }
  if (pos >= limit) {  // the subsequence ended before the decodings met
    for (uint32_t k = 0; k < steps; ++k) p.start[k] = fresh[k];
    p.recorded = steps;
    p.n = steps;
    p.exit = pos;
    return false;
  }
  sync_decode(word, total_bits, t, from, limit, p);  // no meeting within kSyncRecord codewords
  return false;
}

// The first codeword starts of subsequences first .. first + n - 1 (one sequence), given the first's
// (start0, a true start), found in parallel rounds as a thread block runs them: round 0 decodes each
// subsequence from its nominal first bit; every later round restarts subsequence k from the previous
// round's exit of k - 1 wherever the two differ. After round r the first r + 1 starts are true, so it
// ends within n rounds; on the real fields after one. Returns the rounds after round 0, or -1 if a
// true start meets an invalid codeword. starts[] and paths[] hold n entries; paths[k].n is then
// subsequence k's symbol count. stats (if given): restarts, and those that exited early.
struct SyncStats {
  uint64_t restarts = 0, early = 0;
};
template <class Words>
HPCZ_HD int self_sync_starts(Words&& word, uint32_t total_bits, const TableRefs& t, uint32_t first, uint32_t n,
                             uint32_t start0, uint32_t* starts, SyncPath* paths, SyncStats* stats = nullptr) {
  auto limit_of = [&](uint32_t k) {
    const uint64_t lim = uint64_t(first + k + 1) * kSubBits;
    return lim < total_bits ? uint32_t(lim) : total_bits;
  };
  for (uint32_t k = 0; k < n; ++k) {
    const uint64_t nominal = uint64_t(first + k) * kSubBits;
    starts[k] = k == 0 ? start0 : (nominal < total_bits ? uint32_t(nominal) : total_bits);
    sync_decode(word, total_bits, t, starts[k], limit_of(k), paths[k]);
  }
  for (int round = 1;; ++round) {
    bool changed = false;
    for (uint32_t k = n - 1; k > 0; --k)  // descending: a restart reads the previous round's exit
      if (starts[k] != paths[k - 1].exit) {
        starts[k] = paths[k - 1].exit;
        if (starts[k] == kNoSync) {  // a guess that failed: nothing to decode until it is replaced
          paths[k] = SyncPath{{}, 0, 0, kNoSync};
        } else {
          const bool met = sync_restart(word, total_bits, t, starts[k], limit_of(k), paths[k]);
          if (stats) {
            ++stats->restarts;
            stats->early += met;
          }
        }
        changed = true;
      }
    if (!changed) {
      for (uint32_t k = 0; k < n; ++k)
        if (paths[k].exit == kNoSync) return -1;
      return round - 1;
    }
  }
}

}  // namespace hpcz::huffman
