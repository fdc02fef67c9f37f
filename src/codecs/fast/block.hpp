// Fast mode (cuSZp2 design): per-block quantization and fixed-length encoding, shared by the CPU
// backend and the CUDA kernels. Every function here is deterministic IEEE arithmetic, so both backends
// write the same bytes. Block layout and code table: docs/FORMAT.md, "Fast codec".
#pragma once
#include "codecs/fast/bit_planes.hpp"
#include "common/hd.hpp"
#include "quant/quantizer.hpp"

namespace hpcz::fast {

using namespace hpcz::detail;
using namespace hpcz::quant;

constexpr int kB = 32;                       // values per block
constexpr uint8_t kExcFlag = 0x80;           // block has exceptions (mask in payload, values at chunk end)
constexpr uint8_t kCodeRaw = 0x7f;           // 32 raw values
constexpr uint8_t kCodeUniform = 0x7c;       // every lane has the same bits: one value (fill or NaN land)
// Two-level blocks (format version 3): every lane's q is prev or prev + D, a bit a lane; D in one
// zigzag byte (kCodeTwoLevel1) or four (kCodeTwoLevel4). Masked or stepped fields, and smooth data at
// loose bounds whose q steps by one, cost 5 or 8 bytes a block instead of 8 to 128.
constexpr uint8_t kCodeTwoLevel1 = 0x7d;
constexpr uint8_t kCodeTwoLevel4 = 0x7e;
// Lane blocks (format version 4): only the lanes whose q is not 0 are coded, each by its delta in wl
// bits (zigzag) in a bit stream; the other lanes' q is 0. A sparse field's edge blocks (cloud water,
// precipitation: a few nonzero lanes among zeros) cost their nonzero lanes only. The payload's size
// depends on the lane mask and wl, which the code byte cannot carry (the decoder finds payloads from
// the codes alone), so those two are the block's descriptor, kept in a section at the chunk's end.
constexpr uint8_t kCodeLanes = 0xfc;
constexpr uint32_t kLanesDescBytes = 5;      // lane mask (u32), wl (one byte, 0..32)
constexpr int kOutlierBase = 32;             // codes 32..123: outlier mode
constexpr int kOutlierWidths = 23;           // delta widths 0..22 (wider blocks gain little over plain)
constexpr int kOutlierLast = kOutlierBase + 4 * kOutlierWidths - 1;  // 123


HPCZ_HD uint32_t zigzag(int32_t v) { return (uint32_t(v) << 1) ^ uint32_t(v >> 31); }
HPCZ_HD int32_t unzigzag(uint32_t z) { return int32_t((z >> 1) ^ (0u - (z & 1))); }

// The outlier (the block's first q) takes k bytes: its magnitude when there is a sign word (w > 0,
// whose bit 0 then holds its sign), else its zigzag code.
HPCZ_HD uint32_t outlier_field(int32_t q0, int w) {
  return w ? (q0 < 0 ? 0u - uint32_t(q0) : uint32_t(q0)) : zigzag(q0);
}
HPCZ_HD int outlier_bytes(int32_t q0, int w) {
  int k = (bit_width32(outlier_field(q0, w)) + 7) / 8;
  return k ? k : 1;
}

struct BlockPlan {
  uint8_t code;
  uint32_t mask;     // lanes stored as exceptions
  uint32_t payload;  // bytes in the block stream (mask included)
  uint32_t nexc;     // exception values in the chunk's exception section
};

// Payload bytes implied by a code, or -1 for a code no encoder writes (a lane block's size is in its
// descriptor: block_payload_bytes).
HPCZ_HD int payload_size(uint8_t code, int value_bytes) {
  int c = code & 0x7f, e = code & kExcFlag ? 4 : 0;
  if (c == kCodeRaw) return e ? -1 : kB * value_bytes;
  if (c == kCodeUniform) return e ? -1 : value_bytes;
  if (c == kCodeTwoLevel1) return 5 + e;
  if (c == kCodeTwoLevel4) return 8 + e;
  if (c < kOutlierBase) return (c ? 4 + 4 * c : 0) + e;
  if (c > kOutlierLast) return -1;
  int k = (c - kOutlierBase) / kOutlierWidths + 1, w = (c - kOutlierBase) % kOutlierWidths;
  return k + (w ? 4 + 4 * w : 0) + e;
}

HPCZ_HD uint32_t lanes_data_bytes(uint32_t lanes, uint32_t wl) { return (uint32_t(popcount32(lanes)) * wl + 7) / 8; }
HPCZ_HD bool lanes_desc_ok(const uint8_t* desc) { return desc[4] <= 32; }

// Payload bytes of a block in the block stream, -1 for an invalid code or descriptor. desc: the
// block's descriptor, read only for a lane block.
HPCZ_HD int block_payload_bytes(uint8_t code, const uint8_t* desc, int value_bytes) {
  if (code != kCodeLanes) return payload_size(code, value_bytes);
  return lanes_desc_ok(desc) ? int(lanes_data_bytes(load_u32_le(desc), desc[4])) : -1;
}

// Whether the block has an exception mask (a lane block's code has the flag bit but no exceptions).
HPCZ_HD bool has_exceptions(uint8_t code) { return (code & kExcFlag) && code != kCodeLanes; }

HPCZ_HD uint32_t lanes_below(int count) { return count >= kB ? ~0u : (1u << count) - 1; }

// Quantizes the block's lanes once. Returns the lanes with no q: those stored exactly (NaN, Inf, fill,
// out of range; their bits, restricted to count, form the exception mask) and those past count.
// *tail gets the q of the last quantized lane, if any (*has_tail): that is what the next block's chain
// starts from, and it does not depend on how blocks are coded.
// The quick test runs on every lane with no call and no divergent branch. The lanes it leaves
// undecided (almost never any) are settled by the exact search, reading their values again through
// reload(i); the search's answer is one of q0 - 1, q0, q0 + 1 or none, kept as bit masks and applied
// at the end, so the rare path never indexes q: the GPU encoder keeps q in registers.
template <class T, class Reload>
HPCZ_HD uint32_t quantize_lanes(const T* v, Reload&& reload, int count, const QuantParams<T>& p, int32_t* q,
                                int32_t& tail, bool& has_tail) {
  if (p.pw) {  // a pointwise-relative bound: its quick test, the exact search for the lanes it leaves
    uint32_t invalid = 0;
    has_tail = false;
HPCZ_UNROLL
    for (int i = 0; i < kB; ++i) {
      int32_t qi = 0;
      bool ok = i < count && pw_rel_quick(v[i], p, qi);
      if (!ok && i < count) ok = pw_rel_quantize(T(reload(i)), p, qi);
      q[i] = ok ? qi : 0;
      invalid |= uint32_t(!ok) << i;
      if (ok) {
        tail = qi;
        has_tail = true;
      }
    }
    return invalid;
  }
  // Whole blocks whose every lane passes the quick test (almost all): no masks to build, no lane to
  // fix up. ncu on the GPU encoder: the general loop below cost 26 instructions a value, this one 8.
  if (count == kB) {
    bool clean = true;
HPCZ_UNROLL
    for (int i = 0; i < kB; ++i) clean &= quantize_quick(v[i], p, q[i]);
    if (clean) {
      tail = q[kB - 1];
      has_tail = true;
      return 0;
    }
  }
  uint32_t invalid = 0, search = 0;
HPCZ_UNROLL
  for (int i = 0; i < kB; ++i) {
    const QuantResult r = quantize_fast(v[i], p, q[i]);
    invalid |= uint32_t(r == kQuantNone || i >= count) << i;
    search |= uint32_t(r == kQuantSearch && i < count) << i;
  }
  if (search) {
    uint32_t up = 0, down = 0;
    for (uint32_t m = search; m; m &= m - 1) {
      const int i = lowest_bit32(m);
      const T x = T(reload(i));
      int32_t q0;
      quantize_fast(x, p, q0);  // the same q0 as in the quick loop
      const int32_t c = quantize_search<T>(x, p.step, p.eb, q0);
      if (c == kNoQ) invalid |= 1u << i;
      else if (c < q0) down |= 1u << i;
      else if (c > q0) up |= 1u << i;
    }
HPCZ_UNROLL
    for (int i = 0; i < kB; ++i) q[i] += int32_t(up >> i & 1) - int32_t(down >> i & 1);
  }
  has_tail = false;
HPCZ_UNROLL
  for (int i = 0; i < kB; ++i) {
    if (invalid >> i & 1) {
      q[i] = 0;
    } else {
      tail = q[i];
      has_tail = true;
    }
  }
  return invalid;
}

template <class T>
HPCZ_HD uint32_t quantize_lanes(const T* v, int count, const QuantParams<T>& p, int32_t* q, int32_t& tail,
                                bool& has_tail) {
  return quantize_lanes(v, [&](int i) { return v[i]; }, count, p, q, tail, has_tail);
}

// Lanes with no q repeat the previous lane's q (lane 0: prev, the q that ended the previous block), so
// they cost no bits.
HPCZ_HD void chain_fill(int32_t* q, uint32_t invalid, int32_t prev) {
  if (!invalid) return;
HPCZ_UNROLL
  for (int i = 0; i < kB; ++i) {
    if (invalid >> i & 1) q[i] = prev;
    prev = q[i];
  }
}

// True for the codes that store values rather than q (the decoder re-quantizes them for the chain).
HPCZ_HD bool holds_values(uint8_t code) { return code == kCodeRaw || code == kCodeUniform; }

// Whether the first count lanes all have the same bits.
template <class T> HPCZ_HD bool uniform_bits(const T* v, int count) {
  bool same = true;
  if (count == kB) {
HPCZ_UNROLL
    for (int i = 1; i < kB; ++i) same &= to_bits(v[i]) == to_bits(v[0]);
    return same;
  }
HPCZ_UNROLL
  for (int i = 1; i < kB; ++i) same &= i >= count || to_bits(v[i]) == to_bits(v[0]);
  return same;
}

// Chooses the block's encoding from its q (computed with the right prev): plain (32 deltas, the first
// against prev), outlier (the first q itself in k bytes, 31 deltas), uniform (one value, when every
// lane has the same bits) or raw, whichever is smallest.
// The choice itself, from the block's statistics: OR of all |delta| (the first against prev), OR of
// |delta_1..31|, the first q, the exception mask. Shared by the per-thread and the per-warp planners.
HPCZ_HD BlockPlan plan_from_stats(uint32_t max_all, uint32_t max_rest, int32_t q0, uint32_t mask, int value_bytes,
                                  bool uniform, uint32_t two_d = 0, uint32_t nonzero = ~0u) {
  int w_all = bit_width32(max_all), w_rest = bit_width32(max_rest);
  uint32_t plain = w_all ? 4 + 4 * w_all : 0;
  int k = outlier_bytes(q0, w_rest);
  uint32_t outlier = k + (w_rest ? 4 + 4 * w_rest : 0);
  BlockPlan bp;
  uint32_t size;
  if (w_rest < kOutlierWidths && outlier < plain) {
    bp.code = uint8_t(kOutlierBase + (k - 1) * kOutlierWidths + w_rest);
    size = outlier;
  } else {
    bp.code = uint8_t(w_all);
    size = plain;
  }
  if (two_d) {  // two-level where strictly smaller (ties keep the codes older writers chose)
    const bool one = zigzag(int32_t(two_d)) < 256u;
    if ((one ? 5u : 8u) < size) {
      bp.code = one ? kCodeTwoLevel1 : kCodeTwoLevel4;
      size = one ? 5u : 8u;
    }
  }
  // A lane block where it saves at least a quarter, counting its descriptor (blocks with exceptions
  // excluded: their lanes would need two masks). Every delta fits w_all bits, so its zigzag fits
  // w_all + 1. The quarter: in a GPU warp one lane block runs its extra path for all 32 threads, and
  // the blocks that save less (scattered zeros of fields crossing 0) gave the fields < 0.5%.
  if (!mask && nonzero != ~0u) {
    const uint32_t lanes = kLanesDescBytes + lanes_data_bytes(nonzero, uint32_t(w_all) + 1);
    if (4 * lanes <= 3 * size) {
      bp.code = kCodeLanes;
      size = lanes;
    }
  }
  uint32_t nexc = popcount32(mask);
  const uint32_t total = size + (mask ? 4 + nexc * uint32_t(value_bytes) : 0);
  if (uniform && uint32_t(value_bytes) < total) {
    bp.code = kCodeUniform; bp.payload = value_bytes; bp.mask = 0; bp.nexc = 0;
  } else if (total >= uint32_t(kB * value_bytes)) {
    bp.code = kCodeRaw; bp.payload = kB * value_bytes; bp.mask = 0; bp.nexc = 0;
  } else {
    bp.mask = mask; bp.nexc = nexc;
    bp.payload = bp.code == kCodeLanes ? size - kLanesDescBytes : size + (mask ? 4 : 0);
    if (mask) bp.code |= kExcFlag;
  }
  return bp;
}

// The block's deltas, taken once for both planning and writing: q[1..31] become |q_i - q_{i-1}| with
// their signs in bits 1..31; q[0] stays (lane 0's code depends on the mode: against prev in plain
// mode, the outlier itself in outlier mode).
struct BlockDeltas {
  uint32_t signs;     // bit i (i >= 1): delta_i < 0
  uint32_t max_rest;  // OR of |delta_1..31|
  int32_t q0;         // lane 0's q
  uint32_t d0;        // q0 - prev, wrapping
  uint32_t levels;    // two-level blocks: bit i set where q_i = prev + two_d (else q_i = prev)
  uint32_t two_d;     // D, nonzero, wrapping; 0 where the block is not two-level
  uint32_t nonzero;   // bit i: q_i != 0 (a lane block codes these lanes); all ones unless q_0 or q_31 is 0
};
HPCZ_HD uint32_t abs_delta(uint32_t d) { return int32_t(d) < 0 ? 0u - d : d; }

// Bit i of the result: the parity of bits 0..i of x.
HPCZ_HD uint32_t prefix_parity(uint32_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  return x;
}

// Whether every q_i is prev or prev + D: the nonzero deltas (lane 0's against prev included) all have
// one magnitude M and alternate in sign, the first giving D's. Then lane i is at prev + D exactly where
// an odd number of nonzero deltas lie at or before it. mag: the magnitudes |d_1..31| (lane 0's is
// |d0|); sum: the sum of all 32. Every magnitude is at most their OR, so the sum is M times the number
// of nonzero ones only if all equal M (M below 2^26 keeps the sum in 32 bits); the lanes are walked
// again only where the sum allows it (the GPU encoder: a second pass on every block cost 2% of its
// time).
HPCZ_HD void find_two_level(BlockDeltas& bd, const int32_t* mag, uint32_t sum) {
  bd.levels = 0;
  bd.two_d = 0;
  const uint32_t m = bd.max_rest | abs_delta(bd.d0);
  if (m == 0 || m >= (1u << 26)) return;
  // The count the sum implies, from a correctly rounded f32 division (the same on both backends; an
  // integer division cost the GPU encoder about 1%): a filter only, checked exactly below.
  const uint32_t k = uint32_t(float(sum) / float(m) + 0.5f);
  if (k > uint32_t(kB) || k * m != sum) return;
  uint32_t nonzero = uint32_t(bd.d0 != 0);
HPCZ_UNROLL
  for (int i = 1; i < kB; ++i) nonzero |= uint32_t(mag[i] != 0) << i;
  if (sum != m * uint32_t(popcount32(nonzero))) return;
  const uint32_t parity = prefix_parity(nonzero);
  const uint32_t neg = (bd.signs | uint32_t(int32_t(bd.d0) < 0)) & nonzero;
  const bool first_neg = (neg >> lowest_bit32(nonzero)) & 1;
  if (neg != (first_neg ? nonzero & parity : nonzero & ~parity)) return;
  bd.levels = parity;
  bd.two_d = first_neg ? 0u - m : m;
}

HPCZ_HD BlockDeltas block_deltas(int32_t* q, int32_t prev) {
  BlockDeltas bd{0, 0, q[0], uint32_t(q[0]) - uint32_t(prev), 0, 0, ~0u};
  // The lanes whose q is 0, only in blocks that start or end on one: a sparse field's edge blocks do,
  // and the GPU encoder then skips this walk on almost all other blocks (on every block it cost 3%).
  if (q[0] == 0 || q[kB - 1] == 0) {
    bd.nonzero = 0;
HPCZ_UNROLL
    for (int i = 0; i < kB; ++i) bd.nonzero |= uint32_t(q[i] != 0) << i;
  }
  uint32_t sum = abs_delta(bd.d0);
  int32_t before = q[0];
HPCZ_UNROLL
  for (int i = 1; i < kB; ++i) {
    const int32_t cur = q[i];
    const uint32_t d = uint32_t(cur) - uint32_t(before);
    before = cur;
    bd.signs |= uint32_t(int32_t(d) < 0) << i;
    const uint32_t ad = abs_delta(d);
    bd.max_rest |= ad;
    sum += ad;
    q[i] = int32_t(ad);
  }
  find_two_level(bd, q, sum);
  return bd;
}

HPCZ_HD BlockPlan plan_block(const BlockDeltas& bd, uint32_t mask, int value_bytes, bool uniform = false) {
  return plan_from_stats(bd.max_rest | abs_delta(bd.d0), bd.max_rest, bd.q0, mask, value_bytes, uniform, bd.two_d,
                         bd.nonzero);
}

// A lane block's bit stream: lane i's zigzag delta in wl bits, lanes in increasing order, the first
// lane's bits lowest (little-endian), the last byte zero-padded.
HPCZ_HD int lanes_width(const BlockDeltas& bd) { return bit_width32(bd.max_rest | abs_delta(bd.d0)) + 1; }
HPCZ_HD void write_lanes_desc(const BlockDeltas& bd, uint8_t* dst) {
  store_u32_le(dst, bd.nonzero);
  dst[4] = uint8_t(lanes_width(bd));
}
// Lane i's field, zigzag(d_i), from its magnitude and sign: 2|d| - (d < 0) (i a constant: mag stays
// in registers on the GPU).
HPCZ_HD uint32_t lane_field(const BlockDeltas& bd, const int32_t* mag, int i) {
  return i == 0 ? zigzag(int32_t(bd.d0)) : (uint32_t(mag[i]) << 1) - (bd.signs >> i & 1);
}
HPCZ_HD void write_lanes(const BlockDeltas& bd, const int32_t* mag, uint8_t* dst) {
  const int wl = lanes_width(bd);
  uint32_t lanes = bd.nonzero;
#if defined(__CUDA_ARCH__)
  // Opaque to the compiler: otherwise it keeps the planner's partial lane masks (per-byte predicate
  // packs) alive for this rare path, spilling 7 registers a block in the GPU encoder.
  asm volatile("" : "+r"(lanes));
#endif
  // The stream's next bits in lo (have of them, < 32) and hi (bits that spilled past lo); a word goes
  // out each time lo fills. Branch-free per lane (a lane not coded adds no bits): with several lane
  // blocks in a GPU warp, a branch a lane (skipping uncoded lanes, or groups of 8) measured slower.
  uint32_t lo = 0, hi = 0;
  int have = 0;
HPCZ_UNROLL
  for (int i = 0; i < kB; ++i) {
    const uint32_t on = 0u - (lanes >> i & 1);
    const uint32_t z = lane_field(bd, mag, i) & on;
    lo |= z << have;
#if defined(__CUDA_ARCH__)
    hi |= __funnelshift_l(z, 0u, have);  // z's bits above 32 - have
#else
    hi |= have ? z >> (32 - have) : 0u;
#endif
    have += wl & int(on);
    if (have >= 32) {
      store_u32_le(dst, lo);
      dst += 4;
      lo = hi;
      hi = 0;
      have -= 32;
    }
  }
  for (; have > 0; have -= 8, lo >>= 8) *dst++ = uint8_t(lo);
}

// 32 bits of a lane block's stream of nbytes bytes from bit pos (enough for a field: wl <= 32). The
// host reads only the stream's bytes (past it: 0); the GPU decoder reads its chunk staged in shared
// memory, two aligned words (a few bytes past the stream are there: descriptors, the staged zero
// tail). The field's mask makes both the same.
HPCZ_HD uint32_t load_bits32(const uint8_t* src, uint32_t pos, uint32_t nbytes) {
#if defined(__CUDA_ARCH__)
  (void)nbytes;
  const uintptr_t a = reinterpret_cast<uintptr_t>(src + (pos >> 3));
  const uint32_t* w = reinterpret_cast<const uint32_t*>(a & ~uintptr_t(3));
  return uint32_t((uint64_t(w[0]) | uint64_t(w[1]) << 32) >> ((a & 3) * 8 + (pos & 7)));
#else
  uint64_t x = 0;
  for (uint32_t k = 0, b = pos >> 3; k < 5 && b < nbytes; ++k, ++b) x |= uint64_t(src[b]) << (8 * k);
  return uint32_t(x >> (pos & 7));
#endif
}
HPCZ_HD uint32_t field_mask(int wl) { return wl >= 32 ? ~0u : (1u << wl) - 1; }
// The delta of the field at bit pos of a lane block's stream.
HPCZ_HD uint32_t lane_delta(const uint8_t* src, uint32_t pos, int wl, uint32_t nbytes) {
  return uint32_t(unzigzag(load_bits32(src, pos, nbytes) & field_mask(wl)));
}

// Writes the block's payload at dst; exception values go to sink(j, value) for j = 0..nexc-1.
// mag is q after block_deltas (mag[0] is overwritten with lane 0's magnitude).
// value(i) gives input lane i (i < count); it is only called for raw and uniform blocks and for the
// exception lanes, so the GPU encoder re-reads those few from memory instead of holding 32 values.
template <class T, class Value, class Sink>
HPCZ_HD void write_block(const BlockPlan& bp, Value&& value, int count, int32_t* mag, const BlockDeltas& bd,
                         uint8_t* dst, Sink&& sink) {
  if (bp.code == kCodeLanes) {  // its descriptor is written apart (write_lanes_desc)
    write_lanes(bd, mag, dst);
    return;
  }
  int c = bp.code & 0x7f;
  if (c == kCodeRaw) {
HPCZ_UNROLL
    for (int i = 0; i < kB; ++i) store_value_le<T>(dst + i * sizeof(T), i < count ? T(value(i)) : T(0));
    return;
  }
  if (c == kCodeUniform) {
    store_value_le<T>(dst, T(value(0)));
    return;
  }
  if (bp.code & kExcFlag) {
    store_u32_le(dst, bp.mask);
    dst += 4;
    int j = 0;
HPCZ_UNROLL
    for (int i = 0; i < kB; ++i)
      if (bp.mask >> i & 1) sink(j++, T(value(i)));
  }
  if (c == kCodeTwoLevel1 || c == kCodeTwoLevel4) {
    store_u32_le(dst, bd.levels);
    if (c == kCodeTwoLevel1) dst[4] = uint8_t(zigzag(int32_t(bd.two_d)));
    else store_u32_le(dst + 4, bd.two_d);
    return;
  }
  int w = c;
  uint32_t d0 = bd.d0;
  if (c >= kOutlierBase) {
    int k = (c - kOutlierBase) / kOutlierWidths + 1;
    w = (c - kOutlierBase) % kOutlierWidths;
    uint32_t z = outlier_field(bd.q0, w);
    for (int b = 0; b < k; ++b) dst[b] = uint8_t(z >> (8 * b));
    dst += k;
    d0 = uint32_t(bd.q0);  // lane 0 against 0: the sign bit is the outlier's sign (its magnitude is 0)
  }
  if (!w) return;
  store_u32_le(dst, bd.signs | uint32_t(int32_t(d0) < 0));
  mag[0] = int32_t(c >= kOutlierBase ? 0u : abs_delta(d0));
  const uint32_t* m = reinterpret_cast<const uint32_t*>(mag);
  store_planes<0>(m, w, dst + 4);
  if (w > 8) store_planes<1>(m, w, dst + 4);
  if (w > 16) store_planes<2>(m, w, dst + 4);
  if (w > 24) store_planes<3>(m, w, dst + 4);
}

// An outlier-mode block's first q (c: its code without the exception flag): reads the outlier's
// bytes at src and moves src past them, sets w to the block's plane count. The magnitude takes its
// sign from the sign word's bit 0 when there are planes, else the bytes are its zigzag code.
HPCZ_HD uint32_t read_outlier(int c, const uint8_t*& src, int& w) {
  const int k = (c - kOutlierBase) / kOutlierWidths + 1;
  w = (c - kOutlierBase) % kOutlierWidths;
  uint32_t z = 0;
  for (int b = 0; b < k; ++b) z |= uint32_t(src[b]) << (8 * b);
  src += k;
  return w ? ((load_u32_le(src) & 1) ? 0u - z : z) : uint32_t(unzigzag(z));
}

// Decodes one block, eight values (a group) at a time: the constructor reads what the whole block
// needs from its payload (of block_payload_bytes bytes, already bounds-checked) at src (a lane block's
// descriptor at desc) and `prev`, the q that ended the previous block (block_chain); group(g, ...)
// then gives lanes g..g+7, g = 0, 8, 16, 24 in order, exception values from source(j). No caller has
// to hold all 32 values, and a GPU warp calls group() at one place for every kind of block, so that
// the values can be exchanged between its lanes before they are stored.
template <class T>
class GroupDecoder {
 public:
  static constexpr int kG = 8;  // values per group
  HPCZ_HD GroupDecoder(uint8_t code, const uint8_t* src, const uint8_t* desc, int32_t prev)
      : src_(src), acc_(uint32_t(prev)), c_(code & 0x7f) {
    if (c_ == kCodeRaw || (c_ == kCodeUniform && code != kCodeLanes)) {
      kind_ = kStored;
      return;
    }
    if (has_exceptions(code)) {
      mask_ = load_u32_le(src_);
      src_ += 4;
    }
    if (c_ == kCodeTwoLevel1 || c_ == kCodeTwoLevel4) {
      kind_ = kTwoLevel;
      bits_ = load_u32_le(src_);  // the levels
      d_ = c_ == kCodeTwoLevel1 ? uint32_t(unzigzag(src_[4])) : load_u32_le(src_ + 4);
      return;
    }
    // Plain, outlier and lane blocks: a group's 8 q from the planes or from the lane stream, then one
    // code path (reconstruction, exceptions), so that a warp whose threads decode both kinds runs only
    // the q extraction apart. bits_: the sign word, or the lane mask; w_: the plane count, or the
    // field width.
    if (code == kCodeLanes) {
      kind_ = kLanes;
      bits_ = load_u32_le(desc);
      w_ = desc[4];
      nbytes_ = lanes_data_bytes(bits_, w_);
      return;
    }
    kind_ = kPlanes;
    w_ = c_;
    if (c_ >= kOutlierBase) acc_ = read_outlier(c_, src_, w_);
    if (w_) {
      bits_ = load_u32_le(src_);
      if (c_ >= kOutlierBase) bits_ &= ~1u;  // bit 0 was the outlier's sign, already applied
    }
  }

