// The interpolation codec's chunks (codec 3): each chunk is coded with the better of two predictors,
// Lorenzo (the ratio codec's coded chunk, kind 0, unchanged) and interpolation (kind 2), or stored raw
// (kind 1). An interpolation chunk is a ratio chunk with 8 more header bytes and other meanings:
//
//   [16-byte chunk header: u32 total_bits, n_outliers, n_exceptions, kind = 2 | params << 8 | masked << 16]
//   [mask value: the bits of a T, zero-extended to 8 bytes]
//   [code lengths][seq_first][gaps][bit stream][outlier indices][outlier deltas][exception indices]
//   [exception values]                                       (as chunk.hpp)
//
// Prediction (predict/interp.hpp, `params` its InterpParams): anchors by Lorenzo on their prequantized
// q; every other point from reconstructed values, its residual r = x - prediction quantized to
// rint(r / step) (or a neighbour of it) so that prediction + q * step is within the bound, exactly
// checked. Symbols: deltas -radius < d < radius - 1 as d + radius; 0 where the point is an outlier (its
// delta in the outlier list) or an exception (its value in the exception list: NaN, Inf, the fill
// value, a value no q reconstructs); 2 radius - 1 where the value is the chunk's mask value (bit for
// bit: the fill value where there is one, else the chunk's first NaN). Masked points and exceptions
// take their prediction as their stand-in for later predictions (an anchor: the Lorenzo prediction as
// its q), so a mask costs about one symbol a point and does not disturb its valid neighbours.
#pragma once
#include "common/threads.hpp"

#include <cmath>

#include "codecs/interp/interp_layout.hpp"
#include "common/scratch_vector.hpp"

