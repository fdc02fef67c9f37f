// Interpolation codec kernels: decompression (the pipeline is described in interp_kernels.cuh).
// Kernels are static: this header may be included by more than one translation unit.
#pragma once
#include "codecs/interp/interp_kernels.cuh"

namespace hpcz::ratio::cuda {

struct InterpDecodeBuffers {
  uint32_t* vm;     // n: deltas in memory order
  uint8_t* cls;     // n: zeroed, then the lists' marks (kMark*): a point's class (point_class)
  int32_t* aq;      // n_chunks * anchor_cap (anchors that do not fit shared memory)
  void* axr;        // n_chunks * anchor_cap values T
  uint64_t anchor_cap;
  PlanSet* plans;   // kPlanSets
};

__device__ __forceinline__ bool is_interp(const DecodeChunk& d) { return !d.bad && !d.raw && d.kind == kKindInterp; }

// The decoder's classes: the list kernels mark outliers and exceptions (in cls, zeroed first); every
// other point's class follows from its symbol (vm: its delta), so the scatter writes one array, not two.
enum : uint8_t { kMarkNone = 0, kMarkOutlier = 1, kMarkException = 3 };
__device__ __forceinline__ uint8_t point_class(uint8_t mark, uint32_t v, uint32_t mask_delta) {
  return mark == kMarkOutlier ? kPointCoded
                              : (mark == kMarkException ? kPointException : (v == mask_delta ? kPointMask : kPointCoded));
}

// One block per tile (tile 0 also takes the anchors): each owned point's symbol from its stream
// position to memory order. Threads walk the owned points in memory order (whole rows written
// together) and gather each from the tile's stretch of the stream (contiguous, a few KiB: cached); a
// point's pass follows from its coordinates: h the lowest bit of (z | y | x), the axis the last in the
// order of those where the coordinate has bit h (walking the passes instead wrote memory in strides).
static __global__ void __launch_bounds__(kThreads) interp_scatter_kernel(Grid g, uint32_t radius, const DecodeChunk* dc,
                                                                         const uint32_t* __restrict__ v,
                                                                         InterpDecodeBuffers b, uint32_t* status) {
  __shared__ TileSetup ts;
  __shared__ int8_t s_pass[predict::kMaxInterpLevel][3];  // the pass of level log2(h) + 1 along an axis
  __shared__ int s_rank_of_axis[3];                        // each axis's place in the chunk's axis order
  const uint64_t c = blockIdx.y;
  const DecodeChunk& d = dc[c];
  if (!is_interp(d)) return;
  __shared__ int s_skip;
  if (threadIdx.x == 0) {
    const predict::InterpGeometry ge = predict::interp_geometry(g.shape(c));
    s_skip = blockIdx.x >= ge.tile_count();
    if (!s_skip) tile_fields(g, c, ge, blockIdx.x, d.params, ts);
    int order[3];
    predict::InterpParams{uint8_t(d.params)}.axis_order(order);
    for (int j = 0; j < 3; ++j) s_rank_of_axis[order[j]] = j;
  }
  for (uint32_t k = threadIdx.x; k < predict::kMaxInterpLevel * 3; k += kThreads) s_pass[k / 3][k % 3] = -1;
  __syncthreads();
  if (s_skip) return;
  load_plans<kThreads>(b.plans, ts);
  for (int k = threadIdx.x; k < ts.np; k += kThreads) s_pass[__ffs(ts.plans[k].h) - 1][ts.plans[k].axis] = int8_t(k);
  __syncthreads();
  const uint64_t base = c * g.chunk_values;
  const uint32_t mask_delta = predict::symbol_delta(2 * radius - 1, radius);
  const bool masked = d.masked;
  bool bad = false;
  if (blockIdx.x == 0) {
    const predict::InterpGeometry ge = predict::interp_geometry(g.shape(c));
    const uint64_t na = predict::anchor_total(ge);
    for (uint64_t k = threadIdx.x; k < na; k += kThreads) {
      const uint32_t s = v[base + k];
      b.vm[base + predict::anchor_index(ge, k)] = s;
      bad |= s == mask_delta && !masked;
    }
  }
  const uint32_t o1 = uint32_t(ts.box.own[1]), o2 = uint32_t(ts.box.own[2]), o12 = o1 * o2;
  const uint32_t m12 = div_magic(o12), m2 = div_magic(o2), cnt = uint32_t(ts.box.own[0]) * o12, cm = ts.corner_mask;
  const uint64_t s0 = ts.box.stride[0], s1 = ts.box.stride[1], out0 = base + ts.box.base, in0 = base + ts.stream0;
  const int r0a = s_rank_of_axis[0], r1a = s_rank_of_axis[1], r2a = s_rank_of_axis[2];
  for (uint32_t l0 = threadIdx.x; l0 < cnt; l0 += kLoadBatch * kThreads) {
    uint32_t sv[kLoadBatch];
    uint64_t at[kLoadBatch];
#pragma unroll
    for (int u = 0; u < kLoadBatch; ++u) {
      const uint32_t l = l0 + u * kThreads;
      at[u] = ~0ull;
      if (l >= cnt) continue;
      const uint32_t z = div_by(l, o12, m12), r = l - z * o12, y = div_by(r, o2, m2), x = r - y * o2;
      const uint32_t bits = z | y | x;
      if ((bits & cm) == 0) continue;  // an anchor
      const int lg = __ffs(bits) - 1;
      const uint32_t h = 1u << lg;
      // The pass axis: the last in the order among the axes whose coordinate has bit h.
      int a = -1, ra = -1;
      if ((z & h) && r0a > ra) a = 0, ra = r0a;
      if ((y & h) && r1a > ra) a = 1, ra = r1a;
      if ((x & h) && r2a > ra) a = 2, ra = r2a;
      const PassPlan& pp = ts.plans[s_pass[lg][a]];
      // Grid coordinates: step h before the pass axis in the order, 2h at and after it.
      const uint32_t mz = z >> (lg + (r0a >= ra)), my = y >> (lg + (r1a >= ra)), mx = x >> (lg + (r2a >= ra));
      sv[u] = v[in0 + pp.rank0 + (mz * pp.own1 + my) * pp.own2 + mx];
      at[u] = out0 + z * s0 + y * s1 + x;
    }
#pragma unroll
    for (int u = 0; u < kLoadBatch; ++u) {
      if (at[u] == ~0ull) continue;
      b.vm[at[u]] = sv[u];
      bad |= sv[u] == mask_delta && !masked;
    }
  }
  if (bad) atomicOr(status, kBadChunk);
}

// The outliers' deltas (kExceptions false) or the exceptions' classes into place, each at a point
// whose symbol was 0, in increasing order; the zero symbols are exactly the two lists' entries.
template <bool kExceptions>
static __global__ void __launch_bounds__(kThreads) interp_list_kernel(Grid g, uint32_t radius, const uint8_t* __restrict__ a,
                                                                      const DecodeChunk* dc, InterpDecodeBuffers b,
                                                                      uint32_t* status) {
  const uint64_t c = blockIdx.y;
  const DecodeChunk& d = dc[c];
  if (!is_interp(d)) return;
  const uint32_t count = g.shape(c).count();
  const uint8_t* chunk = a + d.offset;
  const uint32_t* idx = reinterpret_cast<const uint32_t*>(chunk + (kExceptions ? d.L.exc_idx : d.L.out_idx));
  const uint32_t* del = reinterpret_cast<const uint32_t*>(chunk + d.L.out_delta);
  const uint32_t n = kExceptions ? d.L.n_exc : d.L.n_out;
  const uint64_t base = c * g.chunk_values;
  const uint32_t zero_delta = predict::symbol_delta(0, radius);
  if (!kExceptions && blockIdx.x == 0 && threadIdx.x == 0 && d.zeros != d.L.n_out + d.L.n_exc) atomicOr(status, kBadChunk);
  for (uint32_t k = blockIdx.x * kThreads + threadIdx.x; k < n; k += gridDim.x * kThreads) {
    const uint32_t i = idx[k];
    if (i >= count || (k && i <= idx[k - 1]) || b.vm[base + i] != zero_delta || b.cls[base + i] != kMarkNone) {
      atomicOr(status, kBadChunk);
      continue;
    }
    b.cls[base + i] = kExceptions ? kMarkException : kMarkOutlier;
    if (!kExceptions) b.vm[base + i] = del[k];
  }
}

template <class T>
__device__ __forceinline__ T mask_value_of(const DecodeChunk& d) {
  return from_bits<T>(typename Bits<T>::type(d.mask_bits));
}

// One block per chunk: the anchors' q by the inverse of their Lorenzo code, their reconstructions
// (axr) and output values (the mask value where masked; exceptions follow). The inverse is prefix
// sums along x, y and z (mod 2^32) with each stand-in's residual taken as 0, which is exact unless a
// stand-in's prediction lies beyond the clamp (clamp_q); then, checked, one thread redoes the chunk in
// order, as the CPU does.
template <class T>
static __global__ void __launch_bounds__(kThreads) interp_anchor_decode_kernel(Grid g, uint32_t radius, const DecodeChunk* dc,
                                                                               T step, InterpDecodeBuffers b, T* out) {
  __shared__ int32_t s_q[kAnchorsShared];
  __shared__ uint8_t s_cls[kAnchorsShared];
  __shared__ int s_clamped;
  const uint64_t c = blockIdx.x;
  const DecodeChunk& d = dc[c];
  if (!is_interp(d)) return;
  const predict::InterpGeometry ge = predict::interp_geometry(g.shape(c));
  const uint64_t na = predict::anchor_total(ge), base = c * g.chunk_values;
  const bool fits = na <= kAnchorsShared;
  int32_t* q = fits ? s_q : b.aq + c * b.anchor_cap;
  uint32_t* u = reinterpret_cast<uint32_t*>(q);
  const uint32_t mask_delta = predict::symbol_delta(2 * radius - 1, radius);
  auto class_of = [&](uint64_t i) { return point_class(b.cls[base + i], b.vm[base + i], mask_delta); };
  if (threadIdx.x == 0) s_clamped = 0;
  for (uint64_t k = threadIdx.x; k < na; k += kThreads) {
    const uint64_t i = predict::anchor_index(ge, k);
    const uint8_t cl = class_of(i);
    if (fits) s_cls[k] = cl;
    u[k] = cl == kPointCoded ? b.vm[base + i] : 0u;
  }
  __syncthreads();
  const uint32_t nz = uint32_t(predict::anchors_along(ge, 0)), ny = uint32_t(predict::anchors_along(ge, 1)),
                 nx = uint32_t(predict::anchors_along(ge, 2));
  for (uint32_t r = threadIdx.x; r < nz * ny; r += kThreads) {  // along x: a row a thread
    uint32_t* row = u + uint64_t(r) * nx;
    for (uint32_t x = 1; x < nx; ++x) row[x] += row[x - 1];
  }
  __syncthreads();
  for (uint32_t r = threadIdx.x; r < nz * nx; r += kThreads) {  // along y
    uint32_t* col = u + uint64_t(r / nx) * ny * nx + r % nx;
    for (uint32_t y = 1; y < ny; ++y) col[uint64_t(y) * nx] += col[uint64_t(y - 1) * nx];
  }
  __syncthreads();
  for (uint32_t r = threadIdx.x; r < ny * nx; r += kThreads)  // along z
    for (uint32_t z = 1; z < nz; ++z) u[uint64_t(z) * ny * nx + r] += u[uint64_t(z - 1) * ny * nx + r];
  __syncthreads();
  for (uint64_t k = threadIdx.x; k < na; k += kThreads) {
    const uint8_t cl = fits ? s_cls[k] : class_of(predict::anchor_index(ge, k));
    if (cl == kPointCoded) continue;
    const int64_t pred = anchor_pred_at(q, k, k / (uint64_t(ny) * nx), (k / nx) % ny, k % nx, nx, uint64_t(ny) * nx);
    if (int64_t(clamp_q(pred)) != pred) s_clamped = 1;
  }
  __syncthreads();
  if (s_clamped) {
    if (threadIdx.x == 0)
      anchors_in_order(ge, q, [&](uint64_t k, int64_t pred) {
        const uint64_t i = predict::anchor_index(ge, k);
        return class_of(i) == kPointCoded ? int32_t(uint32_t(uint64_t(pred)) + b.vm[base + i]) : clamp_q(pred);
      });
    __syncthreads();
  }
  T* axr = static_cast<T*>(b.axr) + c * b.anchor_cap;
  const T mask = mask_value_of<T>(d);
  for (uint64_t k = threadIdx.x; k < na; k += kThreads) {
    const uint64_t i = predict::anchor_index(ge, k);
    const T x = quant::dequantize<T>(q[k], step);
    axr[k] = x;
    out[base + i] = (fits ? s_cls[k] : class_of(i)) == kPointMask ? mask : x;
  }
}

// One block per tile: the tile's owned points from its box in shared memory, which first holds each
// coded point's dequantized residual (and the anchors' values), then the reconstructions pass by pass.
template <class T>
static __global__ void __launch_bounds__(kTileThreads<T>, kTileBlocksPerSM<T>) interp_tile_decode_kernel(Grid g, uint32_t radius, const DecodeChunk* dc,
                                                                             T step, InterpDecodeBuffers b, T* out) {
  extern __shared__ uint64_t s_dyn_interp[];
  T* xr = reinterpret_cast<T*>(s_dyn_interp);
  uint8_t* s_cls = reinterpret_cast<uint8_t*>(xr + kBoxMax);
  __shared__ TileSetup ts;
  const uint64_t c = blockIdx.y;
  const DecodeChunk& d = dc[c];
  if (!is_interp(d)) return;
  const predict::InterpParams ip{uint8_t(d.params)};
  __shared__ int s_skip;
  if (threadIdx.x == 0) {
    const predict::InterpGeometry ge = predict::interp_geometry(g.shape(c));
    s_skip = blockIdx.x >= ge.tile_count();
    if (!s_skip) tile_fields(g, c, ge, blockIdx.x, d.params, ts);
  }
  __syncthreads();
  if (s_skip) return;
  load_plans<kTileThreads<T>>(b.plans, ts);
  const uint64_t base = c * g.chunk_values;
  const uint32_t mask_delta = predict::symbol_delta(2 * radius - 1, radius);
  struct Raw {
    uint32_t dv;
    uint8_t mark;
  };
  load_box(
      ts, static_cast<const T*>(b.axr) + c * b.anchor_cap, xr,
      [&](uint64_t i) { return Raw{b.vm[base + i], b.cls[base + i]}; },
      [&](uint32_t l, Raw r) {
        const uint8_t cl = point_class(r.mark, r.dv, mask_delta);
        s_cls[l] = cl;
        return cl == kPointCoded ? quant::dequantize<T>(int32_t(r.dv), step) : T(0);
      });
  __syncthreads();
  const T mask = mask_value_of<T>(d);
  T* oc = out + base;
  const uint64_t box_base = ts.box.base;
  box_passes<T, true>(ts.plans, ts.np, xr, ip.spline(), [&](uint32_t li, T pred, bool owned, uint32_t, auto&& offset) {
    const uint8_t cl = s_cls[li];
    const T rec = cl == kPointCoded ? pred + xr[li] : pred;
    xr[li] = rec;
    if (owned) oc[box_base + offset()] = cl == kPointMask ? mask : rec;
  });
}

}  // namespace hpcz::ratio::cuda
