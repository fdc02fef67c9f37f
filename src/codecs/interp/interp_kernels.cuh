// Interpolation codec kernels (codec 3). The CPU reference is interp_chunk.hpp; the traversal (passes,
// anchors, stream positions) is predict/interp.hpp's and the per-point rules interp_layout.hpp's, so
// both write the same bytes.
//
// Compression: the range pass also finds each chunk's first NaN (FirstNaNPerChunk), then:
//   anchors (a block per chunk) -> the sampled tiles under every parameter set (a block per tile, its
//   box in shared memory; histograms) -> books -> params (the smallest estimate) -> Lorenzo on the
//   same sampled points -> book -> predictors (which to run per chunk: predictors_to_run) -> the ratio
//   codec's Lorenzo stages up to its layout, on the chunks that run it -> tiles, on the chunks that run
//   interpolation (symbols at their stream positions; classes and outlier deltas in memory order;
//   histogram; per-tile outlier and exception counts) -> scans -> book -> layout -> choose (the
//   smaller chunk where both ran, the final offsets) -> each predictor's writers for the chunks it won
//   (encode_kernel is shared, one launch for both predictors' chunks; interp_emit here, also for the
//   Lorenzo chunks; interp_head) -> checksums, table.
// Decompression, after the ratio codec's parse (kind 2 chunks) and Huffman decode (into stream order):
//   scatter (memory order, classes) -> outliers -> exception classes -> anchors -> tiles; the ratio
//   codec's exception pass writes the exceptions and raw chunks last.
// Kernels are static: this header is included by more than one translation unit.
#pragma once
#include "codecs/interp/interp_layout.hpp"
#include "codecs/ratio_class/kernels_common.cuh"
#include "codecs/interp/policy.hpp"

namespace hpcz::ratio::cuda {

constexpr uint32_t kBoxMax = 17 * 17 * 17;  // the largest tile box: 17^3 (3-D); 65^2 and 4097 are smaller
static_assert(65 * 65 <= kBoxMax && 4097 <= kBoxMax, "every tile box fits");
constexpr uint32_t kAnchorsShared = 8192;   // a chunk's anchors worked in shared memory (more: in global)
// The sampled parameter sets (choose_interp_params): stage 1, the 6 axis orders under the cubic
// spline; stage 2, the chosen order's cubic, linear and natural splines (interp_stage_params' k). Their
// histograms and books: stage 1's at [c * 6 + order], stage 2's after them at [6 n_chunks + c * 3 + k],
// then Lorenzo's on stage 2's points (lorenzo_sampled_bytes) at [9 n_chunks + c].
constexpr uint32_t kStage1Sets = 6, kStage2Sets = 3, kParamSets = kStage1Sets + kStage2Sets;
constexpr uint32_t kSampleSets = kParamSets + 1;

// A point's class in the encoder's memory-order array (an outlier is coded, its delta kept apart).
enum : uint8_t { kClsCoded = 0, kClsOutlier = 1, kClsMask = 2, kClsException = 3 };

struct PlanSet;  // a tile kind's passes (below)

struct InterpChunkState {
  unsigned long long mask_bits;  // the mask value's bits (0 if none)
  uint32_t masked;
  uint32_t first_nan;            // the chunk's first NaN (~0u: none)
  uint32_t params;               // the chosen InterpParams (after stage 1: its best)
  uint32_t run;                  // predictors_to_run's kRun* bits
  unsigned long long best_bytes; // the chosen set's estimate
  uint32_t lorenzo_exc;          // exceptions among Lorenzo's sampled points
  uint32_t pad;
};

struct InterpBuffers {
  InterpChunkState* ic;           // n_chunks
  int32_t* aq;                    // n_chunks * anchor_cap: anchors' q where they do not fit shared memory
  void* axr;                      // n_chunks * anchor_cap values T: anchors' reconstructions
  uint64_t anchor_cap;
  uint16_t* sym;                  // n: symbols, stream order within each chunk
  uint8_t* cls;                   // n: classes, memory order (zeroed, then the anchors' and the tiles' outliers
                                  // and exceptions: kCls*)
  uint32_t* delta;                // n: outliers' deltas, memory order
  uint32_t* hist;                 // n_chunks * nsym
  uint32_t* sample_hist;          // n_chunks * kSampleSets * nsym (stage 1's, stage 2's, Lorenzo's)
  uint8_t* sample_len;            // n_chunks * kSampleSets books
  uint32_t* sample_code;
  ChunkInfo* sample_info;
  uint32_t* tile_out;             // n_tiles + 1 (counts, then exclusive prefixes)
  uint32_t* tile_exc;
  unsigned long long* tile_desc;  // n_tiles (encode_kernel's look-back)
  uint8_t* len;                   // n_chunks * nsym
  uint32_t* code;
  ChunkInfo* info;                // n_chunks: the interpolation chunks
  ChunkInfo* fin;                 // n_chunks: the chunks chosen
  PlanSet* plans;                 // kPlanSets
  uint32_t* lorenzo_skip;         // n_chunks: 1 where the Lorenzo stages leave the chunk out
  void* qp;                       // the encoder's quant::QuantParams<T>, once the range is settled (anchor kernel)
};

// Anchors and tiles, per chunk: how many of each (the last chunk may differ).
struct InterpGridSizes {
  uint64_t anchor_cap, max_tiles, max_order_samples, max_samples;  // sampled tiles: stage 1's, stage 2's
};
inline InterpGridSizes interp_grid_sizes(const Grid& g) {
  InterpGridSizes s{0, 0, 0, 0};
  if (!g.n_chunks) return s;
  for (const ChunkShape& cs : {g.full, g.last}) {
    const predict::InterpGeometry ge = predict::interp_geometry(cs);
    s.anchor_cap = std::max<uint64_t>(s.anchor_cap, predict::anchor_total(ge));
    s.max_tiles = std::max<uint64_t>(s.max_tiles, ge.tile_count());
    s.max_order_samples = std::max(s.max_order_samples, interp_sample_count(ge.tile_count(), kInterpOrderSampleTiles));
    s.max_samples = std::max(s.max_samples, interp_sample_count(ge.tile_count(), kInterpSampleTiles));
  }
  return s;
}

static __global__ void __launch_bounds__(kThreads) interp_init_kernel(InterpBuffers b, uint64_t n_chunks, uint32_t nsym,
                                                                      uint64_t nt) {
  const uint64_t i0 = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x, stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = i0; i < n_chunks; i += stride) b.ic[i] = InterpChunkState{0, 0, ~0u, 1, 0, ~0ull, 0, 0};
  for (uint64_t i = i0; i < n_chunks * nsym; i += stride) b.hist[i] = 0;
  for (uint64_t i = i0; i < n_chunks * kSampleSets * nsym; i += stride) b.sample_hist[i] = 0;
  for (uint64_t i = i0; i <= nt; i += stride) {
    b.tile_out[i] = 0;
    b.tile_exc[i] = 0;
    if (i < nt) b.tile_desc[i] = 0;
  }
}

