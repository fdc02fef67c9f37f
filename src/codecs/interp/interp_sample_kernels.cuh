// Interpolation codec kernels: the sampling stages before coding (stage 1's axis orders, stage 2's
// splines, the Lorenzo samples) and the choice of parameters and predictors per chunk. The pipeline is
// described in interp_kernels.cuh. Kernels are static: this header may be included by more than one
// translation unit.
#pragma once
#include "codecs/interp/interp_kernels.cuh"

namespace hpcz::ratio::cuda {

// Stage 1 on a chunk with no mask, as order_estimate_hists: one block per sampled tile, its box copied
// into shared memory, the six axis orders' histograms of its owned points there too (6 nsym counts),
// added into sample sets c * kStage1Sets + k. Block 0 of a chunk adds the one outlier count
// order_estimate_hists starts from.
template <class T>
static __global__ void __launch_bounds__(kThreads) interp_order_sample_kernel(Grid g, uint32_t radius, const T* __restrict__ in,
                                                                              InterpBuffers b) {
  extern __shared__ uint64_t s_dyn_order[];
  const uint32_t nsym = 2 * radius;
  uint32_t* s_order_hist = reinterpret_cast<uint32_t*>(s_dyn_order);
  T* box = reinterpret_cast<T*>(s_order_hist + 6 * nsym);  // 24 nsym bytes: aligned for T
  __shared__ predict::TileBox s_box;
  __shared__ int s_skip;
  __shared__ uint32_t s_amask;
  __shared__ quant::QuantParams<T> s_p;
  const uint64_t c = blockIdx.y;
  if (b.ic[c].masked) return;
  if (threadIdx.x == 0) {
    const predict::InterpGeometry ge = predict::interp_geometry(g.shape(c));
    const uint64_t tiles = ge.tile_count(), t = uint64_t(blockIdx.x) * interp_sample_every(tiles, kInterpOrderSampleTiles);
    s_skip = t >= tiles;
    if (!s_skip) s_box = predict::tile_box(ge, t);
    s_amask = uint32_t(ge.anchor) - 1;
    s_p = *static_cast<const quant::QuantParams<T>*>(b.qp);
  }
  for (uint32_t k = threadIdx.x; k < 6 * nsym; k += kThreads) s_order_hist[k] = 0;
  __syncthreads();
  if (s_skip) return;
  const predict::TileBox& bx = s_box;
  const quant::QuantParams<T>& p = s_p;
  const uint32_t e[3] = {uint32_t(bx.e[0]), uint32_t(bx.e[1]), uint32_t(bx.e[2])};
  const uint32_t e12 = e[1] * e[2], me2 = div_magic(e[2]), me12 = div_magic(e12);
  const uint64_t s0 = bx.stride[0], s1 = bx.stride[1];
  const T* xc = in + c * g.chunk_values + bx.base;
  for (uint32_t l = threadIdx.x; l < e[0] * e12; l += kThreads) {
    const uint32_t z = div_by(l, e12, me12), r = l - z * e12, y = div_by(r, e[2], me2), x = r - y * e[2];
    box[l] = xc[z * s0 + y * s1 + x];
  }
  __syncthreads();
  const uint32_t o2 = uint32_t(bx.own[2]), o12 = uint32_t(bx.own[1]) * o2, cnt = uint32_t(bx.own[0]) * o12;
  const uint32_t mo2 = div_magic(o2), mo12 = div_magic(o12), amask = s_amask;
  uint32_t centre[6] = {0, 0, 0, 0, 0, 0};  // the zero-residual symbol (most points at loose bounds)
  for (uint32_t l = threadIdx.x; l < cnt; l += kThreads) {
    const uint32_t z = div_by(l, o12, mo12), r = l - z * o12, y = div_by(r, o2, mo2), x = r - y * o2;
    const uint32_t cc[3] = {z, y, x};
    uint32_t h, odd;
    if (!point_level(cc, amask, h, odd)) continue;
    const uint32_t li = z * e12 + y * e[2] + x;
    uint32_t sym[3];
    if (!order_estimate_symbols<T>(
            cc, e, h, odd, box[li], p, radius,
            [&](int a, int k) { return box[int32_t(li) + k * int32_t(h * (a == 0 ? e12 : (a == 1 ? e[2] : 1u)))]; }, sym))
      continue;
#pragma unroll
    for (int k = 0; k < 6; ++k) {
      const uint32_t sk = sym[order_last_odd_axis(k, odd)];
      if (sk == radius) ++centre[k];
      else atomicAdd(&s_order_hist[k * nsym + sk], 1u);
    }
  }
#pragma unroll
  for (int k = 0; k < 6; ++k) {
    const uint32_t n = __reduce_add_sync(0xffffffffu, centre[k]);
    if ((threadIdx.x & 31) == 0 && n) atomicAdd(&s_order_hist[k * nsym + radius], n);
  }
  __syncthreads();
  if (blockIdx.x == 0 && threadIdx.x < 6) s_order_hist[threadIdx.x * nsym] += 1;
  __syncthreads();
  uint32_t* hist = b.sample_hist + c * kStage1Sets * nsym;
  for (uint32_t k = threadIdx.x; k < 6 * nsym; k += kThreads)
    if (s_order_hist[k]) atomicAdd(&hist[k], s_order_hist[k]);
}

// Per chunk, after each sampling stage, as choose_interp_params: stage 1, the first order of the
// smallest estimate (orders that predict as an earlier one skipped); stage 2, its cubic, replaced by
// its linear, then natural spline where strictly smaller.
template <int kStage>
static __global__ void __launch_bounds__(kThreads) interp_params_kernel(Grid g, uint32_t nsym, InterpBuffers b) {
  const uint64_t c = blockIdx.x * uint64_t(kThreads) + threadIdx.x;
  if (c >= g.n_chunks) return;
  const predict::InterpGeometry ge = predict::interp_geometry(g.shape(c));
  InterpChunkState& st = b.ic[c];
  uint32_t best = st.params;
  unsigned long long best_bytes = ~0ull;
  const uint8_t order = uint8_t(predict::InterpParams{uint8_t(best)}.axis_order_index());
  for (uint32_t k = 0; k < (kStage == 1 ? kStage1Sets : kStage2Sets); ++k) {
    const uint8_t pb = kStage == 1 ? interp_stage_params(0, uint8_t(k)) : interp_stage_params(int(k), order);
    if (kStage == 1 && same_as_earlier_params(ge, pb)) continue;
    const uint64_t j = kStage == 1 ? c * kStage1Sets + k : g.n_chunks * kStage1Sets + c * kStage2Sets + k;
    const unsigned long long bytes = b.sample_info[j].total_bits / 8 + 8ull * b.sample_hist[j * nsym];
    if (bytes < best_bytes) best_bytes = bytes, best = pb;
  }
  st.params = best;
  st.best_bytes = best_bytes;
}

// One block per sampled tile (interp_tile_kernel's), as lorenzo_sampled_bytes: the Lorenzo codec's
// symbols of the tile's owned points counted at sample set [8 n_chunks + c], their exceptions in
// lorenzo_exc. The owned box and one point before it along each axis of extent > 1 are prequantized
// into shared memory once (q 0 outside the chunk or for an exception, as encode_chunk).
constexpr uint32_t kLorenzoBoxMax = 18 * 18 * 18;  // a last tile owns up to 17 a side; 67^2 and 4099 are smaller
static_assert(67 * 67 <= kLorenzoBoxMax && 4099 <= kLorenzoBoxMax, "every Lorenzo sample box fits");
template <class T>
static __global__ void __launch_bounds__(kThreads) interp_lorenzo_sample_kernel(Grid g, uint32_t radius, const T* __restrict__ in,
                                                                                InterpBuffers b) {
  extern __shared__ uint64_t s_dyn_interp[];
  uint32_t* s_q = reinterpret_cast<uint32_t*>(s_dyn_interp);
  uint32_t* s_hist = s_q + kLorenzoBoxMax;
  __shared__ quant::QuantParams<T> s_p;
  __shared__ uint32_t s_o[3], s_e[3], s_h[3];  // the box's first owned point in the chunk; its extents; its halo
  __shared__ int s_skip;
  const uint64_t c = blockIdx.y;
  const uint32_t nsym = 2 * radius;
  const ChunkShape cs = g.shape(c);
  if (threadIdx.x == 0) {
    const predict::InterpGeometry ge = predict::interp_geometry(cs);
    const uint64_t tiles = ge.tile_count(), t = uint64_t(blockIdx.x) * interp_sample_every(tiles, kInterpSampleTiles);
    s_skip = t >= tiles;
    if (!s_skip) {
      const predict::TileBox box = predict::tile_box(ge, t);
      const uint64_t tc[3] = {t / (ge.tiles[1] * ge.tiles[2]), (t / ge.tiles[2]) % ge.tiles[1], t % ge.tiles[2]};
      for (int j = 0; j < 3; ++j) {
        s_h[j] = ge.ext[j] > 1;
        s_o[j] = uint32_t(tc[j] * ge.anchor);
        s_e[j] = uint32_t(box.own[j]) + s_h[j];
      }
    }
    s_p = *static_cast<const quant::QuantParams<T>*>(b.qp);
  }
  __syncthreads();
  if (s_skip) return;
  for (uint32_t k = threadIdx.x; k < nsym; k += kThreads) s_hist[k] = 0;
  const quant::QuantParams<T>& p = s_p;
  const T* xc = in + c * g.chunk_values;
  const uint64_t S0 = uint64_t(cs.cy) * cs.cx, S1 = cs.cx;
  const uint32_t e1 = s_e[1], e2 = s_e[2], e12 = e1 * e2, cnt = s_e[0] * e12;
  const uint32_t h0 = s_h[0], h1 = s_h[1], h2 = s_h[2];
  uint32_t exc = 0;
  for (uint32_t l = threadIdx.x; l < cnt; l += kThreads) {
    const uint32_t z = l / e12, y = (l / e2) % e1, x = l % e2;
    // Chunk coordinates: the first owned point's, minus the halo.
    const int64_t gz = int64_t(s_o[0]) + z - h0, gy = int64_t(s_o[1]) + y - h1, gx = int64_t(s_o[2]) + x - h2;
    uint32_t q = 0;
    if (gz >= 0 && gy >= 0 && gx >= 0) {
      int32_t v;
      if (quant::quantize(xc[uint64_t(gz) * S0 + uint64_t(gy) * S1 + uint64_t(gx)], p, v)) q = uint32_t(v);
      else exc += z >= h0 && y >= h1 && x >= h2;  // an owned point
    }
    s_q[l] = q;
  }
  __syncthreads();
  const uint32_t o1 = e1 - h1, o2 = e2 - h2, owned = (s_e[0] - h0) * o1 * o2;
  uint32_t centre = 0;
  for (uint32_t r = threadIdx.x; r < owned; r += kThreads) {
    const uint32_t z = r / (o1 * o2), y = (r / o2) % o1, x = r % o2;
    const uint32_t l = ((z + h0) * e1 + y + h1) * e2 + x + h2;
    const uint32_t sym = lorenzo_point_symbol(s_o[0] + z, s_o[1] + y, s_o[2] + x, radius,
                                              [&](int dz, int dy, int dx) { return s_q[l - dz * e12 - dy * e2 - dx]; });
    if (sym == radius) ++centre;
    else count_symbol(s_hist, sym);
  }
  centre = __reduce_add_sync(0xffffffffu, centre);
  exc = __reduce_add_sync(0xffffffffu, exc);
  if ((threadIdx.x & 31) == 0) {
    if (centre) atomicAdd(&s_hist[radius], centre);
    if (exc) atomicAdd(&b.ic[c].lorenzo_exc, exc);
  }
  __syncthreads();
  uint32_t* hist = b.sample_hist + (g.n_chunks * kParamSets + c) * nsym;
  for (uint32_t k = threadIdx.x; k < nsym; k += kThreads)
    if (s_hist[k]) atomicAdd(&hist[k], s_hist[k]);
}

// Per chunk, after the Lorenzo samples' books: which predictors run (predictors_to_run, as
// encode_best_chunk). A predictor left out gets one count in its histogram (its book well-formed;
// never chosen) and the Lorenzo stages are told to skip the chunk.
static __global__ void __launch_bounds__(kThreads) interp_predictors_kernel(Grid g, uint32_t nsym, InterpBuffers b,
                                                                            uint32_t* lorenzo_hist) {
  const uint64_t c = blockIdx.x * uint64_t(kThreads) + threadIdx.x;
  if (c >= g.n_chunks) return;
  InterpChunkState& st = b.ic[c];
  const uint64_t j = g.n_chunks * kParamSets + c;
  const unsigned long long lorenzo = b.sample_info[j].total_bits / 8 + 8ull * (b.sample_hist[j * nsym] + st.lorenzo_exc);
  st.run = predictors_to_run(lorenzo, st.best_bytes);
  const bool lorenzo_off = !(st.run & kRunLorenzo);
  b.lorenzo_skip[c] = lorenzo_off;
  if (lorenzo_off) lorenzo_hist[c * nsym] = 1;
}

}  // namespace hpcz::ratio::cuda
