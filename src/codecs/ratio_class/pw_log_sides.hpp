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
  // A span's entries after these (spans summed in order).
  HPCZ_HD void add(const PwSideSizes& e) {
    n_runs += e.n_runs, n_sign_runs += e.n_sign_runs, n_patches += e.n_patches;
    runs_bytes += e.runs_bytes, sign_bytes += e.sign_bytes, patch_bytes += e.patch_bytes;
    regular += e.regular, negatives += e.negatives;
  }
};

// The values a thread walks at once where a chunk's side sections are walked in spans (pw_carry).
constexpr uint32_t kPwSpanValues = 16384;

// The walk over a chunk's values in order that makes the specials' runs, the sign runs and the patches,
// in spans: what it carries from one value to the next. A span's walk from the state the values before
// it leave (pw_carry finds that state from each span's facts) emits exactly the entries the one walk
// over the chunk emits there, so spans may be walked at once (the GPU: a thread a span).
template <class T> struct PwWalkState {
  bool run_negative = false;  // the last regular value's sign (positive before the first)
  uint32_t sign_run = 0;      // regular values in the current sign run
  uint32_t run_len = 0;       // specials in the open run (0: none open; run_value and run_gap unused then)
  uint32_t gap = 0;           // placed: regular values since the last run started
  uint32_t run_gap = 0;       // placed: the open run's gap
  T run_value{};
  int64_t last_patch = -1;    // the last patch's index
};

// A span's entries: counted into z (its lists' entries and bytes, the regular values and the negative
// ones among them) and written by r (runs), s (sign runs) and p (patches) where their pointers are set.
// flags: 0 special, 1 regular, 2 regular and patched.
template <class T> struct PwWalk {
  PwWalkState<T> st;
  PwSideSizes z;
  SideOut r{nullptr, 0}, s{nullptr, 0}, p{nullptr, 0};

  HPCZ_HD void flush_run(bool placed) {
    if (!st.run_len) return;
    if (placed) r.varint(st.run_gap);
    r.varint(st.run_len - 1);
    r.value<T>(st.run_value);
    ++z.n_runs, st.run_len = 0;
  }
  HPCZ_HD void span(const T* in, const uint8_t* flags, uint32_t first, uint32_t end, bool placed) {
    for (uint32_t i = first; i < end; ++i) {
      if (flags[i]) {
        const bool neg = in[i] < T(0);
        if (neg != st.run_negative) {
          s.varint(st.sign_run);
          ++z.n_sign_runs;
          st.run_negative = neg, st.sign_run = 0;
        }
        ++st.sign_run;
        z.negatives += neg;
        ++z.regular;
        if (placed) {  // a placed run ends at a regular value
          flush_run(placed);
          ++st.gap;
        }
        if (flags[i] == 2) {
          p.varint(st.last_patch < 0 ? i : uint32_t(i - st.last_patch - 1));
          p.value<T>(in[i]);
          ++z.n_patches, st.last_patch = i;
        }
      } else if (st.run_len && to_bits(in[i]) == to_bits(st.run_value)) {
        ++st.run_len;
      } else {
        flush_run(placed);
        st.run_value = in[i], st.run_len = 1, st.run_gap = st.gap, st.gap = 0;
      }
    }
  }
  // After the chunk's last span: the open run and the last sign run.
  HPCZ_HD void finish(bool placed) {
    flush_run(placed);
    s.varint(st.sign_run);
    ++z.n_sign_runs;
  }
  // The bytes walked into z.
  HPCZ_HD void tally() { z.runs_bytes = r.bytes, z.sign_bytes = s.bytes, z.patch_bytes = p.bytes; }
};

// What a span's values are, whatever came before it: enough to find the state it leaves from the state
// it starts in (pw_carry).
template <class T> struct PwSpanFacts {
  using U = typename Bits<T>::type;
  uint32_t len = 0, n_reg = 0, n_spec = 0;
  bool first_neg = false, last_neg = false, one_sign = true;
  uint32_t sign_tail = 0;  // regular values in the trailing run of one sign
  U first_bits = 0, last_bits = 0;
  bool one_value = true;        // every special the same bits
  uint32_t spec_tail = 0;       // not placed: specials in the trailing run of equal bits (among the specials)
  uint32_t tail_run = 0;        // placed: the contiguous run of equal specials that ends the span (0: a regular ends it)
  uint32_t tail_gap = 0;        // placed: regular values before that run since the special before it (or the span's start)
  bool tail_gap_local = false;  // placed: a special precedes that run in the span
  uint32_t regs_after_spec = 0;  // regular values after the last special (all of them without one)
  int64_t last_patch = -1;
};