// The range pass's NaN hook (gpu::range_kernel): each chunk's first NaN.
struct FirstNaNPerChunk {
  InterpChunkState* ic;
  unsigned long long chunk_values;
  __device__ void operator()(unsigned long long i) const {
    atomicMin(&ic[i / chunk_values].first_nan, uint32_t(i % chunk_values));
  }
};

// The chunk's mask (interp_chunk.hpp's chunk_mask: the fill value, else its first NaN).
template <class T>
__device__ __forceinline__ void chunk_mask_of(const quant::QuantParams<T>& p, const T* xc, const InterpChunkState& s,
                                              bool& masked, typename Bits<T>::type& bits) {
  masked = p.has_fill || s.first_nan != ~0u;
  bits = p.has_fill ? to_bits(p.fill) : (masked ? to_bits(xc[s.first_nan]) : typename Bits<T>::type(0));
}

// Anchor k's Lorenzo prediction from q (anchor numbers), its grid coordinates known.
__device__ __forceinline__ int64_t anchor_pred_at(const int32_t* q, uint64_t k, uint64_t z, uint64_t y, uint64_t x,
                                                 uint64_t sy, uint64_t sz) {
  const bool hz = z > 0, hy = y > 0, hx = x > 0;
  int64_t p = 0;
  if (hx) p += q[k - 1];
  if (hy) p += q[k - sy];
  if (hz) p += q[k - sz];
  if (hx && hy) p -= q[k - sy - 1];
  if (hx && hz) p -= q[k - sz - 1];
  if (hy && hz) p -= q[k - sz - sy];
  if (hx && hy && hz) p += q[k - sz - sy - 1];
  return p;
}

// A chunk's anchors, sequentially in raster order (one thread): q[k] = settle(k, prediction) for every
// anchor. The stand-ins of masked points and exceptions make the anchors depend on each other.
template <class Settle>
__device__ void anchors_in_order(const predict::InterpGeometry& ge, int32_t* q, Settle&& settle) {
  const uint64_t nz = predict::anchors_along(ge, 0), ny = predict::anchors_along(ge, 1), nx = predict::anchors_along(ge, 2);
  uint64_t k = 0;
  for (uint64_t z = 0; z < nz; ++z)
    for (uint64_t y = 0; y < ny; ++y)
      for (uint64_t x = 0; x < nx; ++x, ++k) q[k] = settle(k, anchor_pred_at(q, k, z, y, x, nx, ny * nx));
}

