// The side sections of pw_rel's log chunks (pw_log_chunk.hpp has the chunk's layout): the specials' runs,
// the signs and the patches, written and read by the same code on the CPU and the GPU (one thread a
// chunk there). Host and device.
#pragma once
#include <cstdint>

#include "codecs/ratio_class/chunk.hpp"

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

// LEB128 varints, at most 5 bytes, below 2^32.
HPCZ_HD uint32_t varint_bytes(uint32_t v) {
  uint32_t b = 1;
  for (; v >= 0x80; v >>= 7) ++b;
  return b;
}
HPCZ_HD uint8_t* put_varint(uint8_t* d, uint32_t v) {
  for (; v >= 0x80; v >>= 7) *d++ = uint8_t(v | 0x80);
  *d++ = uint8_t(v);
  return d;
}

// A side section's entries, counted (p null: bytes grows) or written at p.
struct SideOut {
  uint8_t* p;
  uint64_t bytes;
  HPCZ_HD void varint(uint32_t v) {
    bytes += varint_bytes(v);
    if (p) p = put_varint(p, v);
  }
  template <class T> HPCZ_HD void value(T v) {
    bytes += sizeof(T);
    if (p) {
      store_value_le<T>(p, v);
      p += sizeof(T);
    }
  }
};

// A chunk's side sections: each list's entry count and entries' bytes (the count's varint apart), the
// regular values and the negative ones among them, and how the signs are stored.
struct PwSideSizes {
  uint32_t n_runs = 0, n_sign_runs = 0, n_patches = 0;
  uint64_t runs_bytes = 0, sign_bytes = 0, patch_bytes = 0;
  uint64_t regular = 0, negatives = 0;
  uint32_t sign_kind = kSignsPositive;
  HPCZ_HD uint64_t runs_section() const { return varint_bytes(n_runs) + runs_bytes; }
  HPCZ_HD uint64_t signs_section() const {
    return sign_kind == kSignsRuns ? varint_bytes(n_sign_runs) + sign_bytes : sign_kind == kSignsBits ? (regular + 7) / 8 : 0;
  }
  HPCZ_HD uint64_t patches_section() const { return varint_bytes(n_patches) + patch_bytes; }
  HPCZ_HD uint64_t total() const { return runs_section() + signs_section() + patches_section(); }
};

