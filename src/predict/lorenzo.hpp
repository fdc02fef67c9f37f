// Lorenzo prediction on prequantized integers (cuSZ's dual quantization), shared by the CPU backend
// and the CUDA kernels.
//
// The array is seen in a working shape of rank <= 3 (nz, ny, nx): 4-D data folds its two slowest axes
// into one, and an axis is merged into the next when a slab along it would be too large for a chunk
// (see working_shape). Chunks are whole slabs along the slowest working axis (planes in 3-D, rows in
// 2-D, spans in 1-D); prediction never looks outside the chunk (neighbours there are 0), so a chunk
// decodes on its own and its first plane is simply predicted in 2-D.
//
// Integer prediction is exact: with q the prequantized field (0 where a value is stored exactly),
//   delta = (1 - Sx)(1 - Sy)(1 - Sz) q      (S = shift by one along an axis, zero outside the chunk)
// taken mod 2^32, and the decoder inverts it with one prefix sum per axis, also mod 2^32.
#pragma once
#include "common/hd.hpp"

namespace hpcz::predict {

using namespace hpcz::detail;

// Chunks hold about this many values (whole slabs); slabs larger than kMaxChunkValues are split by
// lowering the rank, so every chunk-local index and Huffman bit offset fits in 32 bits.
constexpr uint64_t kTargetChunkValues = uint64_t(1) << 22;
constexpr uint64_t kMaxChunkValues = uint64_t(1) << 26;

struct Shape {
  int rank;            // 1..3
  uint64_t nz, ny, nx; // unused leading extents are 1
  uint64_t slab;       // values per slab along the slowest working axis (ny*nx, nx or 1)
  uint64_t slabs;      // slabs in the array
  uint64_t chunk_slabs;// slabs per chunk
  uint64_t chunk_values() const { return chunk_slabs * slab; }
};

// The working shape for dims (slowest to fastest) and the chunking; a pure function of the dims, so the
// decoder re-derives it. Extents of 1 are dropped, 4-D folds dims[0]*dims[1], and a 3-D (2-D) shape
// whose plane (row) exceeds kMaxChunkValues is read as 2-D (1-D).
inline Shape working_shape(const uint64_t* dims, int ndims) {
  uint64_t d[4];
  int r = 0;
  for (int i = 0; i < ndims; ++i)
    if (dims[i] != 1) d[r++] = dims[i];
  if (r == 4) {
    d[0] *= d[1]; d[1] = d[2]; d[2] = d[3]; r = 3;
  }
  if (r == 3 && d[1] * d[2] > kMaxChunkValues) { d[0] *= d[1]; d[1] = d[2]; r = 2; }
  if (r == 2 && d[1] > kMaxChunkValues) { d[0] *= d[1]; r = 1; }
  Shape s{};
  s.rank = r ? r : 1;
  s.nz = r == 3 ? d[0] : 1;
  s.ny = r == 3 ? d[1] : (r == 2 ? d[0] : 1);
  s.nx = r == 3 ? d[2] : (r == 2 ? d[1] : (r == 1 ? d[0] : 1));
  uint64_t n = s.nz * s.ny * s.nx;
  if (r == 0) n = 1;  // every extent 1 (one value); an empty array has a 0 extent somewhere
  for (int i = 0; i < ndims; ++i)
    if (dims[i] == 0) n = 0;
  s.slab = s.rank == 3 ? s.ny * s.nx : (s.rank == 2 ? s.nx : 1);
  s.slabs = s.slab ? n / s.slab : 0;
  uint64_t per = kTargetChunkValues / (s.slab ? s.slab : 1);
  s.chunk_slabs = per ? per : 1;
  return s;
}

// One chunk's local extents: cz slabs of the working shape.
struct ChunkShape {
  uint32_t cz, cy, cx;  // 3-D: planes, ny, nx; 2-D: 1, rows, nx; 1-D: 1, 1, count
  HPCZ_HD uint32_t count() const { return cz * cy * cx; }
};

inline ChunkShape chunk_shape(const Shape& s, uint64_t chunk) {
  uint64_t first = chunk * s.chunk_slabs;
  uint64_t k = s.slabs - first < s.chunk_slabs ? s.slabs - first : s.chunk_slabs;
  if (s.rank == 3) return {uint32_t(k), uint32_t(s.ny), uint32_t(s.nx)};
  if (s.rank == 2) return {1, uint32_t(k), uint32_t(s.nx)};
  return {1, 1, uint32_t(k)};
}

// The Lorenzo residual at a chunk-local position; hz, hy, hx say whether it has a predecessor along each
// axis, and q(dz, dy, dx) returns the prequantized value (as uint32) dz planes, dy rows and dx columns
// back. Mod 2^32.
template <class Q>
HPCZ_HD uint32_t lorenzo_delta(bool hz, bool hy, bool hx, Q&& q) {
  uint32_t d = q(0, 0, 0);
  if (hx) d -= q(0, 0, 1);
  if (hy) d -= q(0, 1, 0);
  if (hz) d -= q(1, 0, 0);
  if (hx && hy) d += q(0, 1, 1);
  if (hx && hz) d += q(1, 0, 1);
  if (hy && hz) d += q(1, 1, 0);
  if (hx && hy && hz) d -= q(1, 1, 1);
  return d;
}

// Every residual of values [i0, i1) of a chunk, in index order: emit(i, delta) with delta =
// lorenzo_delta at i. Row by row, a row's neighbours in the previous row and plane are whole rows (a
// zero row where the chunk has none), so the inner loop has no per-value condition: with
// b(x) = q(x) - q_y(x) - q_z(x) + q_yz(x), the residual is b(0) at x = 0 and b(x) - b(x - 1) after it
// (mod 2^32). zero_row holds cx zeros. A range may start inside a row (b(x - 1) is recomputed), and
// ranges only read q, so any split of the values runs in parallel: a 1-D chunk is one long row.
template <class Emit>
inline void lorenzo_values(const ChunkShape& c, const uint32_t* q, const uint32_t* zero_row, uint64_t i0, uint64_t i1,
                           Emit&& emit) {
  const uint64_t cx = c.cx, plane = uint64_t(c.cy) * cx;
  for (uint64_t i = i0; i < i1;) {
    const uint64_t row = i / cx, z = row / c.cy, y = row - z * c.cy, first = row * cx;
    const uint32_t* r = q + first;
    const uint32_t* ry = y ? r - cx : zero_row;
    const uint32_t* rz = z ? r - plane : zero_row;
    const uint32_t* ryz = y && z ? r - plane - cx : zero_row;
    uint64_t x = i - first;
    const uint64_t x_end = i1 - first < cx ? i1 - first : cx;
    uint32_t before = x ? r[x - 1] - ry[x - 1] - rz[x - 1] + ryz[x - 1] : 0;
    for (; x < x_end; ++x) {
      const uint32_t b = r[x] - ry[x] - rz[x] + ryz[x];
      emit(uint32_t(first + x), b - before);
      before = b;
    }
    i = first + x_end;
  }
}
template <class Emit>
inline void lorenzo_rows(const ChunkShape& c, const uint32_t* q, const uint32_t* zero_row, Emit&& emit) {
  lorenzo_values(c, q, zero_row, 0, c.count(), emit);
}

// Quant codes: symbol delta + radius for |delta| < radius, else 0 (an outlier, stored on the side).
HPCZ_HD uint32_t quant_symbol(uint32_t delta, uint32_t radius) {
  uint32_t s = delta + radius;  // in [1, 2 radius) iff -radius < delta < radius
  return (s - 1u < 2u * radius - 1u) ? s : 0u;
}
HPCZ_HD uint32_t symbol_delta(uint32_t sym, uint32_t radius) { return sym - radius; }

// CPU inverse, in place (mod 2^32), a row at a time: with A the row's prefix sum along x,
// q = A + q_y + q_z - q_yz (the neighbours' rows are final already, zero outside the chunk). Each
// row goes to emit(first index, row, cx) as soon as it is final, while it is in cache: the chunk
// is read and written once, instead of once per axis and again by the caller.
template <class Emit>
inline void inverse_lorenzo_rows(const ChunkShape& c, uint32_t* v, Emit&& emit) {
  const uint64_t cx = c.cx, plane = uint64_t(c.cy) * cx;
  uint64_t i = 0;
  for (uint32_t z = 0; z < c.cz; ++z)
    for (uint32_t y = 0; y < c.cy; ++y, i += cx) {
      uint32_t* r = v + i;
      uint32_t acc = 0;
      for (uint64_t x = 0; x < cx; ++x) r[x] = acc += r[x];
      if (y && z) {
        const uint32_t *ry = r - cx, *rz = r - plane, *ryz = rz - cx;
        for (uint64_t x = 0; x < cx; ++x) r[x] += ry[x] + rz[x] - ryz[x];
      } else if (y) {
        const uint32_t* ry = r - cx;
        for (uint64_t x = 0; x < cx; ++x) r[x] += ry[x];
      } else if (z) {
        const uint32_t* rz = r - plane;
        for (uint64_t x = 0; x < cx; ++x) r[x] += rz[x];
      }
      emit(i, static_cast<const uint32_t*>(r), cx);
    }
}

inline void inverse_lorenzo(const ChunkShape& c, uint32_t* v) {
  inverse_lorenzo_rows(c, v, [](uint64_t, const uint32_t*, uint64_t) {});
}

}  // namespace hpcz::predict