  template <class Source>
  HPCZ_HD void group(int g, const QuantParams<T>& p, Source&& source, T* v) {
    if (kind_ == kStored) {
HPCZ_UNROLL
      for (int r = 0; r < kG; ++r) v[r] = load_value_le<T>(src_ + (c_ == kCodeRaw ? (g + r) * sizeof(T) : 0));
      return;
    }
    const uint32_t group_bits = bits_ >> g;
    if (kind_ == kTwoLevel) {
HPCZ_UNROLL
      for (int r = 0; r < kG; ++r) v[r] = dequantize<T>(int32_t(acc_ + ((group_bits >> r & 1) ? d_ : 0u)), p.step);
      if (p.pw) pw_values(group_bits, p, v);
    } else {
      uint32_t q[kG];
      if (kind_ == kLanes) {
HPCZ_UNROLL
        for (int r = 0; r < kG; ++r) {
          if (group_bits >> r & 1) {
            acc_ += lane_delta(src_, pos_, w_, nbytes_);
            pos_ += w_;
          } else {
            acc_ = 0;
          }
          q[r] = acc_;
        }
      } else {
        uint32_t mag[kG];
HPCZ_UNROLL
        for (int r = 0; r < kG; ++r) mag[r] = 0;
        if (w_) {
          load_plane_rows<0>(src_ + 4, w_, g / kG, mag);
          if (w_ > 8) load_plane_rows<1>(src_ + 4, w_, g / kG, mag);
          if (w_ > 16) load_plane_rows<2>(src_ + 4, w_, g / kG, mag);
          if (w_ > 24) load_plane_rows<3>(src_ + 4, w_, g / kG, mag);
        }
HPCZ_UNROLL
        for (int r = 0; r < kG; ++r) {
          acc_ += (group_bits >> r & 1) ? 0u - mag[r] : mag[r];  // wraps on corrupt input, never UB
          q[r] = acc_;
        }
      }
HPCZ_UNROLL
      for (int r = 0; r < kG; ++r) v[r] = dequantize<T>(int32_t(q[r]), p.step);
      if (p.pw) {  // the same q, as pointwise-relative values (one uniform branch a group)
HPCZ_UNROLL
        for (int r = 0; r < kG; ++r) v[r] = pw_rel_value<T>(int32_t(q[r]), p.pw_width);
      }
    }
    // The group's exception lanes replaced by the next exception values.
    const uint32_t group_mask = mask_ >> g;  // then every bit test is an immediate
    if (group_mask & 0xffu) {
HPCZ_UNROLL
      for (int r = 0; r < kG; ++r)
        if (group_mask >> r & 1) v[r] = source(j_++);
    }
  }

