// Ratio-mode CUDA kernels. They write and read exactly the bytes of the CPU reference
// (ratio_chunk.hpp), using the same per-value functions (quantize, lorenzo_delta, quant_symbol), the
// same codebook steps and the same stream helpers.
//
// Compression, all on the caller's stream, sizes known to the host from the dims alone:
//   range -> dual_quant (symbols, per-chunk histograms, per-tile outlier and exception counts), or for
//   chunks whose planes are too large for it prequant (q per value) -> lorenzo -> scans of the tile counts -> book (per chunk: sort, lengths, codes) -> bit counts
//   per tile -> scan -> layout (chunk sizes and offsets, raw fallback) -> zero -> encode (codewords,
//   gaps, sequence starts) + emit (outliers, exceptions) + chunk headers + raw chunks -> checksums -> seal.
// Decompression:
//   table check -> parse (per chunk: checksum, layout, decode tables) -> decode (one thread per
//   1024-bit subsequence, count, block scan, decode) -> outliers -> prefix sums along z, y, then x fused
//   with dequantization -> exceptions, raw chunks.
// Tiles of kTile values never straddle a chunk, so every per-tile result belongs to one chunk.
#pragma once
#include <type_traits>

#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_store.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "codecs/ratio/chunk.hpp"
#include "codecs/ratio/dual_plan.hpp"
#include "codecs/ratio/recon_plan.hpp"
#include "format/header.hpp"
#include "gpu/archive_passes.cuh"
#include "gpu/lookback.cuh"
#include "huffman/stream.hpp"
#include "quant/range.hpp"