namespace hpcz::ratio {

// The chunk's mask value: the fill value where the options have one, else its first NaN.
template <class T>
struct ChunkMask {
  bool on = false;
  typename Bits<T>::type bits = 0;
};
template <class T>
ChunkMask<T> chunk_mask(const T* in, uint32_t n, const quant::QuantParams<T>& p) {
  ChunkMask<T> m;
  if (p.has_fill) {
    m.on = true;
    m.bits = to_bits(p.fill);
    return m;
  }
  for (uint32_t i = 0; i < n; ++i)
    if (in[i] != in[i]) {
      m.on = true;
      m.bits = to_bits(in[i]);
      break;
    }
  return m;
}

// One chunk's interpolation encoding state: per point its symbol, outlier delta, class and stand-in.
template <class T>
struct InterpScratch {
  ScratchVector<T> xr;             // the anchors' reconstructions (stand-ins where masked or exact)
  ScratchVector<uint32_t> delta;   // a coded point's delta (outliers keep theirs here)
  ScratchVector<uint8_t> cls;      // kPoint*
  std::vector<int32_t> anchor_q; // q of the anchors, by anchor number
  bool keep_recon = false;       // xr keeps every point's reconstruction, not the anchors' alone
};

// Anchors: their class, q (stand-in: the prediction), delta and reconstruction.
template <class T>
void encode_anchors(const T* in, const predict::InterpGeometry& g, const quant::QuantParams<T>& p,
                    const ChunkMask<T>& mask, InterpScratch<T>& s) {
  s.anchor_q.assign(predict::anchor_total(g), 0);
  predict::interp_anchors<int64_t>(
      g, [&](uint64_t j) { return int64_t(s.anchor_q[predict::anchor_number(g, j)]); },
      [&](uint64_t i, int64_t pred) {
        int32_t q;
        const int32_t stand_in = clamp_q(pred);
        if (mask.on && to_bits(in[i]) == mask.bits) {
          s.cls[i] = kPointMask, q = stand_in;
        } else if (quant::quantize(in[i], p, q)) {
          s.cls[i] = kPointCoded;
          s.delta[i] = uint32_t(q) - uint32_t(uint64_t(pred));
        } else {
          s.cls[i] = kPointException, q = stand_in;
        }
        s.anchor_q[predict::anchor_number(g, i)] = q;
        s.xr[i] = quant::dequantize<T>(q, p.step);
      });
}

// A tile's box copied out (contiguous): its values, reconstructions, classes and deltas.
template <class T>
struct TileScratch {
  std::vector<T> x, xr;
  std::vector<uint8_t> cls;
  std::vector<uint32_t> delta;
  void size(uint64_t n) {
    x.resize(n), xr.resize(n), cls.resize(n), delta.resize(n);
  }
};

// f(local index, chunk index, is_anchor) for every point of a box (owned_only: those it owns).
template <class F>
void for_box(const predict::TileBox& b, uint64_t anchor, bool owned_only, F&& f) {
  const uint64_t* lim = owned_only ? b.own : b.e;
  for (uint64_t z = 0; z < lim[0]; ++z)
    for (uint64_t y = 0; y < lim[1]; ++y) {
      const uint64_t l0 = (z * b.e[1] + y) * b.e[2], g0 = b.base + z * b.stride[0] + y * b.stride[1];
      const bool corner_zy = z % anchor == 0 && y % anchor == 0;
      for (uint64_t x = 0; x < lim[2]; ++x) f(l0 + x, g0 + x, corner_zy && x % anchor == 0);
    }
}

// One tile, on a copy of its box: the class and delta of every point it owns (its anchors excepted);
// with hist, their symbols are counted there; with sym, written there in stream order from the tile's
// place (tile_stream_offset after the anchors). s.xr holds the anchors' reconstructions.
template <class T>
void encode_tile(const T* in, const predict::InterpGeometry& g, predict::InterpParams ip, uint64_t t,
                 const quant::QuantParams<T>& p, const ChunkMask<T>& mask, InterpScratch<T>& s, TileScratch<T>& ts,
                 std::vector<uint32_t>* hist = nullptr, uint32_t radius = 0, uint32_t* sym = nullptr) {
  const predict::TileBox box = predict::tile_box(g, t), local = predict::local_box(box);
  ts.size(box.count());
  for_box(box, g.anchor, false, [&](uint64_t l, uint64_t i, bool anchor) {
    ts.x[l] = in[i];
    if (anchor) ts.xr[l] = s.xr[i];
  });
  predict::interp_box<T>(
      local, g.level, ip, [&](uint64_t j) { return ts.xr[j]; },
      [&](uint64_t l, T pred, bool owned) {
        int32_t q;
        T rec;
        if (mask.on && to_bits(ts.x[l]) == mask.bits) {
          ts.cls[l] = kPointMask, ts.xr[l] = pred;
        } else if (quantize_residual(ts.x[l], pred, p, q, rec)) {
          ts.cls[l] = kPointCoded, ts.delta[l] = uint32_t(q), ts.xr[l] = rec;
        } else {
          ts.cls[l] = kPointException, ts.xr[l] = pred;
        }
        if (hist && owned) ++(*hist)[point_symbol<T>(ts.cls[l], ts.delta[l], radius)];
        if (sym && owned) *sym++ = point_symbol<T>(ts.cls[l], ts.delta[l], radius);
      });
  if (hist) return;  // sampling: the counts are all it needs
  for_box(box, g.anchor, true, [&](uint64_t l, uint64_t i, bool anchor) {
    if (anchor) return;
    s.cls[i] = ts.cls[l], s.delta[i] = ts.delta[l];
    if (s.keep_recon) s.xr[i] = ts.xr[l];
  });
}

// Runs tile(t, scratch) for every tile t that keep(t) accepts, with `threads` threads, each with a
// TileScratch of its own (tiles share no written point: each writes only what it owns).
template <class T, class Keep, class Tile>
void for_tiles(const predict::InterpGeometry& g, int threads, Keep&& keep, Tile&& tile) {
  std::vector<TileScratch<T>> scratch(size_t(threads > 1 ? threads : 1));
#pragma omp parallel for schedule(dynamic) num_threads(threads) if (threads > 1)
  for (int64_t t = 0; t < int64_t(g.tile_count()); ++t)
    if (keep(uint64_t(t))) tile(uint64_t(t), scratch[size_t(hpcz::thread_num()) % scratch.size()]);
}

// Estimated bytes of the symbols in hist (their Huffman code, 8 bytes an outlier or exception).
inline uint64_t estimated_bytes(const std::vector<uint32_t>& hist) {
  const Book book = build_book(hist.data(), uint32_t(hist.size()));
  uint64_t bits = 0;
  for (size_t k = 0; k < hist.size(); ++k) bits += uint64_t(hist[k]) * book.len[k];
  return bits / 8 + 8ull * hist[0];
}

// The first stage's histograms without a mask (order_estimate_symbols): hists[k] for axis order k, over
// the owned points of every `every`-th tile.
template <class T>
void order_estimate_hists(const T* in, const predict::InterpGeometry& g, const quant::QuantParams<T>& p, uint32_t radius,
                          uint64_t every, std::vector<std::vector<uint32_t>>& hists) {
  hists.assign(6, std::vector<uint32_t>(2 * radius, 0));
  for (auto& h : hists) h[0] = 1;  // one outlier: no histogram is empty (a chunk of Inf)
  const uint32_t amask = uint32_t(g.anchor) - 1;
  for (uint64_t t = 0; t < g.tile_count(); t += every) {
    const predict::TileBox b = predict::tile_box(g, t);
    const uint32_t e[3] = {uint32_t(b.e[0]), uint32_t(b.e[1]), uint32_t(b.e[2])};
    for (uint32_t z = 0; z < b.own[0]; ++z)
      for (uint32_t y = 0; y < b.own[1]; ++y)
        for (uint32_t x = 0; x < b.own[2]; ++x) {
          const uint32_t c[3] = {z, y, x};
          uint32_t h, odd;
          if (!point_level(c, amask, h, odd)) continue;
          const uint64_t i = b.base + z * b.stride[0] + y * b.stride[1] + x;
          uint32_t sym[3];
          if (!order_estimate_symbols<T>(
                  c, e, h, odd, in[i], p, radius,
                  [&](int a, int k) { return in[uint64_t(int64_t(i) + k * int64_t(h) * int64_t(b.stride[a]))]; }, sym))
            continue;
          for (int k = 0; k < 6; ++k) ++hists[size_t(k)][sym[order_last_odd_axis(k, odd)]];
        }
  }
}

// The interpolation parameters that code the sampled tiles of a chunk smallest, in two stages (a third
// of the trials of all 18 sets, about the same choice): the axis order under the cubic spline on
// kInterpOrderSampleTiles tiles (the first of equals among the orders that predict differently; by
// order_estimate_hists where the chunk has no mask, else by trials: a mask's stand-ins change what an
// order costs near it), then
// that order's cubic, linear and natural splines on kInterpSampleTiles tiles (the cubic kept on ties,
// then the linear). s holds the anchors. `estimate`: the chosen set's estimate on the second stage's
// tiles.
template <class T>
predict::InterpParams choose_interp_params(const T* in, const predict::InterpGeometry& g, const quant::QuantParams<T>& p,
                                           uint32_t radius, const ChunkMask<T>& mask, InterpScratch<T>& s, int threads,
                                           uint64_t& estimate) {
  const uint64_t tiles = g.tile_count();
  std::vector<std::vector<uint32_t>> hists(size_t(threads > 1 ? threads : 1));
  std::vector<uint32_t> hist;
  auto sampled_bytes = [&](uint8_t b, uint64_t every) {
    for (auto& h : hists) h.assign(2 * radius, 0);
    for_tiles<T>(
        g, threads, [&](uint64_t t) { return t % every == 0; },
        [&](uint64_t t, TileScratch<T>& ts) {
          encode_tile(in, g, predict::InterpParams{b}, t, p, mask, s, ts, &hists[size_t(hpcz::thread_num()) % hists.size()],
                      radius);
        });
    hist.assign(2 * radius, 0);
    for (const auto& h : hists)
      for (uint32_t k = 0; k < 2 * radius; ++k) hist[k] += h[k];
    return estimated_bytes(hist);
  };
  uint8_t best = 1;
  uint64_t best_bytes = UINT64_MAX;
  const uint64_t every1 = interp_sample_every(tiles, kInterpOrderSampleTiles);
  std::vector<std::vector<uint32_t>> order_hists;
  if (!mask.on) order_estimate_hists(in, g, p, radius, every1, order_hists);
  for (uint8_t order = 0; order < 6; ++order) {
    const uint8_t b = interp_stage_params(0, order);
    if (same_as_earlier_params(g, b)) continue;
    const uint64_t bytes = mask.on ? sampled_bytes(b, every1) : estimated_bytes(order_hists[order]);
    if (bytes < best_bytes) best_bytes = bytes, best = b;
  }
  const uint8_t order = uint8_t(predict::InterpParams{best}.axis_order_index());
  const uint64_t every2 = interp_sample_every(tiles, kInterpSampleTiles);
  best_bytes = sampled_bytes(best, every2);
  for (int k = 1; k <= 2; ++k) {
    const uint8_t b = interp_stage_params(k, order);
    const uint64_t bytes = sampled_bytes(b, every2);
    if (bytes < best_bytes) best_bytes = bytes, best = b;
  }
  estimate = best_bytes;
  return predict::InterpParams{best};
}

// The Lorenzo codec's estimate on the points choose_interp_params's second stage samples (the sampled
// tiles' owned points): the Huffman size of their symbols, 8 bytes an outlier or exception.
template <class T>
uint64_t lorenzo_sampled_bytes(const T* in, const predict::InterpGeometry& g, const quant::QuantParams<T>& p,
                               uint32_t radius, int threads) {
  const uint64_t tiles = g.tile_count(), every = interp_sample_every(tiles, kInterpSampleTiles);
  const int nh = threads > 1 ? threads : 1;
  std::vector<std::vector<uint32_t>> hists(size_t(nh), std::vector<uint32_t>(2 * radius, 0));
  std::vector<uint64_t> excs(size_t(nh), 0);
  const uint64_t A = g.anchor;
#pragma omp parallel for schedule(dynamic) num_threads(threads) if (threads > 1)
  for (int64_t t = 0; t < int64_t(tiles); t += int64_t(every)) {
    const size_t k = size_t(hpcz::thread_num()) % size_t(nh);
    const predict::TileBox b = predict::tile_box(g, uint64_t(t));
    const uint64_t tc[3] = {uint64_t(t) / (g.tiles[1] * g.tiles[2]), (uint64_t(t) / g.tiles[2]) % g.tiles[1],
                            uint64_t(t) % g.tiles[2]};
    for (uint64_t z = 0; z < b.own[0]; ++z)
      for (uint64_t y = 0; y < b.own[1]; ++y)
        for (uint64_t x = 0; x < b.own[2]; ++x) {
          const uint64_t i = b.base + z * b.stride[0] + y * b.stride[1] + x;
          int32_t v0;
          const bool coded = quant::quantize(in[i], p, v0);
          auto q = [&](int dz, int dy, int dx) {
            if (!(dz | dy | dx)) return coded ? uint32_t(v0) : 0u;
            int32_t v;
            return quant::quantize(in[i - dz * b.stride[0] - dy * b.stride[1] - dx], p, v) ? uint32_t(v) : 0u;
          };
          ++hists[k][lorenzo_point_symbol(uint32_t(tc[0] * A + z), uint32_t(tc[1] * A + y), uint32_t(tc[2] * A + x),
                                          radius, q)];
          excs[k] += !coded;
        }
  }
  std::vector<uint32_t> hist(2 * radius, 0);
  uint64_t exc = 0;
  for (int k = 0; k < nh; ++k) {
    for (uint32_t j = 0; j < 2 * radius; ++j) hist[j] += hists[size_t(k)][j];
    exc += excs[size_t(k)];
  }
  return estimated_bytes(hist) + 8 * exc;
}

// predict::interp_order's points as emit(i, k), k point i's place in the order, on `threads` threads:
// the anchors first, then every tile's owned points from its place in the stream (tile_stream_offset),
// the tiles in any order.
template <class Emit>
void interp_order_places(const predict::ChunkShape& c, predict::InterpParams ip, [[maybe_unused]] int threads, Emit&& emit) {
  const predict::InterpGeometry g = predict::interp_geometry(c);
  uint64_t k = 0;
  predict::interp_anchors<int64_t>(g, [](uint64_t) { return int64_t(0); }, [&](uint64_t i, int64_t) { emit(i, k++); });
  const int64_t tiles = int64_t(g.tile_count());
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads) if (threads > 1)
  for (int64_t t = 0; t < tiles; ++t) {
    uint64_t at = k + predict::tile_stream_offset(g, uint64_t(t));
    predict::interp_box_points(predict::tile_box(g, uint64_t(t)), g.level, ip,
                               [&](uint64_t i, int, uint64_t, uint64_t, uint64_t, bool owned) {
                                 if (owned) emit(i, at++);
                               });
  }
}

