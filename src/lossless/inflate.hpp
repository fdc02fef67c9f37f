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

template <class Src>
struct BitReaderT {
  Src src;
  uint64_t size, pos = 0;   // next byte to load
  uint64_t buf = 0;         // bits not yet consumed, least significant first (Deflate's bit order)
  int count = 0;            // valid bits in buf
  uint64_t overrun = 0;     // bits asked for beyond the input
  HPCZ_HD void need(int n) {  // n <= 57
    while (count < n) {
      if (count <= 32 && size - pos >= 4) {  // a whole word: the common case, a quarter of the steps
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
  HPCZ_HD uint32_t peek(int n) {  // next n bits without consuming them
    need(n);
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
  HPCZ_HD bool overran() const { return overrun > uint64_t(count); }
  // Bytes of input consumed so far (after align()).
  HPCZ_HD uint64_t consumed() const { return pos - uint64_t(count / 8); }
};
using BitReader = BitReaderT<PtrSource>;

// A canonical Huffman code: count of codes per length, symbols in code order, and a first-level
// table for codes of up to kBits bits. The literal/length code gets 10 bits: on float bytes and text
// its codes run 8-10 bits, and with a 9-bit table a fifth of era5's symbols took the canonical walk
// (13% of the GPU decoder's instructions). Distances keep 9; code-length codes are at most 7 bits.
// (11 bits measured slower: a larger table to build per block, lossless-v6.)
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
template <class BR, class Code>
HPCZ_HD int decode_symbol(BR& br, const Code& h) {
  const uint32_t window = br.peek(15);
  uint32_t e = h.lut[window & ((1u << Code::kLutBits) - 1)];
  if (!e) e = walk_long(h, window);
  if (!e) {
    br.drop(15);
    return -1;
  }
  br.drop(int(e >> 9));
  return int(e & 511);
}

// Length and distance bases and extra bits (RFC 1951, 3.2.5), computed rather than looked up: a local
// table in a device function is rebuilt on the stack at every call. The RFC's tables follow
//   length code i (0..27):  i < 8: 3 + i;  else with e = i/4 - 1 extra bits: 3 + ((4 + i % 4) << e)
//   distance code i:        i < 4: 1 + i;  else with e = i/2 - 1 extra bits: 1 + ((2 + i % 2) << e)
// (3, 4, .., 10, 11, 13, 15, 17, 19, 23, ..., 227, and 258 for code 28; 1, 2, 3, 4, 5, 7, 9, 13, ..., 24577).
HPCZ_HD int length_extra(int i) { return i < 8 || i == 28 ? 0 : (i >> 2) - 1; }
HPCZ_HD int length_base(int i) { return i < 8 ? 3 + i : (i == 28 ? 258 : 3 + ((4 + (i & 3)) << length_extra(i))); }
HPCZ_HD int dist_extra(int i) { return i < 4 ? 0 : (i >> 1) - 1; }
HPCZ_HD int dist_base(int i) { return i < 4 ? 1 + i : 1 + ((2 + (i & 1)) << dist_extra(i)); }

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

// Out: put(byte) -> bool (false: full), put2(byte, byte) -> bool (both or neither),
// copy(distance, length) -> InflateStatus.
template <class BR, class Out>
HPCZ_HD InflateStatus inflate_codes(BR& br, Out& out, const LitCode& lit, const DistCode& dist) {
  for (;;) {
    // Fast path: up to two literals whose codes the first-level table holds, from one 30-bit window
    // (two codes of at most LitCode::kLutBits each fit).
    int sym;
    {
      const uint32_t window = br.peek(30);
      const uint32_t e1 = lit.lut[window & ((1u << LitCode::kLutBits) - 1)];
      if (e1 && (e1 & 511) < 256) {
        const int l1 = int(e1 >> 9);
        const uint32_t e2 = lit.lut[(window >> l1) & ((1u << LitCode::kLutBits) - 1)];
        if (e2 && (e2 & 511) < 256) {
          // Two literals, one overrun test and one capacity test (the sink takes both or neither).
          // The status is one-at-a-time's, except for a stream cut inside the second code whose output
          // is full at the first: truncated, not output_full. CPU and GPU share this code.
          br.drop(l1 + int(e2 >> 9));
          if (br.overran()) return InflateStatus::truncated;
          if (!out.put2(uint8_t(e1), uint8_t(e2))) return InflateStatus::output_full;
          continue;
        }
        br.drop(l1);
        if (br.overran()) return InflateStatus::truncated;
        if (!out.put(uint8_t(e1))) return InflateStatus::output_full;
        continue;
      }
      if (e1) {  // a length or end-of-block code the table holds: decode_symbol would find this entry
        br.drop(int(e1 >> 9));
        sym = int(e1 & 511);
      } else {
        sym = decode_symbol(br, lit);
      }
    }
    if (br.overran()) return InflateStatus::truncated;
    if (sym < 0 || sym > 285) return InflateStatus::bad_symbol;
    if (sym < 256) {
      if (!out.put(uint8_t(sym))) return InflateStatus::output_full;
      continue;
    }
    if (sym == 256) return InflateStatus::ok;
    const int li = sym - 257;
    // The rest of the match, at most 5 + 15 + 13 bits (length extra, distance code, distance extra),
    // buffered at once: the extra bits need no refill test of their own. (Bits buffered past the
    // input's end count as overrun only once consumed, so the statuses are unchanged.)
    br.need(5 + 15 + 13);
    const int len = length_base(li) + int(br.take(length_extra(li)));
    const int ds = decode_symbol(br, dist);
    if (br.overran()) return InflateStatus::truncated;
    if (ds < 0 || ds > 29) return InflateStatus::bad_distance;
    const uint32_t d = uint32_t(dist_base(ds)) + br.take(dist_extra(ds));
    if (br.overran()) return InflateStatus::truncated;
    const InflateStatus st = out.copy(d, uint32_t(len));
    if (st != InflateStatus::ok) return st;
  }
}

// A raw Deflate stream from br to out; ctx and t as above. The caller flushes out afterwards.
template <class BR, class Out, class Ctx>
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
      st = inflate_codes(br, out, t.lit, t.dist);
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
      st = inflate_codes(br, out, t.lit, t.dist);
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