namespace hpcz::ratio::cuda {

using namespace gpu;  // the archive passes, DecodeStatus

using predict::ChunkShape;

constexpr int kThreads = 256;
constexpr int kPerThread = 16;
constexpr uint32_t kTile = kThreads * kPerThread;  // 4096 values

// Where chunk c and tile t sit; identical for every chunk but the last (host computes the same).
struct Grid {
  ChunkShape full, last;        // shapes of a full chunk and of the last chunk
  uint64_t n_chunks, chunk_values;
  uint32_t tiles_per_chunk;     // tiles of a full chunk
  uint64_t n_tiles;
  __host__ __device__ ChunkShape shape(uint64_t c) const { return c + 1 == n_chunks ? last : full; }
  __host__ __device__ uint64_t chunk_of_tile(uint64_t t) const { return t / tiles_per_chunk; }
  __host__ __device__ uint64_t first_tile(uint64_t c) const { return c * tiles_per_chunk; }
};

inline Grid make_grid(const predict::Shape& s, uint64_t n_chunks) {
  Grid g{};
  g.n_chunks = n_chunks;
  g.chunk_values = s.chunk_values();
  if (!n_chunks) return g;
  g.full = predict::chunk_shape(s, 0);
  g.last = predict::chunk_shape(s, n_chunks - 1);
  g.tiles_per_chunk = uint32_t(div_ceil(g.full.count(), kTile));
  g.n_tiles = (n_chunks - 1) * g.tiles_per_chunk + div_ceil(g.last.count(), kTile);
  return g;
}

// Per-chunk results of compression.
struct ChunkInfo {
  unsigned long long offset;  // in the archive
  uint32_t size, raw;
  uint32_t total_bits, n_out, n_exc, out_base, exc_base;  // bases: exclusive tile-scan values at the chunk
  unsigned long long sum;                                  // checksum terms, summed by checksum_kernel
};

struct CompressBuffers {
  gpu::CompressState* st;
  uint32_t* q;             // n
  uint16_t* sym;           // n
  uint32_t* hist;          // n_chunks * nsym
  uint32_t* tile_out;      // n_tiles (counts, then exclusive prefixes)
  uint32_t* tile_exc;      // n_tiles
  unsigned long long* tile_desc;  // n_tiles: look-back descriptors of the encoder (bits per tile)
  uint8_t* len;            // n_chunks * nsym
  uint32_t* code;          // n_chunks * nsym
  ChunkInfo* info;         // n_chunks
};

__device__ __forceinline__ void local_xyz(const ChunkShape& c, uint32_t i, uint32_t& z, uint32_t& y, uint32_t& x) {
  const uint32_t plane = c.cy * c.cx;
  z = i / plane;
  const uint32_t r = i - z * plane;
  y = r / c.cx;
  x = r - y * c.cx;
}

// The tile holding global value index gi (only for the rare exceptions: it divides).
__device__ __forceinline__ uint64_t tile_of(const Grid& g, uint64_t gi) {
  const uint64_t c = gi / g.chunk_values;
  return g.first_tile(c) + (gi - c * g.chunk_values) / kTile;
}

// The predictor works on q, the prequantized values (0 where a value is stored exactly). The kernels
// split it: prequant_kernel writes dq = (1 - Sx) q (the difference along rows, taken while q is in
// registers), and lorenzo_kernel applies (1 - Sy)(1 - Sz) to dq: four loads per value instead of eight.
// Integer arithmetic mod 2^32, so the result is exactly predict::lorenzo_delta's.
template <class T>
static __global__ void __launch_bounds__(kThreads) prequant_kernel(const T* __restrict__ in, unsigned long long n, Grid g,
                                                                   format::HeaderFields h,
                                                                   const gpu::CompressState* st,
                                                                   uint32_t* __restrict__ dq, uint32_t* tile_exc) {
  quant::settle_range(h, st->key_min, st->key_max);
  const quant::QuantParams<T> p = quant::encoder_params<T>(h);
  auto qv = [&](T x) -> uint32_t {
    int32_t v;
    return quant::quantize(x, p, v) ? uint32_t(v) : 0u;
  };
  auto counted = [&](uint64_t i, T x) -> uint32_t {
    int32_t v;
    if (quant::quantize(x, p, v)) return uint32_t(v);
    atomicAdd(&tile_exc[tile_of(g, i)], 1u);
    return 0u;
  };
  // Rows restart at multiples of cxe (chunks are whole rows; a 1-D chunk is one row).
  const uint64_t cxe = g.full.cy == 1 && g.full.cz == 1 ? g.chunk_values : g.full.cx;
  const uint64_t n4 = n / 4, stride = (uint64_t)gridDim.x * kThreads;
  uint64_t k = blockIdx.x * (uint64_t)kThreads + threadIdx.x;
  uint32_t x = uint32_t((4 * k) % cxe);
  const uint32_t step = uint32_t((4 * stride) % cxe);
  for (; k < n4; k += stride) {
    T v[4];
    if constexpr (sizeof(T) == 4) {
      const float4 f = __ldg(reinterpret_cast<const float4*>(in) + k);
      v[0] = f.x; v[1] = f.y; v[2] = f.z; v[3] = f.w;
    } else {
      const double2 a = __ldg(reinterpret_cast<const double2*>(in) + 2 * k);
      const double2 b = __ldg(reinterpret_cast<const double2*>(in) + 2 * k + 1);
      v[0] = a.x; v[1] = a.y; v[2] = b.x; v[3] = b.y;
    }
    uint32_t q[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) q[e] = counted(4 * k + e, v[e]);
    // q of the value before this vector: the previous lane's last, or computed (lane 0).
    const unsigned active = __activemask();
    uint32_t before = __shfl_up_sync(active, q[3], 1);
    if ((threadIdx.x & 31) == 0) before = k ? qv(in[4 * k - 1]) : 0;
    uint4 r;
    uint32_t xe = x;
    uint32_t d[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      d[e] = xe ? q[e] - (e ? q[e - 1] : before) : q[e];
      if (++xe == cxe) xe = 0;
    }
    r.x = d[0]; r.y = d[1]; r.z = d[2]; r.w = d[3];
    reinterpret_cast<uint4*>(dq)[k] = r;
    x += step;
    if (x >= cxe) x -= uint32_t(cxe);
  }
  // The last n % 4 values, by the first threads.
  const uint64_t i = 4 * n4 + blockIdx.x * (uint64_t)kThreads + threadIdx.x;
  if (i < n) {
    const uint32_t qi = counted(i, in[i]);
    dq[i] = i % cxe ? qi - qv(in[i - 1]) : qi;
  }
}

// (1 - Sy)(1 - Sz) applied to the row differences dq(back), `back` values before the value predicted
// (hy, hz: it has a row, a plane before it in the chunk).
template <class Dq>
__device__ __forceinline__ uint32_t yz_difference(Dq&& dq, uint32_t cx, uint32_t plane, bool hy, bool hz) {
  uint32_t d = dq(0u);
  if (hy) d -= dq(cx);
  if (hz) d -= dq(plane);
  if (hy && hz) d += dq(plane + cx);
  return d;
}

__device__ __forceinline__ uint32_t lorenzo_yz(const uint32_t* __restrict__ dqc, const ChunkShape& c, uint32_t i,
                                               uint32_t z, uint32_t y) {
  return yz_difference([&](uint32_t back) { return dqc[i - back]; }, c.cx, c.cy * c.cx, y > 0, z > 0);
}

// Symbols, the chunk's histogram, and the tile's outlier count.
static __global__ void __launch_bounds__(kThreads) lorenzo_kernel(Grid g, uint32_t radius, const uint32_t* __restrict__ q,
                                                                  uint16_t* __restrict__ sym, uint32_t* hist,
                                                                  uint32_t* tile_out) {
  extern __shared__ uint32_t s_hist[];
  using Reduce = cub::BlockReduce<uint32_t, kThreads>;
  __shared__ typename Reduce::TempStorage red;
  const uint32_t nsym = 2 * radius;
  const uint64_t t = blockIdx.x, c = g.chunk_of_tile(t);
  const ChunkShape cs = g.shape(c);
  const uint32_t count = cs.count(), tile0 = uint32_t(t - g.first_tile(c)) * kTile;
  const uint32_t* qc = q + c * g.chunk_values;
  uint16_t* sc = sym + c * g.chunk_values;
  for (uint32_t k = threadIdx.x; k < nsym; k += kThreads) s_hist[k] = 0;
  __syncthreads();
  uint32_t n_out = 0;
  // Striped: consecutive threads take consecutive values, so every load and store is coalesced (the
  // counts and the histogram do not depend on the order). Coordinates advance by kThreads values
  // per step = sz planes + sy rows + sx columns, with one carry at most per axis.
  uint32_t i = tile0 + threadIdx.x, z, y, x;
  local_xyz(cs, i, z, y, x);
  uint32_t sz, sy, sx;
  local_xyz(cs, kThreads, sz, sy, sx);
  for (int k = 0; k < kPerThread; ++k, i += kThreads) {
    if (i >= count) break;
    const uint32_t s = predict::quant_symbol(lorenzo_yz(qc, cs, i, z, y), radius);
    sc[i] = uint16_t(s);
    // Most lanes share the central symbol: one shared-memory atomic per distinct symbol per warp.
    const unsigned peers = __match_any_sync(__activemask(), s);
    if ((threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&s_hist[s], uint32_t(__popc(peers)));
    n_out += s == 0;
    x += sx; y += sy; z += sz;
    if (x >= cs.cx) { x -= cs.cx; ++y; }
    if (y >= cs.cy) { y -= cs.cy; ++z; }
  }
  const uint32_t a = Reduce(red).Sum(n_out);
  if (threadIdx.x == 0) tile_out[t] = a;
  __syncthreads();
  for (uint32_t k = threadIdx.x; k < nsym; k += kThreads)
    if (s_hist[k]) atomicAdd(&hist[c * nsym + k], s_hist[k]);
}

// Dual quantization in one pass (prequantization and Lorenzo prediction fused), for chunks whose
// prediction history fits in shared memory: it saves prequant_kernel's write and lorenzo_kernel's read
// of q, 8 bytes of traffic per value. Each block covers a range of one chunk's values, in chunk order,
// a step of kDualStep at a time: it quantizes the step and puts its row differences (1 - Sx) q into a
// ring of the last `ring` values, then predicts the step from the ring with lorenzo_yz's four reads (a
// value looks back at most `history` values: a plane and a row). The range starts `history` values
// early, quantized but not coded (the halo), so every block is independent. Outputs as lorenzo_kernel's,
// plus the full delta of each outlier in dq (for emit_kernel); tile_out is counted with atomics (zeroed
// by the init kernel).
// The plan (history, ring, range) is host code in dual_plan.hpp.
static_assert(kDualStep == kDualPer * kThreads, "a step is kDualPer values per thread");
// A thread predicts at most range / kThreads values of a block (range < 8 kDualMaxRing + kDualStep):
// its counts of the three central symbols fit 10-bit fields of one word.
static_assert((8 * kDualMaxRing + kDualStep) / kThreads < 1024, "central-symbol counts fit 10 bits");

template <class T>
static __global__ void __launch_bounds__(kThreads) dual_quant_kernel(const T* __restrict__ in, Grid g, DualPlan dp,
                                                                     uint32_t radius, format::HeaderFields h,
                                                                     const gpu::CompressState* st,
                                                                     uint32_t* __restrict__ dq, uint16_t* __restrict__ sym,
                                                                     uint32_t* hist, uint32_t* tile_out, uint32_t* tile_exc) {
  extern __shared__ uint32_t s_dual[];
  uint32_t* ring = s_dual;               // dp.ring row differences (1 - Sx) q
  uint32_t* s_hist = s_dual + dp.ring;   // 2 radius counts
  const uint32_t nsym = 2 * radius, mask = dp.ring - 1;
  const uint64_t c = blockIdx.y;
  const ChunkShape cs = g.shape(c);
  const uint32_t count = cs.count(), v0 = blockIdx.x * dp.range;
  if (v0 >= count) return;  // the last chunk has fewer values
  const uint32_t v1 = min(count, v0 + dp.range);
  for (uint32_t k = threadIdx.x; k < nsym; k += kThreads) s_hist[k] = 0;
  quant::settle_range(h, st->key_min, st->key_max);
  const quant::QuantParams<T> p = quant::encoder_params<T>(h);
  const T* xc = in + c * g.chunk_values;
  uint16_t* sym_c = sym + c * g.chunk_values;
  uint32_t* dq_c = dq + c * g.chunk_values;
  const uint64_t first_tile = g.first_tile(c);
  const uint32_t cx = cs.cx, plane = cs.cy * cs.cx;
  const uint32_t s0 = v0 > dp.history ? (v0 - dp.history) / kDualStep * kDualStep : 0;
  const int lane = threadIdx.x & 31;
  // Warp w takes values [step + 256 w, step + 256 w + 256) of each step, 32 consecutive ones per k,
  // so a value's left neighbour is in the same warp except at a warp's first value of a step.
  const uint32_t warp_first = (threadIdx.x >> 5) * 32 * kDualPer;
  auto value_at = [&](uint32_t step, int k) { return step + warp_first + 32 * k + lane; };
  // This thread's row and column, advanced to its next value (as in lorenzo_kernel: at most one carry
  // per axis); a value has a plane before it iff its index is >= plane.
  uint32_t y, x, sy, sx, sy_step, sx_step;
  {
    uint32_t z;
    local_xyz(cs, value_at(s0, 0), z, y, x);
    local_xyz(cs, 32, z, sy, sx);
    local_xyz(cs, kDualStep - 32 * (kDualPer - 1), z, sy_step, sx_step);
  }
  // The three central symbols (most values on smooth data) are counted in registers, 10 bits each in
  // one word, the others with shared-memory atomics: no warp-wide match per value.
  uint32_t n_center = 0;
  // The next step's input is loaded while this step is predicted, so a step never waits on DRAM.
  // Lane 0 also loads the value before the warp's first one (its q is quantized again, as in
  // prequant_kernel, for the first row difference).
  T next[kDualPer], before_first = T(0);
  auto load_step = [&](uint32_t step) {
#pragma unroll
    for (int k = 0; k < kDualPer; ++k) {
      const uint32_t j = value_at(step, k);
      next[k] = j < v1 ? xc[j] : T(0);
    }
    const uint32_t j0 = value_at(step, 0);
    before_first = lane == 0 && j0 > 0 && j0 < v1 ? xc[j0 - 1] : T(0);
  };
  load_step(s0);
  for (uint32_t step = s0; step < v1; step += kDualStep) {
    // Quantize: the quick test for all values, the exact search only where it left a value undecided
    // (the same choice as quantize(), kept in registers).
    // flags: two bits a value, the QuantResult (bit 0: no q, stored exactly; bit 1: search).
    int32_t qv[kDualPer];
    uint32_t flags = 0;
#pragma unroll
    for (int k = 0; k < kDualPer; ++k) flags |= uint32_t(quant::quantize_fast(next[k], p, qv[k])) << (2 * k);
    static_assert(quant::kQuantNone == 1 && quant::kQuantSearch == 2, "flag bits");
    if (flags & 0xaaaau) {
#pragma unroll
      for (int k = 0; k < kDualPer; ++k)
        if (flags >> (2 * k + 1) & 1) {
          const int32_t q = quant::quantize_search<T>(next[k], p.step, p.eb, qv[k]);
          if (q == quant::kNoQ) flags |= 1u << (2 * k);
          else qv[k] = q;
        }
    }
    auto none_at = [&](int k) { return (flags >> (2 * k) & 1) != 0; };
    // Row differences into the ring; whether each value has a row before it, for the prediction.
    uint32_t q_last = 0;  // lane 0: the q before its value
    if (lane == 0) {
      int32_t v;
      q_last = quant::quantize(before_first, p, v) ? uint32_t(v) : 0u;
    }
    uint32_t has_y = 0;
#pragma unroll
    for (int k = 0; k < kDualPer; ++k) {
      const uint32_t j = value_at(step, k);
      const uint32_t q = none_at(k) ? 0u : uint32_t(qv[k]);
      uint32_t q_before = __shfl_up_sync(0xffffffffu, q, 1);
      if (lane == 0) q_before = q_last;
      q_last = __shfl_sync(0xffffffffu, q, 31);
      if (j < v1) {
        ring[j & mask] = x > 0 ? q - q_before : q;
        if (none_at(k) && j >= v0) atomicAdd(&tile_exc[first_tile + j / kTile], 1u);
      }
      has_y |= uint32_t(y > 0) << k;
      x += k + 1 < kDualPer ? sx : sx_step;
      y += k + 1 < kDualPer ? sy : sy_step;
      if (x >= cs.cx) { x -= cs.cx; ++y; }
      if (y >= cs.cy) y -= cs.cy;
    }
    if (step + kDualStep < v1) load_step(step + kDualStep);
    __syncthreads();
    // Predict: (1 - Sy)(1 - Sz) applied to the row differences in the ring. A step wholly inside the
    // block's range (most of them) skips the per-value range test; stores use the step's base pointers
    // with constant offsets.
    const uint32_t i0 = value_at(step, 0);
    uint16_t* const sym_w = sym_c + i0;
    uint32_t* const dq_w = dq_c + i0;
    auto predict_step = [&](auto interior) {
#pragma unroll
      for (int k = 0; k < kDualPer; ++k) {
        const uint32_t i = i0 + 32 * k;
        const bool own = decltype(interior)::value || (i >= v0 && i < v1);
        uint32_t s = 1;  // any symbol but the outlier's for lanes that predict nothing
        if (own) {
          const uint32_t d = yz_difference([&](uint32_t back) { return ring[(i - back) & mask]; }, cx, plane,
                                           has_y >> k & 1, i >= plane);
          s = predict::quant_symbol(d, radius);
          sym_w[32 * k] = uint16_t(s);
          if (s == 0) dq_w[32 * k] = d;
          const uint32_t off = s - (radius - 1);  // 0, 1, 2 for the central symbols
          if (off < 3) n_center += 1u << (10 * off);
          else atomicAdd(&s_hist[s], 1u);
        }
        // Outliers per tile: a warp's 32 consecutive values lie in at most two tiles.
        const unsigned outl = __ballot_sync(0xffffffffu, own && s == 0);
        if (outl) {
          const uint32_t i_lane0 = i - lane;
          const unsigned in_first = __ballot_sync(0xffffffffu, own && s == 0 && (i / kTile) == (i_lane0 / kTile));
          if (lane == 0) {
            if (in_first) atomicAdd(&tile_out[first_tile + i_lane0 / kTile], uint32_t(__popc(in_first)));
            if (outl & ~in_first) atomicAdd(&tile_out[first_tile + i_lane0 / kTile + 1], uint32_t(__popc(outl & ~in_first)));
          }
        }
      }
    };
    if (step >= v0 && step + kDualStep <= v1) predict_step(std::true_type{});
    else predict_step(std::false_type{});
    __syncthreads();  // the next step overwrites the oldest row differences
  }
#pragma unroll
  for (int k = 0; k < 3; ++k) {  // warp sums first: one atomic per warp and symbol
    uint32_t t = n_center >> (10 * k) & 1023u;
    for (int o = 16; o; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);
    if (lane == 0 && t) atomicAdd(&s_hist[radius - 1 + k], t);
  }
  __syncthreads();
  for (uint32_t k = threadIdx.x; k < nsym; k += kThreads)
    if (s_hist[k]) atomicAdd(&hist[c * nsym + k], s_hist[k]);
}

// One block per chunk: the codebook and the chunk's total bits. The same book as build_book on the CPU,
// built in parallel (Tian et al.'s two phases, after Ostadzadeh et al.):
//  1. code lengths: the two-queue Huffman construction done a round at a time. With t the sum of the
//     two lightest nodes, every node lighter than t is paired with its neighbour in weight order (leaf
//     before internal node on equal weights, the sequential algorithm's rule), all pairs at once; a
//     merge path gives each thread its pair. The rounds create exactly the nodes the sequential
//     construction creates, so the depths are its depths. Depths by pointer jumping, then the same
//     length limit and hand-out as the CPU (limit_depths, length_of_rank).
//  2. codewords: canonical; a symbol's code is the first code of its length plus its rank among the
//     symbols of that length (a block scan of per-length counts).
constexpr int kSortPerThread = kMaxRadius * 2 / kThreads;  // 16 keys per thread: 4096 symbols
constexpr uint32_t kNodes = 2 * huffman::kMaxSymbols;       // leaves + internal nodes
struct LenCounts {
  uint16_t n[huffman::kMaxLen + 1];
};
struct LenCountsAdd {
  __device__ LenCounts operator()(const LenCounts& a, const LenCounts& b) const {
    LenCounts r;
#pragma unroll
    for (int l = 0; l <= huffman::kMaxLen; ++l) r.n[l] = uint16_t(a.n[l] + b.n[l]);
    return r;
  }
};
constexpr size_t kBookSmem = huffman::kMaxSymbols * 8 /*keys*/ + kNodes * 4 /*w*/ + kNodes * 2 * 2 /*anc x2*/ +
                             kNodes * 2 * 2 /*depth x2*/ + huffman::kMaxSymbols /*len*/;

static __global__ void __launch_bounds__(kThreads) book_kernel(uint32_t nsym, const uint32_t* __restrict__ hist, uint8_t* len,
                                                               uint32_t* code, ChunkInfo* info) {
  using Sort = cub::BlockRadixSort<unsigned long long, kThreads, kSortPerThread>;
  using Scan = cub::BlockScan<uint32_t, kThreads>;
  using LenScan = cub::BlockScan<LenCounts, kThreads>;
  using Reduce = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ union {
    typename Sort::TempStorage sort;
    typename Scan::TempStorage scan;
    typename LenScan::TempStorage len_scan;
    typename Reduce::TempStorage reduce;
  } tmp;
  extern __shared__ uint64_t s_dyn[];
  uint64_t* s_keys = s_dyn;                                     // sorted keys
  uint32_t* w = reinterpret_cast<uint32_t*>(s_keys + huffman::kMaxSymbols);  // node weights
  uint16_t* anc = reinterpret_cast<uint16_t*>(w + kNodes);      // parent, then ancestors (2 buffers)
  uint16_t* dep = anc + 2 * kNodes;                             // depth to that ancestor (2 buffers)
  uint8_t* s_len = reinterpret_cast<uint8_t*>(dep + 2 * kNodes);
  __shared__ uint32_t s_c, s_h, s_e, s_a, s_b, s_pairs, s_done;
  __shared__ uint32_t s_bits[huffman::kDepthCap + 1];
  __shared__ uint32_t s_first[huffman::kMaxLen + 2];
  const uint64_t c = blockIdx.x;
  const uint32_t* h = hist + c * nsym;
  // Blocked arrangement: thread j holds symbols j*16 .. j*16+15; unused symbols sort last.
  unsigned long long keys[kSortPerThread];
  uint32_t used = 0;
  for (int k = 0; k < kSortPerThread; ++k) {
    const uint32_t s = threadIdx.x * kSortPerThread + k;
    const uint32_t cnt = s < nsym ? h[s] : 0;
    keys[k] = cnt ? huffman::order_key(cnt, s) : ~0ull;
    used += cnt != 0;
  }
  for (uint32_t s = threadIdx.x; s < huffman::kMaxSymbols; s += kThreads) s_len[s] = 0;
  for (uint32_t l = threadIdx.x; l <= huffman::kDepthCap; l += kThreads) s_bits[l] = 0;
  uint32_t total_used;
  Scan(tmp.scan).ExclusiveSum(used, used, total_used);
  __syncthreads();
  Sort(tmp.sort).Sort(keys, 0, 38);  // counts < 2^26 and 12 symbol bits; unused (~0) keys stay last
  for (int k = 0; k < kSortPerThread; ++k) s_keys[threadIdx.x * kSortPerThread + k] = keys[k];
  __syncthreads();
  const uint32_t m = total_used;
  for (uint32_t i = threadIdx.x; i < m; i += kThreads) w[i] = huffman::key_count(s_keys[i]);
  if (threadIdx.x == 0) { s_c = 0; s_h = m; s_e = m; s_done = m < 2; }
  __syncthreads();
  // Phase 1a: the tree, a round at a time. Leaves are nodes [0, m) in weight order; internal nodes
  // are appended from m on, in creation (and weight) order; [c, m) and [h, e) are the queues.
  while (!s_done) {
    if (threadIdx.x == 0) {
      uint32_t cc = s_c, hh = s_h;
      const uint32_t e = s_e;
      auto pick = [&]() {  // the lighter head, leaf first on equal weights
        if (hh >= e || (cc < m && w[cc] <= w[hh])) return w[cc++];
        return w[hh++];
      };
      const uint32_t t = pick() + pick();
      auto below = [&](uint32_t lo, uint32_t hi) {  // nodes in [lo, hi) lighter than t: a prefix
        while (lo < hi) {
          const uint32_t mid = (lo + hi) / 2;
          if (w[mid] < t) lo = mid + 1; else hi = mid;
        }
        return lo;
      };
      uint32_t a = below(s_c, m) - s_c, b = below(s_h, e) - s_h;
      if ((a + b) & 1) {  // odd: the heaviest selected node waits for the next round
        const bool internal_last = a == 0 || (b > 0 && w[s_h + b - 1] >= w[s_c + a - 1]);
        if (internal_last) --b; else --a;
      }
      s_a = a; s_b = b; s_pairs = (a + b) / 2;
      if (!s_pairs) s_done = 2;  // cannot happen on a sorted histogram; never loop forever
    }
    __syncthreads();
    if (s_done) break;
    const uint32_t a = s_a, b = s_b, c0 = s_c, h0 = s_h, e0 = s_e;
    // The node at position k of the merge of leaves [c0, c0+a) and internal nodes [h0, h0+b).
    auto merged = [&](uint32_t k) -> uint32_t {
      uint32_t lo = k > b ? k - b : 0, hi = k < a ? k : a;
      while (lo < hi) {  // leaves among the first k: the leaf at lo precedes internal k-lo-1?
        const uint32_t mid = (lo + hi) / 2;
        if (w[c0 + mid] <= w[h0 + k - mid - 1]) lo = mid + 1; else hi = mid;
      }
      const uint32_t i = lo, j = k - lo;
      return (i < a && (j >= b || w[c0 + i] <= w[h0 + j])) ? c0 + i : h0 + j;
    };
    for (uint32_t p = threadIdx.x; p < s_pairs; p += kThreads) {
      const uint32_t x = merged(2 * p), y = merged(2 * p + 1), node = e0 + p;
      w[node] = w[x] + w[y];
      anc[x] = anc[y] = uint16_t(node);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      s_c = c0 + a; s_h = h0 + b; s_e = e0 + s_pairs;
      s_done = (m - s_c) + (s_e - s_h) <= 1;
    }
    __syncthreads();
  }
  // Phase 1b: depths by pointer jumping (the root is the last node created).
  const uint32_t n_nodes = m >= 2 ? 2 * m - 1 : m, root = n_nodes - 1;
  for (uint32_t i = threadIdx.x; i < n_nodes; i += kThreads) {
    if (i == root) anc[i] = uint16_t(root);
    dep[i] = i == root ? 0 : 1;
  }
  __syncthreads();
  uint16_t *a0 = anc, *a1 = anc + kNodes, *d0 = dep, *d1 = dep + kNodes;
  for (uint32_t span = 1; span < n_nodes; span *= 2) {
    for (uint32_t i = threadIdx.x; i < n_nodes; i += kThreads) {
      d1[i] = uint16_t(d0[i] + d0[a0[i]]);
      a1[i] = a0[a0[i]];
    }
    __syncthreads();
    uint16_t* t = a0; a0 = a1; a1 = t;
    t = d0; d0 = d1; d1 = t;
  }
  if (m == 1) {
    if (threadIdx.x == 0) s_bits[1] = 1;
  } else {
    for (uint32_t i = threadIdx.x; i < m; i += kThreads)
      atomicAdd(&s_bits[d0[i] < huffman::kDepthCap ? d0[i] : huffman::kDepthCap], 1u);
  }
  __syncthreads();
  if (threadIdx.x == 0) huffman::limit_depths(s_bits);
  __syncthreads();
  for (uint32_t r = threadIdx.x; r < m; r += kThreads)
    s_len[huffman::key_symbol(s_keys[m - 1 - r])] = uint8_t(huffman::length_of_rank(s_bits, r));
  if (threadIdx.x == 0) {  // first code of each length (RFC 1951); s_bits[l] counts the lengths now
    uint32_t cw = 0;
    for (int l = 1; l <= huffman::kMaxLen; ++l) {
      cw = (cw + (l > 1 ? s_bits[l - 1] : 0)) << 1;
      s_first[l] = cw;
    }
  }
  __syncthreads();
  // Phase 2: codes. Thread j's symbols j*16 .. j*16+15; its rank within each length from a scan.
  LenCounts mine{};
  for (int k = 0; k < kSortPerThread; ++k) {
    const uint32_t s = threadIdx.x * kSortPerThread + k;
    if (s < nsym && s_len[s]) ++mine.n[s_len[s]];
  }
  LenCounts before;
  LenScan(tmp.len_scan).ExclusiveScan(mine, before, LenCounts{}, LenCountsAdd());
  unsigned long long bits = 0;
  for (int k = 0; k < kSortPerThread; ++k) {
    const uint32_t s = threadIdx.x * kSortPerThread + k;
    if (s >= nsym) break;
    const uint32_t l = s_len[s];
    len[c * nsym + s] = uint8_t(l);
    code[c * nsym + s] = l ? s_first[l] + before.n[l]++ : 0;
    bits += (unsigned long long)h[s] * l;
  }
  __syncthreads();
  bits = Reduce(tmp.reduce).Sum(bits);
  if (threadIdx.x == 0) info[c].total_bits = uint32_t(bits);
}

// Chunk sizes and offsets (one block, rounds of kThreads chunks); the raw fallback decided here.
template <class T>
static __global__ void __launch_bounds__(kThreads) layout_kernel(Grid g, uint32_t nsym, const uint32_t* tile_out,
                                                          const uint32_t* tile_exc, ChunkInfo* info,
                                                          gpu::CompressState* st) {
  using Scan = cub::BlockScan<unsigned long long, kThreads>;
  __shared__ typename Scan::TempStorage scan;
  unsigned long long base = format::data_offset(g.n_chunks);
  for (uint64_t r = 0; r < g.n_chunks; r += kThreads) {
    const uint64_t c = r + threadIdx.x;
    unsigned long long size = 0;
    if (c < g.n_chunks) {
      ChunkInfo& ci = info[c];
      const uint64_t t0 = g.first_tile(c), t1 = c + 1 < g.n_chunks ? g.first_tile(c + 1) : g.n_tiles;
      // tile_out / tile_exc hold exclusive prefixes over all tiles, plus the last tile's count kept
      // in the scan's extra slot (index n_tiles).
      ci.out_base = tile_out[t0];
      ci.exc_base = tile_exc[t0];
      ci.n_out = tile_out[t1] - tile_out[t0];
      ci.n_exc = tile_exc[t1] - tile_exc[t0];
      const uint32_t count = g.shape(c).count();
      const ChunkLayout L = chunk_layout(nsym, ci.total_bits, ci.n_out, ci.n_exc, sizeof(T));
      ci.raw = L.size64 >= raw_chunk_bytes(count, sizeof(T));
      size = ci.raw ? raw_chunk_bytes(count, sizeof(T)) : L.size64;
      ci.size = uint32_t(size);
      ci.sum = 0;
    }
    unsigned long long excl, total;
    Scan(scan).ExclusiveSum(size, excl, total);
    if (c < g.n_chunks) info[c].offset = base + excl;
    base += total;
    __syncthreads();
  }
  if (threadIdx.x == 0) st->total_size = base;
}

// Zeroes each coded chunk's bytes (codewords and nibbles are OR-ed in).
static __global__ void __launch_bounds__(kThreads) zero_kernel(const ChunkInfo* info, uint8_t* out) {
  const ChunkInfo ci = info[blockIdx.y];
  if (ci.raw) return;
  uint32_t* w = reinterpret_cast<uint32_t*>(out + ci.offset);
  for (uint32_t k = blockIdx.x * kThreads + threadIdx.x; k < ci.size / 4; k += gridDim.x * kThreads) w[k] = 0;
}

// Codewords of one tile, staged in shared memory; gaps and sequence starts of the subsequences whose
// first codeword is in this tile. Symbols are loaded coalesced and transposed so each thread codes 16
// consecutive ones; the codebook sits in shared memory. Each thread OR-s its codewords into the stage
// at the bit offsets of a block scan (Tian et al.'s reduce-shuffle wrote the same bytes more slowly:
// EXPERIMENTS.md).
static __global__ void __launch_bounds__(kThreads) encode_kernel(Grid g, uint32_t nsym, const uint16_t* __restrict__ sym,
                                                          const uint8_t* __restrict__ len,
                                                          const uint32_t* __restrict__ code, const ChunkInfo* info,
                                                          gpu::CompressState* st, unsigned long long* tile_desc,
                                                          uint8_t* out) {
  // The tile's bits from its first word: a whole tile's stream fits.
  constexpr uint32_t kStageWords = kTile * huffman::kMaxLen / 32 + 2;
  using Load = cub::BlockLoad<uint16_t, kThreads, kPerThread, cub::BLOCK_LOAD_TRANSPOSE>;
  using Scan = cub::BlockScan<uint32_t, kThreads>;
  __shared__ uint32_t stage[kStageWords];
  __shared__ union { typename Load::TempStorage load; typename Scan::TempStorage scan; } tmp;
  extern __shared__ uint32_t s_code[];  // nsym codes, then nsym lengths (bytes)
  uint8_t* s_len = reinterpret_cast<uint8_t*>(s_code + nsym);
  __shared__ unsigned long long s_ticket, s_base;
  // Tiles are taken in ticket order, so every tile a look-back waits on is already running.
  if (threadIdx.x == 0) s_ticket = atomicAdd(&st->chunk_counter, 1u);
  __syncthreads();
  const uint64_t t = s_ticket, c = g.chunk_of_tile(t);
  const ChunkInfo ci = info[c];
  if (ci.raw) return;
  const uint32_t count = g.shape(c).count(), tile0 = uint32_t(t - g.first_tile(c)) * kTile;
  const uint16_t* sc = sym + c * g.chunk_values;
  for (uint32_t k = threadIdx.x; k < nsym; k += kThreads) {
    s_code[k] = code[c * nsym + k];
    s_len[k] = len[c * nsym + k];
  }
  for (uint32_t k = threadIdx.x; k < kStageWords; k += kThreads) stage[k] = 0;
  uint16_t items[kPerThread];
  const uint32_t valid = count - tile0 < kTile ? count - tile0 : kTile;
  Load(tmp.load).Load(sc + tile0, items, int(valid), uint16_t(0));
  __syncthreads();  // tmp is reused by the scan; s_len is ready
  const ChunkLayout L = chunk_layout(nsym, ci.total_bits, ci.n_out, ci.n_exc, 0);
  uint8_t* chunk = out + ci.offset;
  uint32_t* words = reinterpret_cast<uint32_t*>(chunk + L.bits);
  uint32_t* gapw = reinterpret_cast<uint32_t*>(chunk + L.gaps);
  const uint32_t i0 = tile0 + threadIdx.x * kPerThread;
  uint32_t mine = 0;
  for (int k = 0; k < kPerThread; ++k)
    if (i0 + k < count) mine += s_len[items[k]];
  uint32_t excl, tile_total;
  Scan(tmp.scan).ExclusiveSum(mine, excl, tile_total);
  // The tile's first bit: a decoupled look-back over the tiles of this chunk.
  if (threadIdx.x < 32) {
    const uint64_t t0 = g.first_tile(c);
    const gpu::PackedTileState tiles{tile_desc + t0};
    if (threadIdx.x == 0) tiles.publish_aggregate(t - t0, tile_total);
    const unsigned long long b = tiles.exclusive_prefix(t - t0, tile_total);
    if (threadIdx.x == 0) s_base = b;
  }
  __syncthreads();
  const uint32_t tile_bit0 = uint32_t(s_base);  // chunk-relative
  const uint32_t word0 = tile_bit0 >> 5;
  const uint32_t nsub = huffman::n_subsequences(ci.total_bits);
  uint32_t pos = tile_bit0 + excl;
  const uint32_t n_mine = i0 < count ? min(count - i0, uint32_t(kPerThread)) : 0u;
  // Gap entries and sequence starts: written by the threads whose codewords begin a subsequence, that
  // is whose first start and the start before it (prev_start; none for a chunk's first symbol) lie in
  // different subsequences or whose later starts cross a boundary; about one thread in 1024 / mine.
  if (n_mine) {
    const uint32_t prev_start = i0 > 0 ? pos - s_len[sc[i0 - 1]] : ~0u;
    uint32_t last_len = 0;
#pragma unroll
    for (uint32_t k = 0; k < kPerThread; ++k)
      if (k + 1 == n_mine) last_len = s_len[items[k]];
    const uint32_t last_start = pos + mine - last_len;
    if (prev_start == ~0u || prev_start / huffman::kSubBits != last_start / huffman::kSubBits) {
      uint32_t p = pos, ps = prev_start;
#pragma unroll  // constant indices keep items[] in registers
      for (uint32_t k = 0; k < kPerThread; ++k) {
        if (k >= n_mine) break;
        const uint32_t sub = p / huffman::kSubBits;
        if (ps == ~0u || ps / huffman::kSubBits != sub) {
          atomicOr(gapw + sub / 8, (p - sub * huffman::kSubBits) << (4 * (sub % 8)));
          if (sub % huffman::kSeqSubs == 0) reinterpret_cast<uint32_t*>(chunk + L.seq_first)[sub / huffman::kSeqSubs] = i0 + k;
        }
        ps = p;
        p += s_len[items[k]];
      }
    }
    if (i0 + n_mine == count && last_start / huffman::kSubBits + 1 < nsub)  // the last subsequence has no start of its own
      atomicOr(gapw + (nsub - 1) / 8, huffman::kNoStart << (4 * ((nsub - 1) % 8)));
  }
  {  // the stream from stage bit tile_bit0 % 32
    auto put = [&](uint32_t s) {
      const uint32_t l = s_len[s];
      uint32_t hi, lo;
      huffman::code_bits(s_code[s], l, pos, hi, lo);
      const uint32_t w = (pos >> 5) - word0;
      if (hi) atomicOr(&stage[w], hi);
      if (lo) atomicOr(&stage[w + 1], lo);
      pos += l;
    };
    if (n_mine == kPerThread) {  // all but a chunk's last thread: no count test per symbol
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) put(items[k]);
    } else {
#pragma unroll
      for (uint32_t k = 0; k < kPerThread; ++k)
        if (k < n_mine) put(items[k]);
    }
    __syncthreads();
  }
  // Out: words wholly inside this tile's bit range are stored; the two partial ends are OR-ed.
  const uint32_t end_bit = tile_bit0 + tile_total, last_word = (end_bit + 31) / 32;  // exclusive
  for (uint32_t w = word0 + threadIdx.x; w < last_word; w += kThreads) {
    const uint32_t v = stage[w - word0];
    const bool partial = (w == word0 && (tile_bit0 & 31)) || (w + 1 == last_word && (end_bit & 31));
    if (partial) { if (v) atomicOr(words + w, v); }
    else words[w] = v;
  }
}

// Outliers and exceptions of one tile, in index order, at their places in the chunk. q holds the row
// differences (prequant_kernel) or, with q_is_delta, each outlier's full delta (dual_quant_kernel).
template <class T>
static __global__ void __launch_bounds__(kThreads) emit_kernel(Grid g, uint32_t radius, format::HeaderFields h,
                                                               const gpu::CompressState* st, const T* __restrict__ in,
                                                               const uint32_t* __restrict__ q, const uint16_t* __restrict__ sym,
                                                               const uint32_t* tile_out, const uint32_t* tile_exc,
                                                               const ChunkInfo* info, uint8_t* out, bool q_is_delta) {
  using Scan = cub::BlockScan<uint32_t, kThreads>;
  __shared__ typename Scan::TempStorage scan;
  const uint64_t t = blockIdx.x, c = g.chunk_of_tile(t);
  const ChunkInfo ci = info[c];
  // Each test runs only where the tile's counts say it finds something. Exceptions are rare, but
  // outliers are in most tiles at tight bounds or with a land mask: re-quantizing every value of each
  // such tile made this kernel 353 us of levitus' 1.75 ms (ratio v27: compression +4.7% mean, up to
  // +27% at rel 1e-4).
  const bool any_out = tile_out[t + 1] != tile_out[t], any_exc = tile_exc[t + 1] != tile_exc[t];
  if (ci.raw || !(any_out || any_exc)) return;
  quant::settle_range(h, st->key_min, st->key_max);
  const quant::QuantParams<T> p = quant::encoder_params<T>(h);
  const ChunkShape cs = g.shape(c);
  const uint32_t count = cs.count(), i0 = uint32_t(t - g.first_tile(c)) * kTile + threadIdx.x * kPerThread;
  const uint32_t* qc = q + c * g.chunk_values;
  const uint16_t* sc = sym + c * g.chunk_values;
  const T* xc = in + c * g.chunk_values;
  // Exceptions are the values quantize() rejects, as in prequant_kernel (rare: no need to keep a mark).
  uint32_t out_mask = 0, exc_mask = 0;
  if (any_out) {
    static_assert(kPerThread == 16, "a thread's symbols are two 16-byte loads");
    if (i0 + kPerThread <= count && (reinterpret_cast<uintptr_t>(sc + i0) & 15) == 0) {
      const uint4* s4 = reinterpret_cast<const uint4*>(sc + i0);
      const uint4 a = s4[0], b = s4[1];
      const uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
      for (int k = 0; k < 8; ++k) out_mask |= uint32_t((w[k] & 0xffffu) == 0) << (2 * k) | uint32_t(w[k] >> 16 == 0) << (2 * k + 1);
    } else {
      for (int k = 0; k < kPerThread && i0 + k < count; ++k) out_mask |= uint32_t(sc[i0 + k] == 0) << k;
    }
  }
  if (any_exc) {
    for (int k = 0; k < kPerThread && i0 + k < count; ++k) {
      int32_t v;
      if (!quant::quantize(xc[i0 + k], p, v)) exc_mask |= 1u << k;
    }
  }
  uint32_t eo, ee;
  Scan(scan).ExclusiveSum(uint32_t(__popc(out_mask)), eo);
  __syncthreads();
  Scan(scan).ExclusiveSum(uint32_t(__popc(exc_mask)), ee);
  const ChunkLayout L = chunk_layout(2 * radius, ci.total_bits, ci.n_out, ci.n_exc, sizeof(T));
  uint8_t* chunk = out + ci.offset;
  uint32_t jo = tile_out[t] - ci.out_base + eo, je = tile_exc[t] - ci.exc_base + ee;
  for (int k = 0; k < kPerThread; ++k) {
    const uint32_t i = i0 + k;
    if (out_mask >> k & 1) {
      uint32_t z, y, x;
      local_xyz(cs, i, z, y, x);
      store_u32_le(chunk + L.out_idx + 4 * jo, i);
      store_u32_le(chunk + L.out_delta + 4 * jo, q_is_delta ? qc[i] : lorenzo_yz(qc, cs, i, z, y));
      ++jo;
    }
    if (exc_mask >> k & 1) {
      store_u32_le(chunk + L.exc_idx + 4 * je, i);
      store_value_le<T>(chunk + L.exc_val + sizeof(T) * je, xc[i]);
      ++je;
    }
  }
}

// Chunk headers and code lengths (coded chunks); headers and values (raw chunks).
template <class T>
static __global__ void __launch_bounds__(kThreads) chunk_head_kernel(Grid g, uint32_t nsym, const T* __restrict__ in,
                                                              const uint8_t* __restrict__ len, const ChunkInfo* info,
                                                              uint8_t* out) {
  const uint64_t c = blockIdx.y;
  const ChunkInfo ci = info[c];
  uint8_t* chunk = out + ci.offset;
  const bool lead = blockIdx.x == 0 && threadIdx.x == 0;
  if (ci.raw) {
    if (lead) {
      store_u32_le(chunk, 0); store_u32_le(chunk + 4, 0); store_u32_le(chunk + 8, 0);
      store_u32_le(chunk + 12, kKindRaw);
    }
    const uint32_t count = g.shape(c).count();
    const T* xc = in + c * g.chunk_values;
    for (uint32_t i = blockIdx.x * kThreads + threadIdx.x; i < count; i += gridDim.x * kThreads)
      store_value_le<T>(chunk + kChunkHeaderBytes + sizeof(T) * i, xc[i]);
    return;
  }
  if (blockIdx.x) return;
  if (lead) {
    store_u32_le(chunk, ci.total_bits); store_u32_le(chunk + 4, ci.n_out); store_u32_le(chunk + 8, ci.n_exc);
    store_u32_le(chunk + 12, kKindCoded);
  }
  const uint8_t* Lc = len + c * nsym;
  for (uint32_t k = threadIdx.x; k < nsym / 2; k += kThreads)
    chunk[kChunkHeaderBytes + k] = uint8_t(Lc[2 * k] | Lc[2 * k + 1] << 4);
}

// Checksums (HPCZ-SUM is a sum of position-keyed terms: partial sums from many blocks add up), then
// the chunk table. This block's share of words [0, n) of w, added to *sum. Four loads in flight a
// step: with one, compression's and decompression's checksum passes waited on each load in turn.
__device__ void add_checksum_terms(const uint32_t* __restrict__ w, uint32_t n, unsigned long long* sum) {
  using Sum = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ typename Sum::TempStorage tmp;
  const uint64_t stride = uint64_t(gridDim.x) * kThreads;
  uint64_t k = uint64_t(blockIdx.x) * kThreads + threadIdx.x;
  unsigned long long s = 0;
  for (; k + 3 * stride < n; k += 4 * stride) {
    const uint32_t a = w[k], b = w[k + stride], c = w[k + 2 * stride], d = w[k + 3 * stride];
    s += format::checksum_term(k, a) + format::checksum_term(k + stride, b) + format::checksum_term(k + 2 * stride, c) +
         format::checksum_term(k + 3 * stride, d);
  }
  for (; k < n; k += stride) s += format::checksum_term(k, w[k]);
  s = Sum(tmp).Sum(s);
  if (threadIdx.x == 0 && s) atomicAdd(sum, s);
}

static __global__ void __launch_bounds__(kThreads) checksum_kernel(ChunkInfo* info, const uint8_t* out) {
  const uint64_t c = blockIdx.y;
  add_checksum_terms(reinterpret_cast<const uint32_t*>(out + info[c].offset), info[c].size / 4, &info[c].sum);
}

// The chunk table; each entry's checksum terms go into st->table_sum for seal_kernel.
static __global__ void __launch_bounds__(kThreads) table_kernel(const ChunkInfo* info, uint64_t n_chunks,
                                                                gpu::CompressState* st, uint8_t* out) {
  for (uint64_t c = blockIdx.x * kThreads + threadIdx.x; c < n_chunks; c += gridDim.x * kThreads) {
    const uint32_t sum = format::checksum_fold(info[c].sum);
    format::write_chunk_entry(out + format::kHeaderBytes + 16 * c, info[c].offset, info[c].size, sum);
    atomicAdd(&st->table_sum, format::chunk_entry_terms(c, info[c].offset, info[c].size, sum));
  }
}

// ---- decompression --------------------------------------------------------------------------------
struct DecodeChunk {
  uint32_t bad, raw;
  uint32_t zeros;  // outlier symbols seen by the decoder
  uint32_t expect; // checksum from the table
  ChunkLayout L;
  unsigned long long offset;
  unsigned long long sum;  // checksum terms, summed by verify_kernel
};


// A chunk's table of codes longer than kFastBits (huffman::long_entry), built by parse_kernel.
struct LongTable {
  uint32_t base, n;
  uint16_t entry[huffman::kLongCap];
};

// One block per chunk: the table entry, the chunk's structure and its decode tables. The checksum is
// verified apart (verify_kernel, many blocks per chunk); the decoders never read or write outside
// their buffers whatever the bytes, so they need not wait for it.
template <class T>
static __global__ void __launch_bounds__(kThreads) parse_kernel(Grid g, uint32_t nsym, const uint8_t* __restrict__ a,
                                                                unsigned long long archive_size, DecodeChunk* dc,
                                                                huffman::DecodeTables* tables, LongTable* longs,
                                                                uint32_t* status) {
  constexpr int kL = huffman::kMaxLen + 1;
  using LenScan = cub::BlockScan<LenCounts, kThreads>;
  __shared__ typename LenScan::TempStorage len_scan;
  __shared__ huffman::DecodeTables s_t;  // built here, then copied out whole
  __shared__ uint32_t s_count[kL];
  __shared__ uint32_t s_bad;
  const uint64_t c = blockIdx.x;
  const uint32_t count = g.shape(c).count();
  const uint8_t* entry = a + format::kHeaderBytes + 16 * c;
  const unsigned long long off = load_u64_le(entry);
  const uint32_t size = load_u32_le(entry + 8);
  const unsigned long long expect_off = c ? load_u64_le(entry - 16) + load_u32_le(entry - 8) : format::data_offset(g.n_chunks);
  const bool last_ok = c + 1 < g.n_chunks || off + size == archive_size;
  DecodeChunk& d = dc[c];
  if (off != expect_off || !last_ok || off > archive_size || size > archive_size - off ||
      size > max_chunk_bytes(count, sizeof(T)) || (size & 3) || (off & 3)) {
    if (threadIdx.x == 0) { d.bad = 1; d.L.size = 0; d.sum = 0; d.offset = 0; atomicOr(status, kBadChunk); }
    return;
  }
  if (threadIdx.x == 0) {
    uint32_t bad = 0;
    d.offset = off;
    d.zeros = 0;
    d.sum = 0;
    d.expect = load_u32_le(entry + 12);
    d.raw = is_raw_chunk(a + off, size, count, sizeof(T));
    if (!d.raw && !parse_chunk(a + off, size, count, nsym, sizeof(T), d.L)) bad = kBadChunk;
    d.L.size = size;
    s_bad = bad;
  }
  __syncthreads();
  if (!s_bad && !d.raw) {
    // The tables of huffman::build_decode_tables, built in shared memory by all threads (a serial
    // build by one thread was most of this kernel's time): each thread takes kSortPerThread
    // consecutive symbols; a block scan of their per-length counts (as book_kernel's) gives every
    // symbol its place in (length, symbol) order.
    const uint32_t tid = threadIdx.x;
    uint8_t len[kSortPerThread];
    LenCounts mine{};  // n[0] counts lengths over kMaxLen (a corrupt book)
#pragma unroll
    for (int k = 0; k < kSortPerThread; ++k) {
      const uint32_t sy = tid * kSortPerThread + k;
      uint32_t l = sy < nsym ? huffman::get_nibble(a + off + d.L.lengths, sy) : 0;
      if (l > uint32_t(huffman::kMaxLen)) {
        ++mine.n[0];
        l = 0;
      }
      len[k] = uint8_t(l);
      if (l) ++mine.n[l];
    }
    LenCounts before, all;
    LenScan(len_scan).ExclusiveScan(mine, before, LenCounts{}, LenCountsAdd(), all);
    huffman::CanonicalRanges& r = s_t.ranges;
    if (tid == 0) {
      if (all.n[0]) s_bad = kBadChunk;
      s_count[0] = 0;
      for (int l = 1; l < kL; ++l) s_count[l] = all.n[l];
      if (!huffman::first_codes_from_counts(s_count, r.first)) s_bad = kBadChunk;
      uint32_t at = 0;
      for (int l = 0; l < kL; ++l) {
        r.count[l] = s_count[l];
        r.offset[l] = l ? at : 0;
        at += l ? s_count[l] : 0;
      }
    }
    __syncthreads();
    if (!s_bad) {
#pragma unroll
      for (int k = 0; k < kSortPerThread; ++k)
        if (len[k]) s_t.sorted[r.offset[len[k]] + before.n[len[k]]++] = uint16_t(tid * kSortPerThread + k);
      __syncthreads();
      for (uint32_t i = tid; i < (1u << huffman::kFastBits); i += kThreads) s_t.fast[i] = huffman::fast_entry(s_t, i);
      __syncthreads();
      for (uint32_t i = tid; i < (1u << huffman::kFastBits); i += kThreads) s_t.multi[i] = huffman::multi_entry(s_t.fast, i);
      {
        LongTable& lt = longs[c];
        const uint32_t base = huffman::long_base(r), n = huffman::long_windows(r);
        if (tid == 0) {
          lt.base = base;
          lt.n = n;
        }
        for (uint32_t i = tid; i < n; i += kThreads) lt.entry[i] = huffman::long_entry(r, s_t.sorted, base + i);
      }
      __syncthreads();
      static_assert(sizeof(huffman::DecodeTables) % 4 == 0, "copied as words");
      const uint32_t* from = reinterpret_cast<const uint32_t*>(&s_t);
      uint32_t* to = reinterpret_cast<uint32_t*>(&tables[c]);
      for (uint32_t i = tid; i < sizeof(huffman::DecodeTables) / 4; i += kThreads) to[i] = from[i];
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    d.bad = s_bad;
    if (s_bad) atomicOr(status, s_bad);
  }
}

static __global__ void __launch_bounds__(kThreads) verify_kernel(const uint8_t* __restrict__ a, DecodeChunk* dc) {
  const uint64_t c = blockIdx.y;  // L.size is 0 for a chunk whose table entry was rejected
  add_checksum_terms(reinterpret_cast<const uint32_t*>(a + dc[c].offset), dc[c].L.size / 4, &dc[c].sum);
}

static __global__ void __launch_bounds__(kThreads) verify_done_kernel(const DecodeChunk* dc, uint64_t n_chunks,
                                                                      uint32_t* status) {
  for (uint64_t c = blockIdx.x * kThreads + threadIdx.x; c < n_chunks; c += gridDim.x * kThreads)
    if (dc[c].L.size && format::checksum_fold(dc[c].sum) != dc[c].expect) atomicOr(status, kBadChecksum);
}

// One block per sequence (kSeqSubs subsequences, one per thread): count, scan, decode into v. The
// sequence's words (plus the two after it, where its last codeword may end) and the first-level table
// are staged in shared memory: each symbol is then three shared-memory loads (a long code: the long
// table, huffman::long_entry). Each subsequence's 32 words are followed by one pad word, so the threads
// of a warp (1024 bits apart) read different banks. The write-back rows hold 16-bit symbols (mapped to
// deltas on the way out), not 32-bit deltas: 5 blocks of 128 threads per SM instead of 4 (decompression
// 398 -> 414 GB/s mean on the H200; reading the first-level table through L1 instead of staging it, 7
// blocks, lost: 367). With the 2 KiB long table a block takes 40.5 KB and still 5 blocks fit.
constexpr uint32_t kSeqWords = huffman::kSeqSubs * huffman::kSubBits / 32;
__device__ __forceinline__ uint32_t padded(uint32_t r) { return r + (r >> 5); }
// Every subsequence starts where the gap array says (Rivera et al.'s self-synchronizing decoder, which
// finds the starts by decoding from guesses, was slower: EXPERIMENTS.md).
static __global__ void __launch_bounds__(huffman::kSeqSubs) decode_kernel(Grid g, uint32_t radius, const uint8_t* __restrict__ a,
                                                                          DecodeChunk* dc, const huffman::DecodeTables* tables,
                                                                          const LongTable* longs, uint32_t* __restrict__ v,
                                                                          uint32_t* status) {
  using Scan = cub::BlockScan<uint32_t, huffman::kSeqSubs>;
  using Reduce = cub::BlockReduce<uint32_t, huffman::kSeqSubs>;
  __shared__ union { typename Scan::TempStorage scan; typename Reduce::TempStorage reduce; } tmp;
  __shared__ uint32_t s_words[kSeqWords + kSeqWords / 32 + 3];
  __shared__ uint32_t s_fast[1u << huffman::kFastBits];
  __shared__ huffman::CanonicalRanges s_ranges;
  __shared__ uint16_t s_multi[1u << huffman::kFastBits];
  __shared__ uint16_t s_long[huffman::kLongCap];
  __shared__ uint16_t s_rows[huffman::kSeqSubs * 33];  // symbols < kMaxSymbols
  __shared__ uint32_t s_bad;
  const uint64_t c = blockIdx.y;
  const uint32_t j = blockIdx.x;
  const DecodeChunk& d = dc[c];
  if (d.bad || d.raw) return;
  const ChunkLayout L = d.L;
  const uint32_t nsub = huffman::n_subsequences(L.total_bits), nseq = huffman::n_sequences(L.total_bits);
  if (j >= nseq) return;
  const uint32_t count = g.shape(c).count();
  const uint8_t* chunk = a + d.offset;
  const uint32_t* w = reinterpret_cast<const uint32_t*>(chunk + L.bits);
  const uint32_t nw = huffman::n_words(L.total_bits), w0 = j * kSeqWords;
  const uint8_t* gaps = chunk + L.gaps;
  const huffman::DecodeTables& tab = tables[c];
  for (uint32_t k = threadIdx.x; k < kSeqWords + 2; k += huffman::kSeqSubs) s_words[padded(k)] = w0 + k < nw ? w[w0 + k] : 0;
  for (uint32_t k = threadIdx.x; k < (1u << huffman::kFastBits); k += huffman::kSeqSubs) {
    s_fast[k] = tab.fast[k];
    s_multi[k] = tab.multi[k];
  }
  const uint32_t long_base = longs[c].base, long_n = longs[c].n;
  for (uint32_t k = threadIdx.x; k < long_n; k += huffman::kSeqSubs) s_long[k] = longs[c].entry[k];
  if (threadIdx.x == 0) s_ranges = tab.ranges;
  if (threadIdx.x == 0) s_bad = 0;
  __syncthreads();
  // Every lookup in shared memory: the first-level table, then the long codes' table (the walk, with
  // its global load, only past kLongCap long windows).
  auto lookup = [&](uint32_t window) {
    return huffman::decode_entry_long(s_fast, s_long, long_base, long_n, s_ranges, tab.sorted, window);
  };
  // A run starts inside this sequence and stops within kMaxLen bits of its end, so k - w0 <= kSeqWords.
  auto word = [&](uint32_t k) { return s_words[padded(k - w0)]; };
  const uint32_t sub = j * huffman::kSeqSubs + threadIdx.x;
  uint32_t from = L.total_bits, limit = L.total_bits, n_here = 0;
  if (sub < nsub) {
    const uint64_t lim = uint64_t(sub + 1) * huffman::kSubBits;
    limit = lim < L.total_bits ? uint32_t(lim) : L.total_bits;
  }
  if (sub < nsub) {
    from = huffman::subsequence_start(gaps, sub, L.total_bits);
    const uint32_t end = huffman::count_run_by(word, L.total_bits, s_multi, lookup, from, limit, n_here);
    const uint32_t next = sub + 1 < nsub ? huffman::subsequence_start(gaps, sub + 1, L.total_bits) : L.total_bits;
    if (end != next || (sub == 0 && from != 0)) s_bad = 1;
  }
  uint32_t excl, total;
  Scan(tmp.scan).ExclusiveSum(n_here, excl, total);
  __syncthreads();
  // The same rule as the CPU decoder: a sequence in which no codeword starts begins at count.
  const uint32_t base = huffman::sequence_first(chunk + L.seq_first, gaps, j, L.total_bits, count);
  const uint32_t next_base = huffman::sequence_first(chunk + L.seq_first, gaps, j + 1, L.total_bits, count);
  if (s_bad || base > count || next_base > count || uint64_t(base) + total != next_base) {
    if (threadIdx.x == 0) { atomicOr(status, kBadChunk); }
    return;
  }
  // Pass 2: each thread's run is contiguous in the output but the runs of a warp are far apart, so
  // symbols go to a per-thread row of 32 in shared memory first, and the warp writes each row out
  // with 32 lanes (a whole 128-byte line) instead of 32 scattered 4-byte stores per instruction.
  const uint32_t lane = threadIdx.x & 31;
  uint32_t* const v_lane = v + c * g.chunk_values + lane;
  uint16_t* rows = s_rows + (threadIdx.x - lane) * 33;  // this warp's 32 rows, padded
  uint32_t at = base + excl, zeros = 0, pos = from;
  bool more = sub < nsub && pos < limit;
  while (__any_sync(0xffffffffu, more)) {
    uint32_t cnt = 0;
    while (more && cnt < 32) {  // pass 1 checked this path: every codeword here is valid
      const uint32_t e = lookup(huffman::peek_bits(word, pos));
      const uint32_t sy = huffman::entry_symbol(e);
      rows[lane * 33 + cnt++] = uint16_t(sy);
      zeros += sy == 0;
      pos += huffman::entry_length(e);
      more = pos < limit && e;  // e == 0 cannot follow a clean first pass; never spin on it
      // The entry's second codeword, as decode_run takes it (one lookup for two symbols).
      if (more && huffman::entry_length2(e) && cnt < 32) {
        const uint32_t sy2 = huffman::entry_symbol2(e);
        rows[lane * 33 + cnt++] = uint16_t(sy2);
        zeros += sy2 == 0;
        pos += huffman::entry_length2(e);
        more = pos < limit;
      }
    }
    __syncwarp();
    // Per row: two shuffles, a shared load (made whatever the row's length: it stays inside the
    // rows), the delta and one predicated store from a lane pointer held across rows. Written with
    // the load under the test and vc + at_r + lane, the compiler branched around each row and
    // rebuilt the 64-bit address: 18 instructions a row, 20% of the kernel (ncu, ratio v27).
    // Expected about 5% of decompression; measured +0.5% (ratio v29): kept, not understood.
    for (uint32_t r = 0; r < 32; ++r) {
      const uint32_t n_r = __shfl_sync(0xffffffffu, cnt, r), at_r = __shfl_sync(0xffffffffu, at, r);
      const uint32_t sy = rows[r * 33 + lane];
      if (lane < n_r) v_lane[at_r] = predict::symbol_delta(sy, radius);
    }
    at += cnt;
    __syncwarp();
  }
  zeros = Reduce(tmp.reduce).Sum(zeros);
  if (threadIdx.x == 0 && zeros) atomicAdd(&dc[c].zeros, zeros);
}

// Outlier deltas into place; checks that they are exactly the outlier positions.
static __global__ void __launch_bounds__(kThreads) outlier_kernel(Grid g, uint32_t radius, const uint8_t* __restrict__ a,
                                                           const DecodeChunk* dc, uint32_t* v, uint32_t* status) {
  const uint64_t c = blockIdx.y;
  const DecodeChunk& d = dc[c];
  if (d.bad || d.raw) return;
  const uint32_t count = g.shape(c).count();
  const uint8_t* chunk = a + d.offset;
  const uint32_t* idx = reinterpret_cast<const uint32_t*>(chunk + d.L.out_idx);
  const uint32_t* del = reinterpret_cast<const uint32_t*>(chunk + d.L.out_delta);
  uint32_t* vc = v + c * g.chunk_values;
  if (blockIdx.x == 0 && threadIdx.x == 0 && d.zeros != d.L.n_out) atomicOr(status, kBadChunk);
  for (uint32_t k = blockIdx.x * kThreads + threadIdx.x; k < d.L.n_out; k += gridDim.x * kThreads) {
    const uint32_t i = idx[k];
    if (i >= count || (k && i <= idx[k - 1]) || vc[i] != predict::symbol_delta(0, radius)) {
      atomicOr(status, kBadChunk);
      continue;
    }
    vc[i] = del[k];
  }
}

// Prefix sums along z and along y: columns of n values, stride apart, one column per (chunk, p) with
// p < lanes (z: lanes = plane, stride = plane, n = cz; y: lanes = cz * cx, n = cy, stride = cx, and
// lane p starts at (p / cx) * plane + p % cx). Columns can be long and few (small planes), so each
// is cut into segments of kSegLen: segment sums, a carry scan per column, then each segment's scan.
constexpr uint32_t kSegLen = 32;
struct Columns {
  uint32_t lanes, n, stride, cx, plane;  // cx, plane: for the start of lane p
  __device__ uint64_t start(uint32_t p) const { return uint64_t(p / cx) * plane + p % cx; }
  __device__ uint32_t segs() const { return (n + kSegLen - 1) / kSegLen; }
};
__device__ __forceinline__ Columns z_columns(const ChunkShape& c) {
  const uint32_t plane = c.cy * c.cx;
  return {plane, c.cz, plane, plane, plane};
}
__device__ __forceinline__ Columns y_columns(const ChunkShape& c) { return {c.cz * c.cx, c.cy, c.cx, c.cx, c.cy * c.cx}; }

// Pass 1 (sums) and pass 3 (scan with carry); blockIdx.y = chunk, x-threads over (segment, lane) with
// lanes fastest, so neighbouring threads touch neighbouring values.
template <bool kAxisZ, bool kScan>
static __global__ void __launch_bounds__(kThreads) column_kernel(Grid g, const DecodeChunk* dc, uint32_t* v,
                                                                 uint32_t* seg, uint64_t seg_per_chunk) {
  const uint64_t c = blockIdx.y;
  if (dc[c].bad || dc[c].raw) return;
  const ChunkShape cs = g.shape(c);
  const Columns col = kAxisZ ? z_columns(cs) : y_columns(cs);
  const uint64_t k = blockIdx.x * (uint64_t)kThreads + threadIdx.x;
  const uint32_t p = uint32_t(k % col.lanes), sg = uint32_t(k / col.lanes);
  if (sg >= col.segs()) return;
  uint32_t* base = v + c * g.chunk_values + col.start(p);
  const uint32_t z0 = sg * kSegLen, z1 = min(col.n, z0 + kSegLen);
  uint32_t* sgc = seg + c * seg_per_chunk + uint64_t(sg) * col.lanes + p;
  uint32_t acc = kScan ? *sgc : 0;  // pass 3: the carry into this segment
  uint32_t b[kSegLen];
#pragma unroll
  for (uint32_t z = 0; z < kSegLen; ++z) b[z] = z0 + z < z1 ? base[uint64_t(z0 + z) * col.stride] : 0;
#pragma unroll
  for (uint32_t z = 0; z < kSegLen; ++z) {
    acc += b[z];
    if (kScan && z0 + z < z1) base[uint64_t(z0 + z) * col.stride] = acc;
  }
  if (!kScan) *sgc = acc;
}

// Column prefix sums in place: n values stride apart from col (shared or global memory), starting from
// acc; returns the last sum. Loads go out kBatch at a time ahead of the dependent adds, the column's
// tail too (predicated), so a column of n values costs ceil(n / kBatch) memory round trips.
template <int kBatch = 8, class Stride>
__device__ __forceinline__ uint32_t scan_column(uint32_t* col, uint32_t n, Stride stride, uint32_t acc) {
  for (uint32_t k = 0; k < n; k += kBatch) {
    uint32_t b[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) b[j] = k + j < n ? col[(k + j) * stride] : 0;
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      acc += b[j];
      if (k + j < n) col[(k + j) * stride] = acc;
    }
  }
  return acc;
}

// One pass, one thread per column (enough when there are many columns). Sixteen loads a thread in
// flight, not eight: 1-2% faster decompression on the fields that take this path (fnoc, ncar,
// vorticity, levitus), though half the occupancy (64 registers).
template <bool kAxisZ>
static __global__ void __launch_bounds__(kThreads) column_single_kernel(Grid g, const DecodeChunk* dc, uint32_t* v) {
  const uint64_t c = blockIdx.y;
  if (dc[c].bad || dc[c].raw) return;
  const ChunkShape cs = g.shape(c);
  const Columns col = kAxisZ ? z_columns(cs) : y_columns(cs);
  const uint32_t p = blockIdx.x * kThreads + threadIdx.x;
  if (p >= col.lanes) return;
  scan_column<16>(v + c * g.chunk_values + col.start(p), col.n, uint64_t(col.stride), 0u);
}

// Pass 2: per column, the exclusive scan of its segment sums (in place).
template <bool kAxisZ>
static __global__ void __launch_bounds__(kThreads) column_carry_kernel(Grid g, const DecodeChunk* dc, uint32_t* seg,
                                                                       uint64_t seg_per_chunk) {
  const uint64_t c = blockIdx.y;
  if (dc[c].bad || dc[c].raw) return;
  const ChunkShape cs = g.shape(c);
  const Columns col = kAxisZ ? z_columns(cs) : y_columns(cs);
  const uint32_t p = blockIdx.x * kThreads + threadIdx.x;
  if (p >= col.lanes) return;
  uint32_t* s = seg + c * seg_per_chunk + p;
  uint32_t acc = 0;
  for (uint32_t k = 0; k < col.segs(); ++k) {
    const uint32_t x = s[uint64_t(k) * col.lanes];
    s[uint64_t(k) * col.lanes] = acc;
    acc += x;
  }
}

// Rows along x: a segmented scan (segments = rows, which start at multiples of cx inside a chunk) in
// three steps: per-tile aggregates, a scan over tiles, then each tile's scan with its carry-in, fused
// with dequantization.
struct Seg {  // (has a row start, sum since the last row start)
  uint32_t head, sum;
};
struct SegOp {
  __device__ Seg operator()(Seg a, Seg b) const { return b.head ? b : Seg{a.head, a.sum + b.sum}; }
};

// A tile's values, loaded coalesced and transposed: thread t gets values i0 .. i0+15.
using TileLoad = cub::BlockLoad<uint32_t, kThreads, kPerThread, cub::BLOCK_LOAD_TRANSPOSE>;
__device__ __forceinline__ void load_tile(const Grid& g, const uint32_t* v, uint64_t t, typename TileLoad::TempStorage& ts,
                                          Seg (&items)[kPerThread], uint64_t& c, uint32_t& i0, uint32_t& count,
                                          uint32_t& valid) {
  c = g.chunk_of_tile(t);
  const ChunkShape cs = g.shape(c);
  count = cs.count();
  const uint32_t tile0 = uint32_t(t - g.first_tile(c)) * kTile;
  i0 = tile0 + threadIdx.x * kPerThread;
  valid = count - tile0 < kTile ? count - tile0 : kTile;
  uint32_t raw[kPerThread];
  TileLoad(ts).Load(v + c * g.chunk_values + tile0, raw, int(valid), 0u);
  uint32_t x = i0 % cs.cx;
  for (int k = 0; k < kPerThread; ++k) {
    items[k] = i0 + k < count ? Seg{x == 0, raw[k]} : Seg{0, 0};
    if (++x == cs.cx) x = 0;
  }
}

static __global__ void __launch_bounds__(kThreads) row_aggregate_kernel(Grid g, const uint32_t* v, Seg* tile_agg) {
  using Scan = cub::BlockScan<Seg, kThreads>;  // a scan's aggregate: order-preserving for a non-commutative op
  __shared__ union { typename Scan::TempStorage scan; typename TileLoad::TempStorage load; } tmp;
  Seg items[kPerThread];
  uint64_t c;
  uint32_t i0, count, valid;
  load_tile(g, v, blockIdx.x, tmp.load, items, c, i0, count, valid);
  __syncthreads();
  Seg acc = items[0];
  for (int k = 1; k < kPerThread; ++k) acc = SegOp()(acc, items[k]);
  Seg excl, agg;
  Scan(tmp.scan).ExclusiveScan(acc, excl, SegOp(), agg);
  if (threadIdx.x == 0) tile_agg[blockIdx.x] = agg;
}

template <class T>
static __global__ void __launch_bounds__(kThreads) row_scan_kernel(Grid g, const DecodeChunk* dc, const uint32_t* v,
                                                                   const Seg* tile_carry, T step, T* __restrict__ out) {
  using Scan = cub::BlockScan<Seg, kThreads>;
  using Store = cub::BlockStore<T, kThreads, kPerThread, cub::BLOCK_STORE_TRANSPOSE>;
  __shared__ union {
    typename Scan::TempStorage scan;
    typename TileLoad::TempStorage load;
    typename Store::TempStorage store;
  } tmp;
  const uint64_t t = blockIdx.x;
  if (dc[g.chunk_of_tile(t)].bad || dc[g.chunk_of_tile(t)].raw) return;
  Seg items[kPerThread];
  uint64_t c;
  uint32_t i0, count, valid;
  load_tile(g, v, t, tmp.load, items, c, i0, count, valid);
  __syncthreads();
  Seg acc = items[0];
  for (int k = 1; k < kPerThread; ++k) acc = SegOp()(acc, items[k]);
  Seg excl;
  Scan(tmp.scan).ExclusiveScan(acc, excl, SegOp());
  const Seg carry = tile_carry[t];
  Seg run = threadIdx.x ? SegOp()(carry, excl) : carry;
  T vals[kPerThread];
  for (int k = 0; k < kPerThread; ++k) {
    run = SegOp()(run, items[k]);
    vals[k] = quant::dequantize<T>(int32_t(run.sum), step);
  }
  __syncthreads();
  Store(tmp.store).Store(out + c * g.chunk_values + (i0 - threadIdx.x * kPerThread), vals, int(valid));
}

// 3-D chunks whose planes fit in shared memory: one block per plane does the prefix sums along y and
// x and the dequantization in one read and one write (after the pass along z), instead of a y pass,
// a row aggregate and a row scan over the whole field.
constexpr uint32_t kPlaneMax = 12288;  // values (48 KiB of shared memory)
template <class T>
static __global__ void __launch_bounds__(kThreads) plane_kernel(Grid g, const DecodeChunk* dc, const uint32_t* v, T step,
                                                                T* __restrict__ out) {
  extern __shared__ uint32_t s_plane[];
  const uint64_t c = blockIdx.y;
  if (dc[c].bad || dc[c].raw) return;
  const ChunkShape cs = g.shape(c);
  const uint32_t z = blockIdx.x;
  if (z >= cs.cz) return;
  const uint32_t cx = cs.cx, cy = cs.cy, plane = cx * cy;
  const uint64_t first = c * g.chunk_values + uint64_t(z) * plane;
  for (uint32_t k = threadIdx.x; k < plane; k += kThreads) s_plane[k] = v[first + k];
  __syncthreads();
  for (uint32_t x = threadIdx.x; x < cx; x += kThreads) scan_column(s_plane + x, cy, cx, 0u);  // along y
  __syncthreads();
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (uint32_t y = warp; y < cy; y += kThreads / 32) {  // along x: a warp per row, 32 values a step
    uint32_t carry = 0;
    for (uint32_t x0 = 0; x0 < cx; x0 += 32) {
      const uint32_t x = x0 + lane;
      uint32_t a = x < cx ? s_plane[y * cx + x] : 0;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const uint32_t b = __shfl_up_sync(0xffffffffu, a, o);
        if (lane >= uint32_t(o)) a += b;
      }
      a += carry;
      if (x < cx) s_plane[y * cx + x] = a;
      carry = __shfl_sync(0xffffffffu, a, 31);
    }
  }
  __syncthreads();
  for (uint32_t k = threadIdx.x; k < plane; k += kThreads) out[first + k] = quant::dequantize<T>(int32_t(s_plane[k]), step);
}

