// The warp-per-chunk decoding framework (CODAG, Park et al.): one warp decodes one chunk, all 32 lanes
// running the same serial decoder (orc_rle.hpp, inflate.hpp) on the same state, so nothing is
// broadcast and no lane waits on a leader; the lanes split only the work that is naturally parallel.
// Three pieces, the contract of docs/LOSSLESS.md:
//  * WarpSource: the input, through a per-warp ring of two 128-byte lines in shared memory, refilled
//    by all lanes at once (one coalesced line per load instruction) when the decoder reads past it;
//    bit-packed runs, whose bounds are checked first, are read at random with at().
//  * WarpIntSink / WarpByteSink: the output. A run of n values is written by all lanes (lane l takes
//    values l, l + 32, ...); single values (RLE literals, Deflate literals) collect one per lane and go
//    out as one coalesced store per 32; a back-reference is copied by all lanes, each byte read from
//    the already-written output (modulo the distance when the copy overlaps itself).
//  * WarpCtx: who writes shared tables (lane 0) and the warp barrier (__syncwarp, which also orders
//    the lanes' global-memory writes, so a copy sees the literals other lanes stored).
// Every lane holds the same decoder state, so every branch on it is warp-uniform and the collective
// operations inside the sinks and the source are reached by all lanes together.
#pragma once
#include <cuda_runtime.h>

#include "hpcz/hpcz.hpp"
#include "lossless/cpu_sinks.hpp"  // SinkError
#include "lossless/inflate.hpp"
#include "lossless/orc_rle.hpp"

namespace hpcz::lossless::cuda {

constexpr int kWarpsPerBlock = 4;
constexpr uint32_t kFull = 0xffffffffu;
constexpr uint32_t kRingBytes = 256;  // two 128-byte lines

__device__ __forceinline__ uint32_t lane_id() { return threadIdx.x & 31; }

// Off: the type of offsets in the chunk (uint32_t for chunks the kernel knows are small).
template <class Off = uint64_t>
struct WarpSourceT {
  static constexpr bool kWindow = true;  // window8(), for orc_rle.hpp's windowed_run
  const uint8_t* p;
  Off size;
  uint8_t* ring;     // kRingBytes of this warp's shared memory
  Off end = 0;  // the ring holds input bytes [end - kRingBytes, end)
  __device__ uint32_t operator()(Off i) {
    if (i >= end) refill(i);
    return ring[i & (kRingBytes - 1)];
  }
  __device__ uint32_t at(Off i) const { return __ldg(p + i); }
  // 4 bytes at i (i + 4 <= size), little-endian, from two aligned ring words: the ring's lines start at
  // multiples of 128 of the chunk, so ring offsets keep i's alignment.
  __device__ uint32_t word(Off i) {
    if (i + 4 > end) refill(i);
    const uint32_t* r32 = reinterpret_cast<const uint32_t*>(ring);
    const uint32_t w = uint32_t(i >> 2) & (kRingBytes / 4 - 1);
    return __funnelshift_r(r32[w], r32[(w + 1) & (kRingBytes / 4 - 1)], uint32_t(i & 3) * 8);
  }
  // 8 bytes at i (i + 8 <= size), little-endian, from three aligned ring words.
  __device__ uint64_t window8(Off i) {
    if (i + 8 > end) refill(i);
    const uint32_t* r32 = reinterpret_cast<const uint32_t*>(ring);
    constexpr uint32_t kMask = kRingBytes / 4 - 1;
    const uint32_t w = uint32_t(i >> 2) & kMask, sh = uint32_t(i & 3) * 8;
    const uint32_t a = r32[w], b = r32[(w + 1) & kMask], c = r32[(w + 2) & kMask];
    return uint64_t(__funnelshift_r(a, b, sh)) | uint64_t(__funnelshift_r(b, c, sh)) << 32;
  }
  // Byte i + lane in every lane; all lanes call it with the same i (the refill is collective).
  __device__ uint32_t lane_byte(Off i) {
    if (i + 32 > end) refill(i);
    return ring[(i + lane_id()) & (kRingBytes - 1)];
  }
  __device__ void refill(Off i) {
    const Off line = i & ~Off(127);
    __syncwarp();  // every lane is done reading the old lines
    for (uint32_t k = lane_id(); k < kRingBytes; k += 32) {
      const Off j = line + k;
      ring[j & (kRingBytes - 1)] = j < size ? __ldg(p + j) : 0;
    }
    end = line + kRingBytes;
    __syncwarp();
  }
};
using WarpSource = WarpSourceT<>;

struct WarpCtx {
  __device__ bool leader() const { return lane_id() == 0; }
  __device__ void sync() const { __syncwarp(); }
  template <class F> __device__ void for_lanes(uint32_t n, F&& f) const {
    for (uint32_t i = lane_id(); i < n; i += 32) f(i);
  }
};

struct WarpIntSink {
  IntType t;
  uint8_t* out;
  uint64_t cap;  // elements
  bool aligned;  // out is aligned to the element size: typed stores
  uint64_t n = 0;
  SinkError err = SinkError::none;
  int64_t mine = 0;      // literal k of the pending group, in lane k
  uint32_t pending = 0;