// One block per chunk: the anchors' classes, q (stand-ins: the clamped prediction), symbols at stream
// positions 0 .. na - 1, reconstructions (axr) and histogram; the mask settled for the tiles.
template <class T>
static __global__ void __launch_bounds__(kThreads) interp_anchor_kernel(Grid g, uint32_t radius, quant::Bound asked,
                                                                        const gpu::CompressState* st, const T* __restrict__ in,
                                                                        InterpBuffers b) {
  __shared__ int32_t s_q[kAnchorsShared];
  __shared__ int s_stand;
  const uint64_t c = blockIdx.x;
  const quant::QuantParams<T> p = gpu::settled_params<T>(asked, st);
  const predict::InterpGeometry ge = predict::interp_geometry(g.shape(c));
  const uint64_t na = predict::anchor_total(ge), base = c * g.chunk_values;
  int32_t* q = na <= kAnchorsShared ? s_q : b.aq + c * b.anchor_cap;
  const T* xc = in + base;
  uint8_t* cls = b.cls + base;
  bool masked;
  typename Bits<T>::type mbits;
  chunk_mask_of(p, xc, b.ic[c], masked, mbits);
  if (c == 0 && threadIdx.x == 0) *static_cast<quant::QuantParams<T>*>(b.qp) = p;  // for the later kernels' setup
  if (threadIdx.x == 0) {
    b.ic[c].masked = masked;
    b.ic[c].mask_bits = (unsigned long long)mbits;
    s_stand = 0;
  }
  __syncthreads();
  constexpr int32_t kStandIn = INT32_MIN;  // no quantized value: |q| < kQLimit
  bool stand = false;
  for (uint64_t k = threadIdx.x; k < na; k += kThreads) {
    const uint64_t i = predict::anchor_index(ge, k);
    const T x = xc[i];
    int32_t v = kStandIn;
    uint8_t cl = kClsCoded;
    if (masked && to_bits(x) == mbits) cl = kClsMask;
    else if (!quant::quantize(x, p, v)) cl = kClsException, v = kStandIn;
    stand |= cl != kClsCoded;
    q[k] = v;
    cls[i] = cl;
  }
  if (stand) s_stand = 1;
  __syncthreads();
  if (s_stand) {
    if (threadIdx.x == 0)
      anchors_in_order(ge, q, [&](uint64_t k, int64_t pred) { return q[k] == kStandIn ? clamp_q(pred) : q[k]; });
    __syncthreads();
  }
  const uint64_t ny = predict::anchors_along(ge, 1), nx = predict::anchors_along(ge, 2);
  T* axr = static_cast<T*>(b.axr) + c * b.anchor_cap;
  const uint32_t nsym = 2 * radius;
  for (uint64_t k = threadIdx.x; k < na; k += kThreads) {
    const uint64_t i = predict::anchor_index(ge, k);
    const int64_t pred = anchor_pred_at(q, k, k / (ny * nx), (k / nx) % ny, k % nx, nx, ny * nx);
    const uint8_t cl = cls[i];
    uint32_t sym = cl == kClsMask ? interp_mask_symbol(radius) : 0u;
    if (cl == kClsCoded) {
      const uint32_t d = uint32_t(q[k]) - uint32_t(uint64_t(pred));
      sym = interp_symbol(d, radius);
      if (!sym) {
        cls[i] = kClsOutlier;
        b.delta[base + i] = d;
        atomicAdd(&b.tile_out[g.first_tile(c) + i / kTile], 1u);
      }
    } else if (cl == kClsException) {
      atomicAdd(&b.tile_exc[g.first_tile(c) + i / kTile], 1u);
    }
    b.sym[base + k] = uint16_t(sym);
    atomicAdd(&b.hist[c * nsym + sym], 1u);
    axr[k] = quant::dequantize<T>(q[k], p.step);
  }
}

// A pass of a tile (predict::InterpPass) laid out for the kernels' loop: grid point r = (mz, my, mx)
// from two divisions by multiplication, its local index, coordinate along the pass's axis, rank among
// the tile's owned points and offset from the box's first point, each linear in (mz, my, mx). Built once
// per call for every kind of tile (interp_plan_kernel; the generic InterpPass, with its indexed arrays,
// cost local memory and most of the instructions).
struct PassPlan {
  uint32_t cnt, n12, m12, n2, m2;  // points; the grid's divisors and their magic multipliers
  uint32_t own0, own1, own2, rank0;
  uint32_t li0, dz, dy, dx;        // local index: li0 + mz dz + my dy + mx dx
  uint32_t at0, dat, axis;         // coordinate along the axis: at0 + m_axis dat
  uint32_t h, ext;
  int32_t sa;                      // local offset of the neighbour h away along the axis
  uint32_t gz, gy, gx;             // chunk offset: box base + g0 + mz gz + my gy + mx gx
  unsigned long long g0;
};
constexpr int kMaxPasses = 12;  // levels x axes of extent > 1: 4 x 3, 6 x 2 or 12 x 1
// Threads of a tile block (the encoder's, the decoder's and the sampling's: InterpPolicy) and the blocks
// an SM is to hold, about 1,280 threads (registers: 64 Ki / 1,152 = 56 a thread at 192 threads).
template <class T>
constexpr uint32_t kTileThreads = InterpPolicy<T>::interp_tile_threads;
template <class T>
constexpr int kTileBlocksPerSM = int(5 * 256 / kTileThreads<T>);