// ---- fused reconstruction (plan and reasoning: recon_plan.hpp) ------------------------------------
// One block per segment of rp.planes planes, in ticket order: the segment's deltas go to shared
// memory (cp.async, no registers held), the sums along z that cross into it are taken from the
// segments before it by a decoupled look-back (as in the fast encoder, but an aggregate is a whole
// plane), then z, y and x prefix sums run in shared memory and x's is fused with dequantization and
// the coalesced store: one read of v and one write of the output, against five passes otherwise.
// flags[0] is the ticket counter, flags[1 + s] segment s's state; all zeroed before the launch.

__device__ __forceinline__ void copy_async16(void* smem, const void* gmem) {
  const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sa), "l"(gmem) : "memory");
}
__device__ __forceinline__ void copy_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

// The fused kernels' copy of m values from v[first] into shared memory (cp.async, no registers held).
// v is 16-byte aligned (the workspace is): the copy starts at the aligned word at or before `first`, so
// value i lands at the returned sv[i] (the padding words around it are never used; the workspace's
// 256-byte carving keeps the last vector in bounds). Every thread of the block calls it.
__device__ __forceinline__ uint32_t* stage_values(uint32_t* s_seg, const uint32_t* __restrict__ v, uint64_t first,
                                                  uint32_t m) {
  const uint32_t head = uint32_t(first & 3);
  const uint32_t vecs = (head + m + 3) / 4;
  for (uint32_t j = threadIdx.x; j < vecs; j += kThreads) copy_async16(s_seg + 4 * j, v + (first - head) + 4 * j);
  copy_async_wait_all();
  __syncthreads();
  return s_seg + head;
}