// Encodes one chunk with interpolation (params ip) into dst.
template <class T>
void encode_interp_chunk(const T* in, const predict::ChunkShape& c, const quant::QuantParams<T>& p, uint32_t radius,
                         predict::InterpParams ip, const ChunkMask<T>& mask, InterpScratch<T>& s, EncodeScratch<T>& e,
                         std::vector<uint8_t>& dst, int threads) {
  const uint32_t n = c.count();
  const predict::InterpGeometry g = predict::interp_geometry(c);
  // The symbols in stream order: the anchors', then each tile's as it codes them.
  e.sym.resize(n);
  uint64_t k = 0;
  predict::interp_anchors<int64_t>(g, [](uint64_t) { return int64_t(0); }, [&](uint64_t i, int64_t) {
    e.sym[k++] = point_symbol<T>(s.cls[i], s.delta[i], radius);
  });
  for_tiles<T>(
      g, threads, [](uint64_t) { return true; },
      [&](uint64_t t, TileScratch<T>& ts) {
        encode_tile(in, g, ip, t, p, mask, s, ts, nullptr, radius, e.sym.data() + k + predict::tile_stream_offset(g, t));
      });
  // Spans (write_coded_chunk's): each counts the symbols of its share of the stream and lists the
  // outliers and exceptions of its share of the values, in index order; the bytes do not depend on them.
  const int64_t nspan = std::max(1, threads);
  auto span = [&](int64_t t, int64_t j) { return uint32_t(uint64_t(n) * uint64_t(t + j) / uint64_t(nspan)); };
  e.spans.resize(size_t(nspan));
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t t = 0; t < nspan; ++t) {
    EncodeSpan<T>& sp = e.spans[size_t(t)];
    sp.exc_idx.clear(); sp.exc_val.clear(); sp.out_idx.clear(); sp.out_delta.clear();
    sp.hist.assign(2 * radius, 0);
    for (uint32_t j = span(t, 0); j < span(t, 1); ++j) ++sp.hist[e.sym[j]];
    for (uint32_t i = span(t, 0); i < span(t, 1); ++i) {
      if (s.cls[i] == kPointException) {
        sp.exc_idx.push_back(i);
        sp.exc_val.push_back(in[i]);
      } else if (s.cls[i] == kPointCoded && !interp_symbol(s.delta[i], radius)) {
        sp.out_idx.push_back(i);
        sp.out_delta.push_back(s.delta[i]);
      }
    }
  }
  uint8_t extra[kInterpExtraBytes] = {};
  const uint64_t mb = uint64_t(mask.bits);
  for (int b = 0; b < 8; ++b) extra[b] = uint8_t(mb >> (8 * b));
  write_coded_chunk(in, n, radius, e, dst, threads, kKindInterp | uint32_t(ip.bits) << 8 | uint32_t(mask.on) << 16,
                    extra, kInterpExtraBytes);
}