// ceil(2^32 / d) for d >= 2 (0 for d = 1): q = __umulhi(r, m) is r / d exactly for r, d < 2^16.
HPCZ_HD uint32_t div_magic(uint32_t d) { return d < 2 ? 0u : 0xffffffffu / d + 1; }
__device__ __forceinline__ uint32_t div_by(uint32_t r, uint32_t d, uint32_t m) { return d < 2 ? r : __umulhi(r, m); }

// The plans of a box's passes in order (thread 0); their count.
__device__ int plan_passes(const predict::TileBox& box, int level, predict::InterpParams ip, PassPlan* plans) {
  int order[3];
  ip.axis_order(order);
  const uint32_t e1 = uint32_t(box.e[1]), e2 = uint32_t(box.e[2]);
  uint32_t rank = 0;
  int np = 0;
  for (int l = level; l >= 1; --l)
    for (int k = 0; k < 3; ++k) {
      predict::InterpPass ps;
      if (!predict::interp_pass(box, l, k, order, ps)) continue;
      PassPlan& pp = plans[np++];
      pp.cnt = ps.count();
      pp.n12 = ps.n[1] * ps.n[2], pp.m12 = div_magic(pp.n12);
      pp.n2 = ps.n[2], pp.m2 = div_magic(pp.n2);
      pp.own0 = ps.own[0], pp.own1 = ps.own[1], pp.own2 = ps.own[2], pp.rank0 = rank;
      pp.li0 = (ps.from[0] * e1 + ps.from[1]) * e2 + ps.from[2];
      pp.dz = ps.step[0] * e1 * e2, pp.dy = ps.step[1] * e2, pp.dx = ps.step[2];
      pp.axis = uint32_t(ps.a);
      pp.at0 = ps.from[ps.a], pp.dat = ps.step[ps.a];
      pp.h = ps.h, pp.ext = uint32_t(box.e[ps.a]);
      pp.sa = int32_t((ps.a == 0 ? e1 * e2 : (ps.a == 1 ? e2 : 1u)) * ps.h);
      pp.gz = uint32_t(ps.step[0] * box.stride[0]), pp.gy = uint32_t(ps.step[1] * box.stride[1]), pp.gx = ps.step[2];
      pp.g0 = box.base + ps.from[0] * box.stride[0] + ps.from[1] * box.stride[1] + ps.from[2];
      rank += ps.owned();
    }
  return np;
}

// Every point of a tile's box but its anchors, pass by pass as interp_box_points, with a barrier after
// each pass (whose points read only earlier passes): visit(li, pred, owned, rank, pp, mz, my, mx),
// pred the point's prediction from xr (the box in its local layout), rank its place among the tile's
// owned points (the stream order: earlier passes, then the owned grid).
// visit(li, pred, owned, rank, offset): offset() the point's offset from the box's first point in the
// chunk. The plan fields every point needs are copied to registers; offset's come from registers where
// every owned point needs it (kOffsetHot: the decoder), else from the plan in shared memory (the
// encoder, for outliers and exceptions only), which kept its kernels from spilling.
template <class T, predict::Spline kSpline, bool kOffsetHot, class Visit>
__device__ __forceinline__ void box_passes_with(const PassPlan* plans, int np, const T* xr, Visit&& visit) {
  for (int k = 0; k < np; ++k) {
    const PassPlan& pp = plans[k];
    const uint32_t cnt = pp.cnt, n12 = pp.n12, m12 = pp.m12, n2 = pp.n2, m2 = pp.m2;
    const uint32_t li0 = pp.li0, dz = pp.dz, dy = pp.dy, dx = pp.dx, at0 = pp.at0, dat = pp.dat, axis = pp.axis;
    const uint32_t h = pp.h, ext = pp.ext, own0 = pp.own0, own1 = pp.own1, own2 = pp.own2, rank0 = pp.rank0;
    const int32_t sa = pp.sa;
    const uint64_t g0 = kOffsetHot ? pp.g0 : 0;
    const uint32_t gz = kOffsetHot ? pp.gz : 0, gy = kOffsetHot ? pp.gy : 0, gx = kOffsetHot ? pp.gx : 0;
    for (uint32_t r = threadIdx.x; r < cnt; r += kTileThreads<T>) {
      const uint32_t mz = div_by(r, n12, m12), rem = r - mz * n12, my = div_by(rem, n2, m2), mx = rem - my * n2;
      const uint32_t li = li0 + mz * dz + my * dy + mx * dx;
      const uint32_t at = at0 + (axis == 0 ? mz : (axis == 1 ? my : mx)) * dat;
      const T pred = predict::interp_along<T>(at, h, ext, kSpline, [&](int j) -> T { return xr[int32_t(li) + j * sa]; });
      const bool owned = mz < own0 && my < own1 && mx < own2;
      auto offset = [&]() -> uint64_t {
        if (kOffsetHot) return g0 + uint64_t(mz) * gz + uint64_t(my) * gy + mx * gx;
        return pp.g0 + uint64_t(mz) * pp.gz + uint64_t(my) * pp.gy + mx * pp.gx;
      };
      visit(li, pred, owned, rank0 + (mz * own1 + my) * own2 + mx, offset);
    }
    __syncthreads();
  }
}

