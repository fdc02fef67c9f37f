// Apache ORC integer run-length encodings, version 1 and version 2 (orc.apache.org/docs/run-length.html),
// for 8/16/32/64-bit integers, signed (zigzag) or unsigned.
//
// The decoders are __host__ __device__ templates, shared by the CPU and the GPU (one warp per chunk,
// lossless/warp_decode.cuh; the contract is docs/LOSSLESS.md):
//  * every byte comes through Reader::byte(), which returns 0 and clears ok past the end, so a
//    truncated or corrupt stream ends in a clean error and never in a read outside the input (the
//    single check libdeflate calls SAFETY_CHECK); bit-packed runs are bounds-checked once, whole;
//  * values go to a sink in runs: values(n, f) writes f(0..n-1), where f is a pure function of the
//    index, so a warp evaluates it with all lanes; put(v) writes one literal; prefix(n, first, d)
//    writes a running sum (delta runs). The sink checks capacity and that values fit the type.
// Encoders run on the CPU.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "common/hd.hpp"

namespace hpcz::lossless {

// A byte source read sequentially through operator() and, for bit-packed runs whose bounds are
// checked beforehand, at random through at(). The CPU's is a plain pointer. kWindow: window8(i) gives
// the 8 bytes at i (little-endian; the caller has checked i + 8 <= size), so a decoder can parse a
// whole RLE v1 run header at once; PtrSourceT<false> (tests) makes the decoders read byte by byte.
template <bool kWindowed>
struct PtrSourceT {
  static constexpr bool kWindow = kWindowed;
  const uint8_t* p;
  HPCZ_HD uint32_t operator()(uint64_t i) { return p[i]; }
  HPCZ_HD uint32_t word(uint64_t i) { return detail::load_u32_le(p + i); }  // 4 bytes at i, sequentially
  HPCZ_HD uint64_t window8(uint64_t i) { return detail::load_u64_le(p + i); }
  HPCZ_HD uint32_t at(uint64_t i) const { return p[i]; }
};
using PtrSource = PtrSourceT<true>;

template <class Src>
struct ReaderT {
  Src src;
  uint64_t size, pos = 0;
  bool ok = true;
  HPCZ_HD uint32_t byte() {
    if (pos >= size) { ok = false; return 0; }
    return src(pos++);
  }
  HPCZ_HD bool done() const { return pos >= size; }
  // Takes n bytes at once (a bit-packed run): false if fewer are left. Returns where they start.
  HPCZ_HD bool skip(uint64_t n, uint64_t& start) {
    start = pos;
    if (!ok || size - pos < n) { ok = false; return false; }
    pos += n;
    return true;
  }
};
using Reader = ReaderT<PtrSource>;

HPCZ_HD uint64_t zigzag64(int64_t v) { return (uint64_t(v) << 1) ^ uint64_t(v >> 63); }
HPCZ_HD int64_t unzigzag64(uint64_t z) { return int64_t((z >> 1) ^ (0 - (z & 1))); }

// Base-128 varint, little-endian groups of 7 bits (at most 10 bytes for 64 bits).
template <class R>
HPCZ_HD uint64_t read_varint(R& r) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    const uint32_t b = r.byte();
    if (shift == 63 && (b & 0x7e)) r.ok = false;  // more than 64 bits
    v |= uint64_t(b & 0x7f) << (shift < 64 ? shift : 0);
    if (!(b & 0x80) || !r.ok) return v;
  }
  r.ok = false;
  return v;
}

// The stream's integer type: its width and whether values are zigzag-coded.
struct IntType {
  int bytes;    // 1, 2, 4, 8
  bool is_signed;
  HPCZ_HD uint64_t mask() const { return bytes == 8 ? ~0ull : (1ull << (8 * bytes)) - 1; }
  // A decoded 64-bit value must be representable in the element type.
  HPCZ_HD bool fits(int64_t v) const {
    if (bytes == 8) return true;
    const int bits = 8 * bytes;
    return is_signed ? (v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1)))
                     : (uint64_t(v) <= mask());
  }
  HPCZ_HD int64_t value_of(uint64_t raw) const { return is_signed ? unzigzag64(raw) : int64_t(raw); }
};