// The fused kernels' prefix sums in shared memory, after the one along z. Along y: a thread per
// (plane, column) of kz planes of Y rows of X values.
__device__ __forceinline__ void scan_planes_y(uint32_t* sv, uint32_t kz, uint32_t X, uint32_t Y) {
  if (Y <= 1) return;
  for (uint32_t t = threadIdx.x; t < kz * X; t += kThreads) {
    const uint32_t k = t / X;
    scan_column(sv + k * (X * Y) + (t - k * X), Y, X, 0);
  }
  __syncthreads();
}

// Along x over `rows` rows of X values, fused with dequantization and the store to o. Each warp takes
// whole rows, a lane V consecutive values a step: a serial scan in the lane, one segmented warp scan of
// the lanes' sums (heads: the rows' first values), the sums back in place, then read out by consecutive
// lanes for coalesced stores. V is odd, so lanes V words apart read distinct banks. (A value a lane and
// a segmented warp scan per 32 values took 51 instructions a value; fnoc's stripe pass 583 -> 441 us,
// era5's look-back kernel 617 -> 574.)
template <class T>
__device__ __forceinline__ void scan_rows_x_store(uint32_t* sv, uint32_t rows, uint32_t X, T step,
                                                         T* __restrict__ o) {
  constexpr uint32_t V = 9, kW = 32 * V;
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t per_warp = (rows + kThreads / 32 - 1) / (kThreads / 32);
  const uint32_t r0 = min(rows, warp * per_warp), r1 = min(rows, r0 + per_warp);
  const uint32_t end = r1 * X, x_step = kW % X;
  uint32_t x0 = (lane * V) % X, carry = 0;  // x of the lane's first value; the row sum entering the step
  // A step wholly before `end` (all but a warp's last) skips the bounds tests.
  const auto run_step = [&](uint32_t i0, auto whole) {
    constexpr bool kWhole = decltype(whole)::value;
    const uint32_t base = i0 + lane * V;
    uint32_t a[V];
#pragma unroll
    for (uint32_t j = 0; j < V; ++j) a[j] = kWhole || base + j < end ? sv[base + j] : 0;
    // The lane's values, restarting at row heads; first: the lane's first head (V if none).
    uint32_t sum = 0, first = V;
    if (X >= V) {  // at most one head a lane
      const uint32_t h = x0 ? X - x0 : 0;
      first = h < V ? h : V;
#pragma unroll
      for (uint32_t j = 0; j < V; ++j) {
        if (j == first) sum = 0;
        sum += a[j];
        a[j] = sum;
      }
    } else {
      uint32_t x = x0;
#pragma unroll
      for (uint32_t j = 0; j < V; ++j) {
        if (x == 0) {
          sum = 0;
          first = min(first, j);
        }
        sum += a[j];
        a[j] = sum;
        if (++x == X) x = 0;
      }
    }
    // Segmented inclusive warp scan of (a head among the lanes so far, the sum since the last one).
    uint32_t t = sum, head = first < V;
#pragma unroll
    for (uint32_t d = 1; d < 32; d <<= 1) {
      const uint32_t ut = __shfl_up_sync(0xffffffffu, t, d), uh = __shfl_up_sync(0xffffffffu, head, d);
      if (lane >= d && !head) {
        t += ut;
        head = uh;
      }
    }
    const uint32_t e = __shfl_up_sync(0xffffffffu, t, 1), eh = __shfl_up_sync(0xffffffffu, head, 1);
    const uint32_t enter = lane == 0 ? carry : eh ? e : e + carry;  // the row sum before this lane's values
#pragma unroll
    for (uint32_t j = 0; j < V; ++j) {
      if (j < first) a[j] += enter;
      if (kWhole || base + j < end) sv[base + j] = a[j];
    }
    carry = __shfl_sync(0xffffffffu, a[V - 1], 31);
    __syncwarp();
#pragma unroll
    for (uint32_t j = 0; j < V; ++j) {
      const uint32_t i = i0 + 32 * j + lane;
      if (kWhole || i < end) o[i] = quant::dequantize<T>(int32_t(sv[i]), step);
    }
  };
  for (uint32_t i0 = r0 * X; i0 < end; i0 += kW) {
    if (i0 + kW <= end) run_step(i0, std::true_type{});
    else run_step(i0, std::false_type{});
    x0 += x_step;
    if (x0 >= X) x0 -= X;
  }
}