// The same with the spline a constant in each copy of the loop (no per-point branch on it).
template <class T, bool kOffsetHot, class Visit>
__device__ __forceinline__ void box_passes(const PassPlan* plans, int np, const T* xr, predict::Spline spline,
                                           Visit&& visit) {
  if (spline == predict::Spline::linear) box_passes_with<T, predict::Spline::linear, kOffsetHot>(plans, np, xr, visit);
  else if (spline == predict::Spline::cubic) box_passes_with<T, predict::Spline::cubic, kOffsetHot>(plans, np, xr, visit);
  else box_passes_with<T, predict::Spline::natural, kOffsetHot>(plans, np, xr, visit);
}

// The passes of every kind of tile, built once per call (interp_plan_kernel): a tile's passes depend
// on its chunk's geometry (a full chunk's or the last one's), the parameters and whether it is the
// last tile along each axis (its box is shorter there and owns its far face), not on where it lies
// (plan offsets are from the box's first point).
struct PlanSet {
  int np;
  int pad[3];
  PassPlan plans[kMaxPasses];
};
constexpr uint32_t kPlanSets = 2 * predict::kInterpParamsCount * 8;
__device__ __forceinline__ uint32_t plan_set_index(bool last_chunk, uint32_t params, uint32_t lastness) {
  return (uint32_t(last_chunk) * predict::kInterpParamsCount + params) * 8 + lastness;
}

static __global__ void __launch_bounds__(64) interp_plan_kernel(Grid g, PlanSet* sets) {
  const uint32_t k = blockIdx.x * 64 + threadIdx.x;
  if (k >= kPlanSets || !g.n_chunks) return;
  const uint32_t lastness = k % 8, params = (k / 8) % predict::kInterpParamsCount, geo = k / (8 * predict::kInterpParamsCount);
  const predict::InterpGeometry ge = predict::interp_geometry(geo ? g.last : g.full);
  predict::TileBox box;
  box.base = 0;
  bool valid = true;
  for (int j = 0; j < 3; ++j) {
    const bool last = lastness >> (2 - j) & 1;  // bit 2: z, bit 1: y, bit 0: x
    const uint64_t o = (ge.tiles[j] - 1) * ge.anchor;
    valid &= last || ge.tiles[j] > 1;
    box.e[j] = last ? ge.ext[j] - o : ge.anchor + 1;
    box.own[j] = last ? box.e[j] : ge.anchor;
    box.stride[j] = ge.stride[j];
  }
  sets[k].np = valid ? plan_passes(box, ge.level, predict::InterpParams{uint8_t(params)}, sets[k].plans) : 0;
}

// What a tile's threads share: its box (with magic divisors for its local layout), its corners'
// anchor numbers, its first stream position and its passes (copied from the plan sets).
struct TileSetup {
  predict::TileBox box;
  uint64_t stream0;            // the tile's first owned point in the chunk's stream
  uint32_t e12, m12, e2, m2, cnt, corner_mask;
  uint32_t corner[8];          // anchor number of corner (z, y, x) = (k & 4, k & 2, k & 1) != 0
  uint32_t set;                // its plan set
  int np;
  PassPlan plans[kMaxPasses];
};

// Tile t of chunk c (geometry ge) under params: its fields, by thread 0 (every thread working out the
// geometry's 64-bit divisions cost about 15 instructions a point).
__device__ void tile_fields(const Grid& g, uint64_t c, const predict::InterpGeometry& ge, uint64_t t, uint32_t params,
                            TileSetup& ts) {
  const uint32_t t32 = uint32_t(t), T1 = uint32_t(ge.tiles[1]), T2 = uint32_t(ge.tiles[2]);
  const uint32_t tz = t32 / (T1 * T2), ty = (t32 / T2) % T1, tx = t32 % T2;
  const uint32_t lastness = uint32_t(tz + 1 == ge.tiles[0]) << 2 | uint32_t(ty + 1 == T1) << 1 | uint32_t(tx + 1 == T2);
  ts.set = plan_set_index(c + 1 == g.n_chunks, params, lastness);
  const uint64_t tc[3] = {tz, ty, tx};
  const predict::TileBox box = predict::tile_box_at(ge, tc);
  ts.box = box;
  ts.stream0 = predict::anchor_total(ge) + predict::tile_stream_offset_at(ge, tc);
  const uint32_t e1 = uint32_t(box.e[1]), e2 = uint32_t(box.e[2]);
  ts.e12 = e1 * e2, ts.m12 = div_magic(ts.e12), ts.e2 = e2, ts.m2 = div_magic(e2);
  ts.cnt = uint32_t(box.count());
  ts.corner_mask = uint32_t(ge.anchor) - 1;
  const uint32_t A = uint32_t(ge.anchor);
  const uint32_t na1 = uint32_t(predict::anchors_along(ge, 1)), na2 = uint32_t(predict::anchors_along(ge, 2));
  for (int k = 0; k < 8; ++k) {
    const uint32_t dz = k >> 2 & 1, dy = k >> 1 & 1, dx = k & 1;
    const bool in = dz * A < box.e[0] && dy * A < box.e[1] && dx * A < box.e[2];
    ts.corner[k] = in ? ((tz + dz) * na1 + ty + dy) * na2 + tx + dx : 0u;
  }
}