  // A two-level group's q again, as pointwise-relative values.
  HPCZ_HD void pw_values(uint32_t group_bits, const QuantParams<T>& p, T* v) const {
HPCZ_UNROLL
    for (int r = 0; r < kG; ++r) v[r] = pw_rel_value<T>(int32_t(acc_ + ((group_bits >> r & 1) ? d_ : 0u)), p.pw_width);
  }

  // The q that ends the block, once its four groups are out (not for raw or uniform blocks: see
  // stored_block_tail; those return prev).
  HPCZ_HD int32_t last() const {
    return int32_t(kind_ == kTwoLevel ? acc_ + ((bits_ >> 31 & 1) ? d_ : 0u) : acc_);
  }

 private:
  enum Kind : uint8_t { kStored, kTwoLevel, kLanes, kPlanes };
  const uint8_t* src_;
  uint32_t acc_, mask_ = 0, bits_ = 0, d_ = 0, pos_ = 0, nbytes_ = 0;
  int c_, w_ = 0, j_ = 0;  // j_: the next exception value
  Kind kind_ = kPlanes;
};

// A whole block's 32 values to out; returns GroupDecoder's last().
template <class T, class Source>
HPCZ_HD int32_t decode_block(uint8_t code, const uint8_t* src, const uint8_t* desc, int32_t prev,
                             const QuantParams<T>& p, Source&& source, T* out) {
  GroupDecoder<T> dec(code, src, desc, prev);
  for (int g = 0; g < kB; g += GroupDecoder<T>::kG) dec.group(g, p, source, out + g);
  return dec.last();
}

// The chain value a raw or uniform block passes on, read from its payload: the q of its last
// quantizable lane below count, scanning from the end (most blocks stop at the first try).
template <class T>
HPCZ_HD bool stored_block_tail(uint8_t code, const uint8_t* src, int count, const QuantParams<T>& p, int32_t& tail) {
  const bool uniform = (code & 0x7f) == kCodeUniform;
  for (int i = count - 1; i >= 0; --i)
    if (quantize(load_value_le<T>(src + (uniform ? 0 : i * sizeof(T))), p, tail)) return true;
  return false;
}

// What a coded block does to the chain of q values: (absolute, value) with absolute meaning the block
// ends on `value` whatever came before (outlier mode), else it ends on prev + value (wrapping).
// Raw blocks hold no q: the decoder re-quantizes their values as the encoder did (stored_block_tail).
struct Chain {
  uint32_t absolute;
  uint32_t value;
};
HPCZ_HD Chain combine(Chain a, Chain b) { return b.absolute ? b : Chain{a.absolute, a.value + b.value}; }

// What a lane block does to the chain: q_i = q_{i-1} + d_i on its lanes (q_{-1} = prev), 0 elsewhere,
// so q_31 is 0, or the sum of the deltas of the run of coded lanes that ends at lane 31 (their fields
// are the stream's last), plus prev if that run is all 32 lanes.
HPCZ_HD Chain lanes_chain(const uint8_t* src, const uint8_t* desc) {
  const uint32_t lanes = load_u32_le(desc);
  const int wl = desc[4];
  if (!(lanes >> 31 & 1)) return Chain{1u, 0u};
  const uint32_t run = 32 - bit_width32(~lanes), n = popcount32(lanes), nbytes = lanes_data_bytes(lanes, wl);
  uint32_t sum = 0;
  for (uint32_t j = n - run; j < n; ++j) sum += lane_delta(src, j * wl, wl, nbytes);
  return Chain{run < 32 ? 1u : 0u, sum};
}

// Chain effect of a non-raw block, from its payload (and a lane block's descriptor): the sum of its
// deltas is sum_j 2^j (popc(plane_j & ~signs) - popc(plane_j & signs)).
HPCZ_HD Chain block_chain(uint8_t code, const uint8_t* src, const uint8_t* desc) {
  if (code == kCodeLanes) return lanes_chain(src, desc);
  int c = code & 0x7f;
  if (code & kExcFlag) src += 4;
  if (c == kCodeTwoLevel1 || c == kCodeTwoLevel4) {
    const uint32_t d = c == kCodeTwoLevel1 ? uint32_t(unzigzag(src[4])) : load_u32_le(src + 4);
    return Chain{0u, (load_u32_le(src) >> 31 & 1) ? d : 0u};
  }
  uint32_t base = 0;
  int w = c;
  bool outl = c >= kOutlierBase;
  if (outl) base = read_outlier(c, src, w);
  uint32_t sum = 0;
  if (w) {
    uint32_t signs = load_u32_le(src);
    if (outl) signs &= ~1u;
    for (int j = 0; j < w; ++j) {
      uint32_t plane = load_u32_le(src + 4 + 4 * j);
      sum += (uint32_t(popcount32(plane & ~signs)) - uint32_t(popcount32(plane & signs))) << j;
    }
  }
  return Chain{outl ? 1u : 0u, base + sum};
}

}  // namespace hpcz::fast
