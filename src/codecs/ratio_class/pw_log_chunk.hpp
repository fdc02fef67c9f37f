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
#include "common/scratch_vector.hpp"
#include "quant/logmap.hpp"
#include "quant/logmap_cpu.hpp"

namespace hpcz::ratio {

constexpr uint32_t kKindPwLog = 3;
constexpr uint64_t kPwSpecialBits = 0x7ff8000000000000ull;  // a special value's y: the quiet NaN
enum PwSigns : uint32_t { kSignsPositive = 0, kSignsNegative = 1, kSignsRuns = 2, kSignsBits = 3 };
constexpr uint32_t kPwPlaced = 0x100;  // header word 2: the specials' places are stored (their y are stand-ins)

// What the transform needs of the bound: the factor and the fill value.
struct PwParams {
  double r;
  bool has_fill;
  double fill;
};

// Normal and not the fill value.
template <class T> HPCZ_HD bool pw_regular(T x, const PwParams& w) {
  using U = typename Bits<T>::type;
  constexpr int kMant = DTypeTraits<T>::digits - 1;
  constexpr U kSign = U(1) << (DTypeTraits<T>::bits - 1), kInf = U(DTypeTraits<T>::max_finite_bits + 1);
  const U mag = to_bits(x) & ~kSign;
  return mag >= (U(1) << kMant) && mag < kInf && !(w.has_fill && double(x) == w.fill);
}

inline void put_varint(std::vector<uint8_t>& d, uint32_t v) {
  while (v >= 0x80) {
    d.push_back(uint8_t(v | 0x80));
    v >>= 7;
  }
  d.push_back(uint8_t(v));
}
template <class T> void put_value(std::vector<uint8_t>& d, T v) {
  uint8_t b[sizeof(T)];
  store_value_le<T>(b, v);
  d.insert(d.end(), b, b + sizeof(T));
}

// Reads a chunk's side sections; every read checks the end.
struct SideReader {
  const uint8_t* p;
  const uint8_t* end;
  bool varint(uint32_t& v) {
    uint64_t x = 0;
    for (int k = 0; k < 5; ++k) {
      if (p == end) return false;
      const uint8_t b = *p++;
      x |= uint64_t(b & 0x7f) << (7 * k);
      if (!(b & 0x80)) {
        if (x >> 32) return false;
        v = uint32_t(x);
        return true;
      }
    }
    return false;
  }
  template <class T> bool value(T& v) {
    if (uint64_t(end - p) < sizeof(T)) return false;
    v = load_value_le<T>(p);
    p += sizeof(T);
    return true;
  }
};

// The signs of the regular values, in order, as the encoder chose to store them.
class SignReader {
 public:
  bool open(uint32_t kind, SideReader& r, uint64_t regular) {
    kind_ = kind;
    if (kind == kSignsBits) {
      const uint64_t bytes = (regular + 7) / 8;
      if (uint64_t(r.end - r.p) < bytes) return false;
      bits_ = r.p;
      n_bits_ = regular;
      r.p += bytes;
      return true;
    }
    if (kind != kSignsRuns) return kind == kSignsPositive || kind == kSignsNegative;
    // The runs are read as they are used; their count is checked against the regular values at close.
    if (!r.varint(runs_left_)) return false;
    reader_ = &r;
    negative_ = true;  // flipped to positive by the first run
    return true;
  }
  // The sign bit of regular value k (kSignsBits, k below the count it was opened for).
  bool bit(uint64_t k) const { return bits_[k >> 3] >> (k & 7) & 1; }
  bool next(bool& negative) {
    if (kind_ == kSignsPositive || kind_ == kSignsNegative) {
      negative = kind_ == kSignsNegative;
      return true;
    }
    if (kind_ == kSignsBits) {
      if (k_ >= n_bits_) return false;  // more regular values than the bits were opened for
      negative = bits_[k_ >> 3] >> (k_ & 7) & 1;
      ++k_;
      return true;
    }
    while (left_ == 0) {
      if (runs_left_ == 0 || !reader_->varint(left_)) return false;
      --runs_left_;
      negative_ = !negative_;
    }
    --left_;
    negative = negative_;
    return true;
  }
  // Every run used up (a run of 0 only first).
  bool close() const { return kind_ != kSignsRuns || (runs_left_ == 0 && left_ == 0); }