// The tile's passes from its plan set, by the whole block (after tile_fields and a barrier); ends with
// a barrier.
template <uint32_t kN>
__device__ void load_plans(const PlanSet* sets, TileSetup& ts) {
  const PlanSet& set = sets[ts.set];
  static_assert(sizeof(PassPlan) % 4 == 0, "copied as words");
  const uint32_t* from = reinterpret_cast<const uint32_t*>(set.plans);
  uint32_t* to = reinterpret_cast<uint32_t*>(ts.plans);
  const int np = set.np;  // the plans past np are never written (interp_plan_kernel)
  for (uint32_t w = threadIdx.x; w < uint32_t(np) * (sizeof(PassPlan) / 4); w += kN) to[w] = from[w];
  if (threadIdx.x == 0) ts.np = np;
  __syncthreads();
}

// The tile's box into shared memory in its local layout: settle(l, fetch(i)) for each point but the
// anchors (l its local index, i its index in the chunk), the anchors' reconstructions from axr. Each
// thread fetches kLoadBatch points before settling any: one load in flight a thread left the loop
// waiting on memory.
constexpr int kLoadBatch = 4;
template <class T, class Fetch, class Settle>
__device__ __forceinline__ void load_box(const TileSetup& ts, const T* axr, T* xr, Fetch&& fetch, Settle&& settle) {
  const uint64_t s0 = ts.box.stride[0], s1 = ts.box.stride[1], base = ts.box.base;
  const uint32_t e12 = ts.e12, m12 = ts.m12, e2 = ts.e2, m2 = ts.m2, cm = ts.corner_mask, cnt = ts.cnt;
  using Raw = decltype(fetch(uint64_t(0)));
  for (uint32_t l0 = threadIdx.x; l0 < cnt; l0 += kLoadBatch * kTileThreads<T>) {
    Raw raw[kLoadBatch];
    int corner[kLoadBatch];
#pragma unroll
    for (int u = 0; u < kLoadBatch; ++u) {
      const uint32_t l = l0 + u * kTileThreads<T>;
      corner[u] = -1;
      if (l >= cnt) continue;
      const uint32_t z = div_by(l, e12, m12), r = l - z * e12, y = div_by(r, e2, m2), x = r - y * e2;
      if (((z | y | x) & cm) == 0) corner[u] = (z != 0) * 4 + (y != 0) * 2 + (x != 0);
      else raw[u] = fetch(base + z * s0 + y * s1 + x);
    }
#pragma unroll
    for (int u = 0; u < kLoadBatch; ++u) {
      const uint32_t l = l0 + u * kTileThreads<T>;
      if (l >= cnt) continue;
      xr[l] = corner[u] >= 0 ? axr[ts.corner[corner[u]]] : settle(l, raw[u]);
    }
  }
}

// One count of sym in the block's histogram, the active lanes of a warp together: one atomic where
// they agree (most warps at loose bounds), one per distinct symbol otherwise.
__device__ __forceinline__ void count_symbol(uint32_t* s_hist, uint32_t sym) {
  const unsigned act = __activemask();
  const int lead = __ffs(act) - 1, lane = int(threadIdx.x & 31);
  if (__all_sync(act, sym == __shfl_sync(act, sym, lead))) {
    if (lane == lead) atomicAdd(&s_hist[sym], uint32_t(__popc(act)));
    return;
  }
  const unsigned peers = __match_any_sync(act, sym);
  if (lane == __ffs(peers) - 1) atomicAdd(&s_hist[sym], uint32_t(__popc(peers)));
}

