// Interpolation prediction on prequantized integers (the SZ3 / QoZ / cuSZ-i family, on q instead of
// reconstructed values), shared by the CPU backend and the CUDA kernels.
//
// A chunk (predict/lorenzo.hpp's ChunkShape, axes z, y, x) is predicted coarse to fine:
//  * anchors, the points whose every coordinate is a multiple of the anchor stride A = 2^L, by 3-D
//    Lorenzo on the anchor grid (zero outside it);
//  * then levels l = L .. 1 (stride s = 2^l, half h = s / 2), and in each level one pass per axis in the
//    chunk's axis order: the pass along axis a predicts the points whose coordinate along a is an odd
//    multiple of h, whose coordinates along the axes passed before it in this level are multiples of h
//    and along the axes after it multiples of s, from their neighbours along a at -3h, -h, +h, +3h
//    (all known: multiples of s along a). Cubic where all four lie in the chunk, quadratic with three,
//    linear with two, the one neighbour alone at the far edge; the linear order uses -h and +h only.
// Every point is predicted from q values that are exact (prequantization made them so), never from
// reconstructions: the residual of each point depends on q alone, so the encoder computes all of them
// in parallel, and the decoder needs only the level order. Integer arithmetic (int64, an arithmetic
// shift rounds), residuals mod 2^32 as Lorenzo's: the CPU and GPU predict the same values.
#pragma once
#include <type_traits>

#include "common/hd.hpp"
#include "predict/lorenzo.hpp"