// The k-th w-bit field (1 <= w <= 64) of a big-endian bit-packed run starting at byte `start`; the
// caller has checked that the run's ceil(n*w/8) bytes exist.
template <class Src>
HPCZ_HD uint64_t unpack_be(const Src& s, uint64_t start, int w, uint64_t k) {
  const uint64_t bit = k * uint64_t(w);
  const uint64_t first = start + (bit >> 3);
  const int off = int(bit & 7);               // bits of the first byte that belong to earlier fields
  const int nbytes = (off + w + 7) >> 3;      // 1..9
  uint64_t hi = 0;                            // up to the first 8 bytes, big-endian
  const int n8 = nbytes < 8 ? nbytes : 8;
  for (int i = 0; i < n8; ++i) hi = hi << 8 | s.at(first + uint64_t(i));
  const int have = 8 * n8;                    // bits in hi
  uint64_t v;
  if (nbytes <= 8) {
    v = hi >> (have - off - w);
  } else {                                    // w > 56 with off > 0: 9 bytes
    const uint32_t last = s.at(first + 8);
    v = (hi << off) | (uint64_t(last) >> (8 - off));
    v >>= 64 - w;
  }
  return w == 64 ? v : v & ((uint64_t(1) << w) - 1);
}

// ---- RLE v1 ----------------------------------------------------------------------------------
// Runs: header 0x00..0x7f = length - 3 (3..130), a delta byte (-128..127), the first value as varint.
// Literals: header 0x80..0xff = -(count) (1..128), then count varints. Signed values are zigzag varints.
// Returns false on a corrupt or truncated stream, or when the sink refuses (it says why).
// A run whose header, delta and varint (up to 6 bytes) lie in the 8 bytes at r.pos, from one window
// read instead of byte by byte: false (nothing consumed) where the slow path must decide, the same
// values otherwise. w's byte 0 is the header, byte 1 the delta, bytes 2.. the varint.
template <class R, class Sink>
HPCZ_HD bool windowed_run(R& r, IntType t, Sink& out, bool& ok) {
  if (r.size - r.pos < 8) return false;
  const uint64_t w = r.src.window8(r.pos);
  const uint32_t h = uint32_t(w & 0xff);
  const uint64_t ends = ~w & 0x8080808080800000ull;  // bytes 2..7 without a continuation bit
  if (h >= 0x80 || !ends) return false;
  const int last = detail::lowest_bit64(ends) >> 3;  // 2..7: the varint's last byte
  uint64_t raw = 0;
  HPCZ_UNROLL
  for (int b = 2; b < 8; ++b)
    if (b <= last) raw |= (w >> (8 * b) & 0x7f) << (7 * (b - 2));
  r.pos += uint64_t(last) + 1;
  const int64_t delta = int8_t(uint8_t(w >> 8));
  const uint64_t v = uint64_t(t.value_of(raw));
  ok = out.values(h + 3, [=](uint32_t k) { return int64_t(v + uint64_t(k) * uint64_t(delta)); });
  return true;
}

template <class R, class Sink>
HPCZ_HD bool decode_rle1(R& r, IntType t, Sink& out) {
  while (!r.done()) {
    if constexpr (std::remove_reference_t<decltype(r.src)>::kWindow) {
      bool ok = true;
      if (windowed_run(r, t, out, ok)) {
        if (!ok) return false;
        continue;
      }
    }
    const uint32_t h = r.byte();
    if (h < 0x80) {
      const int64_t delta = int8_t(uint8_t(r.byte()));
      const uint64_t raw = read_varint(r);
      if (!r.ok) return false;
      const uint64_t v = uint64_t(t.value_of(raw));
      // v + k * delta, wrapping like the running sum it stands for
      if (!out.values(h + 3, [=](uint32_t k) { return int64_t(v + uint64_t(k) * uint64_t(delta)); })) return false;
    } else if (!out.literals(r, 256 - h)) {
      return false;
    }
  }
  return r.ok && out.finish();
}

// RLE v1 literals one after the other: what a sink's literals(r, count) means. For each of count
// varints in order: truncated or over 64 bits: r.ok = false; else the sink's put() (type, capacity).
// The first failure ends it.
template <class R, class Sink>
HPCZ_HD bool serial_literals(R& r, IntType t, Sink& out, uint32_t count) {
  for (uint32_t k = 0; k < count; ++k) {
    const uint64_t raw = read_varint(r);
    if (!r.ok || !out.put(t.value_of(raw))) return false;
  }
  return true;
}