// One block per tile: the tile predicted in shared memory. kStage 1 or 2: sampled tile blockIdx.x *
// every under that stage's parameter set blockIdx.z, its owned points' symbols counted into
// sample_hist; kStage 0: the chunk's chosen parameters, and every owned point's symbol, class, outlier
// delta and counts written.
template <class T, int kStage>
static __global__ void __launch_bounds__(kTileThreads<T>, kTileBlocksPerSM<T>) interp_tile_kernel(Grid g, uint32_t radius, const T* __restrict__ in,
                                                                      InterpBuffers b) {
  extern __shared__ uint64_t s_dyn_interp[];
  T* xr = reinterpret_cast<T*>(s_dyn_interp);
  uint32_t* s_hist = reinterpret_cast<uint32_t*>(xr + kBoxMax);
  __shared__ TileSetup ts;
  __shared__ int s_skip;
  __shared__ quant::QuantParams<T> s_p;  // read per point from here: kept in registers, the compiler rebuilt them per point
  const uint64_t c = blockIdx.y;
  const uint32_t nsym = 2 * radius;
  constexpr bool kSample = kStage != 0;
  const uint8_t chosen = uint8_t(b.ic[c].params);
  const uint8_t pb = kStage == 0 ? chosen
                                 : (kStage == 1 ? interp_stage_params(0, uint8_t(blockIdx.z))
                                                : interp_stage_params(int(blockIdx.z),
                                                                      uint8_t(predict::InterpParams{chosen}.axis_order_index())));
  uint32_t* hist = kStage == 0 ? b.hist + c * nsym
                               : b.sample_hist + (kStage == 1 ? c * kStage1Sets + blockIdx.z
                                                              : g.n_chunks * kStage1Sets + c * kStage2Sets + blockIdx.z) * nsym;
  if (threadIdx.x == 0) {
    const predict::InterpGeometry ge = predict::interp_geometry(g.shape(c));
    const uint64_t tiles = ge.tile_count();
    const uint64_t t =
        kSample ? uint64_t(blockIdx.x) * interp_sample_every(tiles, kStage == 1 ? kInterpOrderSampleTiles : kInterpSampleTiles)
                : uint64_t(blockIdx.x);
    // Stage 1 runs here on masked chunks only (interp_order_sample_kernel takes the others).
    s_skip = t >= tiles || (kStage == 0 && !(b.ic[c].run & kRunInterp)) || (kStage == 1 && !b.ic[c].masked);
    if (kStage == 1 && !s_skip && same_as_earlier_params(ge, pb)) {  // never chosen; one count keeps its book well-formed
      if (blockIdx.x == 0) hist[0] = 1;
      s_skip = 1;
    }
    if (!s_skip) tile_fields(g, c, ge, t, pb, ts);
    s_p = *static_cast<const quant::QuantParams<T>*>(b.qp);
  }
  __syncthreads();
  if (s_skip) return;
  load_plans<kTileThreads<T>>(b.plans, ts);
  const quant::QuantParams<T>& p = s_p;
  const uint64_t base = c * g.chunk_values;
  const T* xc = in + base;
  const bool masked = b.ic[c].masked;
  const typename Bits<T>::type mbits = typename Bits<T>::type(b.ic[c].mask_bits);
  for (uint32_t k = threadIdx.x; k < nsym; k += kTileThreads<T>) s_hist[k] = 0;
  // The box's values, each replaced by its reconstruction in its pass (a point's predictors are all
  // from earlier passes).
  load_box(ts, static_cast<const T*>(b.axr) + c * b.anchor_cap, xr, [&](uint64_t i) { return xc[i]; },
           [](uint32_t, T x) { return x; });
  __syncthreads();
  const predict::InterpParams ip{pb};
  const uint64_t sbase = base + ts.stream0;
  uint32_t centre = 0;  // owned points of the zero-residual symbol (most of them at loose bounds): counted here
  box_passes<T, false>(ts.plans, ts.np, xr, ip.spline(), [&](uint32_t li, T pred, bool owned, uint32_t rank, auto&& offset) {
    const T v = xr[li];
    uint8_t cl = kClsCoded;
    uint32_t d = 0;
    T rec = pred;
    int32_t q;
    if (masked && to_bits(v) == mbits) cl = kClsMask;
    else if (quantize_residual(v, pred, p, q, rec)) d = uint32_t(q);
    else cl = kClsException, rec = pred;
    xr[li] = rec;
    if (!owned) return;
    const uint32_t sym = cl == kClsCoded ? interp_symbol(d, radius) : (cl == kClsMask ? interp_mask_symbol(radius) : 0u);
    if (sym == radius) ++centre;
    else count_symbol(s_hist, sym);
    if (kSample) return;
    b.sym[sbase + rank] = uint16_t(sym);
    if (sym) return;  // coded or masked: the emit pass needs no more (cls is zeroed)
    const uint64_t i = ts.box.base + offset();
    if (cl == kClsCoded) {  // an outlier
      b.delta[base + i] = d;
      atomicAdd(&b.tile_out[g.first_tile(c) + i / kTile], 1u);
      b.cls[base + i] = kClsOutlier;
    } else {
      atomicAdd(&b.tile_exc[g.first_tile(c) + i / kTile], 1u);
      b.cls[base + i] = kClsException;
    }
  });
  centre = __reduce_add_sync(0xffffffffu, centre);
  if ((threadIdx.x & 31) == 0 && centre) atomicAdd(&s_hist[radius], centre);
  __syncthreads();
  for (uint32_t k = threadIdx.x; k < nsym; k += kTileThreads<T>)
    if (s_hist[k]) atomicAdd(&hist[k], s_hist[k]);
}

