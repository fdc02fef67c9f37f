// Pointwise-relative bounds in the ratio-class codecs (mode 3 in the ratio and interp codecs, FORMAT
// 7.8): the log2 transform (quant::Transform::log2), chunk by chunk, around the codec's own chunk coder.
//
//   [16-byte header: u32 inner_size, u32 specials_size, u32 signs (sign kind | kPwPlaced), u32 kind = 3]
//   [inner chunk: the codec's chunk of the float64 field y, inner_size bytes]
//   [specials: specials_size bytes][signs][patches]
//
// or the values raw (chunk.hpp's raw chunk, kind 1) where that is not larger.
// A value is regular where it is normal and not the fill value: its y is log2 |x| (quant::log2_det),
// coded under the header's eb_abs. Every other value (zeros, subnormals, NaN, Inf, the fill value) is
// special, its value stored in the specials, in runs of equal bits. Its y is NaN (kPwSpecialBits), which
// an interpolation chunk masks at about a symbol each, the specials then the NaNs among the decoded y;
// or, placed (the ratio codec: Lorenzo chunks keep a NaN as an exception), the preceding regular value's
// y, the runs then carrying their places. A regular value decodes to +-exp2_det(y') rounded to T
// (quant::exp2_run). The encoder decodes its inner chunk as the decoder will and stores as a patch every
// regular value that would land beyond r |x| (quant::pw_rel_within, exact), so every value keeps the
// bound whatever the rounding.
//   specials:  varint count of runs; per run (placed: varint gap, the regular values since the previous
//              run) varint length - 1 and the value (T, little-endian)
//   signs of the regular values, in order: sign_kind 0 all positive, 1 all negative (nothing stored);
//              2 varint count, then varint lengths of alternating runs, the first of positive values
//              (0 where the first is negative); 3 one bit a value (1: negative), least significant
//              first, ceil(regular / 8) bytes
//   patches:   varint count; per patch varint gap (index - previous index - 1; the first: its index)
//              and the value (T)
// Varints: LEB128, at most 5 bytes, below 2^32. The chunk ends with its last patch.
#pragma once
#include <algorithm>
#include <atomic>
#include <vector>

#include "codecs/ratio_class/chunk.hpp"
#include "codecs/ratio_class/pw_log_sides.hpp"
#include "common/scratch_vector.hpp"
#include "quant/logmap.hpp"
#include "quant/logmap_cpu.hpp"

namespace hpcz::ratio {

// fn(first, count) over [0, n) in pieces, on threads threads.
template <class F> void for_pieces(uint64_t n, int threads, F&& fn) {
  constexpr uint64_t kPiece = uint64_t(1) << 14;
  const int64_t pieces = int64_t((n + kPiece - 1) / kPiece);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t k = 0; k < pieces; ++k) {
    const uint64_t first = uint64_t(k) * kPiece;
    fn(first, std::min(kPiece, n - first));
  }
}

// fn(k) for every span k of a chunk of n values and, with extra, k = the span count (the finish), on
// threads threads.
template <class F> void for_spans(uint32_t n, bool extra, int threads, F&& fn) {
  const int64_t spans = int64_t((n + kPwSpanValues - 1) / kPwSpanValues) + (extra ? 1 : 0);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t k = 0; k < spans; ++k) fn(uint32_t(k));
}