// ---- RLE v2 ----------------------------------------------------------------------------------
// The 5-bit width code. Direct and patched base read code 0 as 1 bit; delta reads it as 0 (a fixed
// delta). Codes 0..23 are widths 1..24, then 26, 28, 30, 32, 40, 48, 56, 64.
HPCZ_HD int decode_width(uint32_t code, bool delta) {
  if (code == 0 && delta) return 0;
  if (code <= 23) return int(code) + 1;
  return code <= 27 ? 26 + 2 * int(code - 24) : 40 + 8 * int(code - 28);  // 26, 28, 30, 32, 40, 48, 56, 64
}
// The smallest width of the table that holds n bits, and its code.
HPCZ_HD int closest_width(int n) {
  if (n <= 24) return n < 1 ? 1 : n;
  if (n <= 26) return 26;
  if (n <= 28) return 28;
  if (n <= 30) return 30;
  if (n <= 32) return 32;
  if (n <= 40) return 40;
  if (n <= 48) return 48;
  if (n <= 56) return 56;
  return 64;
}
// Writers use the byte-friendly widths only (1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64); the others are
// deprecated for writing but still read.
inline int closest_aligned(int n) {
  if (n <= 1) return 1;
  if (n <= 2) return 2;
  if (n <= 4) return 4;
  if (n <= 8) return 8;
  return closest_width(n <= 16 ? 16 : (n <= 24 ? 24 : n));
}
HPCZ_HD uint32_t encode_width(int w) {  // w from closest_width
  if (w <= 24) return uint32_t(w - 1);
  switch (w) {
    case 26: return 24; case 28: return 25; case 30: return 26; case 32: return 27;
    case 40: return 28; case 48: return 29; case 56: return 30; default: return 31;
  }
}

constexpr uint32_t kRle2MaxRun = 512;
constexpr int kMaxPatches = 31;  // the patch list length is a 5-bit field

template <class R, class Sink>
HPCZ_HD bool decode_rle2(R& r, IntType t, Sink& out) {
  while (!r.done()) {
    const uint32_t h0 = r.byte();
    const uint32_t kind = h0 >> 6;
    if (kind == 0) {  // short repeat
      const int width = int((h0 >> 3) & 7) + 1;
      const uint32_t count = (h0 & 7) + 3;
      uint64_t raw = 0;
      for (int b = 0; b < width; ++b) raw = raw << 8 | r.byte();
      if (!r.ok) return false;
      const int64_t v = t.value_of(raw);
      if (!out.values(count, [=](uint32_t) { return v; })) return false;
      continue;
    }
    const uint32_t h1 = r.byte();
    const uint32_t len = ((h0 & 1) << 8 | h1) + 1;
    const int w = decode_width((h0 >> 1) & 31, kind == 3);
    uint64_t at = 0;
    if (kind == 1) {  // direct
      if (!r.skip((uint64_t(len) * uint64_t(w) + 7) / 8, at)) return false;
      const auto& src = r.src;
      if (!out.values(len, [&](uint32_t k) { return t.value_of(unpack_be(src, at, w, k)); })) return false;
    } else if (kind == 2) {  // patched base
      const uint32_t h2 = r.byte(), h3 = r.byte();
      const int bw = int((h2 >> 5) & 7) + 1, pw = decode_width(h2 & 31, false);
      const int pgw = int((h3 >> 5) & 7) + 1;
      const uint32_t pll = h3 & 31;
      if (pgw + pw > 64) return false;
      uint64_t braw = 0;
      for (int b = 0; b < bw; ++b) braw = braw << 8 | r.byte();
      const uint64_t sign = uint64_t(1) << (8 * bw - 1);
      const uint64_t base = (braw & sign) ? uint64_t(0) - (braw & ~sign) : braw;
      uint64_t plist = 0;
      if (!r.skip((uint64_t(len) * uint64_t(w) + 7) / 8, at)) return false;
      const int cfb = closest_width(pgw + pw);
      if (!r.skip((uint64_t(pll) * uint64_t(cfb) + 7) / 8, plist)) return false;
      // The patch list, read once: (index, high bits) of each nonzero patch.
      uint32_t pidx[kMaxPatches];
      uint64_t pval[kMaxPatches];
      int np = 0;
      uint32_t pos = 0;
      const auto& src = r.src;
      for (uint32_t e = 0; e < pll; ++e) {
        const uint64_t ent = unpack_be(src, plist, cfb, e);
        const uint64_t gap = pw == 64 ? 0 : ent >> pw, patch = pw == 64 ? ent : ent & ((uint64_t(1) << pw) - 1);
        pos += uint32_t(gap);
        if (patch == 0) continue;  // a filler entry: only its gap counts (gaps over 255)
        if (pos >= len || w >= 64) return false;
        pidx[np] = pos;
        pval[np++] = patch << w;
      }
      if (!out.values(len, [&](uint32_t k) {
            uint64_t d = unpack_be(src, at, w, k);
            for (int j = 0; j < np; ++j) d |= pidx[j] == k ? pval[j] : 0;
            return int64_t(base + d);
          }))
        return false;
    } else {  // delta
      const int64_t base = t.value_of(read_varint(r));
      const int64_t db = unzigzag64(read_varint(r));
      if (!r.ok) return false;
      if (w == 0 || len <= 2) {  // a fixed delta (or nothing packed)
        if (!out.values(len, [=](uint32_t k) { return int64_t(uint64_t(base) + uint64_t(k) * uint64_t(db)); }))
          return false;
      } else {
        if (!r.skip((uint64_t(len - 2) * uint64_t(w) + 7) / 8, at)) return false;
        const auto& src = r.src;
        // v_0 = base, v_1 = base + db, then steps of the packed magnitudes in db's direction.
        if (!out.prefix(len, base, [&](uint32_t k) {
              if (k == 1) return uint64_t(db);
              const uint64_t m = unpack_be(src, at, w, k - 2);
              return db < 0 ? uint64_t(0) - m : m;
            }))
          return false;
      }
    }
  }
  return r.ok && out.finish();
}

