// Interpolation prediction (the SZ3 / QoZ / cuSZ-i family), shared by the CPU backend and the CUDA
// kernels.
//
// A chunk (predict/lorenzo.hpp's ChunkShape, axes z, y, x) is predicted coarse to fine:
//  * anchors, the points whose every coordinate is a multiple of the anchor stride A = 2^L, by 3-D
//    Lorenzo on the anchor grid (zero outside it);
//  * then each tile, the box between neighbouring anchors (faces included), on its own: levels
//    l = L .. 1 (stride s = 2^l, half h = s / 2), and in each level one pass per axis in the
//    chunk's axis order: the pass along axis a predicts the points whose coordinate along a is an odd
//    multiple of h, whose coordinates along the axes passed before it in this level are multiples of h
//    and along the axes after it multiples of s, from their neighbours along a at -3h, -h, +h, +3h
//    (all known: multiples of s along a). Cubic where all four lie in the tile, quadratic with three,
//    linear with two, the one neighbour alone at the far edge; the linear order uses -h and +h only.
// The traversal serves two value domains: prequantized integers (int64; an arithmetic shift rounds;
// residuals mod 2^32 as Lorenzo's), and reconstructed values (float or double), which the interpolation
// codec uses: there a residual is quantized and the reconstruction feeds later predictions, as in SZ3
// (prequantizing first doubles the rounding noise a prediction sees: docs/EXPERIMENTS.md). Each
// operation rounds once, in a fixed order, with no contraction: the CPU and GPU predict the same values.
#pragma once
#include <type_traits>

#include "common/hd.hpp"
#include "predict/lorenzo.hpp"