// One block: each chunk's form: the one predictor that ran, or the smaller of the two (interpolation
// only where strictly smaller, as encode_best_chunk); the final offsets, and which writer skips it.
static __global__ void __launch_bounds__(kThreads) interp_choose_kernel(Grid g, const InterpChunkState* ic, ChunkInfo* lor,
                                                                        ChunkInfo* itp, ChunkInfo* fin, gpu::CompressState* st) {
  using Scan = cub::BlockScan<unsigned long long, kThreads>;
  __shared__ typename Scan::TempStorage scan;
  unsigned long long base = format::data_offset(g.n_chunks);
  for (uint64_t r = 0; r < g.n_chunks; r += kThreads) {
    const uint64_t c = r + threadIdx.x;
    unsigned long long size = 0;
    bool use = false;
    if (c < g.n_chunks) {
      // A raw interpolation chunk has the raw size: never smaller than a Lorenzo chunk.
      use = (ic[c].run & kRunInterp) && (!(ic[c].run & kRunLorenzo) || itp[c].size < lor[c].size);
      if (use && itp[c].raw) {  // stored raw: the Lorenzo writers' raw chunk (the same bytes)
        lor[c].raw = 1;
        lor[c].size = itp[c].size;
        use = false;
      }
      size = use ? itp[c].size : lor[c].size;
    }
    unsigned long long excl, total;
    Scan(scan).ExclusiveSum(size, excl, total);
    if (c < g.n_chunks) {
      lor[c].offset = itp[c].offset = base + excl;
      lor[c].skip = use;
      itp[c].skip = !use;
      fin[c] = use ? itp[c] : lor[c];
      fin[c].skip = 0;
      fin[c].sum = 0;
    }
    base += total;
    __syncthreads();
  }
  if (threadIdx.x == 0) st->total_size = base;
}

// Outliers and exceptions of one memory tile of an interpolation chunk, in index order; of a Lorenzo
// chunk (emit_tile with lor) where the interpolation chunk is skipped: one launch for both.
template <class T>
static __global__ void __launch_bounds__(kThreads) interp_emit_kernel(Grid g, uint32_t radius, const T* __restrict__ in,
                                                                      InterpBuffers b, LorenzoEmit<T> lor, uint8_t* out) {
  using Scan = EmitScan;
  __shared__ typename Scan::TempStorage scan;
  const uint64_t t = blockIdx.x, c = g.chunk_of_tile(t);
  const ChunkInfo ci = b.info[c];
  if (ci.skip) {
    emit_tile<T>(g, lor, t, out, scan);
    return;
  }
  if (b.tile_out[t + 1] == b.tile_out[t] && b.tile_exc[t + 1] == b.tile_exc[t]) return;
  const uint32_t count = g.shape(c).count(), i0 = uint32_t(t - g.first_tile(c)) * kTile + threadIdx.x * kPerThread;
  const uint64_t base = c * g.chunk_values;
  uint32_t out_mask = 0, exc_mask = 0;
  for (int k = 0; k < kPerThread && i0 + k < count; ++k) {
    const uint8_t cl = b.cls[base + i0 + k];
    out_mask |= uint32_t(cl == kClsOutlier) << k;
    exc_mask |= uint32_t(cl == kClsException) << k;
  }
  uint32_t eo, ee;
  Scan(scan).ExclusiveSum(uint32_t(__popc(out_mask)), eo);
  __syncthreads();
  Scan(scan).ExclusiveSum(uint32_t(__popc(exc_mask)), ee);
  const ChunkLayout L = chunk_layout(2 * radius, ci.total_bits, ci.n_out, ci.n_exc, sizeof(T), kChunkHeaderBytes + kInterpExtraBytes);
  uint8_t* chunk = out + ci.offset;
  uint32_t jo = b.tile_out[t] - ci.out_base + eo, je = b.tile_exc[t] - ci.exc_base + ee;
  for (int k = 0; k < kPerThread; ++k) {
    const uint32_t i = i0 + k;
    if (out_mask >> k & 1) {
      store_u32_le(chunk + L.out_idx + 4 * jo, i);
      store_u32_le(chunk + L.out_delta + 4 * jo, b.delta[base + i]);
      ++jo;
    }
    if (exc_mask >> k & 1) {
      store_u32_le(chunk + L.exc_idx + 4 * je, i);
      store_value_le<T>(chunk + L.exc_val + sizeof(T) * je, in[base + i]);
      ++je;
    }
  }
}

// An interpolation chunk's header, mask value and code lengths.
static __global__ void __launch_bounds__(kThreads) interp_head_kernel(uint32_t nsym, InterpBuffers b, uint8_t* out) {
  const uint64_t c = blockIdx.x;
  const ChunkInfo ci = b.info[c];
  if (ci.skip) return;
  uint8_t* chunk = out + ci.offset;
  if (threadIdx.x == 0) {
    store_u32_le(chunk, ci.total_bits);
    store_u32_le(chunk + 4, ci.n_out);
    store_u32_le(chunk + 8, ci.n_exc);
    store_u32_le(chunk + 12, kKindInterp | b.ic[c].params << 8 | b.ic[c].masked << 16);
    store_u64_le(chunk + kChunkHeaderBytes, b.ic[c].mask_bits);
  }
  const uint8_t* Lc = b.len + c * nsym;
  uint8_t* lengths = chunk + kChunkHeaderBytes + kInterpExtraBytes;
  for (uint32_t k = threadIdx.x; k < nsym / 2; k += kThreads) lengths[k] = uint8_t(Lc[2 * k] | Lc[2 * k + 1] << 4);
}

}  // namespace hpcz::ratio::cuda