  __device__ void store(uint64_t i, int64_t x) {
    const uint64_t u = uint64_t(x);
    if (aligned) {
      switch (t.bytes) {
        case 1: out[i] = uint8_t(u); break;
        case 2: reinterpret_cast<uint16_t*>(out)[i] = uint16_t(u); break;
        case 4: reinterpret_cast<uint32_t*>(out)[i] = uint32_t(u); break;
        default: reinterpret_cast<uint64_t*>(out)[i] = u; break;
      }
    } else {
      for (int b = 0; b < t.bytes; ++b) out[i * t.bytes + b] = uint8_t(u >> (8 * b));
    }
  }
  __device__ bool finish() {
    if (pending) {
      if (lane_id() < pending) store(n + lane_id(), mine);
      n += pending;
      pending = 0;
    }
    return true;
  }
  __device__ bool put(int64_t x) {  // checks in the CPU sink's order: the type, then the capacity
    if (!t.fits(x)) { err = SinkError::bad_value; return false; }
    if (n + pending >= cap) { err = SinkError::overflow; return false; }
    if (lane_id() == pending) mine = x;
    if (++pending == 32) finish();
    return true;
  }
  // RLE v1 literals, count varints: 32 input bytes at a time, one per lane; a ballot of the bytes
  // without a continuation bit marks where varints end, each ending lane assembles its varint with
  // shuffles and stores it. Failures are judged in stream order, as serial_literals() would: the
  // first varint that is malformed (r.ok = false), does not fit the type, or passes the capacity.
  template <class R> __device__ bool literals(R& r, uint32_t count) {
    finish();
    const uint32_t lane = lane_id();
    while (count > 0) {
      const uint64_t at = r.pos + lane;
      const bool have = at < r.size;
      const uint32_t from_ring = r.src.lane_byte(r.pos);  // the ring holds 0 past the end
      const uint32_t b = have ? from_ring : 0x80u;         // past the end: no varint ends there
      const uint32_t ends = __ballot_sync(kFull, have && !(b & 0x80));
      if (!ends) { r.ok = false; return false; }  // over 32 bytes without an end, or truncated
      const uint32_t below = ends & ((1u << lane) - 1);
      const uint32_t rank = __popc(below);  // this lane's varint, if one ends here
      const uint32_t start = below ? 32 - __clz(below) : 0;
      const bool mine = (ends >> lane & 1) && rank < count;
      const uint32_t len = lane - start + 1;
      // As many gather steps as the longest varint taken has bytes (a valid one has at most 10).
      const uint32_t steps = __reduce_max_sync(kFull, mine ? min(len, 10u) : 0u);
      uint64_t raw = 0;
      for (uint32_t d = 0; d < steps; ++d) {
        const uint32_t x = __shfl_sync(kFull, b, min(start + d, 31u));
        if (start + d <= lane) raw |= uint64_t(x & 0x7f) << (7 * d < 64 ? 7 * d : 0);
      }
      const uint32_t last = __shfl_sync(kFull, b, lane);
      const bool malformed = len > 10 || (len == 10 && (last & 0x7e));
      const int64_t v = t.value_of(raw);
      // 1 malformed, 2 outside the type, 3 past the capacity
      const int why = malformed ? 1 : !t.fits(v) ? 2 : (n + rank >= cap) ? 3 : 0;
      const uint32_t bad = __ballot_sync(kFull, mine && why);
      if (bad) {
        const int first = __shfl_sync(kFull, why, __ffs(bad) - 1);
        if (first == 1) r.ok = false;
        else err = first == 2 ? SinkError::bad_value : SinkError::overflow;
        return false;
      }
      if (mine) store(n + rank, v);
      const uint32_t taken = min(uint32_t(__popc(ends)), count);
      const uint32_t last_end = __ffs(__ballot_sync(kFull, (ends >> lane & 1) && rank == taken - 1)) - 1;
      r.pos += last_end + 1;
      n += taken;
      count -= taken;
    }
    return true;
  }
  template <class F> __device__ bool values(uint32_t count, F&& f) {
    finish();
    if (count > cap - n) { err = SinkError::overflow; return false; }
    bool ok = true;
    for (uint32_t k = lane_id(); k < count; k += 32) {
      const int64_t x = f(k);
      ok &= t.fits(x);
      store(n + k, x);  // on failure the chunk is rejected, so what was stored does not matter
    }
    if (!__all_sync(kFull, ok)) { err = SinkError::bad_value; return false; }
    n += count;
    return true;
  }
  // v_0 = first, v_k = v_{k-1} + d(k): each lane sums a contiguous segment, a warp scan joins them.
  template <class D> __device__ bool prefix(uint32_t count, int64_t first, D&& d) {
    finish();
    if (count > cap - n) { err = SinkError::overflow; return false; }
    const uint32_t seg = (count + 31) / 32, k0 = lane_id() * seg, k1 = min(count, k0 + seg);
    uint64_t local = 0;
    for (uint32_t k = k0; k < k1; ++k)
      if (k) local += d(k);
    uint64_t incl = local;
    for (int o = 1; o < 32; o <<= 1) {
      const uint64_t y = __shfl_up_sync(kFull, incl, o);
      if (int(lane_id()) >= o) incl += y;
    }
    uint64_t v = uint64_t(first) + (incl - local);
    bool ok = true;
    for (uint32_t k = k0; k < k1; ++k) {
      if (k) v += d(k);
      ok &= t.fits(int64_t(v));
      store(n + k, int64_t(v));
    }
    if (!__all_sync(kFull, ok)) { err = SinkError::bad_value; return false; }
    n += count;
    return true;
  }
};

template <class Off = uint64_t>  // the type of output offsets, as WarpSourceT's
struct WarpByteSinkT {
  static constexpr uint32_t kMaxMatch = 258;  // RFC 1951: the longest back-reference (inflate_codes never asks more)
  uint8_t* out;
  Off cap;
  Off n = 0;
  uint32_t mine = 0;  // literal k of the pending group, in lane k
  uint32_t pending = 0;
  // out + n + lane, kept as n moves: the address of this lane's next store is not rebuilt from n in
  // every step (the compiler computed it ahead of each step's branches).
  uint8_t* lane_at = out + lane_id();