template <class T>
static __global__ void __launch_bounds__(kThreads, 2) recon_kernel(Grid g, ReconPlan rp, const DecodeChunk* dc,
                                                                   const uint32_t* __restrict__ v, uint32_t* flags,
                                                                   uint32_t* agg, uint32_t* incl, T step,
                                                                   T* __restrict__ out) {
  extern __shared__ __align__(16) uint32_t s_seg[];
  __shared__ uint32_t s_ticket, s_flag;
  if (threadIdx.x == 0) s_ticket = atomicAdd(flags, 1u);
  __syncthreads();
  uint64_t c;
  uint32_t sg;
  rp.segment_of_ticket(s_ticket, c, sg);
  const uint64_t s = c * rp.segs_full + sg;
  const gpu::TileStatusWords seg{flags + 1};
  const gpu::FixedBackoff<64> backoff;
  if (dc[c].bad || dc[c].raw) return;  // so do the chunk's other segments: no one waits on this one
  const uint32_t P = rp.plane(), X = rp.nx, Y = rp.ny;
  const uint32_t nz = c + 1 == g.n_chunks ? rp.nz_last : rp.nz_full;
  const uint32_t z0 = sg * rp.planes, kz = min(rp.planes, nz - z0), m = kz * P;
  const uint64_t first = c * g.chunk_values + uint64_t(z0) * P;

  uint32_t* sv = stage_values(s_seg, v, first, m);

  const uint32_t tid = threadIdx.x;
  if (sg > 0) {
    // The aggregate (the segment's sum along z per column) out first, for later segments' look-backs.
    for (uint32_t p = tid; p < P; p += kThreads) {
      uint32_t a = 0;
      for (uint32_t k = 0; k < kz; ++k) a += sv[k * P + p];
      agg[s * P + p] = a;
    }
    __threadfence();
    __syncthreads();
    if (tid == 0) seg.publish(s, gpu::TileStatus::aggregate);
    // Look back: add predecessors' aggregates to the first plane until one has its inclusive sums
    // (segment 0 of the chunk always publishes those, so the walk ends inside the chunk). Warp 0
    // reads up to 32 predecessors' states at once; the run of published ones nearest this segment
    // is summed, up to and including the first inclusive one, all loads in flight together.
    for (uint32_t back = 0; back < sg;) {  // predecessors sg - 1 - back, ... of this chunk
      if (tid < 32) {
        const uint32_t window = min(32u, sg - back);
        uint32_t take = 0, done = 0;
        while (!take) {
          const gpu::TileStatus f = tid < window ? seg.load(s - 1 - back - tid) : gpu::TileStatus::invalid;
          const uint32_t ready = __ballot_sync(0xffffffffu, f != gpu::TileStatus::invalid),
                         inc = __ballot_sync(0xffffffffu, f == gpu::TileStatus::inclusive);
          const uint32_t run = ready == 0xffffffffu ? 32 : __ffs(~ready) - 1;  // published, from the nearest on
          const uint32_t inc_in_run = run == 32 ? inc : inc & ((1u << run) - 1);
          if (inc_in_run) {
            take = __ffs(inc_in_run);
            done = 1;
          } else if (run) {
            take = min(run, window);
          } else {
            backoff();
          }
        }
        if (tid == 0) s_flag = take | done << 8;
      }
      __syncthreads();
      const uint32_t take = s_flag & 0xff, done = s_flag >> 8;
      for (uint32_t p = tid; p < P; p += kThreads) {
        uint32_t a = 0;
        for (uint32_t j0 = 0; j0 < take; j0 += 8) {  // eight loads in flight before the adds
          uint32_t b[8];
#pragma unroll
          for (uint32_t j = j0; j < j0 + 8; ++j) {
            const uint64_t pred = s - 1 - back - j;
            b[j - j0] = j < take ? __ldcg((done && j + 1 == take ? incl : agg) + pred * P + p) : 0;
          }
#pragma unroll
          for (int j = 0; j < 8; ++j) a += b[j];
        }
        sv[p] += a;
      }
      back += take;
      __syncthreads();  // s_flag is rewritten by the next step
      if (done) break;
    }
  }
  // Along z; the last sums of each column are the chunk's inclusive sums at this segment's end.
  for (uint32_t p = tid; p < P; p += kThreads) incl[s * P + p] = scan_column(sv + p, kz, P, 0);
  __threadfence();
  __syncthreads();
  if (tid == 0) seg.publish(s, gpu::TileStatus::inclusive);
  scan_planes_y(sv, kz, X, Y);
  scan_rows_x_store(sv, kz * Y, X, step, out + first);
}

