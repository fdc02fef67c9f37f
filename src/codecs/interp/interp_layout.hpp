// The interpolation codec's chunk format and per-point rules, shared by the CPU (interp_chunk.hpp) and
// the CUDA kernels (interp_kernels.cuh): constants, symbols, the residual's quantization, the
// parameter sets that predict alike, and the chunk header's parser.
#pragma once
#include "codecs/ratio_class/chunk.hpp"
#include "predict/interp.hpp"

namespace hpcz::ratio {

// Header bytes 128..135 of the interpolation codec: the longest codeword and the predictor family
// (2 = per chunk, Lorenzo or interpolation).
constexpr uint64_t kInterpCodecParams = uint64_t(huffman::kMaxLen) | uint64_t(2) << 8;
// The predictor's parameters are chosen per chunk from the symbols of sampled tiles, evenly spaced:
// the axis order from about kInterpOrderSampleTiles, then the spline and the predictor from about
// kInterpSampleTiles. Fewer samples than 64 change only near-ties; fewer than 40 for the order moved
// some fields by a few percent either way (docs/EXPERIMENTS.md).
constexpr uint64_t kInterpOrderSampleTiles = 40;
constexpr uint64_t kInterpSampleTiles = 32;
// The spacing of a chunk's sampled tiles (tile t sampled where t % every == 0), and their count.
HPCZ_HD uint64_t interp_sample_every(uint64_t tiles, uint64_t samples) { return tiles > samples ? tiles / samples : 1; }
HPCZ_HD uint64_t interp_sample_count(uint64_t tiles, uint64_t samples) {
  const uint64_t every = interp_sample_every(tiles, samples);
  return (tiles + every - 1) / every;
}

enum : uint8_t { kPointCoded = 0, kPointZero = 1, kPointMask = 2, kPointException = 3 };

HPCZ_HD uint32_t interp_mask_symbol(uint32_t radius) { return 2 * radius - 1; }
// Symbol of a coded delta: d + radius for -radius < d < radius - 1, else 0 (an outlier).
HPCZ_HD uint32_t interp_symbol(uint32_t delta, uint32_t radius) {
  const uint32_t s = delta + radius;
  return s - 1u < 2u * radius - 2u ? s : 0u;
}
HPCZ_HD int32_t clamp_q(int64_t q) {
  return int32_t(q < -(quant::kQLimit - 1) ? -(quant::kQLimit - 1) : (q > quant::kQLimit - 1 ? quant::kQLimit - 1 : q));
}

// The residual's q for x against prediction `pred`, and the reconstruction, or false: x is stored
// exactly. The same tests as quant::quantize (fill, |q| < 2^30, the exact bound), on x - pred.
template <class T>
HPCZ_HD bool quantize_residual(T x, T pred, const quant::QuantParams<T>& p, int32_t& q, T& rec) {
  if (p.has_fill && x == p.fill) return false;
  const T s = (x - pred) * p.recip;
  if (!(quant::abs_value(s) < T(quant::kQLimit) - T(1))) return false;  // NaN, Inf and huge fail here
  const int32_t q0 = int32_t(quant::round_half_even(s));
  // Almost always settled here: T's subtraction rounds monotonically and eb_below is a T, so
  // |fl(r0 - x)| < eb_below implies |r0 - x| < eb: the exact test below would take q0 too.
  const T r0 = pred + quant::dequantize(q0, p.step);
  if (quant::abs_value(r0 - x) < p.eb_below) {
    q = q0;
    rec = r0;
    return true;
  }
  for (int k = 0; k < 3; ++k) {
    const int32_t c = q0 + (k == 0 ? 0 : (k == 1 ? -1 : 1));
    const T r = pred + quant::dequantize(c, p.step);
    if (quant::within_bound(double(x), double(r), p.eb)) {
      q = c;
      rec = r;
      return true;
    }
  }
  return false;
}

template <class T>
HPCZ_HD uint32_t point_symbol(uint8_t cls, uint32_t delta, uint32_t radius) {
  return cls == kPointCoded ? interp_symbol(delta, radius) : (cls == kPointMask ? interp_mask_symbol(radius) : 0u);
}

// The parameter sets the encoder samples (choose_interp_params) at axis order `order`: k = 0 the cubic
// (stage 1's trials, and stage 2's first), 1 the linear, 2 the natural spline (stage 2's others).
HPCZ_HD uint8_t interp_stage_params(int k, uint8_t order) {
  return k == 0 ? uint8_t(2 * order + 1) : (k == 1 ? uint8_t(2 * order) : uint8_t(12 + order));
}

// Whether parameters b predict exactly as an earlier set (lower bits value) on this chunk: the same
// order, and the same axis order once the axes of extent 1 (never passed) are left out.
HPCZ_HD bool same_as_earlier_params(const predict::InterpGeometry& g, uint8_t b) {
  auto reduced = [&](uint8_t p) {
    int o[3], r = 0;
    predict::InterpParams{p}.axis_order(o);
    for (int k = 0; k < 3; ++k)
      if (g.ext[o[k]] > 1) r = r * 4 + o[k] + 1;
    return r;
  };
  for (uint8_t e = 0; e < b; ++e)
    if (predict::InterpParams{e}.spline() == predict::InterpParams{b}.spline() && reduced(e) == reduced(b)) return true;
  return false;
}

// The axis order's estimate without the traversal (choose_interp_params's first stage on a chunk with
// no mask): each point of a sampled tile but its anchors, predicted by the cubic spline from the
// original values along each of its odd axes (those where its coordinate is an odd multiple of its
// level's half stride h), one symbol per axis. An order predicts the point along the last of its odd
// axes in that order, so each order's histogram is a choice among the same three symbols: one pass for
// all six orders. On the shared fields and their axis permutations this picks the order the exact
// trials pick (docs/EXPERIMENTS.md).
// c: the point's box coordinates, e the box's extents, h and odd as above; get(a, k) the value k h away
// along axis a. False: a neighbour is not finite (the point is left out: its symbols would only say so
// in every order).
template <class T, class Get>
HPCZ_HD bool order_estimate_symbols(const uint32_t* c, const uint32_t* e, uint32_t h, uint32_t odd, T v,
                                    const quant::QuantParams<T>& p, uint32_t radius, Get&& get, uint32_t* sym) {
  bool finite = true;
  for (int a = 0; a < 3; ++a) {
    sym[a] = 0;
    if (!(odd >> a & 1)) continue;
    const T pred = predict::interp_along<T>(c[a], h, e[a], predict::Spline::cubic, [&](int k) -> T {
      const T w = get(a, k);
      finite &= quant::abs_value(w) <= quant::max_finite<T>();
      return w;
    });
    int32_t q;
    T rec;
    if (quantize_residual(v, pred, p, q, rec)) sym[a] = interp_symbol(uint32_t(q), radius);
  }
  return finite;
}
// A box point's level: its half stride h (the lowest bit set in any coordinate) and odd axes; false for
// an anchor (every coordinate a multiple of the anchor stride, mask A - 1).
HPCZ_HD bool point_level(const uint32_t* c, uint32_t anchor_mask, uint32_t& h, uint32_t& odd) {
  const uint32_t any = (c[0] | c[1] | c[2]) & anchor_mask;
  if (!any) return false;
  h = any & (0u - any);
  odd = uint32_t((c[0] & h) != 0) | uint32_t((c[1] & h) != 0) << 1 | uint32_t((c[2] & h) != 0) << 2;
  return true;
}
// The axis order k's predicting axis for a point with odd axes `odd` (non-zero): the last of them.
HPCZ_HD int order_last_odd_axis(int k, uint32_t odd) {
  int last = 0;
  for (int j = 0; j < 3; ++j) {
    const int a = int((predict::kAxisOrdersPacked >> (2 * (3 * k + j))) & 3);
    if (odd >> a & 1) last = a;
  }
  return last;
}

// Which predictors the encoder runs on a chunk, from their estimates on the same sampled points: one
// alone where its estimate is more than 1/16 below the other's (the estimates are within a few percent
// of the chunks' sizes), else both, and the smaller chunk is kept.
enum : uint32_t { kRunLorenzo = 1, kRunInterp = 2 };
HPCZ_HD uint32_t predictors_to_run(uint64_t lorenzo_bytes, uint64_t interp_bytes) {
  if (16 * interp_bytes < 15 * lorenzo_bytes) return kRunInterp;
  if (16 * lorenzo_bytes < 15 * interp_bytes) return kRunLorenzo;
  return kRunLorenzo | kRunInterp;
}

// The Lorenzo codec's symbol of chunk point (z, y, x) and whether it is an exception: q(dz, dy, dx)
// the prequantized value dz planes, dy rows and dx columns back (0 for an exception), as encode_chunk.
template <class Q>
HPCZ_HD uint32_t lorenzo_point_symbol(uint32_t z, uint32_t y, uint32_t x, uint32_t radius, Q&& q) {
  return predict::quant_symbol(predict::lorenzo_delta(z > 0, y > 0, x > 0, q), radius);
}

}  // namespace hpcz::ratio