namespace hpcz::predict {

// What a chunk's interpolation uses, one byte in the chunk's header (values 0 .. 17): the spline and the
// axis order within a level, one of the 6 permutations of (z, y, x) in kAxisOrders (0: slowest first, 1:
// fastest first, then the others). Values 0 .. 11: bit 0 the spline (0 linear, 1 cubic), bits >> 1 the
// axis order; 12 .. 17: the "natural" cubic (weights -3, 23, 23, -3 over 40 where four neighbours are
// there: smoother than the not-a-knot cubic, better at tight bounds), the axis order value - 12.
constexpr int kAxisOrders[6][3] = {{0, 1, 2}, {2, 1, 0}, {0, 2, 1}, {1, 2, 0}, {1, 0, 2}, {2, 0, 1}};
// The same table packed 2 bits an axis (device code reads no host arrays).
constexpr uint64_t pack_axis_orders() {
  uint64_t v = 0;
  for (int k = 0; k < 6; ++k)
    for (int j = 0; j < 3; ++j) v |= uint64_t(kAxisOrders[k][j]) << (2 * (3 * k + j));
  return v;
}
constexpr uint64_t kAxisOrdersPacked = pack_axis_orders();
constexpr uint8_t kInterpParamsCount = 18;
enum class Spline : uint8_t { linear = 0, cubic = 1, natural = 2 };
struct InterpParams {
  uint8_t bits = 1;
  HPCZ_HD Spline spline() const { return bits >= 12 ? Spline::natural : Spline(bits & 1); }
  HPCZ_HD int axis_order_index() const { return bits >= 12 ? bits - 12 : (bits >> 1) % 6; }
  HPCZ_HD void axis_order(int* o) const {
    const int k = axis_order_index();
    for (int j = 0; j < 3; ++j) o[j] = int((kAxisOrdersPacked >> (2 * (3 * k + j))) & 3);
  }
};

// num / 2^k: rounded to nearest (ties up) for integers, exact (a power of two) for floating point.
template <class V> HPCZ_HD V scale_down(V num, int k) {
  if constexpr (std::is_integral<V>::value) return (num + (V(1) << (k - 1))) >> k;
  else return num * (V(1) / V(int64_t(1) << k));
}

// num / d: rounded to nearest (ties up) for integers, one IEEE division (correctly rounded) otherwise.
template <class V> HPCZ_HD V divide_round(V num, int d) {
  if constexpr (std::is_integral<V>::value) {
    const V t = num + V(d / 2);
    return t >= 0 ? t / V(d) : -((-t + V(d) - 1) / V(d));  // floor
  } else {
    return num / V(d);
  }
}

// The prediction of a point at coordinate x along an axis of extent e, from its neighbours at
// x - 3h, x - h, x + h, x + 3h (get(k) the known value k * h away, k in {-3, -1, 1, 3}). V: int64_t on
// prequantized integers, float or double on reconstructed values (each operation rounded once, in this
// order: the CPU and GPU agree without contraction).
// U: the coordinates' unsigned type (the GPU's tiles take 32 bits).
template <class V, class U, class Get>
HPCZ_HD V interp_along(U x, U h, U e, Spline spline, Get&& get) {
  const bool has_next = x + h < e, has_prev2 = x >= 3 * h, has_next2 = x + 3 * h < e;
  const bool cubic = spline != Spline::linear;
  const V b = get(-1);
  if (!has_next) return has_prev2 && cubic ? scale_down<V>(V(3) * b - get(-3), 1) : b;
  const V c = get(1);
  if (!cubic) return scale_down<V>(b + c, 1);
  if (has_prev2 && has_next2) {
    if (spline == Spline::natural) return divide_round<V>(V(23) * (b + c) - V(3) * (get(-3) + get(3)), 40);
    return scale_down<V>(V(9) * (b + c) - (get(-3) + get(3)), 4);
  }
  if (has_prev2) return scale_down<V>(V(6) * b + V(3) * c - get(-3), 3);
  if (has_next2) return scale_down<V>(V(6) * c + V(3) * b - get(3), 3);
  return scale_down<V>(b + c, 1);
}

// The anchor stride's exponent: the anchors are about 1 / 4096 of a chunk's points whatever its rank
// (3-D: every 16th point along each axis; 2-D: 64th; 1-D: 4096th), so they cost little as Lorenzo
// residuals, and a tile (the box between neighbouring anchors, faces included) holds 17^3, 65^2 or
// 4097 values: one GPU block's shared memory.
constexpr int kMaxInterpLevel = 12;
HPCZ_HD int interp_anchor_level(const ChunkShape& c) {
  const int axes = (c.cz > 1) + (c.cy > 1) + (c.cx > 1);
  return axes >= 3 ? 4 : (axes == 2 ? 6 : 12);
}

struct InterpGeometry {
  uint64_t ext[3], stride[3];
  int level;            // L: anchor stride A = 2^L
  uint64_t anchor;      // A
  uint64_t tiles[3];    // tiles along each axis (anchors minus one, at least one)
  HPCZ_HD uint64_t tile_count() const { return tiles[0] * tiles[1] * tiles[2]; }
};

HPCZ_HD InterpGeometry interp_geometry(const ChunkShape& c) {
  InterpGeometry g;
  g.ext[0] = c.cz, g.ext[1] = c.cy, g.ext[2] = c.cx;
  g.stride[0] = uint64_t(c.cy) * c.cx, g.stride[1] = c.cx, g.stride[2] = 1;
  g.level = interp_anchor_level(c);
  g.anchor = uint64_t(1) << g.level;
  for (int j = 0; j < 3; ++j) g.tiles[j] = g.ext[j] > 1 ? ((g.ext[j] - 2) >> g.level) + 1 : 1;
  return g;
}

// The anchor grid: anchors along each axis, and anchor number k (raster order) to its index in the chunk.
// (Divisions by the anchor stride are shifts: 64-bit divisions cost the GPU's per-tile setup most of
// its time.)
HPCZ_HD uint64_t anchors_along(const InterpGeometry& g, int j) { return ((g.ext[j] - 1) >> g.level) + 1; }
HPCZ_HD uint64_t anchor_total(const InterpGeometry& g) {
  return anchors_along(g, 0) * anchors_along(g, 1) * anchors_along(g, 2);
}
HPCZ_HD uint64_t anchor_index(const InterpGeometry& g, uint64_t k) {
  const uint64_t ny = anchors_along(g, 1), nx = anchors_along(g, 2);
  return (k / (ny * nx)) * g.anchor * g.stride[0] + ((k / nx) % ny) * g.anchor * g.stride[1] + (k % nx) * g.anchor;
}
HPCZ_HD uint64_t anchor_number(const InterpGeometry& g, uint64_t i) {
  const uint64_t z = i / g.stride[0], y = (i / g.stride[1]) % g.ext[1], x = i % g.ext[2];
  return ((z >> g.level) * anchors_along(g, 1) + (y >> g.level)) * anchors_along(g, 2) + (x >> g.level);
}

// The Lorenzo prediction of anchor k on the anchor grid from q(j), the values of anchors j < k (the
// neighbours one anchor back along each axis, zero outside the chunk).
template <class V, class Q>
HPCZ_HD V anchor_prediction(const InterpGeometry& g, uint64_t k, Q&& q) {
  const uint64_t ny = anchors_along(g, 1), nx = anchors_along(g, 2);
  const uint64_t z = k / (ny * nx), y = (k / nx) % ny, x = k % nx;
  const uint64_t sz = ny * nx, sy = nx;
  const bool hz = z > 0, hy = y > 0, hx = x > 0;
  V p = V(0);
  if (hx) p += q(k - 1);
  if (hy) p += q(k - sy);
  if (hz) p += q(k - sz);
  if (hx && hy) p -= q(k - sy - 1);
  if (hx && hz) p -= q(k - sz - 1);
  if (hy && hz) p -= q(k - sz - sy);
  if (hx && hy && hz) p += q(k - sz - sy - 1);
  return p;
}

// The anchors in raster order: put(i, prediction) with anchor_prediction from get(j) of anchors
// visited before (j their indices in the chunk).
template <class V, class Get, class Put>
HPCZ_HD void interp_anchors(const InterpGeometry& g, Get&& get, Put&& put) {
  const uint64_t na = anchor_total(g);
  for (uint64_t k = 0; k < na; ++k)
    put(anchor_index(g, k), anchor_prediction<V>(g, k, [&](uint64_t j) -> V { return get(anchor_index(g, j)); }));
}

// A tile's box in some array: its extents (faces included), the extents it owns (the coordinates
// below them; the chunk's last tile along an axis owns its far face too), the array's strides and the
// box's first point.
struct TileBox {
  uint64_t e[3], own[3], stride[3], base;
  HPCZ_HD uint64_t count() const { return e[0] * e[1] * e[2]; }
};

// Tile t's coordinates on the tile grid (z, y, x).
HPCZ_HD void tile_coords(const InterpGeometry& g, uint64_t t, uint64_t* tc) {
  tc[0] = t / (g.tiles[1] * g.tiles[2]), tc[1] = (t / g.tiles[2]) % g.tiles[1], tc[2] = t % g.tiles[2];
}

// The tile at tile coordinates tc in the chunk.
HPCZ_HD TileBox tile_box_at(const InterpGeometry& g, const uint64_t* tc) {
  const uint64_t A = g.anchor;
  TileBox b;
  b.base = 0;
  for (int j = 0; j < 3; ++j) {
    const uint64_t o = tc[j] * A;
    b.e[j] = g.ext[j] - o < A + 1 ? g.ext[j] - o : A + 1;
    b.own[j] = tc[j] + 1 == g.tiles[j] ? b.e[j] : A;
    b.stride[j] = g.stride[j];
    b.base += o * g.stride[j];
  }
  return b;
}
// Tile t (raster order of tiles) in the chunk.
HPCZ_HD TileBox tile_box(const InterpGeometry& g, uint64_t t) {
  uint64_t tc[3];
  tile_coords(g, t, tc);
  return tile_box_at(g, tc);
}

// The same box copied out on its own (contiguous, first point at 0).
HPCZ_HD TileBox local_box(const TileBox& b) {
  TileBox l = b;
  l.stride[0] = b.e[1] * b.e[2], l.stride[1] = b.e[2], l.stride[2] = 1;
  l.base = 0;
  return l;
}

// One pass of a box's traversal (level l, the k-th axis of the order): the points whose coordinate
// along axis a is an odd multiple of h, along the axes passed before it in this level multiples of h,
// along the others multiples of s = 2h; from[j] + step[j] * m for m < n[j], of which the first own[j]
// lie below the box's owned extent.
struct InterpPass {
  int a;
  uint32_t h;
  uint32_t from[3], step[3], n[3], own[3];
  HPCZ_HD uint32_t count() const { return n[0] * n[1] * n[2]; }
  HPCZ_HD uint32_t owned() const { return own[0] * own[1] * own[2]; }
};

// Pass k of level l of box b with the axis order `order`; false where it has no point (the box is no
// longer than h along a).
HPCZ_HD bool interp_pass(const TileBox& b, int l, int k, const int* order, InterpPass& p) {
  const uint32_t s = uint32_t(1) << l, h = s >> 1;
  p.a = order[k];
  p.h = h;
  if (b.e[p.a] <= h) return false;
  for (int j = 0; j < 3; ++j) {
    bool before = false;
    for (int m = 0; m < k; ++m) before |= order[m] == j;
    p.step[j] = j == p.a ? s : (before ? h : s);
    p.from[j] = j == p.a ? h : 0;
    const uint32_t e = uint32_t(b.e[j]), o = uint32_t(b.own[j]);
    p.n[j] = p.from[j] < e ? (e - 1 - p.from[j]) / p.step[j] + 1 : 0;
    p.own[j] = p.from[j] < o ? (o - 1 - p.from[j]) / p.step[j] + 1 : 0;
  }
  return true;
}

// The points of a box but its anchors (the corners at multiples of A = 2^level): visit(i, a, at, h,
// extent, owned) in level order, i the point's index through the box's strides, a the axis it is
// predicted along, at its box coordinate there, h the level's half stride, extent the box's along a.
// A point on the box's far faces (owned false) belongs to the next tile.
template <class Visit>
HPCZ_HD void interp_box_points(const TileBox& b, int level, InterpParams ip, Visit&& visit) {
  int order[3];
  ip.axis_order(order);
  for (int l = level; l >= 1; --l)
    for (int k = 0; k < 3; ++k) {
      InterpPass p;
      if (!interp_pass(b, l, k, order, p)) continue;
      const int a = p.a;
      for (uint32_t mz = 0; mz < p.n[0]; ++mz)
        for (uint32_t my = 0; my < p.n[1]; ++my)
          for (uint32_t mx = 0; mx < p.n[2]; ++mx) {
            const uint64_t z = p.from[0] + mz * p.step[0], y = p.from[1] + my * p.step[1], x = p.from[2] + mx * p.step[2];
            visit(b.base + z * b.stride[0] + y * b.stride[1] + x * b.stride[2], a, a == 0 ? z : (a == 1 ? y : x), p.h,
                  b.e[a], mz < p.own[0] && my < p.own[1] && mx < p.own[2]);
          }
    }
}

// Where tile t's owned points start in the symbol stream, after the anchors: the owned points but
// anchors of the tiles before it in raster order. Along each axis every tile but the last owns A
// coordinates (one of them an anchor's); the owned extents add up to the chunk's.
HPCZ_HD uint64_t tile_stream_offset_at(const InterpGeometry& g, const uint64_t* tc) {
  const uint64_t A = g.anchor;
  uint64_t own[3], anc[3];
  for (int j = 0; j < 3; ++j) {
    const bool last = tc[j] + 1 == g.tiles[j];
    own[j] = last ? g.ext[j] - tc[j] * A : A;
    anc[j] = last ? ((own[j] - 1) >> g.level) + 1 : 1;
  }
  const uint64_t na1 = anchors_along(g, 1), na2 = anchors_along(g, 2);
  return (tc[0] * A * g.ext[1] * g.ext[2] - tc[0] * na1 * na2) +
         (own[0] * tc[1] * A * g.ext[2] - anc[0] * tc[1] * na2) + (own[0] * own[1] * tc[2] * A - anc[0] * anc[1] * tc[2]);
}
HPCZ_HD uint64_t tile_stream_offset(const InterpGeometry& g, uint64_t t) {
  uint64_t tc[3];
  tile_coords(g, t, tc);
  return tile_stream_offset_at(g, tc);
}

// A box predicted level by level without looking outside it: put(i, prediction, owned) for every
// point of interp_box_points, in that order, with get(j) of a point's predictors returning values
// visited before (in this box, or its anchors). A far-face point is predicted the same way by the next
// tile from the same face values, so tiles run in any order, each on a copy of its box.
template <class V, class Get, class Put>
HPCZ_HD void interp_box(const TileBox& b, int level, InterpParams ip, Get&& get, Put&& put) {
  interp_box_points(b, level, ip, [&](uint64_t i, int a, uint64_t at, uint64_t h, uint64_t extent, bool owned) {
    const int64_t sa = int64_t(b.stride[a] * h);
    const V p = interp_along<V>(at, h, extent, ip.spline(), [&](int64_t k) -> V { return get(uint64_t(int64_t(i) + k * sa)); });
    put(i, p, owned);
  });
}

// Tile t of the chunk, in place.
template <class V, class Get, class Put>
HPCZ_HD void interp_tile(const InterpGeometry& g, InterpParams ip, uint64_t t, Get&& get, Put&& put) {
  interp_box<V>(tile_box(g, t), g.level, ip, get, put);
}

// Anchors, then every tile in order.
template <class V, class Get, class Put>
inline void interp_traverse(const ChunkShape& c, InterpParams ip, Get&& get, Put&& put) {
  const InterpGeometry g = interp_geometry(c);
  interp_anchors<V>(g, get, [&](uint64_t i, V p) { put(i, p, true); });
  for (uint64_t t = 0; t < g.tile_count(); ++t) interp_tile<V>(g, ip, t, get, put);
}

// The chunk's points in the order an interpolation chunk's symbols are written in: the anchors, then
// tile by tile the points each tile owns, in its visiting order, so that the residuals of one level,
// alike, lie together for the stage after the Huffman code.
template <class Emit>
inline void interp_order(const ChunkShape& c, InterpParams ip, Emit&& emit) {
  const InterpGeometry g = interp_geometry(c);
  interp_anchors<int64_t>(g, [](uint64_t) { return int64_t(0); }, [&](uint64_t i, int64_t) { emit(i); });
  for (uint64_t t = 0; t < g.tile_count(); ++t)
    interp_box_points(tile_box(g, t), g.level, ip, [&](uint64_t i, int, uint64_t, uint64_t, uint64_t, bool owned) {
      if (owned) emit(i);
    });
}

// Residuals of the whole chunk: d[i] = q[i] - prediction (mod 2^32), q the chunk's prequantized values
// (as uint32, read as int32).
inline void interp_residuals(const ChunkShape& c, InterpParams ip, const uint32_t* q, uint32_t* d) {
  interp_traverse<int64_t>(
      c, ip, [&](uint64_t j) { return int64_t(int32_t(q[j])); },
      [&](uint64_t i, int64_t p, bool) { d[i] = q[i] - uint32_t(uint64_t(p)); });
}

// The inverse: q from the residuals d.
inline void inverse_interp(const ChunkShape& c, InterpParams ip, const uint32_t* d, uint32_t* q) {
  interp_traverse<int64_t>(
      c, ip, [&](uint64_t j) { return int64_t(int32_t(q[j])); },
      [&](uint64_t i, int64_t p, bool) { q[i] = d[i] + uint32_t(uint64_t(p)); });
}

}  // namespace hpcz::predict