// ---- stripes (plan and reasoning: recon_plan.hpp, StripePlan) -----------------------------------
static_assert(kStripeThreads == uint32_t(kThreads), "the stripe plan's column ownership");

// Pass 1: the sums along z of each stripe but a chunk's last, a column per thread (consecutive
// threads, consecutive columns of one stripe): sums[stripe * P + p].
static __global__ void __launch_bounds__(kThreads) stripe_sum_kernel(Grid g, StripePlan sp, const DecodeChunk* dc,
                                                                     const uint32_t* __restrict__ v, uint32_t* sums) {
  const uint32_t P = sp.plane();
  const uint64_t item = blockIdx.x * uint64_t(kThreads) + threadIdx.x, stripe = item / P;
  if (stripe >= sp.n_stripes) return;
  const uint32_t p = uint32_t(item - stripe * P);
  const uint64_t c = stripe / sp.stripes_full;
  const uint32_t st = uint32_t(stripe - c * sp.stripes_full);
  if (st + 1 >= sp.stripes(c) || dc[c].bad || dc[c].raw) return;  // a stripe that is not the last is full
  const uint32_t* col = v + c * g.chunk_values + uint64_t(st) * sp.planes * P + p;
  uint32_t acc = 0;
  for (uint32_t k = 0; k < sp.planes; k += 16) {  // sixteen loads in flight before the adds
    uint32_t b[16];
#pragma unroll
    for (uint32_t j = 0; j < 16; ++j) b[j] = k + j < sp.planes ? col[uint64_t(k + j) * P] : 0;
#pragma unroll
    for (int j = 0; j < 16; ++j) acc += b[j];
  }
  sums[stripe * P + p] = acc;
}