namespace hpcz::predict {

// What a chunk's interpolation uses, one byte in the chunk's header: bit 0 the order (0 linear, 1 cubic),
// bit 1 the axis order (0 slowest first: z, y, x; 1 fastest first: x, y, z).
struct InterpParams {
  uint8_t bits = 1;
  HPCZ_HD bool cubic() const { return bits & 1; }
  HPCZ_HD bool fastest_first() const { return bits & 2; }
};
constexpr uint8_t kInterpParamsCount = 4;

// The anchor stride's exponent: the anchors are about 1 / 4096 of a chunk's points whatever its rank
// (3-D: every 16th point along each axis; 2-D: 64th; 1-D: 4096th), so they cost little as Lorenzo
// residuals, while the levels above them would predict from points too far apart to help.
HPCZ_HD int interp_anchor_level(const ChunkShape& c) {
  const int axes = (c.cz > 1) + (c.cy > 1) + (c.cx > 1);
  return axes >= 3 ? 4 : (axes == 2 ? 6 : 12);
}

// num / 2^k: rounded to nearest (ties up) for integers, exact (a power of two) for floating point.
template <class V> HPCZ_HD V scale_down(V num, int k) {
  if constexpr (std::is_integral<V>::value) return (num + (V(1) << (k - 1))) >> k;
  else return num * (V(1) / V(int64_t(1) << k));
}

// The prediction of a point at coordinate x along an axis of extent e, from its neighbours at
// x - 3h, x - h, x + h, x + 3h (get(k) the known value k * h away, k in {-3, -1, 1, 3}). V: int64_t on
// prequantized integers, float or double on reconstructed values (each operation rounded once, in this
// order: the CPU and GPU agree without contraction).
template <class V, class Get>
HPCZ_HD V interp_along(uint64_t x, uint64_t h, uint64_t e, bool cubic, Get&& get) {
  const bool has_next = x + h < e, has_prev2 = x >= 3 * h, has_next2 = x + 3 * h < e;
  const V b = get(-1);
  if (!has_next) return has_prev2 && cubic ? scale_down<V>(V(3) * b - get(-3), 1) : b;
  const V c = get(1);
  if (!cubic) return scale_down<V>(b + c, 1);
  if (has_prev2 && has_next2) return scale_down<V>(V(9) * (b + c) - (get(-3) + get(3)), 4);
  if (has_prev2) return scale_down<V>(V(6) * b + V(3) * c - get(-3), 3);
  if (has_next2) return scale_down<V>(V(6) * c + V(3) * b - get(3), 3);
  return scale_down<V>(b + c, 1);
}

// Visits every point of a chunk in an order in which each point's predictors come before it:
// put(i, prediction) with get(j) the (signed) value at an index visited earlier. The encoder's put
// stores q[i] - prediction; the decoder's adds the prediction to the residual it holds at i.
template <class V, class Get, class Put>
inline void interp_traverse(const ChunkShape& c, InterpParams ip, Get&& get, Put&& put) {
  const uint64_t ext[3] = {c.cz, c.cy, c.cx};
  const uint64_t stride[3] = {uint64_t(c.cy) * c.cx, c.cx, 1};
  const int L = interp_anchor_level(c);
  const uint64_t A = uint64_t(1) << L;
  // Anchors: Lorenzo on the anchor grid, in raster order.
  for (uint64_t z = 0; z < ext[0]; z += A)
    for (uint64_t y = 0; y < ext[1]; y += A)
      for (uint64_t x = 0; x < ext[2]; x += A) {
        const uint64_t i = z * stride[0] + y * stride[1] + x;
        auto q = [&](int dz, int dy, int dx) -> V {
          return get(i - dz * A * stride[0] - dy * A * stride[1] - dx * A);
        };
        const bool hz = z > 0, hy = y > 0, hx = x > 0;
        V p = V(0);
        if (hx) p += q(0, 0, 1);
        if (hy) p += q(0, 1, 0);
        if (hz) p += q(1, 0, 0);
        if (hx && hy) p -= q(0, 1, 1);
        if (hx && hz) p -= q(1, 0, 1);
        if (hy && hz) p -= q(1, 1, 0);
        if (hx && hy && hz) p += q(1, 1, 1);
        put(i, p);
      }
  const int order[3] = {ip.fastest_first() ? 2 : 0, 1, ip.fastest_first() ? 0 : 2};
  for (int l = L; l >= 1; --l) {
    const uint64_t s = uint64_t(1) << l, h = s >> 1;
    for (int k = 0; k < 3; ++k) {
      const int a = order[k];
      if (ext[a] <= h) continue;  // no odd multiple of h inside the chunk along a
      // The step along each axis: h along a and the axes passed before it, s along the others.
      uint64_t step[3], from[3];
      for (int j = 0; j < 3; ++j) {
        bool before = false;
        for (int m = 0; m < k; ++m) before |= order[m] == j;
        step[j] = j == a ? s : (before ? h : s);
        from[j] = j == a ? h : 0;
      }
      const uint64_t sa = stride[a];
      for (uint64_t z = from[0]; z < ext[0]; z += step[0])
        for (uint64_t y = from[1]; y < ext[1]; y += step[1])
          for (uint64_t x = from[2]; x < ext[2]; x += step[2]) {
            const uint64_t i = z * stride[0] + y * stride[1] + x;
            const uint64_t at = a == 0 ? z : (a == 1 ? y : x);
            const V p = interp_along<V>(at, h, ext[a], ip.cubic(), [&](int64_t k2) -> V {
              return get(uint64_t(int64_t(i) + k2 * int64_t(h * sa)));
            });
            put(i, p);
          }
    }
  }
}

// Residuals of the whole chunk: d[i] = q[i] - prediction (mod 2^32), q the chunk's prequantized values
// (as uint32, read as int32).
inline void interp_residuals(const ChunkShape& c, InterpParams ip, const uint32_t* q, uint32_t* d) {
  interp_traverse<int64_t>(
      c, ip, [&](uint64_t j) { return int64_t(int32_t(q[j])); },
      [&](uint64_t i, int64_t p) { d[i] = q[i] - uint32_t(uint64_t(p)); });
}

// The inverse, in place: v holds residuals and becomes the q values (as uint32).
inline void inverse_interp(const ChunkShape& c, InterpParams ip, uint32_t* v) {
  interp_traverse<int64_t>(
      c, ip, [&](uint64_t j) { return int64_t(int32_t(v[j])); },
      [&](uint64_t i, int64_t p) { v[i] += uint32_t(uint64_t(p)); });
}

}  // namespace hpcz::predict