 private:
  uint32_t kind_ = 0, runs_left_ = 0, left_ = 0;
  const uint8_t* bits_ = nullptr;
  uint64_t k_ = 0, n_bits_ = 0;
  SideReader* reader_ = nullptr;
  bool negative_ = false;
};

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

struct PwScratch {
  ScratchVector<double> y, yr;  // written in full by the parallel passes (log2, the inner decoder)
  ScratchVector<uint8_t> flags;
  std::vector<uint8_t> inner, runs, signs, patches;
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
  if (placed && !plain) {  // stand-ins: the preceding regular value's y (the first one's before it; 0 without one)
    double last = 0.0;
    for (uint32_t i = 0; i < n; ++i)
      if (s.flags[i]) {
        last = s.y[i];
        break;
      }
    for (uint32_t i = 0; i < n; ++i) {
      if (s.flags[i]) last = s.y[i];
      else s.y[i] = last;
    }
  }
  // The specials' runs (in the order of the specials alone) and the signs' runs, in one pass.
  s.runs.clear();
  s.signs.clear();
  uint32_t n_runs = 0, n_sign_runs = 0, sign_run = 0, run_len = 0, gap = 0, run_gap = 0;
  uint64_t regular = 0, negatives = 0;
  bool run_negative = false;
  T run_value{};
  std::vector<uint8_t> sign_runs, special_runs;
  auto flush_run = [&] {
    if (!run_len) return;
    if (placed) put_varint(special_runs, run_gap);
    put_varint(special_runs, run_len - 1);
    put_value<T>(special_runs, run_value);
    ++n_runs, run_len = 0;
  };
  for (uint32_t i = 0; i < (plain ? 0 : n); ++i) {
    if (s.flags[i]) {
      const bool neg = in[i] < T(0);
      if (neg != run_negative) {
        put_varint(sign_runs, sign_run);
        ++n_sign_runs;
        run_negative = neg, sign_run = 0;
      }
      ++sign_run;
      negatives += neg;
      ++regular;
      if (placed) {  // a placed run ends at a regular value
        flush_run();
        ++gap;
      }
    } else if (run_len && to_bits(in[i]) == to_bits(run_value)) {
      ++run_len;
    } else {
      flush_run();
      run_value = in[i], run_len = 1, run_gap = gap, gap = 0;
    }
  }
  flush_run();
  if (plain) regular = n, negatives = n_negative;
  put_varint(s.runs, n_runs);
  s.runs.insert(s.runs.end(), special_runs.begin(), special_runs.end());
  uint32_t sign_kind = negatives == 0 ? kSignsPositive : (negatives == regular ? kSignsNegative : kSignsRuns);
  if (sign_kind == kSignsRuns) {
    put_varint(sign_runs, sign_run);
    ++n_sign_runs;
    put_varint(s.signs, n_sign_runs);
    s.signs.insert(s.signs.end(), sign_runs.begin(), sign_runs.end());
    if (s.signs.size() > (regular + 7) / 8) {  // bits are smaller
      sign_kind = kSignsBits;
      s.signs.assign((regular + 7) / 8, 0);
      uint64_t k = 0;
      for (uint32_t i = 0; i < n; ++i)
        if (s.flags[i]) {
          if (in[i] < T(0)) s.signs[k >> 3] |= uint8_t(1u << (k & 7));
          ++k;
        }
    }
  }
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
  s.patches.clear();
  uint32_t n_patches = 0, prev = 0;
  std::vector<uint8_t> patch_list;
  for (uint32_t i = 0; i < (n_patched ? n : 0); ++i)
    if (s.flags[i] == 2) {
      put_varint(patch_list, n_patches ? i - prev - 1 : i);
      put_value<T>(patch_list, in[i]);
      ++n_patches, prev = i;
    }
  put_varint(s.patches, n_patches);
  s.patches.insert(s.patches.end(), patch_list.begin(), patch_list.end());
  const uint64_t size = kChunkHeaderBytes + s.inner.size() + s.runs.size() + s.signs.size() + s.patches.size();
  if (size >= raw_chunk_bytes(n, sizeof(T))) {
    write_raw_chunk(in, n, dst);
    return;
  }
  dst.resize(size);
  uint8_t* d = dst.data();
  store_u32_le(d, uint32_t(s.inner.size()));
  store_u32_le(d + 4, uint32_t(s.runs.size()));
  store_u32_le(d + 8, sign_kind | (placed ? kPwPlaced : 0));
  store_u32_le(d + 12, kKindPwLog);
  d += kChunkHeaderBytes;
  for (const std::vector<uint8_t>* part : {&s.inner, &s.runs, &s.signs, &s.patches}) {
    std::copy(part->begin(), part->end(), d);
    d += part->size();
  }
}

// The header words of a log chunk (kind 3) of size bytes: false where they cannot be one's.
inline bool parse_pw_head(const uint8_t* src, uint32_t size, uint32_t& inner_size, uint32_t& specials_size,
                          uint32_t& sign_kind, bool& placed) {
  if (size < kChunkHeaderBytes || load_u32_le(src + 12) != kKindPwLog) return false;
  inner_size = load_u32_le(src);
  specials_size = load_u32_le(src + 4);
  const uint32_t word = load_u32_le(src + 8);
  sign_kind = word & 0xff;
  placed = word & kPwPlaced;
  return sign_kind <= kSignsBits && (word & ~(0xffu | kPwPlaced)) == 0 &&
         uint64_t(inner_size) + specials_size <= size - kChunkHeaderBytes;
}

// The specials at their places and the regular values' signs (decode_pw_chunk's serial part).
template <class T>
bool decode_pw_places(SideReader& runs, uint32_t n_runs, bool placed, uint32_t n, SignReader& signs, T* out) {
  auto regular = [&](uint64_t i) {
    bool neg;
    if (!signs.next(neg)) return false;
    if (neg) out[i] = -out[i];
    return true;
  };
  if (placed) {  // runs at their places, regular values between them
    uint64_t i = 0;
    for (uint32_t k = 0; k < n_runs; ++k) {
      uint32_t gap = 0, len = 0;
      T v{};
      runs.varint(gap), runs.varint(len), runs.value(v);  // checked above
      if (uint64_t(gap) + len + 1 > n - i) return false;
      for (const uint64_t e = i + gap; i < e; ++i)
        if (!regular(i)) return false;
      for (const uint64_t e = i + uint64_t(len) + 1; i < e; ++i) out[i] = v;
    }
    for (; i < n; ++i)
      if (!regular(i)) return false;
  } else {  // a NaN magnitude is a special (the runs' next value), any other a regular value
    uint32_t run_left = 0;
    T run_value{};
    for (uint32_t i = 0; i < n; ++i) {
      if (out[i] != out[i]) {
        if (run_left == 0) {
          if (n_runs == 0 || !runs.varint(run_left) || !runs.value(run_value) || run_left == UINT32_MAX) return false;
          --n_runs, ++run_left;
        }
        --run_left;
        out[i] = run_value;
      } else if (!regular(i)) {
        return false;
      }
    }
    if (run_left || n_runs || runs.p != runs.end) return false;
  }
  return true;
}

// The patches (the chunk's last section) over the decoded values.
template <class T>
bool apply_pw_patches(SideReader& rest, uint32_t n, T* out) {
  uint32_t n_patches;
  if (!rest.varint(n_patches) || n_patches > n) return false;
  uint64_t at = 0;
  for (uint32_t k = 0; k < n_patches; ++k) {
    uint32_t gap;
    T v;
    if (!rest.varint(gap) || !rest.value(v)) return false;
    at += k ? uint64_t(gap) + 1 : uint64_t(gap);
    if (at >= n) return false;
    out[at] = v;
  }
  return rest.p == rest.end;
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
    SideReader count = runs;
    uint64_t spanned = 0;
    for (uint32_t k = 0; k < n_runs; ++k) {
      uint32_t gap, len;
      T v;
      if (!count.varint(gap) || !count.varint(len) || !count.value(v)) return false;
      special += uint64_t(len) + 1;
      spanned += uint64_t(gap) + len + 1;
      if (spanned > n) return false;
    }
    if (count.p != count.end) return false;
  } else {
#pragma omp parallel for schedule(static) reduction(+ : special) num_threads(threads) if (threads > 1)
    for (int64_t i = 0; i < int64_t(n); ++i) special += y[i] != y[i];
  }
  for_pieces(n, threads, [&](uint64_t first, uint64_t count) { quant::exp2_run(y + first, count, out + first); });
  SignReader signs;
  if (!signs.open(sign_kind, rest, n - special)) return false;
  if (!placed && special == 0 && sign_kind != kSignsRuns) {  // every value regular: the signs in parallel
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