// Pass 2: per chunk and column, the stripes' sums become the sums entering each stripe (in place).
static __global__ void __launch_bounds__(kThreads) stripe_scan_kernel(StripePlan sp, const DecodeChunk* dc, uint32_t* sums) {
  const uint64_t c = blockIdx.y;
  const uint32_t P = sp.plane(), p = blockIdx.x * kThreads + threadIdx.x;
  if (p >= P || dc[c].bad || dc[c].raw) return;
  const uint32_t n = sp.stripes(c);
  uint32_t* col = sums + c * sp.stripes_full * P + p;
  uint32_t acc = 0;
  // The last stripe's own sum was not computed (nor needed). Thirty-two loads in flight before the
  // adds: a chunk rarely has more stripes, and each batch is a round trip to memory (eight a batch:
  // 75 us on fnoc, for 46 MB read and written).
  for (uint32_t k = 0; k + 1 < n; k += 32) {
    uint32_t b[32];
#pragma unroll
    for (uint32_t j = 0; j < 32; ++j) b[j] = k + j + 1 < n ? col[uint64_t(k + j) * P] : 0;
#pragma unroll
    for (uint32_t j = 0; j < 32; ++j) {
      if (k + j + 1 < n) col[uint64_t(k + j) * P] = acc;
      acc += b[j];
    }
  }
  if (n) col[uint64_t(n - 1) * P] = acc;
}

