// Ratio-mode CUDA kernels. Reconstruction: the inverse Lorenzo prediction (prefix sums along z, y and x) fused with
// dequantization, by the plan of recon_plan.hpp (fused with look-back, stripes, or column/row/plane
// passes); then the exceptions and raw chunks.
// Kernels are static: this header is included by more than one translation unit.
#pragma once
#include "codecs/ratio_class/kernels_common.cuh"
#include "gpu/async_copy.cuh"

namespace hpcz::ratio::cuda {

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
  if (lorenzo_skips(dc[c])) return;
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
  if (lorenzo_skips(dc[c])) return;
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
  if (lorenzo_skips(dc[c])) return;
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
  if (lorenzo_skips(dc[g.chunk_of_tile(t)])) return;
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
  if (lorenzo_skips(dc[c])) return;
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
// a segmented warp scan per 32 values cost 51 instructions a value and 32% more time in fnoc's stripe
// pass.)
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

// (The kernels' bodies are device functions for a batch's kernels, as in quant_kernels.cuh.)
template <class T>
__device__ __forceinline__ void recon_segment_of_ticket(Grid g, ReconPlan rp, const DecodeChunk* dc,
                                                        const uint32_t* __restrict__ v, uint32_t* flags, uint32_t* agg,
                                                        uint32_t* incl, T step, T* __restrict__ out) {
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
  if (lorenzo_skips(dc[c])) return;  // so do the chunk's other segments: no one waits on this one
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
template <class T>
static __global__ void __launch_bounds__(kThreads, 2) recon_kernel(Grid g, ReconPlan rp, const DecodeChunk* dc,
                                                                   const uint32_t* __restrict__ v, uint32_t* flags,
                                                                   uint32_t* agg, uint32_t* incl, T step,
                                                                   T* __restrict__ out) {
  recon_segment_of_ticket<T>(g, rp, dc, v, flags, agg, incl, step, out);
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
  if (st + 1 >= sp.stripes(c) || lorenzo_skips(dc[c])) return;  // a stripe that is not the last is full
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
  if (p >= P || lorenzo_skips(dc[c])) return;
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
  if (lorenzo_skips(dc[c])) return;
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
  if (lorenzo_skips(dc[c])) return;
  const ChunkShape cs = g.shape(c);
  const uint32_t z = blockIdx.x;
  if (z >= cs.cz) return;
  const uint64_t plane0 = c * g.chunk_values + uint64_t(z) * cs.cy * cs.cx;
  uint32_t yc[kStripeCols] = {};
  for (uint32_t y0 = 0; y0 < cs.cy; y0 += band)
    recon_segment(s_seg, v, plane0 + uint64_t(y0) * cs.cx, min(band, cs.cy - y0), cs.cx, 1u, yc, step, out);
}

template <class T>
__device__ __forceinline__ void place_exceptions(Grid g, const uint8_t* __restrict__ a, const DecodeChunk* dc, T* out,
                                                 uint32_t* status) {
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
template <class T>
static __global__ void __launch_bounds__(kThreads) exception_kernel(Grid g, const uint8_t* __restrict__ a, const DecodeChunk* dc,
                                                             T* out, uint32_t* status) {
  place_exceptions<T>(g, a, dc, out, status);
}

}  // namespace hpcz::ratio::cuda