template <class T>
HPCZ_HD PwSpanFacts<T> pw_span_facts(const T* in, const uint8_t* flags, uint32_t first, uint32_t end) {
  PwSpanFacts<T> f;
  f.len = end - first;
  for (uint32_t i = first; i < end; ++i) {
    if (flags[i]) {
      const bool neg = in[i] < T(0);
      if (f.n_reg == 0) f.first_neg = neg;
      else if (neg != f.last_neg) f.one_sign = false, f.sign_tail = 0;
      ++f.sign_tail;
      f.last_neg = neg;
      ++f.n_reg;
      ++f.regs_after_spec;
      f.tail_run = 0;
      if (flags[i] == 2) f.last_patch = i;
    } else {
      const typename PwSpanFacts<T>::U b = to_bits(in[i]);
      if (f.n_spec == 0) f.first_bits = b;
      else if (b != f.last_bits) f.one_value = false;
      f.spec_tail = f.n_spec && b == f.last_bits ? f.spec_tail + 1 : 1;
      if (f.tail_run && b == f.last_bits) {
        ++f.tail_run;
      } else {  // a placed run would start here
        f.tail_gap_local = f.n_spec != 0;
        f.tail_gap = f.regs_after_spec;
        f.tail_run = 1;
      }
      f.last_bits = b;
      ++f.n_spec;
      f.regs_after_spec = 0;
    }
  }
  return f;
}

// The state after a span with facts f, from the state before it.
template <class T> HPCZ_HD PwWalkState<T> pw_carry(const PwWalkState<T>& in, const PwSpanFacts<T>& f, bool placed) {
  PwWalkState<T> o = in;
  if (f.n_reg) {
    o.run_negative = f.last_neg;
    o.sign_run = !f.one_sign ? f.sign_tail : (f.first_neg == in.run_negative ? in.sign_run + f.n_reg : f.n_reg);
  }
  if (f.last_patch >= 0) o.last_patch = f.last_patch;
  const bool continues = in.run_len && f.first_bits == to_bits(in.run_value);  // the first special joins the open run
  if (!placed) {  // runs among the specials alone
    if (f.n_spec) {
      o.run_len = !f.one_value ? f.spec_tail : (continues ? in.run_len + f.n_spec : f.n_spec);
      o.run_value = from_bits<T>(f.last_bits);
    }
    return o;
  }
  o.gap = f.n_spec ? f.regs_after_spec : in.gap + f.n_reg;
  if (f.n_spec == 0) {
    if (f.n_reg) o.run_len = 0;
  } else if (f.tail_run == f.len && continues) {
    o.run_len = in.run_len + f.len;
  } else {
    o.run_len = f.tail_run;
    if (f.tail_run) {
      o.run_value = from_bits<T>(f.last_bits);
      o.run_gap = f.tail_gap + (f.tail_gap_local ? 0 : in.gap);
    }
  }
  return o;
}

// The side sections' sizes of a chunk of n values with its flags. plain: every value regular and of one
// sign (plain_negatives of them negative: 0 or n); any_patch: some flag is 2; a plain chunk without a
// patch is not walked. Sign runs are stored as bits where those are smaller.
HPCZ_HD void pw_settle_signs(PwSideSizes& z) {
  z.sign_kind = z.negatives == 0 ? kSignsPositive : (z.negatives == z.regular ? kSignsNegative : kSignsRuns);
  if (z.sign_kind == kSignsRuns && varint_bytes(z.n_sign_runs) + z.sign_bytes > (z.regular + 7) / 8) z.sign_kind = kSignsBits;
}
template <class T>
HPCZ_HD PwSideSizes pw_side_sizes(const T* in, const uint8_t* flags, uint32_t n, bool placed, bool plain,
                                  uint64_t plain_negatives, bool any_patch) {
  PwSideSizes z;
  if (plain && !any_patch) {
    z.regular = n, z.negatives = plain_negatives;
  } else {
    PwWalk<T> w;
    w.span(in, flags, 0, n, placed);
    w.finish(placed);
    w.tally();
    z = w.z;
  }
  pw_settle_signs(z);
  return z;
}

// Where a chunk's side sections' entries start, from the sections' start (z.total() bytes): after each
// list's count (signs: the sign runs' count, or the bits).
struct PwSideStarts {
  uint64_t runs, signs, patches;
};
HPCZ_HD PwSideStarts pw_side_starts(const PwSideSizes& z) {
  PwSideStarts at;
  at.runs = varint_bytes(z.n_runs);
  at.signs = z.runs_section() + (z.sign_kind == kSignsRuns ? varint_bytes(z.n_sign_runs) : 0);
  at.patches = z.runs_section() + z.signs_section() + varint_bytes(z.n_patches);
  return at;
}
// The lists' counts, at the sections' start d.
HPCZ_HD void pw_write_counts(const PwSideSizes& z, uint8_t* d) {
  put_varint(d, z.n_runs);
  if (z.sign_kind == kSignsRuns) put_varint(d + z.runs_section(), z.n_sign_runs);
  put_varint(d + z.runs_section() + z.signs_section(), z.n_patches);
}