// Pass 3: one block per stripe, a segment at a time through shared memory; the sums along z enter
// from pass 2 and carry from segment to segment in registers (thread t owns columns t + 256 k). (Two
// stages of half the size, the next segment's copy in flight during this one's scans, measured the
// same: the other block on the SM already hides the copy.)
// One segment through shared memory: kz planes of Y rows of X values (P = X Y) from v[first]: the
// sums along z continue from zc (thread t's columns t + 256 k), then y, then x with the dequantization
// and the store to out[first]. Every thread of the block calls it.
template <class T>
__device__ __forceinline__ void recon_segment(uint32_t* s_seg, const uint32_t* __restrict__ v, uint64_t first, uint32_t kz,
                                              uint32_t X, uint32_t Y, uint32_t (&zc)[kStripeCols], T step,
                                              T* __restrict__ out) {
  const uint32_t P = X * Y, tid = threadIdx.x;
  uint32_t* sv = stage_values(s_seg, v, first, kz * P);
  for (uint32_t z = 0; z < kz; ++z) {  // along z: plane by plane, each thread its columns
    uint32_t* row = sv + z * P + tid;
#pragma unroll
    for (uint32_t k = 0; k < kStripeCols; ++k) {
      if (k * kThreads >= P) break;
      if (tid + k * kThreads < P) {
        const uint32_t x = row[k * kThreads] + zc[k];
        row[k * kThreads] = x;
        zc[k] = x;
      }
    }
  }
  __syncthreads();
  scan_planes_y(sv, kz, X, Y);
  scan_rows_x_store(sv, kz * Y, X, step, out + first);
  __syncthreads();  // the next segment overwrites the stage
}

// Pass 3: one block per stripe, a segment at a time; the sums along z enter from pass 2 and carry
// from segment to segment in registers. (Two stages of half the size, the next segment's copy in
// flight during this one's scans, measured the same: the other block on the SM hides the copy.)
template <class T>
static __global__ void __launch_bounds__(kThreads, 2) stripe_recon_kernel(Grid g, StripePlan sp, const DecodeChunk* dc,
                                                                          const uint32_t* __restrict__ v,
                                                                          const uint32_t* __restrict__ carry_in, T step,
                                                                          T* __restrict__ out) {
  extern __shared__ __align__(16) uint32_t s_seg[];
  const uint64_t c = blockIdx.x / sp.stripes_full;
  const uint32_t st = uint32_t(blockIdx.x - c * sp.stripes_full);
  if (dc[c].bad || dc[c].raw) return;
  const uint32_t P = sp.plane(), z_end = min(sp.nz(c), (st + 1) * sp.planes);
  uint32_t zc[kStripeCols];
#pragma unroll
  for (uint32_t k = 0; k < kStripeCols; ++k) {
    const uint32_t p = threadIdx.x + k * kThreads;
    zc[k] = st && p < P ? carry_in[uint64_t(blockIdx.x) * P + p] : 0;
  }
  for (uint32_t z0 = st * sp.planes; z0 < z_end; z0 += sp.seg_planes)
    recon_segment(s_seg, v, c * g.chunk_values + uint64_t(z0) * P, min(sp.seg_planes, z_end - z0), sp.nx, sp.ny, zc,
                  step, out);
}

// Planes too large for the stripes (levitus: 180 x 360), after the pass along z: one block per plane,
// bands of `band` rows at a time through shared memory, the sums along y carried from band to band in
// registers (a band is a segment of planes of one row), then x with the dequantization: one read and
// one write instead of a pass along y and two over the rows.
template <class T>
static __global__ void __launch_bounds__(kThreads, 2) band_kernel(Grid g, const DecodeChunk* dc, const uint32_t* __restrict__ v,
                                                                  uint32_t band, T step, T* __restrict__ out) {
  extern __shared__ __align__(16) uint32_t s_seg[];
  const uint64_t c = blockIdx.y;
  if (dc[c].bad || dc[c].raw) return;
  const ChunkShape cs = g.shape(c);
  const uint32_t z = blockIdx.x;
  if (z >= cs.cz) return;
  const uint64_t plane0 = c * g.chunk_values + uint64_t(z) * cs.cy * cs.cx;
  uint32_t yc[kStripeCols] = {};
  for (uint32_t y0 = 0; y0 < cs.cy; y0 += band)
    recon_segment(s_seg, v, plane0 + uint64_t(y0) * cs.cx, min(band, cs.cy - y0), cs.cx, 1u, yc, step, out);
}

template <class T>
static __global__ void __launch_bounds__(kThreads) exception_kernel(Grid g, const uint8_t* __restrict__ a, const DecodeChunk* dc,
                                                             T* out, uint32_t* status) {
  const uint64_t c = blockIdx.y;
  const DecodeChunk& d = dc[c];
  if (d.bad) return;
  const uint32_t count = g.shape(c).count();
  const uint8_t* chunk = a + d.offset;
  T* oc = out + c * g.chunk_values;
  if (d.raw) {
    for (uint32_t i = blockIdx.x * kThreads + threadIdx.x; i < count; i += gridDim.x * kThreads)
      oc[i] = load_value_le<T>(chunk + kChunkHeaderBytes + sizeof(T) * i);
    return;
  }
  const uint32_t* idx = reinterpret_cast<const uint32_t*>(chunk + d.L.exc_idx);
  for (uint32_t k = blockIdx.x * kThreads + threadIdx.x; k < d.L.n_exc; k += gridDim.x * kThreads) {
    const uint32_t i = idx[k];
    if (i >= count || (k && i <= idx[k - 1])) {
      atomicOr(status, kBadChunk);
      continue;
    }
    oc[i] = load_value_le<T>(chunk + d.L.exc_val + sizeof(T) * k);
  }
}

}  // namespace hpcz::ratio::cuda