// ---- CPU sinks ---------------------------------------------------------------------------------
// Calls emit(int64) per value (false stops); checks that values fit the type.
template <class Emit>
struct EmitSink {
  IntType t;
  Emit& emit;
  template <class F> bool values(uint32_t n, F&& f) {
    for (uint32_t k = 0; k < n; ++k)
      if (!put(f(k))) return false;
    return true;
  }
  bool put(int64_t v) { return t.fits(v) && emit(v); }
  template <class R> bool literals(R& r, uint32_t count) { return serial_literals(r, t, *this, count); }
  template <class D> bool prefix(uint32_t n, int64_t first, D&& d) {
    uint64_t v = uint64_t(first);
    for (uint32_t k = 0; k < n; ++k) {
      if (k) v += d(k);
      if (!put(int64_t(v))) return false;
    }
    return true;
  }
  bool finish() { return true; }
};

// The compatibility entry points: a whole stream, one emit per value.
template <class Emit>
bool decode_rle1(const uint8_t* src, uint64_t size, IntType t, Emit&& emit) {
  Reader r{PtrSource{src}, size};
  EmitSink<std::remove_reference_t<Emit>> s{t, emit};
  return decode_rle1(r, t, s);
}
template <class Emit>
bool decode_rle2(const uint8_t* src, uint64_t size, IntType t, Emit&& emit) {
  Reader r{PtrSource{src}, size};
  EmitSink<std::remove_reference_t<Emit>> s{t, emit};
  return decode_rle2(r, t, s);
}

// ---- encoders (CPU) ----------------------------------------------------------------------------
inline void put_varint(std::vector<uint8_t>& o, uint64_t v) {
  while (v >= 0x80) {
    o.push_back(uint8_t(v | 0x80));
    v >>= 7;
  }
  o.push_back(uint8_t(v));
}

// RLE v1: runs of 3..130 values with a constant delta in [-128, 127], literals of up to 128.
inline std::vector<uint8_t> encode_rle1(const std::vector<int64_t>& v, IntType t) {
  std::vector<uint8_t> o;
  auto raw = [&](int64_t x) { return t.is_signed ? zigzag64(x) : uint64_t(x); };
  size_t i = 0, lit = 0;  // literals pending from lit to i
  auto flush = [&](size_t end) {
    while (lit < end) {
      const size_t n = end - lit < 128 ? end - lit : 128;
      o.push_back(uint8_t(256 - n));
      for (size_t k = 0; k < n; ++k) put_varint(o, raw(v[lit + k]));
      lit += n;
    }
  };
  while (i < v.size()) {
    size_t run = 1;
    int64_t delta = 0;
    if (i + 2 < v.size()) {
      const int64_t d = int64_t(uint64_t(v[i + 1]) - uint64_t(v[i]));
      if (d >= -128 && d <= 127) {
        delta = d;
        run = 2;
        while (i + run < v.size() && run < 130 && int64_t(uint64_t(v[i + run]) - uint64_t(v[i + run - 1])) == delta) ++run;
      }
    }
    if (run >= 3) {
      flush(i);
      o.push_back(uint8_t(run - 3));
      o.push_back(uint8_t(int8_t(delta)));
      put_varint(o, raw(v[i]));
      i += run;
      lit = i;
    } else {
      ++i;
    }
  }
  flush(v.size());
  return o;
}

