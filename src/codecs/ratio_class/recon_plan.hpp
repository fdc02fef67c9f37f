// How the fused reconstruction kernel (recon_kernels.cuh, recon_kernel) covers the chunks: host code,
// here so that its invariants are tested without a GPU.
//
// Decoding ends with the inverse of the Lorenzo prediction, a prefix sum along each axis of the
// chunk. recon_kernel does all of them in one read of the decoded deltas and one write of the
// values: a block takes a segment of `planes` consecutive planes of one chunk into shared memory,
// and the sums along z that cross into it from the chunk's earlier planes come from a decoupled
// look-back over the segments before it, whose aggregates are whole planes (one sum per column).
// 2-D chunks are seen as planes of one row (ny = 1). Shapes with too few planes a segment take the
// stripes (StripePlan, below); 1-D chunks, planes too large for the stripes and rows too short to
// keep a block busy take the multi-pass kernels.
#pragma once
#include <cstdint>

#include "common/hd.hpp"
#include "predict/lorenzo.hpp"

namespace hpcz::ratio {

constexpr uint32_t kReconValues = 24576;  // per block: 96 KiB of shared memory, two blocks per SM
constexpr uint32_t kReconMaxValues = 55296;  // 216 KiB: what one block may have on sm_90
constexpr uint32_t kReconMinPlane = 128;  // a thread per column along z: at least this many columns
// A look-back reads and writes whole planes: with few planes a segment that costs more than the
// stripes' extra read of the deltas (StripePlan below). On an H200 at rel 1e-3: 10 planes a segment
// (wrf, 48 x 48) stripes 8% faster, 15 (era5) the same, 64 (a 2-D 384 x 384 field) the look-back 6%
// faster.
constexpr uint32_t kReconMinPlanes = 12;

// A chunk as planes (2-D chunks: rows as planes of one row), for both plans below.
struct PlaneGeometry {
  uint32_t nz_full, nz_last;  // planes of a full chunk and of the last chunk
  uint32_t ny, nx;            // a plane is ny rows of nx values
  HPCZ_HD uint32_t plane() const { return ny * nx; }
};
inline PlaneGeometry plane_geometry(int rank, const predict::ChunkShape& full, const predict::ChunkShape& last) {
  return {rank == 3 ? full.cz : full.cy, rank == 3 ? last.cz : last.cy, rank == 3 ? full.cy : 1u, full.cx};
}

struct ReconPlan : PlaneGeometry {
  uint32_t planes;                // per segment (0: no fused pass for this shape)
  uint32_t segs_full, segs_last;  // segments of a full chunk and of the last chunk
  uint64_t n_chunks, n_segments;
  // Blocks take segments in ticket order, the chunks interleaved: segment sg of every chunk, then
  // sg + 1, so the blocks resident at once spread over all chunks and few of them wait on the same
  // chain. A segment's predecessor in its chunk always has a smaller ticket. Segment (c, sg) is
  // stored at index c * segs_full + sg.
  HPCZ_HD void segment_of_ticket(uint64_t t, uint64_t& c, uint32_t& sg) const {
    const uint64_t both = n_chunks * segs_last;  // tickets while every chunk still has segments
    if (t < both) {
      c = t % n_chunks;
      sg = uint32_t(t / n_chunks);
    } else {  // the last chunk is done: the others' remaining segments
      c = (t - both) % (n_chunks - 1);
      sg = segs_last + uint32_t((t - both) / (n_chunks - 1));
    }
  }
};

// rank: of the working shape (predict::working_shape); full, last: the chunks' local extents.
// min_planes: the fewest planes a segment may hold (2 at least; see below); values: a segment's
// capacity (the kernel's shared memory is 4 bytes a value).
inline ReconPlan recon_plan(int rank, const predict::ChunkShape& full, const predict::ChunkShape& last,
                            uint64_t n_chunks, uint32_t min_planes = kReconMinPlanes,
                            uint32_t values = kReconValues) {
  ReconPlan p{};
  if (!n_chunks || rank < 2) return p;
  static_cast<PlaneGeometry&>(p) = plane_geometry(rank, full, last);
  const uint64_t plane = uint64_t(p.ny) * p.nx;
  // Two planes a segment at least: a segment's aggregate and prefix then take at most as much
  // workspace as the values themselves.
  if (min_planes < 2) min_planes = 2;
  if (values > kReconMaxValues) values = kReconMaxValues;
  if (plane < kReconMinPlane || uint64_t(min_planes) * plane > values) return ReconPlan{};
  p.n_chunks = n_chunks;
  p.planes = uint32_t(values / plane);
  p.segs_full = uint32_t(detail::div_ceil(p.nz_full, p.planes));
  p.segs_last = uint32_t(detail::div_ceil(p.nz_last, p.planes));
  p.n_segments = (n_chunks - 1) * p.segs_full + p.segs_last;
  return p;
}

// ---- stripes: the same one-pass reconstruction for planes too small for the look-back ------------
// When few planes fit a block (fnoc 73 x 144, ncar 64 x 128, vorticity 91 x 91: 2-3 planes of 96
// KiB), a look-back over plane-sized aggregates reads about as much as the segment itself. A stripe
// instead is many consecutive planes of one chunk taken by one block, a segment (what fits its shared
// memory) at a time, the sums along z carried from segment to segment in registers (a thread owns
// the columns tid + 256 k, k < kStripeCols). The sums entering a stripe come from a first pass that
// reads the deltas once (each stripe's column sums) and a scan over the stripes of each chunk: 12
// bytes of traffic a value (read, read, write) against 16 for the multi-pass kernels (z pass, then the
// plane pass, each a read and a write), and every pass streams whole planes.
constexpr uint32_t kStripeThreads = 256;
constexpr uint32_t kStripeCols = 48;  // register carries a thread: planes up to 12,288 values
constexpr uint32_t kStripeValues = 131072;  // values a stripe, by default (its planes: a multiple of the segment's)

struct StripePlan : PlaneGeometry {
  uint32_t seg_planes;                // planes a segment (shared memory; 0: no stripe pass for this shape)
  uint32_t planes;                    // planes a stripe, a multiple of seg_planes
  uint32_t stripes_full, stripes_last;
  uint64_t n_chunks, n_stripes;       // stripe (c, st) is index c * stripes_full + st
  HPCZ_HD uint32_t stripes(uint64_t c) const { return c + 1 == n_chunks ? stripes_last : stripes_full; }
  HPCZ_HD uint32_t nz(uint64_t c) const { return c + 1 == n_chunks ? nz_last : nz_full; }
};

// seg_values: a segment's capacity (shared memory / 4); stripe_values: the stripe size asked for.
inline StripePlan stripe_plan(int rank, const predict::ChunkShape& full, const predict::ChunkShape& last,
                              uint64_t n_chunks, uint32_t seg_values = kReconValues,
                              uint32_t stripe_values = kStripeValues) {
  StripePlan p{};
  if (!n_chunks || rank < 2) return p;
  static_cast<PlaneGeometry&>(p) = plane_geometry(rank, full, last);
  const uint64_t plane = uint64_t(p.ny) * p.nx;
  if (seg_values > kReconMaxValues) seg_values = kReconMaxValues;
  if (plane < kReconMinPlane || plane > uint64_t(kStripeCols) * kStripeThreads || plane > seg_values) return StripePlan{};
  p.n_chunks = n_chunks;
  p.seg_planes = uint32_t(seg_values / plane);
  const uint64_t want = stripe_values / (uint64_t(p.seg_planes) * plane);
  p.planes = p.seg_planes * uint32_t(want ? want : 1);
  p.stripes_full = uint32_t(detail::div_ceil(p.nz_full, p.planes));
  p.stripes_last = uint32_t(detail::div_ceil(p.nz_last, p.planes));
  p.n_stripes = (n_chunks - 1) * p.stripes_full + p.stripes_last;
  return p;
}

}  // namespace hpcz::ratio
