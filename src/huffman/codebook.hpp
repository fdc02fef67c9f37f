// Canonical, length-limited Huffman codebooks, built the same way on the CPU and the GPU.
//
// Three steps, each deterministic so both backends produce the same book:
//  1. order: the used symbols sorted by (count, symbol) ascending. Keys are unique, so any correct sort
//     (std::sort on the CPU, a block radix sort on the GPU) gives the same order.
//  2. lengths: Moffat and Katajainen's in-place algorithm over the sorted counts (O(n), the two-queue
//     Huffman construction with a fixed tie rule), then limited to kMaxLen bits by the JPEG (Annex K.3)
//     adjustment of the per-length counts, and handed back out shortest-first in the sorted order.
//  3. codes: canonical, in (length, symbol) order, most significant bit first. This step is parallel
//     per symbol on the GPU (Tian et al.'s second phase): a symbol's code is the first code of its length
//     plus its rank among the symbols of that length.
// The decoder needs only the lengths; it rebuilds codes and a two-level lookup from them: a table indexed
// by the next kFastBits bits for short codes, and the canonical ranges per length for the rest.
#pragma once
#include "common/hd.hpp"

namespace hpcz::huffman {

// Longest codeword. Measured on the shared fields: a limit of 12 cost up to 5% of the ratio at rel 1e-4
// (vorticity 3.80 vs 3.95 at 14); 14 bits keep the decoder's windows and gap nibbles small.
constexpr int kMaxLen = 14;
constexpr int kFastBits = 11;                  // first-level decode table: codes up to 11 bits, 8 KiB
constexpr uint32_t kMaxSymbols = 4096;          // alphabet limit (radius <= 2048); 2^kMaxLen >= it
constexpr int kDepthCap = 64;                  // Huffman depths before limiting (counts < 2^32 keep them < 48)

// Sort key of a used symbol: count in the high bits, symbol in the low 12.
HPCZ_HD uint64_t order_key(uint32_t count, uint32_t sym) { return uint64_t(count) << 12 | sym; }
HPCZ_HD uint32_t key_symbol(uint64_t k) { return uint32_t(k & 0xfff); }
HPCZ_HD uint32_t key_count(uint64_t k) { return uint32_t(k >> 12); }

// The JPEG (Annex K.3) adjustment: per-depth leaf counts (bits[0..kDepthCap], a complete code) made to
// fit in kMaxLen bits, keeping the Kraft sum at 1. Only the multiset of depths matters from here on.
// JPEG's loop, at each depth i > kMaxLen from the deepest, runs floor(bits[i] / 2) times: two leaves
// leave depth i, one goes to i - 1, and the deepest leaf at a depth <= i - 2 is split into two a level
// down. That is one step per move (3,447 moves and 1,763 search steps for a 1,024-symbol geometric
// alphabet; on one GPU thread 470 us, most of such a book: bench --mode codebook). The same result
// in closed form: deepest first, a leaf at depth j takes 2^(i-1-j) - 1 splits before all of it has
// become 2^(i-1-j) leaves at i - 1, so whole leaves are taken depth by depth from i - 2 up, and one
// leaf is split part of the way, its first half always before its second: O(depth) a level.
// (Test: unit_huffman_limit_depths_matches_jpeg against the loop, on random skewed complete codes.)
HPCZ_HD void limit_depths(uint32_t* bits) {
  for (int i = kDepthCap; i > kMaxLen; --i) {
    uint64_t todo = bits[i] / 2;
    bits[i] -= uint32_t(2 * todo);
    bits[i - 1] += uint32_t(todo);
    for (int j = i - 2; j >= 1 && todo; --j) {
      const int span = i - 1 - j;  // <= 62
      const uint64_t absorb = (uint64_t(1) << span) - 1;
      const uint64_t can = todo / absorb, full = bits[j] < can ? bits[j] : can;
      bits[j] -= uint32_t(full);
      bits[i - 1] += uint32_t(full << span);
      todo -= full * absorb;
      if (todo && bits[j]) {  // one leaf at j takes the remaining todo (< absorb) splits
        bits[j] -= 1;
        int l = j;
        uint64_t r = todo;
        todo = 0;
        while (true) {  // a leaf at depth l with r splits to take
          if (r == 0) { bits[l] += 1; break; }
          r -= 1;  // split into two at l + 1; the first takes splits before the second
          if (l + 1 == i - 1) { bits[i - 1] += 2; break; }  // not reached (r < 2^(i-1-l) - 1): a shift guard
          const int s1 = i - 2 - l;
          const uint64_t a1 = (uint64_t(1) << s1) - 1;
          if (r >= a1) {  // the first all the way down; the second takes the rest
            bits[i - 1] += uint32_t(uint64_t(1) << s1);
            r -= a1;
          } else {        // the second stays; the first takes r
            bits[l + 1] += 1;
          }
          l += 1;
        }
      }
    }
    if (bits[i]) { bits[i - 1] += bits[i]; bits[i] = 0; }  // only for counts that were not a complete code
  }
}

// The length of the symbol of rank r counted from the most frequent (r = 0): lengths are handed out
// shortest first, bits[l] of each.
HPCZ_HD int length_of_rank(const uint32_t* bits, uint32_t r) {
  uint32_t cum = 0;
  for (int l = 1; l <= kMaxLen; ++l) {
    cum += bits[l];
    if (r < cum) return l;
  }
  return kMaxLen;  // not reached for r < m
}

// Step 2. keys[0..m) sorted ascending (1 <= m <= kMaxSymbols); work has m entries. Writes len[sym] for the used
// symbols (the caller zeroes the others).
HPCZ_HD void lengths_from_sorted(const uint64_t* keys, uint32_t m, uint32_t* work, uint8_t* len) {
  if (m == 1) {  // one symbol still needs one bit, so every position has a codeword
    len[key_symbol(keys[0])] = 1;
    return;
  }
  // Moffat-Katajainen: A holds counts, then parent indices, then depths, in place.
  uint32_t* A = work;  // counts sum to < 2^32 (a chunk has at most 2^26 values)
  for (uint32_t i = 0; i < m; ++i) A[i] = key_count(keys[i]);
  const int64_t n = m;
  int64_t root = 0, leaf = 2, next;
  A[0] += A[1];
  for (next = 1; next < n - 1; ++next) {
    if (leaf >= n || A[root] < A[leaf]) { A[next] = A[root]; A[root++] = uint32_t(next); }
    else A[next] = A[leaf++];
    if (leaf >= n || (root < next && A[root] < A[leaf])) { A[next] += A[root]; A[root++] = uint32_t(next); }
    else A[next] += A[leaf++];
  }
  A[n - 2] = 0;
  for (next = n - 3; next >= 0; --next) A[next] = A[A[next]] + 1;
  int64_t avbl = 1, used = 0, dpth = 0;
  root = n - 2;
  next = n - 1;
  while (avbl > 0) {
    while (root >= 0 && int64_t(A[root]) == dpth) { ++used; --root; }
    while (avbl > used) { A[next--] = uint32_t(dpth); --avbl; }
    avbl = 2 * used; ++dpth; used = 0;
  }
  // A[i] is now the depth of the i-th sorted symbol (non-increasing in i). Count per length, limit.
  uint32_t bits[kDepthCap + 1];
  for (int l = 0; l <= kDepthCap; ++l) bits[l] = 0;
  for (uint32_t i = 0; i < m; ++i) ++bits[A[i] < kDepthCap ? A[i] : kDepthCap];
  limit_depths(bits);
  // Shortest lengths to the most frequent symbols (the end of the sorted order).
  for (uint32_t r = 0; r < m; ++r) len[key_symbol(keys[m - 1 - r])] = uint8_t(length_of_rank(bits, r));
}

// Step 3, sequential form: canonical codes from lengths (nsym symbols). first[l] = first code of length
// l; used by both the encoder (codes) and the decoder (table). Returns false if the lengths oversubscribe
// the code space (a corrupt codebook) or no symbol has a length.
// From the number of codes of each length (count[0] is ignored): false for an empty or
// oversubscribed book. The GPU counts in parallel and calls this directly.
HPCZ_HD bool first_codes_from_counts(const uint32_t* count /*[kMaxLen+1]*/, uint32_t* first /*[kMaxLen+2]*/) {
  uint32_t code = 0, kraft = 0, any = 0;
  for (int l = 1; l <= kMaxLen; ++l) {  // RFC 1951, 3.2.2
    code = (code + (l > 1 ? count[l - 1] : 0)) << 1;
    first[l] = code;
    kraft += count[l] << (kMaxLen - l);
    any |= count[l];
  }
  first[kMaxLen + 1] = 0;
  return any && kraft <= (1u << kMaxLen);
}

HPCZ_HD bool canonical_first_codes(const uint8_t* len, uint32_t nsym, uint32_t* first /*[kMaxLen+2]*/) {
  uint32_t count[kMaxLen + 1];
  for (int l = 0; l <= kMaxLen; ++l) count[l] = 0;
  for (uint32_t s = 0; s < nsym; ++s) {
    if (len[s] > kMaxLen) return false;
    ++count[len[s]];
  }
  return first_codes_from_counts(count, first);
}

// Codes for every symbol (0 for unused ones), in canonical (length, symbol) order.
HPCZ_HD void assign_codes(const uint8_t* len, uint32_t nsym, const uint32_t* first, uint32_t* code) {
  uint32_t next[kMaxLen + 1];
  for (int l = 1; l <= kMaxLen; ++l) next[l] = first[l];
  for (uint32_t s = 0; s < nsym; ++s) code[s] = len[s] ? next[len[s]]++ : 0;
}

// Decode entry: up to two codewords. Symbol in bits 0..11, length in bits 24..27 (0 = no codeword
// there); the first-level table adds the codeword after it when that one also lies wholly in the
// kFastBits window: its symbol in bits 12..23, its length in bits 28..31 (0 = none).
static_assert(kMaxSymbols <= 4096 && kMaxLen < 16, "a decode entry packs 12-bit symbols and 4-bit lengths");
HPCZ_HD uint32_t table_entry(uint32_t sym, uint32_t len) { return sym | len << 24; }
HPCZ_HD uint32_t entry_symbol(uint32_t e) { return e & 0xfff; }
HPCZ_HD uint32_t entry_length(uint32_t e) { return (e >> 24) & 15; }
HPCZ_HD uint32_t entry_symbol2(uint32_t e) { return (e >> 12) & 0xfff; }
HPCZ_HD uint32_t entry_length2(uint32_t e) { return e >> 28; }

// Second level: the canonical ranges per length, for codes longer than kFastBits.
struct CanonicalRanges {
  uint32_t first[kMaxLen + 2];     // first canonical code of each length
  uint32_t count[kMaxLen + 1];     // codes of each length
  uint32_t offset[kMaxLen + 1];    // where each length starts in the sorted symbol list
};

struct DecodeTables {
  uint32_t fast[1u << kFastBits];  // by the next kFastBits bits: codes of <= kFastBits bits (else 0)
  uint16_t multi[1u << kFastBits]; // by the next kFastBits bits: codewords wholly inside them (count | bits << 8)
  CanonicalRanges ranges;
  uint16_t sorted[kMaxSymbols];    // used symbols in (length, symbol) order
};

// Builds the second level and the sorted symbols from code lengths. False for a corrupt book
// (oversubscribed, empty, too long).
HPCZ_HD bool build_ranges(const uint8_t* len, uint32_t nsym, DecodeTables& t) {
  CanonicalRanges& r = t.ranges;
  if (!canonical_first_codes(len, nsym, r.first)) return false;
  for (int l = 0; l <= kMaxLen; ++l) r.count[l] = 0;
  for (uint32_t s = 0; s < nsym; ++s) ++r.count[len[s]];
  r.count[0] = 0;
  uint32_t at = 0;
  for (int l = 1; l <= kMaxLen; ++l) { r.offset[l] = at; at += r.count[l]; }
  r.offset[0] = 0;
  uint32_t next[kMaxLen + 1];
  for (int l = 1; l <= kMaxLen; ++l) next[l] = r.offset[l];
  for (uint32_t s = 0; s < nsym; ++s)
    if (len[s]) t.sorted[next[len[s]]++] = uint16_t(s);
  return true;
}

// The codeword of at most max_len bits at the front of the kFastBits-bit window i, as an entry, or 0.
// A codeword is determined by its own bits, so zero-filling after the window changes nothing.
HPCZ_HD uint32_t short_entry(const DecodeTables& t, uint32_t i, int max_len) {
  const CanonicalRanges& r = t.ranges;
  for (int l = 1; l <= max_len; ++l) {
    const uint32_t c = i >> (kFastBits - l);
    if (c - r.first[l] < r.count[l]) return table_entry(t.sorted[r.offset[l] + c - r.first[l]], l);
  }
  return 0;
}

// First-level entry i (independent per i: the GPU fills the table with all threads): the window's
// first codeword and, when it fits in the rest of the window, the second (a decoder emits both with
// one lookup).
HPCZ_HD uint32_t fast_entry(const DecodeTables& t, uint32_t i) {
  const uint32_t e = short_entry(t, i, kFastBits);
  const uint32_t l = entry_length(e);
  if (l == 0 || l == uint32_t(kFastBits)) return e;
  const uint32_t e2 = short_entry(t, (i << l) & ((1u << kFastBits) - 1), kFastBits - int(l));
  return e2 ? e | entry_symbol(e2) << 12 | entry_length(e2) << 28 : e;
}

// How many whole codewords the kFastBits-bit window i starts with, and their total length: lets a
// decoder that only counts symbols skip several at a time. A codeword of length l is determined by its
// first l bits, so those found with the rest of the window zero-filled are the true ones.
HPCZ_HD uint16_t multi_entry(const uint32_t* fast, uint32_t i) {
  uint32_t pos = 0, n = 0;
  while (pos < uint32_t(kFastBits)) {
    const uint32_t l = entry_length(fast[(i << pos) & ((1u << kFastBits) - 1)]);
    if (l == 0 || l > kFastBits - pos) break;
    pos += l;
    ++n;
  }
  return uint16_t(n | pos << 8);
}

HPCZ_HD bool build_decode_tables(const uint8_t* len, uint32_t nsym, DecodeTables& t) {
  if (!build_ranges(len, nsym, t)) return false;
  for (uint32_t i = 0; i < (1u << kFastBits); ++i) t.fast[i] = fast_entry(t, i);
  for (uint32_t i = 0; i < (1u << kFastBits); ++i) t.multi[i] = multi_entry(t.fast, i);
  return true;
}

// The codeword at the front of window (the next kMaxLen bits): its entry, or 0 if none matches (with
// the codeword after it for a short one, see fast_entry). The tables may be copies (the GPU keeps fast
// and ranges in shared memory).
HPCZ_HD uint32_t decode_entry(const uint32_t* fast, const CanonicalRanges& r, const uint16_t* sorted,
                              uint32_t window) {
  const uint32_t e = fast[window >> (kMaxLen - kFastBits)];
  if (e) return e;
  for (int l = kFastBits + 1; l <= kMaxLen; ++l) {
    const uint32_t c = window >> (kMaxLen - l);
    if (c - r.first[l] < r.count[l]) return table_entry(sorted[r.offset[l] + c - r.first[l]], l);
  }
  return 0;
}

// Codes longer than kFastBits, by table instead of the canonical walk. Canonical codes put them
// numerically last: left-aligned to kMaxLen bits, the windows that start with one are
// [long_base, 2^kMaxLen). A table over the first kLongCap of those windows (2 KiB; the fields' books
// need 0-1,576) gives each its codeword as symbol | (length - kFastBits) << 12, 0 for none. (A 4 KiB
// table, and walking past it with long_entry instead of decode_entry, measured no faster:
// docs/EXPERIMENTS.md.) Every lookup of a decoder then stays in its tables: on the GPU a quarter of
// the decode loop's warp iterations had a lane on the walk, with its load of the sorted symbols from
// global memory (ncu, era5 rel 1e-3), since a warp takes the walk when any of its 32 lanes needs it.
constexpr uint32_t kLongCap = 1024;
static_assert(kMaxLen - kFastBits <= 3 && kMaxSymbols <= 4096, "a long entry packs 12-bit symbols and 2-bit extra lengths");
HPCZ_HD uint32_t long_base(const CanonicalRanges& r) { return r.first[kFastBits + 1] << (kMaxLen - kFastBits - 1); }
HPCZ_HD uint32_t long_windows(const CanonicalRanges& r) {  // entries of the table (first_codes_from_counts: base <= 2^kMaxLen)
  const uint32_t n = (1u << kMaxLen) - long_base(r);
  return n < kLongCap ? n : kLongCap;
}
HPCZ_HD uint16_t long_entry(const CanonicalRanges& r, const uint16_t* sorted, uint32_t window) {
  for (int l = kFastBits + 1; l <= kMaxLen; ++l) {
    const uint32_t c = window >> (kMaxLen - l);
    if (c - r.first[l] < r.count[l]) return uint16_t(sorted[r.offset[l] + c - r.first[l]] | (l - kFastBits) << 12);
  }
  return 0;
}
// A book's long table as a decoder holds it: entries from window base, n of them (long_windows).
struct LongTable {
  uint32_t base, n;
  uint16_t entry[kLongCap];
};
// decode_entry's result for every window, with the long table (longs[0..n), from long_base) in front of
// the walk; the walk remains for windows past the table.
HPCZ_HD uint32_t decode_entry_long(const uint32_t* fast, const uint16_t* longs, uint32_t base, uint32_t n,
                                   const CanonicalRanges& r, const uint16_t* sorted, uint32_t window) {
  const uint32_t e = fast[window >> (kMaxLen - kFastBits)];
  if (e) return e;
  const uint32_t i = window - base;  // wraps for a window below the base: not a long code's, walked (0)
  if (i < n) {
    const uint32_t x = longs[i];
    return x ? table_entry(x & 0xfff, uint32_t(kFastBits) + (x >> 12)) : 0;
  }
  return decode_entry(fast, r, sorted, window);
}

}  // namespace hpcz::huffman