inline void pack_bits(std::vector<uint8_t>& o, const uint64_t* vals, size_t n, int w) {
  uint64_t acc = 0;
  int have = 0;
  for (size_t k = 0; k < n; ++k) {
    for (int left = w; left > 0;) {
      const int take = left < 8 - have ? left : 8 - have;
      const uint64_t bits = (vals[k] >> (left - take)) & ((1u << take) - 1);
      acc = acc << take | bits;
      have += take;
      left -= take;
      if (have == 8) { o.push_back(uint8_t(acc)); acc = 0; have = 0; }
    }
  }
  if (have) o.push_back(uint8_t(acc << (8 - have)));
}

inline int bits_needed(uint64_t v) {
  int b = 0;
  while (v) { ++b; v >>= 1; }
  return b;
}

// RLE v2: groups of up to 512 values, each the smallest of short repeat (3..10 equal values), delta
// (monotone, first delta nonzero), patched base (a few wide values) and direct.
inline std::vector<uint8_t> encode_rle2(const std::vector<int64_t>& v, IntType t) {
  std::vector<uint8_t> o;
  auto raw = [&](int64_t x) { return t.is_signed ? zigzag64(x) : uint64_t(x); };
  size_t i = 0;
  while (i < v.size()) {
    // A short repeat when 3..10 equal values start here.
    size_t same = 1;
    while (i + same < v.size() && same < kRle2MaxRun && v[i + same] == v[i]) ++same;
    if (same > 10) {  // a delta run with a fixed delta of 0: 512 values in a few bytes
      o.push_back(uint8_t(3 << 6 | ((same - 1) >> 8)));
      o.push_back(uint8_t(same - 1));
      put_varint(o, raw(v[i]));
      put_varint(o, 0);
      i += same;
      continue;
    }
    if (same >= 3) {
      const uint64_t r = raw(v[i]);
      int bytes = (bits_needed(r) + 7) / 8;
      if (bytes < 1) bytes = 1;
      o.push_back(uint8_t((bytes - 1) << 3 | (same - 3)));
      for (int b = bytes - 1; b >= 0; --b) o.push_back(uint8_t(r >> (8 * b)));
      i += same;
      continue;
    }
    // A group: up to 512 values, stopping before a run of 3 equal values.
    size_t n = 1;
    while (i + n < v.size() && n < kRle2MaxRun) {
      if (i + n + 2 < v.size() && v[i + n] == v[i + n + 1] && v[i + n] == v[i + n + 2]) break;
      ++n;
    }
    std::vector<uint8_t> best;
    // Direct.
    {
      std::vector<uint64_t> r(n);
      uint64_t orv = 0;
      for (size_t k = 0; k < n; ++k) orv |= r[k] = raw(v[i + k]);
      const int w = closest_aligned(bits_needed(orv));
      best.push_back(uint8_t(1 << 6 | encode_width(w) << 1 | ((n - 1) >> 8)));
      best.push_back(uint8_t(n - 1));
      pack_bits(best, r.data(), n, w);
    }
    // Delta: monotone (non-strict after the first step), deltas fit 64 bits unsigned.
    if (n >= 2 && v[i + 1] != v[i]) {
      const bool up = v[i + 1] > v[i];
      bool mono = true;
      uint64_t maxd = 0;
      std::vector<uint64_t> d(n > 2 ? n - 2 : 0);
      for (size_t k = 2; k < n && mono; ++k) {
        if (up ? v[i + k] < v[i + k - 1] : v[i + k] > v[i + k - 1]) mono = false;
        d[k - 2] = up ? uint64_t(v[i + k]) - uint64_t(v[i + k - 1]) : uint64_t(v[i + k - 1]) - uint64_t(v[i + k]);
        if (k >= 2) maxd |= d[k - 2];
      }
      const int64_t db = int64_t(uint64_t(v[i + 1]) - uint64_t(v[i]));
      const bool db_ok = (db > 0) == up;  // no wrap-around
      if (mono && db_ok) {
        bool fixed = true;
        for (size_t k = 0; k < d.size(); ++k) fixed &= int64_t(d[k]) == (up ? db : -db);
        // Width code 0 means "fixed delta" here, so a 1-bit width is written as 2 bits.
        const int w = fixed ? 0 : std::max(2, closest_aligned(bits_needed(maxd)));
        std::vector<uint8_t> e;
        e.push_back(uint8_t(3 << 6 | (w ? encode_width(w) : 0) << 1 | ((n - 1) >> 8)));
        e.push_back(uint8_t(n - 1));
        put_varint(e, raw(v[i]));
        put_varint(e, zigzag64(db));
        if (w) pack_bits(e, d.data(), d.size(), w);
        if (e.size() < best.size()) best.swap(e);
      }
    }
    // Patched base: base = min, widths at the 90th percentile, patches for the rest.
    if (n >= 2) {
      int64_t mn = v[i];
      for (size_t k = 1; k < n; ++k) mn = v[i + k] < mn ? v[i + k] : mn;
      std::vector<uint64_t> adj(n);
      std::vector<int> widths(n);
      bool ok = mn > INT64_MIN;
      for (size_t k = 0; k < n && ok; ++k) {
        adj[k] = uint64_t(v[i + k]) - uint64_t(mn);
        widths[k] = bits_needed(adj[k]);
      }
      std::vector<int> sorted = widths;
      std::sort(sorted.begin(), sorted.end());
      const int w90 = closest_aligned(sorted[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1]);
      const int wmax = closest_aligned(sorted[n - 1]);
      if (ok && wmax > w90 && w90 < 64) {
        const uint64_t mask = (uint64_t(1) << w90) - 1;
        uint64_t maxpatch = 0;
        std::vector<std::pair<uint32_t, uint64_t>> patches;  // (index, high bits)
        for (size_t k = 0; k < n; ++k)
          if (adj[k] >> w90) { patches.push_back({uint32_t(k), adj[k] >> w90}); maxpatch |= adj[k] >> w90; }
        const int pw = closest_aligned(bits_needed(maxpatch));
        // Gaps between patches; gaps over 255 need filler entries (patch 0, gap 255).
        std::vector<std::pair<uint64_t, uint64_t>> entries;
        uint32_t prev = 0, maxgap = 0;
        for (auto& p : patches) {
          uint32_t gap = p.first - prev;
          while (gap > 255) { entries.push_back({255, 0}); gap -= 255; }
          entries.push_back({gap, p.second});
          maxgap = gap > maxgap ? gap : maxgap;
          prev = p.first;
        }
        for (auto& e2 : entries) maxgap = uint32_t(e2.first) > maxgap ? uint32_t(e2.first) : maxgap;
        int pgw = bits_needed(maxgap);
        if (pgw < 1) pgw = 1;
        const uint64_t babs = uint64_t(mn < 0 ? -mn : mn);
        int bw = (bits_needed(babs) + 1 + 7) / 8;  // a sign bit on top
        if (bw < 1) bw = 1;
        if (entries.size() <= 31 && pgw <= 8 && pgw + pw <= 64 && bw <= 8) {
          std::vector<uint8_t> e;
          e.push_back(uint8_t(2 << 6 | encode_width(w90) << 1 | ((n - 1) >> 8)));
          e.push_back(uint8_t(n - 1));
          e.push_back(uint8_t((bw - 1) << 5 | encode_width(pw)));
          e.push_back(uint8_t((pgw - 1) << 5 | entries.size()));
          const uint64_t bval = mn < 0 ? (babs | uint64_t(1) << (8 * bw - 1)) : babs;
          for (int b = bw - 1; b >= 0; --b) e.push_back(uint8_t(bval >> (8 * b)));
          std::vector<uint64_t> low(n);
          for (size_t k = 0; k < n; ++k) low[k] = adj[k] & mask;
          pack_bits(e, low.data(), n, w90);
          std::vector<uint64_t> ent;
          for (auto& e2 : entries) ent.push_back(e2.first << pw | e2.second);
          pack_bits(e, ent.data(), ent.size(), closest_width(pgw + pw));
          if (e.size() < best.size()) best.swap(e);
        }
      }
    }
    o.insert(o.end(), best.begin(), best.end());
    i += n;
  }
  return o;
}

}  // namespace hpcz::lossless