// Encodes one chunk with the better predictor: Lorenzo (encode_chunk) or interpolation with the
// parameters the sampled tiles prefer. The predictor whose estimate on the sampled points is clearly
// smaller runs alone (predictors_to_run); otherwise both run and the smaller chunk wins (Lorenzo on a
// tie).
template <class T>
void encode_best_chunk(const T* in, const predict::ChunkShape& c, const quant::QuantParams<T>& p, uint32_t radius,
                       InterpScratch<T>& s, EncodeScratch<T>& e, std::vector<uint8_t>& dst, int threads = 1) {
  if (radius < 2) {  // no room for the mask symbol beside the coded deltas
    encode_chunk(in, c, p, radius, e, dst, threads);
    return;
  }
  const uint32_t n = c.count();
  const predict::InterpGeometry g = predict::interp_geometry(c);
  s.xr.resize(n);  // read at the anchors, which encode_anchors writes (and everywhere under keep_recon,
                   // which the tiles write)
  parallel_fill(s.delta, n, uint32_t(0), threads);
  parallel_fill(s.cls, n, uint8_t(kPointCoded), threads);
  const ChunkMask<T> mask = chunk_mask(in, n, p);
  encode_anchors(in, g, p, mask, s);
  uint64_t interp_bytes = 0;
  const predict::InterpParams ip = choose_interp_params(in, g, p, radius, mask, s, threads, interp_bytes);
  const uint32_t run = predictors_to_run(lorenzo_sampled_bytes(in, g, p, radius, threads), interp_bytes);
  if (run & kRunLorenzo) encode_chunk(in, c, p, radius, e, dst, threads);
  if (!(run & kRunInterp)) return;
  std::vector<uint8_t> alt;
  encode_interp_chunk(in, c, p, radius, ip, mask, s, e, alt, threads);
  if (!(run & kRunLorenzo) || alt.size() < dst.size()) dst.swap(alt);
}