// A chunk's side sections walked in spans at once (pw_log_sides.hpp: each span from the state the one
// walk has there), as the GPU walks them: the same entries as pw_side_sizes and pw_write_sides.
template <class T> struct PwSpanWalk {
  std::vector<PwWalkState<T>> st;  // before each span, then after the last
  std::vector<PwSideSizes> z;      // each span's entries, then the finish's
  std::vector<uint64_t> runs_at, signs_at, patches_at;

  PwSideSizes sizes(const T* in, const uint8_t* flags, uint32_t n, bool placed, int threads) {
    const uint32_t spans = (n + kPwSpanValues - 1) / kPwSpanValues;
    std::vector<PwSpanFacts<T>> facts(spans);
    for_spans(n, false, threads, [&](uint32_t k) {
      facts[k] = pw_span_facts(in, flags, k * kPwSpanValues, std::min(n, (k + 1) * kPwSpanValues));
    });
    st.assign(spans + 1, PwWalkState<T>{});
    for (uint32_t k = 0; k < spans; ++k) st[k + 1] = pw_carry(st[k], facts[k], placed);
    z.assign(spans + 1, PwSideSizes{});
    for_spans(n, true, threads, [&](uint32_t k) {
      PwWalk<T> w;
      w.st = st[k];
      if (k == spans) w.finish(placed);
      else w.span(in, flags, k * kPwSpanValues, std::min(n, (k + 1) * kPwSpanValues), placed);
      w.tally();
      z[k] = w.z;
    });
    PwSideSizes all;
    runs_at.resize(spans + 1), signs_at.resize(spans + 1), patches_at.resize(spans + 1);
    for (uint32_t k = 0; k <= spans; ++k) {
      runs_at[k] = all.runs_bytes, signs_at[k] = all.sign_bytes, patches_at[k] = all.patch_bytes;
      all.add(z[k]);
    }
    pw_settle_signs(all);
    return all;
  }
  // The sections sizes() measured (all) at d.
  void write(const T* in, const uint8_t* flags, uint32_t n, bool placed, const PwSideSizes& all, uint8_t* d, int threads) {
    const uint32_t spans = (n + kPwSpanValues - 1) / kPwSpanValues;
    const PwSideStarts at = pw_side_starts(all);
    pw_write_counts(all, d);
    if (all.sign_kind == kSignsBits) {
      uint8_t* bits = d + at.signs;
      std::fill(bits, bits + all.signs_section(), uint8_t(0));
      pw_sign_bits(in, flags, 0, n, 0, [&](uint64_t byte, uint8_t bit) { bits[byte] |= bit; });
    }
    for_spans(n, true, threads, [&](uint32_t k) {
      PwWalk<T> w;
      w.st = st[k];
      w.r.p = d + at.runs + runs_at[k];
      w.s.p = all.sign_kind == kSignsRuns ? d + at.signs + signs_at[k] : nullptr;
      w.p.p = d + at.patches + patches_at[k];
      if (k == spans) w.finish(placed);
      else w.span(in, flags, k * kPwSpanValues, std::min(n, (k + 1) * kPwSpanValues), placed);
    });
  }
};

struct PwScratch {
  ScratchVector<double> y, yr;  // written in full by the parallel passes (log2, the inner decoder)
  ScratchVector<uint8_t> flags;
  std::vector<uint8_t> inner;
};

// Encodes chunk values in[0, n) into dst: inner_encode(y, bytes, yr) codes the float64 field y into bytes
// with the codec's chunk coder (under the header's eb_abs and step) and returns true where it also wrote
// yr, what the decoder will find for every regular value (the interp codec's reconstructions, which its
// decoder repeats operation for operation); otherwise inner_decode(src, size, yr) decodes the bytes.
template <class T, class InnerEncode, class InnerDecode>
void encode_pw_chunk(const T* in, uint32_t n, const PwParams& w, bool placed, PwScratch& s, std::vector<uint8_t>& dst,
                     int threads, InnerEncode&& inner_encode, InnerDecode&& inner_decode) {
  s.y.resize(n);
  s.flags.resize(n);
  const double special_y = from_bits<double>(kPwSpecialBits);
  std::atomic<uint64_t> n_special{0}, n_negative{0};
  for_pieces(n, threads, [&](uint64_t first, uint64_t count) {
    uint64_t special = 0, negative = 0;
    for (uint64_t i = first; i < first + count; ++i) {
      const bool regular = pw_regular(in[i], w);
      s.flags[i] = regular;
      special += !regular;
      negative += regular && in[i] < T(0);
    }
    quant::log2_abs_run(in + first, s.flags.data() + first, count, special_y, s.y.data() + first);
    n_special += special, n_negative += negative;
  });
  // Every value regular and of one sign (most fields): no runs, no stand-ins, the sign in the header
  // word; the serial passes below are for the rest.
  const bool plain = n_special == 0 && (n_negative == 0 || n_negative == n);
  if (placed && !plain) pw_stand_ins(s.flags.data(), s.y.data(), n);
  // The field's chunk as the decoder will find it; each regular value checked against its bound.
  s.yr.resize(n);
  if (!inner_encode(s.y.data(), s.inner, s.yr.data()) &&
      !inner_decode(s.inner.data(), uint32_t(s.inner.size()), s.yr.data())) {
    write_raw_chunk(in, n, dst);  // cannot happen: the codec decodes what it wrote
    return;
  }
  std::atomic<uint64_t> n_patched{0};
  for_pieces(n, threads, [&](uint64_t first, uint64_t count) {
    quant::pw_log_check_run(in + first, s.yr.data() + first, count, w.r, s.flags.data() + first);
    n_patched += uint64_t(std::count(s.flags.data() + first, s.flags.data() + first + count, uint8_t(2)));
  });
  // Side sections to walk on more than a span's values with threads to share: in spans at once.
  const bool spans = !(plain && n_patched == 0) && threads > 1 && n > kPwSpanValues;
  PwSpanWalk<T> sw;
  const PwSideSizes z = spans ? sw.sizes(in, s.flags.data(), n, placed, threads)
                              : pw_side_sizes(in, s.flags.data(), n, placed, plain, n_negative, n_patched != 0);
  const uint64_t size = kChunkHeaderBytes + s.inner.size() + z.total();
  if (size >= raw_chunk_bytes(n, sizeof(T))) {
    write_raw_chunk(in, n, dst);
    return;
  }
  dst.resize(size);
  uint8_t* d = dst.data();
  store_u32_le(d, uint32_t(s.inner.size()));
  store_u32_le(d + 4, uint32_t(z.runs_section()));
  store_u32_le(d + 8, z.sign_kind | (placed ? kPwPlaced : 0));
  store_u32_le(d + 12, kKindPwLog);
  std::copy(s.inner.begin(), s.inner.end(), d + kChunkHeaderBytes);
  if (spans) sw.write(in, s.flags.data(), n, placed, z, d + kChunkHeaderBytes + s.inner.size(), threads);
  else pw_write_sides(in, s.flags.data(), n, placed, z, d + kChunkHeaderBytes + s.inner.size());
}

