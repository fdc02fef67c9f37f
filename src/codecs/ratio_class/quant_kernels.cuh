// Ratio-mode CUDA kernels. Quantization and prediction: prequant + lorenzo (two passes), or dual_quant (one pass, for chunks
// whose prediction history fits in shared memory). Out: symbols, per-chunk histograms, per-tile
// outlier and exception counts.
// Kernels are static: this header is included by more than one translation unit.
#pragma once
#include "codecs/ratio_class/kernels_common.cuh"

namespace hpcz::ratio::cuda {

// The predictor works on q, the prequantized values (0 where a value is stored exactly). The kernels
// split it: prequant_kernel writes dq = (1 - Sx) q (the difference along rows, taken while q is in
// registers), and lorenzo_kernel applies (1 - Sy)(1 - Sz) to dq: four loads per value instead of eight.
// Integer arithmetic mod 2^32, so the result is exactly predict::lorenzo_delta's.
// The kernels' bodies are device functions, so that a batch's kernels (batch_kernels.cuh) run the same
// code with an array's parameters read from its table.
template <class T>
__device__ __forceinline__ void prequant_values(const T* __restrict__ in, unsigned long long n, Grid g, quant::Bound asked,
                                                const gpu::CompressState* st, uint32_t* __restrict__ dq,
                                                uint32_t* tile_exc) {
  const quant::QuantParams<T> p = gpu::settled_params<T>(asked, st);
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
    if constexpr (std::is_same_v<T, float>) {
      const float4 f = __ldg(reinterpret_cast<const float4*>(in) + k);
      v[0] = f.x; v[1] = f.y; v[2] = f.z; v[3] = f.w;
    } else {
      static_assert(std::is_same_v<T, double>, "four values' loads for this type");
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
template <class T>
static __global__ void __launch_bounds__(kThreads) prequant_kernel(const T* __restrict__ in, unsigned long long n, Grid g,
                                                                   quant::Bound asked,
                                                                   const gpu::CompressState* st,
                                                                   uint32_t* __restrict__ dq, uint32_t* tile_exc) {
  prequant_values<T>(in, n, g, asked, st, dq, tile_exc);
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
__device__ __forceinline__ void lorenzo_tile(Grid g, uint32_t radius, const uint32_t* __restrict__ q,
                                             uint16_t* __restrict__ sym, uint32_t* hist, uint32_t* tile_out,
                                             const uint32_t* skip) {
  extern __shared__ uint32_t s_hist[];
  using Reduce = cub::BlockReduce<uint32_t, kThreads>;
  __shared__ typename Reduce::TempStorage red;
  const uint32_t nsym = 2 * radius;
  const uint64_t t = blockIdx.x, c = g.chunk_of_tile(t);
  if (skip && skip[c]) return;  // the interpolation codec's chunk
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
static __global__ void __launch_bounds__(kThreads) lorenzo_kernel(Grid g, uint32_t radius, const uint32_t* __restrict__ q,
                                                                  uint16_t* __restrict__ sym, uint32_t* hist,
                                                                  uint32_t* tile_out, const uint32_t* skip = nullptr) {
  lorenzo_tile(g, radius, q, sym, hist, tile_out, skip);
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
__device__ __forceinline__ void dual_quant_range(const T* __restrict__ in, Grid g, DualPlan dp, uint32_t radius,
                                                 quant::Bound asked, const gpu::CompressState* st,
                                                 uint32_t* __restrict__ dq, uint16_t* __restrict__ sym, uint32_t* hist,
                                                 uint32_t* tile_out, uint32_t* tile_exc, const uint32_t* skip) {
  extern __shared__ uint32_t s_dual[];
  uint32_t* ring = s_dual;               // dp.ring row differences (1 - Sx) q
  uint32_t* s_hist = s_dual + dp.ring;   // 2 radius counts
  const uint32_t nsym = 2 * radius, mask = dp.ring - 1;
  const uint64_t c = blockIdx.y;
  const ChunkShape cs = g.shape(c);
  const uint32_t count = cs.count(), v0 = blockIdx.x * dp.range;
  if (v0 >= count || (skip && skip[c])) return;  // the last chunk has fewer values; skip: not Lorenzo's
  const uint32_t v1 = min(count, v0 + dp.range);
  for (uint32_t k = threadIdx.x; k < nsym; k += kThreads) s_hist[k] = 0;
  const quant::QuantParams<T> p = gpu::settled_params<T>(asked, st);
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
template <class T>
static __global__ void __launch_bounds__(kThreads) dual_quant_kernel(const T* __restrict__ in, Grid g, DualPlan dp,
                                                                     uint32_t radius, quant::Bound asked,
                                                                     const gpu::CompressState* st,
                                                                     uint32_t* __restrict__ dq, uint16_t* __restrict__ sym,
                                                                     uint32_t* hist, uint32_t* tile_out, uint32_t* tile_exc,
                                                                     const uint32_t* skip = nullptr) {
  dual_quant_range<T>(in, g, dp, radius, asked, st, dq, sym, hist, tile_out, tile_exc, skip);
}

}  // namespace hpcz::ratio::cuda