// What decode_interp_chunk will write for chunk `bytes` of the n values in, into out, where the chunk
// is an interpolation chunk just encoded from s with keep_recon: a coded point's reconstruction (the
// decoder's own operations on the same predictions); an exception's value, and a masked point's (the
// mask value, bit for bit its own). False (out untouched) for any other chunk.
template <class T>
bool interp_reconstruction(const T* in, uint32_t n, const std::vector<uint8_t>& bytes, const InterpScratch<T>& s,
                           T* out, [[maybe_unused]] int threads) {
  if (!s.keep_recon || bytes.size() < kChunkHeaderBytes || (load_u32_le(bytes.data() + 12) & 0xff) != kKindInterp)
    return false;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t i = 0; i < int64_t(n); ++i) out[i] = s.cls[i] == kPointCoded ? s.xr[i] : in[i];
  return true;
}

// Decodes an interpolation chunk (kind 2); false if malformed. Never reads outside src.
template <class T>
bool decode_interp_chunk(const uint8_t* src, uint32_t size, const predict::ChunkShape& c, const quant::QuantParams<T>& p,
                         uint32_t radius, T* out, int threads = 1) {
  const uint32_t n = c.count(), nsym = 2 * radius;
  InterpChunkHead head;
  if (!parse_interp_chunk(src, size, n, radius, sizeof(T), head)) return false;
  const ChunkLayout& L = head.L;
  const uint32_t n_out = L.n_out, n_exc = L.n_exc;
  const uint8_t params = head.params;
  const bool masked = head.masked;
  const uint64_t mask_bits = head.mask_bits;
  ScratchVector<uint32_t> v(n), stream;  // v: every point written by interp_order_places
  parallel_fill(stream, n, uint32_t(0), threads);
  uint32_t zeros = 0;
  if (!decode_symbols(src, L, n, radius, stream.data(), zeros, threads) || zeros != n_out + n_exc) return false;
  const predict::InterpParams ip{params};
  interp_order_places(c, ip, threads, [&](uint64_t i, uint64_t k) { v[i] = stream[k]; });
  ScratchVector<uint8_t> cls(n);  // every value written below
  const uint32_t zero_delta = predict::symbol_delta(0, radius), mask_delta = predict::symbol_delta(nsym - 1, radius);
  uint32_t mask_points = 0;
#pragma omp parallel for schedule(static) reduction(+ : mask_points) num_threads(threads) if (threads > 1)
  for (int64_t i = 0; i < int64_t(n); ++i) {
    cls[i] = v[i] == zero_delta ? kPointZero : (v[i] == mask_delta ? kPointMask : kPointCoded);
    mask_points += cls[i] == kPointMask;
  }
  if (mask_points && !masked) return false;
  for (uint32_t k = 0; k < n_out; ++k) {
    const uint32_t i = load_u32_le(src + L.out_idx + 4 * k);
    if (i >= n || (k && i <= load_u32_le(src + L.out_idx + 4 * k - 4)) || cls[i] != kPointZero) return false;
    cls[i] = kPointCoded;
    v[i] = load_u32_le(src + L.out_delta + 4 * k);
  }
  for (uint32_t k = 0; k < n_exc; ++k) {
    const uint32_t i = load_u32_le(src + L.exc_idx + 4 * k);
    if (i >= n || (k && i <= load_u32_le(src + L.exc_idx + 4 * k - 4)) || cls[i] != kPointZero) return false;
    cls[i] = kPointException;
  }
  const predict::InterpGeometry g = predict::interp_geometry(c);
  std::vector<int32_t> anchor_q(predict::anchor_total(g), 0);
  predict::interp_anchors<int64_t>(
      g, [&](uint64_t j) { return int64_t(anchor_q[predict::anchor_number(g, j)]); },
      [&](uint64_t i, int64_t pred) {
        const int32_t q = cls[i] == kPointCoded ? int32_t(uint32_t(uint64_t(pred)) + v[i]) : clamp_q(pred);
        anchor_q[predict::anchor_number(g, i)] = q;
        out[i] = quant::dequantize<T>(q, p.step);
      });
  // Each tile on a copy of its box (residuals and classes, faces included; the anchors' values), its
  // owned points written back.
  for_tiles<T>(
      g, threads, [](uint64_t) { return true; },
      [&](uint64_t t, TileScratch<T>& ts) {
        const predict::TileBox box = predict::tile_box(g, t), local = predict::local_box(box);
        ts.size(box.count());
        for_box(box, g.anchor, false, [&](uint64_t l, uint64_t i, bool anchor) {
          ts.delta[l] = v[i], ts.cls[l] = cls[i];
          if (anchor) ts.xr[l] = out[i];
        });
        predict::interp_box<T>(
            local, g.level, ip, [&](uint64_t j) { return ts.xr[j]; },
            [&](uint64_t l, T pred, bool) {
              ts.xr[l] = ts.cls[l] == kPointCoded ? pred + quant::dequantize<T>(int32_t(ts.delta[l]), p.step) : pred;
            });
        for_box(box, g.anchor, true, [&](uint64_t l, uint64_t i, bool anchor) {
          if (!anchor) out[i] = ts.xr[l];
        });
      });
  T mask_value;
  {
    typename Bits<T>::type b = typename Bits<T>::type(mask_bits);
    mask_value = from_bits<T>(b);
  }
  if (mask_points) {
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int64_t i = 0; i < int64_t(n); ++i)
      if (cls[i] == kPointMask) out[i] = mask_value;
  }
  for (uint32_t k = 0; k < n_exc; ++k)  // the exceptions' places, checked above
    out[load_u32_le(src + L.exc_idx + 4 * k)] = load_value_le<T>(src + L.exc_val + sizeof(T) * k);
  return true;
}

// Any chunk of the interpolation codec.
template <class T>
bool decode_best_chunk(const uint8_t* src, uint32_t size, const predict::ChunkShape& c, const quant::QuantParams<T>& p,
                       uint32_t radius, T* out, int threads = 1) {
  if (size >= kChunkHeaderBytes && (load_u32_le(src + 12) & 0xff) == kKindInterp)
    return decode_interp_chunk(src, size, c, p, radius, out, threads);
  return decode_chunk(src, size, c, p, radius, out, threads);
}

}  // namespace hpcz::ratio
