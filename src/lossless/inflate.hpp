// Deflate decoding (RFC 1951): stored, fixed-Huffman and dynamic-Huffman blocks, shared by the CPU and
// the GPU (one warp per chunk, every lane running this same code on the same state: CODAG's
// "all-thread decoding"; the contract is docs/LOSSLESS.md). gzip (RFC 1952) and zlib (RFC 1950)
// framing are handled by the callers.
//
// Every input byte comes through BitReaderT::need(), which counts bits asked for past the end instead
// of reading them; one check after each step (overran() or a bad code) turns any damaged stream into
// an error. The output sink bounds every write and every back-reference.
//
// Where the warp must not write the same thing 32 times (the Huffman tables live in per-warp shared
// memory), the table context says who writes (leader()) and when the others may read (sync()); on the
// CPU both are trivial.
#pragma once
#include <cstdint>

#include "common/hd.hpp"
#include "lossless/orc_rle.hpp"  // PtrSource

namespace hpcz::lossless {

enum class InflateStatus { ok, truncated, bad_block_type, bad_stored_length, bad_code_lengths, bad_symbol,
                           bad_distance, output_full, bad_header, bad_checksum };

// Off: the type of input offsets (uint32_t where the caller knows the input is small: fewer and
// cheaper instructions on the GPU, whose integer unit is 32 bits wide).
template <class Src, class Off = uint64_t>
struct BitReaderT {
  Src src;
  Off size, pos = 0;        // next byte to load
  uint64_t buf = 0;         // bits not yet consumed, least significant first (Deflate's bit order)
  int count = 0;            // valid bits in buf
  Off overrun = 0;          // bits asked for beyond the input
  // kChecked = false: inside inflate_codes' fast zone, where every word read lies inside the input
  // (see fast_steps), so the end test and the zero fill are skipped.
  template <bool kChecked = true>
  HPCZ_HD void need(int n) {  // n <= 57
    while (count < n) {
      if (!kChecked || (count <= 32 && size - pos >= 4)) {  // a whole word: the common case
        buf |= uint64_t(src.word(pos)) << count;
        pos += 4;
        count += 32;
        continue;
      }
      uint64_t b = 0;
      if (pos < size) b = src(pos++);
      else overrun += 8;
      buf |= b << count;
      count += 8;
    }
  }
  template <bool kChecked = true>
  HPCZ_HD uint32_t peek(int n) {  // next n bits without consuming them
    need<kChecked>(n);
    return uint32_t(buf & ((uint64_t(1) << n) - 1));
  }
  HPCZ_HD void drop(int n) {  // after peek(>= n)
    buf >>= n;
    count -= n;
  }
  HPCZ_HD uint32_t take(int n) {  // the next n bits when need() has already buffered them (n <= 32)
    const uint32_t v = uint32_t(buf & ((uint64_t(1) << n) - 1));
    drop(n);
    return v;
  }
  HPCZ_HD uint32_t bits(int n) {  // next n bits, first bit in bit 0
    if (n == 0) return 0;
    need(n);
    return take(n);
  }
  HPCZ_HD void align() {  // drop the bits left in the current byte
    drop(count & 7);
  }
  // Bits consumed past the real end of the input (zero-filled reads that were actually used).
  HPCZ_HD bool overran() const { return overrun > Off(count); }
  // Bytes of input consumed so far (after align()).
  HPCZ_HD uint64_t consumed() const { return uint64_t(pos) - uint64_t(count / 8); }
  // Input bytes not yet loaded into buf.
  HPCZ_HD uint64_t unread() const { return uint64_t(size - pos); }
};
using BitReader = BitReaderT<PtrSource>;

// A canonical Huffman code: count of codes per length, symbols in code order, and a first-level
// table for codes of up to kBits bits. The literal/length code gets 10 bits: on float bytes and text
// its codes run 8-10 bits, and with a 9-bit table a fifth of era5's symbols took the canonical walk
// (13% of the GPU decoder's instructions). Distances keep 9; code-length codes are at most 7 bits.
// (11 bits measured slower: a larger table to build per block.)
template <int kBits>
struct HuffCodeT {
  static constexpr int kLutBits = kBits;
  uint16_t count[16];
  uint16_t symbol[288];
  int first_long, index_long;  // the canonical walk's state after lengths 1..kBits (see walk_long)
  uint16_t lut[1 << kBits];    // length << 9 | symbol, or 0 when the code is longer (or absent)
};
using LitCode = HuffCodeT<10>;
using DistCode = HuffCodeT<9>;
using LenCode = HuffCodeT<7>;

// Counts and symbol order from lengths[0..n). Returns 0 for a complete code, > 0 for an incomplete
// one (codes left over), < 0 for an oversubscribed one.
template <class Code>
HPCZ_HD int build_code(Code& h, const uint8_t* lengths, int n) {
  for (int l = 0; l < 16; ++l) h.count[l] = 0;
  for (int s = 0; s < n; ++s) ++h.count[lengths[s]];
  h.first_long = h.index_long = 0;
  for (int l = 1; l <= Code::kLutBits; ++l) {  // walk_code's first and index after failing lengths 1..kBits
    h.index_long += h.count[l];
    h.first_long = (h.first_long + h.count[l]) << 1;
  }
  if (h.count[0] == n) return 0;  // no codes: complete in the sense that nothing can be decoded
  int left = 1;
  for (int l = 1; l < 16; ++l) {
    left <<= 1;
    left -= h.count[l];
    if (left < 0) return left;
  }
  uint16_t offs[16];
  offs[1] = 0;
  for (int l = 1; l < 15; ++l) offs[l + 1] = uint16_t(offs[l] + h.count[l]);
  for (int s = 0; s < n; ++s)
    if (lengths[s]) h.symbol[offs[lengths[s]]++] = uint16_t(s);
  return left;
}

// Walks the canonical code over `window` (stream bits, first in bit 0; codes are sent most significant
// bit first) from length l to max_len, with code, first and index the walk's state on entering length
// l (0, 0, 0 at l = 1). Returns length << 9 | symbol, or 0 if no code matches.
template <class Code>
HPCZ_HD uint32_t walk_from(const Code& h, uint32_t window, int l, int code, int first, int index, int max_len) {
  for (; l <= max_len; ++l) {
    code |= int(window >> (l - 1) & 1);
    const int c = h.count[l];
    if (code - first < c) return uint32_t(l) << 9 | h.symbol[index + code - first];
    index += c;
    first = (first + c) << 1;
    code <<= 1;
  }
  return 0;
}

template <class Code>
HPCZ_HD uint32_t walk_code(const Code& h, uint32_t window, int max_len) { return walk_from(h, window, 1, 0, 0, 0, max_len); }

// The low n bits of v in reverse order.
HPCZ_HD uint32_t reverse_low_bits(uint32_t v, int n) {
#ifdef __CUDA_ARCH__
  return __brev(v) >> (32 - n);
#else
  uint32_t r = 0;
  for (int i = 0; i < n; ++i) r |= (v >> i & 1) << (n - 1 - i);
  return r;
#endif
}

// walk_code(h, window, 15) for a window whose first kLutBits bits have no table entry: no code of up
// to kLutBits bits matches, so the walk resumes at length kLutBits + 1 from the state it would have
// reached (code: those bits, most significant first, shifted once).
template <class Code>
HPCZ_HD uint32_t walk_long(const Code& h, uint32_t window) {
  constexpr int K = Code::kLutBits;
  return walk_from(h, window, K + 1, int(reverse_low_bits(window, K)) << 1, h.first_long, h.index_long, 15);
}

// The first-level table entry for the kLutBits-bit window i.
template <class Code>
HPCZ_HD uint16_t lut_entry(const Code& h, uint32_t i) { return uint16_t(walk_code(h, i, Code::kLutBits)); }

// Decodes one symbol: a table lookup, or the canonical walk for longer codes. -1 if no code of up
// to 15 bits matches (only possible with an incomplete code); then 15 bits are consumed.
template <bool kChecked = true, class BR, class Code>
HPCZ_HD int decode_symbol(BR& br, const Code& h) {
  const uint32_t window = br.template peek<kChecked>(15);
  uint32_t e = h.lut[window & ((1u << Code::kLutBits) - 1)];
  if (!e) e = walk_long(h, window);
  if (!e) {
    br.drop(15);
    return -1;
  }
  br.drop(int(e >> 9));
  return int(e & 511);
}

// Length and distance bases and extra bits (RFC 1951, 3.2.5). The RFC's tables follow
//   length code i (0..27):  i < 8: 3 + i;  else with e = i/4 - 1 extra bits: 3 + ((4 + i % 4) << e)
//   distance code i:        i < 4: 1 + i;  else with e = i/2 - 1 extra bits: 1 + ((2 + i % 2) << e)
// (3, 4, .., 10, 11, 13, 15, 17, 19, 23, ..., 227, and 258 for code 28; 1, 2, 3, 4, 5, 7, 9, 13, ..., 24577).
constexpr int length_extra(int i) { return i < 8 || i == 28 ? 0 : (i >> 2) - 1; }
constexpr int length_base(int i) { return i < 8 ? 3 + i : (i == 28 ? 258 : 3 + ((4 + (i & 3)) << length_extra(i))); }
constexpr int dist_extra(int i) { return i < 4 ? 0 : (i >> 1) - 1; }
constexpr int dist_base(int i) { return i < 4 ? 1 + i : 1 + ((2 + (i & 1)) << dist_extra(i)); }

// The bases as tables too: a match reads its two bases there (the base formulas take about ten
// instructions each) but computes the extra-bit counts by formula (three or four), so that taking
// the bits does not wait on the table read (levitus 1.6% faster than reading both from a table). On
// the GPU the tables live in constant memory: every lane of a warp reads the same entry, which the
// constant cache serves at once (a local array would be rebuilt on the stack at every call). The
// static_assert below checks every entry against the formulas.
#define HPCZ_INFLATE_LENGTH_BASES \
  {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
#define HPCZ_INFLATE_DIST_BASES                                                                                  \
  {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, \
   6145, 8193, 12289, 16385, 24577}
namespace detail {
constexpr uint16_t kLengthBases[29] = HPCZ_INFLATE_LENGTH_BASES;
constexpr uint16_t kDistBases[30] = HPCZ_INFLATE_DIST_BASES;
#ifdef __CUDACC__
static __constant__ uint16_t kLengthBasesDevice[29] = HPCZ_INFLATE_LENGTH_BASES;
static __constant__ uint16_t kDistBasesDevice[30] = HPCZ_INFLATE_DIST_BASES;
#endif
constexpr bool base_tables_match() {
  for (int i = 0; i < 29; ++i)
    if (kLengthBases[i] != length_base(i)) return false;
  for (int i = 0; i < 30; ++i)
    if (kDistBases[i] != dist_base(i)) return false;
  return true;
}
static_assert(base_tables_match(), "the length and distance bases follow RFC 1951's formulas");
}  // namespace detail
#undef HPCZ_INFLATE_LENGTH_BASES
#undef HPCZ_INFLATE_DIST_BASES

HPCZ_HD uint32_t length_base_of(int i) {  // length_base(i) from the table, i in 0..28
#ifdef __CUDA_ARCH__
  return detail::kLengthBasesDevice[i];
#else
  return detail::kLengthBases[i];
#endif
}
HPCZ_HD uint32_t dist_base_of(int i) {  // dist_base(i) from the table, i in 0..29
#ifdef __CUDA_ARCH__
  return detail::kDistBasesDevice[i];
#else
  return detail::kDistBases[i];
#endif
}

// The decoder's tables, in memory the context provides (the CPU's stack, a warp's shared memory).
struct InflateTables {
  LitCode lit;
  DistCode dist;
  LenCode lencode;
  uint8_t lengths[320];
  int shared_result;  // a leader's result, for the others to read after sync()
};

// Builds h from lengths: the leader counts and orders, every lane fills its share of the table.
// Returns build_code's result on every lane.
template <class Ctx, class Code>
HPCZ_HD int build_tables(Ctx& ctx, InflateTables& t, Code& h, const uint8_t* lengths, int n) {
  ctx.sync();  // every lane is done with the previous tables and with lengths
  if (ctx.leader()) t.shared_result = build_code(h, lengths, n);
  ctx.sync();
  const int left = t.shared_result;
  if (left >= 0) ctx.for_lanes(1u << Code::kLutBits, [&](uint32_t i) { h.lut[i] = lut_entry(h, i); });
  ctx.sync();
  return left;
}

// One step of a block's data: two literals, one literal, one match or the end of the block.
// Returns kStepMore to go on, else the block's status.
// kChecked = false is the fast zone (fast_steps): the input has the bytes every step could read and
// the output the room every step could write, so no step can be cut short or overflow, and the
// tests for those are skipped; every other test stays. Both variants return the same status on the
// same stream, which keeps the CPU and GPU (and fast and checked) decoders in step.
// Out: put<kChecked>(byte) -> bool (false: full), put2<kChecked>(byte, byte) -> bool (both or
// neither), copy<kChecked>(distance, length) -> InflateStatus.
constexpr int kStepMore = -1;
template <bool kChecked, class BR, class Out>
HPCZ_HD int inflate_step(BR& br, Out& out, const LitCode& lit, const DistCode& dist) {
  // Up to two literals whose codes the first-level table holds, from one 30-bit window (two codes of
  // at most LitCode::kLutBits each fit).
  int sym;
  {
    const uint32_t window = br.template peek<kChecked>(30);
    const uint32_t e1 = lit.lut[window & ((1u << LitCode::kLutBits) - 1)];
    if (e1 && (e1 & 511) < 256) {
      const int l1 = int(e1 >> 9);
      const uint32_t e2 = lit.lut[(window >> l1) & ((1u << LitCode::kLutBits) - 1)];
      if (e2 && (e2 & 511) < 256) {
        // Two literals, one overrun test and one capacity test (the sink takes both or neither).
        // The status is one-at-a-time's, except for a stream cut inside the second code whose output
        // is full at the first: truncated, not output_full. CPU and GPU share this code.
        br.drop(l1 + int(e2 >> 9));
        if (kChecked && br.overran()) return int(InflateStatus::truncated);
        if (!out.template put2<kChecked>(uint8_t(e1), uint8_t(e2))) return int(InflateStatus::output_full);
        return kStepMore;
      }
      br.drop(l1);
      if (kChecked && br.overran()) return int(InflateStatus::truncated);
      if (!out.template put<kChecked>(uint8_t(e1))) return int(InflateStatus::output_full);
      return kStepMore;
    }
    if (e1) {  // a length or end-of-block code the table holds: decode_symbol would find this entry
      br.drop(int(e1 >> 9));
      sym = int(e1 & 511);
    } else {
      sym = decode_symbol<kChecked>(br, lit);
    }
  }
  if (kChecked && br.overran()) return int(InflateStatus::truncated);
  const uint32_t code = uint32_t(sym) - 257u;  // a length code 0..28; anything else is rare (one test)
  if (code > 28) {
    if (sym < 0 || sym > 285) return int(InflateStatus::bad_symbol);
    if (sym == 256) return int(InflateStatus::ok);
    if (!out.template put<kChecked>(uint8_t(sym))) return int(InflateStatus::output_full);  // a long literal code
    return kStepMore;
  }
  // The rest of the match, at most 5 + 15 + 13 bits (length extra, distance code, distance extra),
  // buffered at once: the extra bits need no refill test of their own. (Bits buffered past the
  // input's end count as overrun only once consumed, so the statuses are unchanged.)
  br.template need<kChecked>(5 + 15 + 13);
  // The extra-bit counts by formula and the bases from the tables: the bits are taken without waiting
  // on the table read, which only the final sums need.
  const uint32_t len = length_base_of(int(code)) + br.take(length_extra(int(code)));
  const int ds = decode_symbol<kChecked>(br, dist);
  if (kChecked && br.overran()) return int(InflateStatus::truncated);
  if (ds < 0 || ds > 29) return int(InflateStatus::bad_distance);
  const uint32_t d = dist_base_of(ds) + br.take(dist_extra(ds));
  if (kChecked && br.overran()) return int(InflateStatus::truncated);
  const InflateStatus st = out.template copy<kChecked>(d, len);
  return st == InflateStatus::ok ? kStepMore : int(st);
}

// How many steps may run unchecked from here. A step consumes at most 48 bits (a 15-bit length code,
// 5 extra bits, a 15-bit distance code, 13 extra bits) and writes at most 258 bytes. need() loads a
// word only while fewer than 33 bits are buffered, so a load at byte pos satisfies pos < (consumed
// bits + 33) / 8, and after k steps consumed <= 8 * pos0 + 48 k bits: every load of the k steps stays
// inside the input (pos + 4 <= size) when pos0 + 6 k + 9 <= size. Rounded down to powers of two
// (8 bytes and 512 output bytes a step) so that this costs shifts, not divisions.
template <class BR, class Out>
HPCZ_HD uint32_t fast_steps(const BR& br, const Out& out) {
  const uint64_t in = br.unread(), room = out.room();
  if (in < 16) return 0;
  const uint64_t k_in = (in - 16) >> 3, k_out = room >> 9;
  const uint64_t k = k_in < k_out ? k_in : k_out;
  return uint32_t(k < (1u << 30) ? k : (1u << 30));
}

// The data of one compressed block, up to its end-of-block code: runs of unchecked steps while the
// input and output have room for them (libdeflate's fast loop), a checked step in between.
// kFastZone = false checks every step (the tests compare both on damaged streams and tight outputs).
template <bool kFastZone = true, class BR, class Out>
HPCZ_HD InflateStatus inflate_codes(BR& br, Out& out, const LitCode& lit, const DistCode& dist) {
  for (;;) {
    for (uint32_t k = kFastZone ? fast_steps(br, out) : 0; k > 0; --k) {
      const int r = inflate_step<false>(br, out, lit, dist);
      if (r != kStepMore) return InflateStatus(r);
    }
    const int r = inflate_step<true>(br, out, lit, dist);
    if (r != kStepMore) return InflateStatus(r);
  }
}

// A raw Deflate stream from br to out; ctx and t as above. The caller flushes out afterwards.
template <bool kFastZone = true, class BR, class Out, class Ctx>
HPCZ_HD InflateStatus inflate_raw(BR& br, Out& out, Ctx& ctx, InflateTables& t) {
  for (;;) {
    const uint32_t final_block = br.bits(1), type = br.bits(2);
    if (br.overran()) return InflateStatus::truncated;
    InflateStatus st = InflateStatus::ok;
    if (type == 0) {  // stored
      br.align();
      const uint32_t len = br.bits(16), nlen = br.bits(16);
      if (br.overran()) return InflateStatus::truncated;
      if (len != (~nlen & 0xffff)) return InflateStatus::bad_stored_length;
      for (uint32_t k = 0; k < len; ++k) {
        const uint32_t b = br.bits(8);
        if (br.overran()) return InflateStatus::truncated;
        if (!out.put(uint8_t(b))) return InflateStatus::output_full;
      }
    } else if (type == 1) {  // fixed Huffman codes (RFC 1951, 3.2.6)
      ctx.sync();  // every lane is done with the previous block's tables
      if (ctx.leader()) {
        for (int s = 0; s < 288; ++s) t.lengths[s] = s < 144 ? 8 : (s < 256 ? 9 : (s < 280 ? 7 : 8));
        for (int s = 0; s < 30; ++s) t.lengths[288 + s] = 5;
      }
      ctx.sync();
      build_tables(ctx, t, t.lit, t.lengths, 288);
      build_tables(ctx, t, t.dist, t.lengths + 288, 30);
      st = inflate_codes<kFastZone>(br, out, t.lit, t.dist);
    } else if (type == 2) {  // dynamic Huffman codes (3.2.7)
      const int nlit = int(br.bits(5)) + 257, ndist = int(br.bits(5)) + 1, ncode = int(br.bits(4)) + 4;
      if (br.overran()) return InflateStatus::truncated;
      if (nlit > 286 || ndist > 30) return InflateStatus::bad_code_lengths;
      const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
      uint8_t cl[19];
      for (int k = 0; k < 19; ++k) cl[order[k]] = k < ncode ? uint8_t(br.bits(3)) : 0;
      if (br.overran()) return InflateStatus::truncated;
      if (build_tables(ctx, t, t.lencode, cl, 19) != 0) return InflateStatus::bad_code_lengths;  // must be complete
      ctx.sync();  // the previous block's lengths are free
      int k = 0;
      uint8_t last = 0;  // the previous length, kept in a register: only the leader writes t.lengths
      while (k < nlit + ndist) {
        const int sym = decode_symbol(br, t.lencode);
        if (br.overran()) return InflateStatus::truncated;
        if (sym < 0) return InflateStatus::bad_code_lengths;
        if (sym < 16) {
          if (ctx.leader()) t.lengths[k] = uint8_t(sym);
          ++k;
          last = uint8_t(sym);
          continue;
        }
        int rep = 0;
        uint8_t v = 0;
        if (sym == 16) {
          if (k == 0) return InflateStatus::bad_code_lengths;
          v = last;
          rep = 3 + int(br.bits(2));
        } else if (sym == 17) {
          rep = 3 + int(br.bits(3));
        } else {
          rep = 11 + int(br.bits(7));
        }
        if (br.overran()) return InflateStatus::truncated;
        if (k + rep > nlit + ndist) return InflateStatus::bad_code_lengths;
        if (ctx.leader())
          for (int j = 0; j < rep; ++j) t.lengths[k + j] = v;
        k += rep;
        last = v;
      }
      ctx.sync();
      if (t.lengths[256] == 0) return InflateStatus::bad_code_lengths;  // no end-of-block code
      // Literal/length code: complete, or incomplete only when it has a single code.
      int left = build_tables(ctx, t, t.lit, t.lengths, nlit);
      if (left < 0 || (left > 0 && nlit - t.lit.count[0] != 1)) return InflateStatus::bad_code_lengths;
      left = build_tables(ctx, t, t.dist, t.lengths + nlit, ndist);
      if (left < 0 || (left > 0 && ndist - t.dist.count[0] != 1)) return InflateStatus::bad_code_lengths;
      st = inflate_codes<kFastZone>(br, out, t.lit, t.dist);
    } else {
      return InflateStatus::bad_block_type;
    }
    if (st != InflateStatus::ok) return st;
    if (final_block) return InflateStatus::ok;
  }
}

// The CPU's context: one thread is the whole "warp".
struct SerialCtx {
  HPCZ_HD bool leader() const { return true; }
  HPCZ_HD void sync() const {}
  template <class F> HPCZ_HD void for_lanes(uint32_t n, F&& f) const {
    for (uint32_t i = 0; i < n; ++i) f(i);
  }
};

// ---- checksums of the framings -------------------------------------------------------------------
HPCZ_HD uint32_t crc32_update(uint32_t crc, const uint8_t* d, uint64_t n) {
  crc = ~crc;
  for (uint64_t i = 0; i < n; ++i) {
    crc ^= d[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
  }
  return ~crc;
}
HPCZ_HD uint32_t adler32(const uint8_t* d, uint64_t n) {
  uint32_t a = 1, b = 0;
  for (uint64_t i = 0; i < n; ++i) {
    a = (a + d[i]) % 65521;
    b = (b + a) % 65521;
  }
  return b << 16 | a;
}

}  // namespace hpcz::lossless