// The sign bits of the regular values in [first, end), the first of them regular value k0, into bits
// (zeroed before): set(byte, mask) ORs a bit in.
template <class T, class SetBit>
HPCZ_HD void pw_sign_bits(const T* in, const uint8_t* flags, uint32_t first, uint32_t end, uint64_t k0, SetBit&& set) {
  uint64_t k = k0;
  for (uint32_t i = first; i < end; ++i)
    if (flags[i]) {
      if (in[i] < T(0)) set(k >> 3, uint8_t(1u << (k & 7)));
      ++k;
    }
}

// Writes the side sections z measured (z.total() bytes) at d.
template <class T>
HPCZ_HD void pw_write_sides(const T* in, const uint8_t* flags, uint32_t n, bool placed, const PwSideSizes& z, uint8_t* d) {
  const PwSideStarts at = pw_side_starts(z);
  pw_write_counts(z, d);
  if (z.sign_kind == kSignsBits) {
    uint8_t* bits = d + at.signs;
    for (uint64_t k = 0; k < z.signs_section(); ++k) bits[k] = 0;
    pw_sign_bits(in, flags, 0, n, 0, [&](uint64_t byte, uint8_t bit) { bits[byte] |= bit; });
  }
  if (z.n_runs || z.sign_kind == kSignsRuns || z.n_patches) {
    PwWalk<T> w;
    w.r.p = d + at.runs;
    w.s.p = z.sign_kind == kSignsRuns ? d + at.signs : nullptr;
    w.p.p = d + at.patches;
    w.span(in, flags, 0, n, placed);
    w.finish(placed);
  }
}