// Decodes a chunk of n values into out; false if malformed. Never reads outside src.
template <class T, class InnerDecode>
bool decode_pw_chunk(const uint8_t* src, uint32_t size, uint32_t n, T* out, int threads, InnerDecode&& inner_decode) {
  if (is_raw_chunk(src, size, n, sizeof(T))) {
    read_raw_chunk(src, n, out);
    return true;
  }
  uint32_t inner_size, specials_size, sign_kind;
  bool placed;
  if (!parse_pw_head(src, size, inner_size, specials_size, sign_kind, placed)) return false;
  ScratchVector<double> held;  // written in full by the inner decoder
  double* y = nullptr;
  if constexpr (sizeof(T) == sizeof(double)) {
    y = reinterpret_cast<double*>(out);
  } else {
    held.resize(n);
    y = held.data();
  }
  if (!inner_decode(src + kChunkHeaderBytes, inner_size, y)) return false;
  const uint8_t* side = src + kChunkHeaderBytes + inner_size;
  SideReader runs{side, side + specials_size}, rest{side + specials_size, src + size};
  uint32_t n_runs;
  if (!runs.varint(n_runs)) return false;
  // The specials' count: their runs' lengths where placed, else the NaN among the y (counted before the
  // magnitudes replace them, in place for float64).
  uint64_t special = 0;
  if (placed) {  // the runs with their gaps within the chunk, before anything is read by them
    if (!pw_placed_specials<T>(runs, n_runs, n, special)) return false;
  } else {
#pragma omp parallel for schedule(static) reduction(+ : special) num_threads(threads) if (threads > 1)
    for (int64_t i = 0; i < int64_t(n); ++i) special += y[i] != y[i];
  }
  for_pieces(n, threads, [&](uint64_t first, uint64_t count) { quant::exp2_run(y + first, count, out + first); });
  const bool parallel_signs = !placed && special == 0 && sign_kind != kSignsRuns;
  if (!parallel_signs && threads > 1 && n > kPwSpanValues) {  // the specials and signs in spans at once
    const uint32_t spans = (n + kPwSpanValues - 1) / kPwSpanValues;
    std::vector<uint32_t> nan(spans, 0);
    if (!placed)
      for_spans(n, false, threads, [&](uint32_t k) {
        for (uint32_t i = k * kPwSpanValues, e = std::min(n, (k + 1) * kPwSpanValues); i < e; ++i) nan[k] += out[i] != out[i];
      });
    std::vector<PwPlaceState<T>> states(spans + 1);
    uint32_t patches_at = 0;
    const uint32_t rest_size = uint32_t(src + size - rest.p);
    if (!pw_plan_spans<T>(side, specials_size, rest.p, rest_size, sign_kind, placed, n, kPwSpanValues, nan.data(),
                          states.data(), patches_at))
      return false;
    for_spans(n, false, threads, [&](uint32_t k) {
      pw_place_span<T>(side, specials_size, rest.p, rest_size, rest.p, sign_kind, placed, states[k], k * kPwSpanValues,
                       std::min(n, (k + 1) * kPwSpanValues), out);
    });
    SideReader patches{rest.p + patches_at, src + size};
    return apply_pw_patches(patches, n, out);
  }
  SignReader signs;
  if (!signs.open(sign_kind, rest, n - special)) return false;
  if (parallel_signs) {  // every value regular: the signs in parallel
    if (n_runs != 0 || runs.p != runs.end) return false;
    if (sign_kind != kSignsPositive)
      for_pieces(n, threads, [&](uint64_t first, uint64_t count) {
        for (uint64_t i = first; i < first + count; ++i)
          if (sign_kind == kSignsNegative || signs.bit(i)) out[i] = -out[i];
      });
  } else if (!decode_pw_places(runs, n_runs, placed, n, signs, out)) {
    return false;
  }
  if (!signs.close()) return false;
  return apply_pw_patches(rest, n, out);
}

}  // namespace hpcz::ratio