// One pass in order over the specials' runs and the regular values' sign runs (flags[i] nonzero: a
// regular value): counted into z, and written to runs and signs where they are not null (the runs' and
// the sign runs' entries, their counts written before them). The last sign run is counted; it is
// written where the signs are.
template <class T>
HPCZ_HD void pw_walk_runs(const T* in, const uint8_t* flags, uint32_t n, bool placed, PwSideSizes& z, uint8_t* runs,
                          uint8_t* signs) {
  SideOut r{runs, 0}, s{signs, 0};
  uint32_t n_runs = 0, n_sign_runs = 0, sign_run = 0, run_len = 0, gap = 0, run_gap = 0;
  uint64_t regular = 0, negatives = 0;
  bool run_negative = false;
  T run_value{};
  auto flush_run = [&] {
    if (!run_len) return;
    if (placed) r.varint(run_gap);
    r.varint(run_len - 1);
    r.value<T>(run_value);
    ++n_runs, run_len = 0;
  };
  for (uint32_t i = 0; i < n; ++i) {
    if (flags[i]) {
      const bool neg = in[i] < T(0);
      if (neg != run_negative) {
        s.varint(sign_run);
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
  s.varint(sign_run);
  z.n_runs = n_runs, z.runs_bytes = r.bytes;
  z.n_sign_runs = n_sign_runs + 1, z.sign_bytes = s.bytes;
  z.regular = regular, z.negatives = negatives;
}

// The patches (flags[i] == 2): counted into z, and written at out where not null (entries only).
template <class T> HPCZ_HD void pw_walk_patches(const T* in, const uint8_t* flags, uint32_t n, PwSideSizes& z, uint8_t* out) {
  SideOut o{out, 0};
  uint32_t count = 0, prev = 0;
  for (uint32_t i = 0; i < n; ++i)
    if (flags[i] == 2) {
      o.varint(count ? i - prev - 1 : i);
      o.value<T>(in[i]);
      ++count, prev = i;
    }
  z.n_patches = count, z.patch_bytes = o.bytes;
}

// The side sections' sizes of a chunk of n values with its flags (0 special, 1 regular, 2 regular and
// patched). plain: every value regular and of one sign (plain_negatives of them negative: 0 or n), so
// nothing is walked; any_patch: some flag is 2. Runs of signs are stored as bits where those are
// smaller.
template <class T>
HPCZ_HD PwSideSizes pw_side_sizes(const T* in, const uint8_t* flags, uint32_t n, bool placed, bool plain,
                                  uint64_t plain_negatives, bool any_patch) {
  PwSideSizes z;
  if (plain) {
    z.regular = n, z.negatives = plain_negatives;
  } else {
    pw_walk_runs(in, flags, n, placed, z, nullptr, nullptr);
  }
  z.sign_kind = z.negatives == 0 ? kSignsPositive : (z.negatives == z.regular ? kSignsNegative : kSignsRuns);
  if (z.sign_kind == kSignsRuns && varint_bytes(z.n_sign_runs) + z.sign_bytes > (z.regular + 7) / 8) z.sign_kind = kSignsBits;
  if (any_patch) pw_walk_patches(in, flags, n, z, nullptr);
  return z;
}

// Writes the side sections z measured (z.total() bytes) at d.
template <class T>
HPCZ_HD void pw_write_sides(const T* in, const uint8_t* flags, uint32_t n, bool placed, const PwSideSizes& z, uint8_t* d) {
  uint8_t* runs = put_varint(d, z.n_runs);
  uint8_t* signs = d + z.runs_section();
  uint8_t* patches = signs + z.signs_section();
  if (z.sign_kind == kSignsBits) {
    for (uint64_t k = 0; k < z.signs_section(); ++k) signs[k] = 0;
    uint64_t k = 0;
    for (uint32_t i = 0; i < n; ++i)
      if (flags[i]) {
        if (in[i] < T(0)) signs[k >> 3] |= uint8_t(1u << (k & 7));
        ++k;
      }
  }
  if (z.n_runs || z.sign_kind == kSignsRuns) {
    PwSideSizes w;
    pw_walk_runs(in, flags, n, placed, w, runs,
                 z.sign_kind == kSignsRuns ? put_varint(signs, z.n_sign_runs) : nullptr);
  }
  uint8_t* entries = put_varint(patches, z.n_patches);
  if (z.n_patches) {
    PwSideSizes w;
    pw_walk_patches(in, flags, n, w, entries);
  }
}

// Placed specials' stand-ins: the preceding regular value's y (the first one's before it; 0 without one).
HPCZ_HD void pw_stand_ins(const uint8_t* flags, double* y, uint32_t n) {
  double last = 0.0;
  for (uint32_t i = 0; i < n; ++i)
    if (flags[i]) {
      last = y[i];
      break;
    }
  for (uint32_t i = 0; i < n; ++i) {
    if (flags[i]) last = y[i];
    else y[i] = last;
  }
}

// Reads a chunk's side sections; every read checks the end.
struct SideReader {
  const uint8_t* p;
  const uint8_t* end;
  HPCZ_HD bool varint(uint32_t& v) {
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
  template <class T> HPCZ_HD bool value(T& v) {
    if (uint64_t(end - p) < sizeof(T)) return false;
    v = load_value_le<T>(p);
    p += sizeof(T);
    return true;
  }
};

// The signs of the regular values, in order, as the encoder chose to store them.
class SignReader {
 public:
  HPCZ_HD bool open(uint32_t kind, SideReader& r, uint64_t regular) {
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
  HPCZ_HD bool bit(uint64_t k) const { return bits_[k >> 3] >> (k & 7) & 1; }
  HPCZ_HD bool next(bool& negative) {
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
  HPCZ_HD bool close() const { return kind_ != kSignsRuns || (runs_left_ == 0 && left_ == 0); }

 private:
  uint32_t kind_ = 0, runs_left_ = 0, left_ = 0;
  const uint8_t* bits_ = nullptr;
  uint64_t k_ = 0, n_bits_ = 0;
  SideReader* reader_ = nullptr;
  bool negative_ = false;
};

// The header words of a log chunk (kind 3) of size bytes: false where they cannot be one's.
HPCZ_HD bool parse_pw_head(const uint8_t* src, uint32_t size, uint32_t& inner_size, uint32_t& specials_size,
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

// The specials' count of a placed chunk: its runs' lengths, every run checked within the chunk's n
// values and the section read to its end.
template <class T> HPCZ_HD bool pw_placed_specials(SideReader runs, uint32_t n_runs, uint32_t n, uint64_t& special) {
  uint64_t spanned = 0;
  special = 0;
  for (uint32_t k = 0; k < n_runs; ++k) {
    uint32_t gap, len;
    T v;
    if (!runs.varint(gap) || !runs.varint(len) || !runs.value(v)) return false;
    special += uint64_t(len) + 1;
    spanned += uint64_t(gap) + len + 1;
    if (spanned > n) return false;
  }
  return runs.p == runs.end;
}

// The specials at their places and the regular values' signs, over the decoded magnitudes out (a
// special's is NaN where not placed).
template <class T>
HPCZ_HD bool decode_pw_places(SideReader& runs, uint32_t n_runs, bool placed, uint32_t n, SignReader& signs, T* out) {
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
      runs.varint(gap), runs.varint(len), runs.value(v);  // checked by pw_placed_specials
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
template <class T> HPCZ_HD bool apply_pw_patches(SideReader& rest, uint32_t n, T* out) {
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

}  // namespace hpcz::ratio