// Placed specials' stand-ins: the preceding regular value's y (the first one's before it; 0 without one).
// In spans: [first, end) from last, the y of the regular value before first (or the chunk's first).
HPCZ_HD void pw_stand_in_span(const uint8_t* flags, double* y, uint32_t first, uint32_t end, double last) {
  for (uint32_t i = first; i < end; ++i) {
    if (flags[i]) last = y[i];
    else y[i] = last;
  }
}
HPCZ_HD void pw_stand_ins(const uint8_t* flags, double* y, uint32_t n) {
  double last = 0.0;
  for (uint32_t i = 0; i < n; ++i)
    if (flags[i]) {
      last = y[i];
      break;
    }
  pw_stand_in_span(flags, y, 0, n, last);
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

// The decoder in spans (the GPU: a thread a span), as decode_pw_places decodes a chunk whole: where each
// span starts in the lists (pw_plan_spans, one pass over the lists' entries and the spans, which also
// checks the lists as decode_pw_places does), then each span's specials and signs (pw_place_span).
template <class T> struct PwPlaceState {
  uint32_t runs_at = 0;    // the next run entry's offset in the specials section
  uint32_t runs_left = 0;  // entries not read
  uint32_t run_left = 0;   // specials left in the open run
  uint32_t gap_left = 0;   // placed: regular values left before the open run's specials
  T value{};
  uint32_t signs_at = 0;   // kSignsRuns: the next sign run's offset in the rest (the signs, then the patches)
  uint32_t sign_runs_left = 0, sign_left = 0;
  bool negative = true;    // flipped to positive by the first run, as SignReader's
  uint64_t regular_at = 0;  // regular values before the span (kSignsBits)
};

// The states at the starts of the spans of span values (states[k], k <= n_spans: the last after the
// chunk) of a chunk of n values whose specials' section is runs (runs_size bytes) and rest its signs and
// patches; not placed, span_specials[k]: the NaN magnitudes in span k. false where the lists are not a
// chunk's of n values, as decode_pw_places finds them; patches_at: the patches' offset in the rest.
template <class T>
HPCZ_HD bool pw_plan_spans(const uint8_t* runs_sec, uint32_t runs_size, const uint8_t* rest, uint32_t rest_size,
                           uint32_t sign_kind, bool placed, uint32_t n, uint32_t span, const uint32_t* span_specials,
                           PwPlaceState<T>* states, uint32_t& patches_at) {
  SideReader runs{runs_sec, runs_sec + runs_size}, signs{rest, rest + rest_size};
  PwPlaceState<T> st;
  if (!runs.varint(st.runs_left)) return false;
  uint64_t special = 0;
  const uint32_t n_spans = (n + span - 1) / span;
  if (placed) {
    if (!pw_placed_specials<T>(runs, st.runs_left, n, special)) return false;
  } else {
    for (uint32_t k = 0; k < n_spans; ++k) special += span_specials[k];
  }
  const uint64_t regular = n - special;
  if (sign_kind == kSignsBits) {
    if (uint64_t(signs.end - signs.p) < (regular + 7) / 8) return false;
    signs.p += (regular + 7) / 8;
  } else if (sign_kind == kSignsRuns) {
    if (!signs.varint(st.sign_runs_left)) return false;
  }
  auto take_signs = [&](uint64_t r) {  // the signs of r regular values, the runs read as SignReader reads them
    if (sign_kind == kSignsBits) st.regular_at += r;
    if (sign_kind != kSignsRuns) return true;
    while (r) {
      while (st.sign_left == 0) {
        if (st.sign_runs_left == 0 || !signs.varint(st.sign_left)) return false;
        --st.sign_runs_left;
        st.negative = !st.negative;
      }
      const uint64_t t = r < st.sign_left ? r : st.sign_left;
      st.sign_left -= uint32_t(t), r -= t;
    }
    return true;
  };
  auto read_run = [&] {
    uint32_t gap = 0, len;
    if (st.runs_left == 0 || (placed && !runs.varint(gap)) || !runs.varint(len) || !runs.value(st.value) || len == UINT32_MAX)
      return false;
    --st.runs_left;
    st.gap_left = gap, st.run_left = len + 1;
    return true;
  };
  for (uint32_t k = 0; k < n_spans; ++k) {
    st.runs_at = uint32_t(runs.p - runs_sec);
    st.signs_at = uint32_t(signs.p - rest);
    states[k] = st;
    const uint32_t len = (k + 1 < n_spans ? span : n - k * span);
    uint64_t regs = 0;
    if (placed) {  // gaps of regular values, then runs, in order
      for (uint32_t left = len; left;) {
        if (st.gap_left) {
          const uint32_t t = left < st.gap_left ? left : st.gap_left;
          st.gap_left -= t, left -= t, regs += t;
        } else if (st.run_left) {
          const uint32_t t = left < st.run_left ? left : st.run_left;
          st.run_left -= t, left -= t;
        } else if (st.runs_left) {
          if (!read_run()) return false;
        } else {
          regs += left, left = 0;
        }
      }
    } else {  // the span's NaN magnitudes take the runs' values in order
      for (uint32_t need = span_specials[k]; need;) {
        if (st.run_left == 0 && !read_run()) return false;
        const uint32_t t = need < st.run_left ? need : st.run_left;
        st.run_left -= t, need -= t;
      }
      regs = len - span_specials[k];
    }
    if (!take_signs(regs)) return false;
  }
  st.runs_at = uint32_t(runs.p - runs_sec);
  st.signs_at = uint32_t(signs.p - rest);
  states[n_spans] = st;
  if (!placed && (st.run_left || st.runs_left || runs.p != runs.end)) return false;
  if (sign_kind == kSignsRuns && (st.sign_runs_left || st.sign_left)) return false;
  patches_at = uint32_t(signs.p - rest);
  return true;
}

// Span [first, end) of a chunk from its state st (pw_plan_spans, which checked every read): the specials'
// values and the regular values' signs over the magnitudes in out (a special's NaN where not placed).
template <class T>
HPCZ_HD void pw_place_span(const uint8_t* runs_sec, uint32_t runs_size, const uint8_t* rest, uint32_t rest_size,
                           const uint8_t* bits, uint32_t sign_kind, bool placed, PwPlaceState<T> st, uint32_t first,
                           uint32_t end, T* out) {
  SideReader runs{runs_sec + st.runs_at, runs_sec + runs_size}, signs{rest + st.signs_at, rest + rest_size};
  for (uint32_t i = first; i < end; ++i) {
    bool special;
    if (placed) {
      for (;;) {
        if (st.gap_left) {
          --st.gap_left, special = false;
        } else if (st.run_left) {
          --st.run_left, special = true;
        } else if (st.runs_left) {
          uint32_t gap = 0, len = 0;
          runs.varint(gap), runs.varint(len), runs.value(st.value);
          --st.runs_left, st.gap_left = gap, st.run_left = len + 1;
          continue;
        } else {
          special = false;
        }
        break;
      }
    } else {
      special = out[i] != out[i];
      if (special) {
        if (st.run_left == 0) {
          uint32_t len = 0;
          runs.varint(len), runs.value(st.value);
          --st.runs_left, st.run_left = len + 1;
        }
        --st.run_left;
      }
    }
    if (special) {
      out[i] = st.value;
      continue;
    }
    bool neg = sign_kind == kSignsNegative;
    if (sign_kind == kSignsBits) {
      neg = bits[st.regular_at >> 3] >> (st.regular_at & 7) & 1;
      ++st.regular_at;
    } else if (sign_kind == kSignsRuns) {
      while (st.sign_left == 0 && signs.varint(st.sign_left)) st.negative = !st.negative;
      if (st.sign_left) --st.sign_left;  // (checked: a run is there; never a loop past the section's end)
      neg = st.negative;
    }
    if (neg) out[i] = -out[i];
  }
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