  __device__ void flush() {
    if (pending) {
      __builtin_assume(__isGlobal(lane_at));  // global stores, not generic ones
      if (lane_id() < pending) *lane_at = uint8_t(mine);
      lane_at += pending;
      n += pending;
      pending = 0;
    }
  }
  // kChecked = false: the caller knows there is room (inflate_codes' fast zone; see room()).
  template <bool kChecked = true> __device__ bool put(uint8_t b) {
    if (kChecked && n + pending >= cap) return false;
    if (lane_id() == pending) mine = b;
    if (++pending == 32) flush();
    return true;
  }
  template <bool kChecked = true> __device__ bool put2(uint8_t a, uint8_t b) {  // both or neither
    if (kChecked && n + pending + 2 > cap) return false;
    if (pending == 31) {  // the group fills between them
      put<false>(a);
      put<false>(b);
      return true;
    }
    const uint32_t lane = lane_id();
    if (lane == pending) mine = a;
    if (lane == pending + 1) mine = b;
    if ((pending += 2) == 32) flush();
    return true;
  }
  __device__ uint64_t room() const { return uint64_t(cap - n - pending); }
  template <bool kChecked = true> __device__ InflateStatus copy(uint32_t dist, uint32_t len) {
    flush();
    if (dist == 0 || dist > n) return InflateStatus::bad_distance;
    if (kChecked && len > cap - n) return InflateStatus::output_full;
    __syncwarp();  // the bytes other lanes stored are visible
    __builtin_assume(__isGlobal(lane_at));  // global loads and stores, not generic ones
    const uint32_t lane = lane_id();
    const uint8_t* from = lane_at - lane - dist;  // out + n - dist
    if (len <= 32) {  // most matches (3-8 bytes on float data): one round
      if (lane < len) *lane_at = from[dist >= len ? lane : lane % dist];
    } else {
      // Every byte read lies before n (an overlapping copy reads only its first dist bytes, over and
      // over), so all the loads go out before any store: a long match waits on memory once, not once
      // per 32 bytes (the loads are L2 round trips: the window was written moments ago).
      constexpr uint32_t kRounds = (kMaxMatch + 31) / 32;
      uint32_t v[(kRounds + 3) / 4] = {};  // byte r in byte r % 4 of v[r / 4]: 3 registers, not 9
      const uint32_t step = dist >= len ? 32 : 32 % dist;  // the overlapping copy: byte k repeats byte k mod dist
      uint32_t m = dist >= len ? lane : lane % dist;
#pragma unroll
      for (uint32_t r = 0; r < kRounds; ++r) {
        if (lane + 32 * r < len) v[r / 4] |= uint32_t(from[m]) << (8 * (r % 4));
        m += step;
        if (dist < len && m >= dist) m -= dist;
      }
#pragma unroll
      for (uint32_t r = 0; r < kRounds; ++r)
        if (lane + 32 * r < len) lane_at[32 * r] = uint8_t(v[r / 4] >> (8 * (r % 4)));
    }
    lane_at += len;
    n += len;  // no barrier here: the next copy's first one orders these stores before its loads
    return InflateStatus::ok;
  }
};

// One warp per chunk, kWarpsPerBlock chunks per block. Deflate is issue-bound on one serial decoder a
// warp, so warps count: held to 9 blocks an SM (56 registers, 52 bytes of spill, 36 warps) it decodes
// 9% faster than with the compiler's 71 registers (28 warps), and a little faster than at 8 (64
// registers, no spill; docs/EXPERIMENTS.md). The RLE kernels, specialised on the element type, take
// the compiler's default (40 registers for RLE v1, 12 blocks per SM; 48 for v2).
// kBytes, kSigned (RLE): the element type, a constant, so stores and range checks need no switch
// (0: the type comes in t).
// One Deflate chunk with offsets of type Off. Chunks of up to kSmallDeflateInput bytes use 32-bit
// offsets: Deflate writes at most 258 bytes for 2 bits of input (a match whose length and distance
// codes are one bit each), 1,032 bytes a byte, so from 1 MiB at most 1,082,130,432 bytes: such a chunk
// can never reach a capacity clamped to 2^31, and every sum of offsets fits. Not inlined: each
// variant gets the kernel's registers to itself (inlined side by side they spill four times as much).
constexpr uint64_t kSmallDeflateInput = 1u << 20;
template <class Off>
__device__ __noinline__ InflateStatus inflate_chunk(const uint8_t* in, uint64_t in_size, uint8_t* out, uint64_t cap,
                                                    uint8_t* ring, InflateTables& tables, uint64_t& produced) {
  constexpr uint64_t kCapLimit = sizeof(Off) == 4 ? (uint64_t(1) << 31) : ~uint64_t(0);
  BitReaderT<WarpSourceT<Off>, Off> br{{in, Off(in_size), ring}, Off(in_size)};
  WarpByteSinkT<Off> sink{out, Off(cap < kCapLimit ? cap : kCapLimit)};
  WarpCtx ctx;
  const InflateStatus s = inflate_raw(br, sink, ctx, tables);
  sink.flush();
  produced = sink.n;
  return s;
}

template <int kCodec, int kBytes = 0, bool kSigned = false>  // codec: 0 rle1, 1 rle2, 2 deflate
__global__ void __launch_bounds__(32 * kWarpsPerBlock, kCodec == 2 ? 9 : 0)
    batch_kernel(IntType t_arg, const uint8_t* const* in, const uint64_t* in_sizes, uint8_t* const* out,
                 const uint64_t* caps, uint64_t* out_sizes, LosslessStatus* status, uint64_t n_chunks,
                 const uint32_t* order) {  // order: the chunks to take, largest first (or null: index order)
  __shared__ __align__(16) uint8_t rings[kWarpsPerBlock][kRingBytes];
  const uint32_t w = threadIdx.x >> 5;
  const uint64_t slot = uint64_t(blockIdx.x) * kWarpsPerBlock + w;
  if (slot >= n_chunks) return;
  // The chunk is looked up again for the status at the end rather than held in registers through
  // the decoder (the output stores may alias `order`, so the compiler reloads it).
  auto chunk = [&] { return order ? uint64_t(order[slot]) : slot; };
  const uint64_t c = chunk();
  const IntType t = kBytes ? IntType{kBytes, kSigned} : t_arg;
  WarpSource src{in[c], in_sizes[c], rings[w]};
  LosslessStatus st = LosslessStatus::ok;
  uint64_t produced = 0;
  if constexpr (kCodec == 2) {
    __shared__ InflateTables tables[kWarpsPerBlock];
    const uint64_t in_size = in_sizes[c];
    const InflateStatus s = in_size <= kSmallDeflateInput
                                ? inflate_chunk<uint32_t>(in[c], in_size, out[c], caps[c], rings[w], tables[w], produced)
                                : inflate_chunk<uint64_t>(in[c], in_size, out[c], caps[c], rings[w], tables[w], produced);
    st = s == InflateStatus::ok ? LosslessStatus::ok
         : s == InflateStatus::output_full ? LosslessStatus::output_overflow : LosslessStatus::corrupt;
  } else {
    ReaderT<WarpSource> r{src, in_sizes[c]};
    const bool aligned = (reinterpret_cast<uintptr_t>(out[c]) % uint32_t(t.bytes)) == 0;
    WarpIntSink sink{t, out[c], caps[c] / uint64_t(t.bytes), aligned};
    const bool ok = kCodec == 0 ? decode_rle1(r, t, sink) : decode_rle2(r, t, sink);
    st = ok ? LosslessStatus::ok
         : sink.err == SinkError::overflow ? LosslessStatus::output_overflow : LosslessStatus::corrupt;
    produced = sink.n * uint64_t(t.bytes);
  }
  if (lane_id() == 0) {
    const uint64_t done = chunk();
    status[done] = st;
    out_sizes[done] = st == LosslessStatus::ok ? produced : 0;
  }
}

}  // namespace hpcz::lossless::cuda
