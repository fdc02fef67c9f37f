// The hpcz filter's cd_values (docs/FORMAT.md, "HDF5 filter"), read once for the plugin and the
// direct chunk writer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/dtype.hpp"  // header-only: the plugin and the chunk writer take src/ for it alone
#include "hpcz/hpcz.hpp"

namespace hpcz::h5z {

constexpr unsigned kFilterId = 32767 + 1753;  // 34520, in the range HDF5 leaves unregistered
constexpr unsigned kParamsVersion = 1;
constexpr size_t kUserValues = 8;   // version, mode, bound kind, bound (2 words), flags, fill (2 words)
constexpr size_t kLocalValues = 2;  // set_local adds: dtype, rank; then the chunk's dims; then, for a
                                    // rel bound, 1 and the padding value (2 words), where it is finite
constexpr unsigned kFlagFill = 1, kFlagLossless = 2;

inline double double_of(unsigned lo, unsigned hi) {
  const uint64_t u = uint64_t(lo) | (uint64_t(hi) << 32);
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}

// The chunk's shape as hpcz codes it: at most 4 dims, the slowest ones merged (the same order).
inline std::vector<uint64_t> coded_dims(const unsigned* d, unsigned rank) {
  std::vector<uint64_t> dims(d, d + rank);
  while (dims.size() > 4) {
    dims[1] *= dims[0];
    dims.erase(dims.begin());
  }
  return dims;
}

struct FilterParams {
  Options options;
  DType dtype = DType::f32;
  std::vector<uint64_t> dims;  // coded_dims of the chunk
  uint64_t n_values = 0;
  std::optional<double> padding;  // what HDF5 pads the chunks with, for a rel bound
};

// The bytes of a value of set_local's dtype word (the DType's number); 0 for an unknown one.
inline size_t dtype_bytes_of(unsigned code) {
  const auto t = dtype_of_id(code);
  return t ? dtype_size(*t) : 0;
}

// "1 fast, 2 ratio or 3 interp": names with their numbers (hpcz.hpp, "names"), for messages.
template <class Enum>
std::string numbered(const std::vector<std::string>& names, std::optional<Enum> (*parse)(std::string_view)) {
  std::vector<std::string> v;
  for (const std::string& n : names) v.push_back(std::to_string(unsigned(*parse(n))) + " " + n);
  return names_list(v, "");
}

// Why the user's words (v[0..n), the first kUserValues of them read) are not valid for a dataset of
// `value_bytes`-byte floats, or nullptr if they are. Only words that were given are checked: set_local
// fills the rest from the defaults. Every check is one whose failure would otherwise surface only when
// a chunk is coded, too late (h5py adds the filter as optional: HDF5 would store the chunk raw).
inline const char* invalid_words(size_t n, const unsigned* v, size_t value_bytes) {
  if (n > kUserValues) n = kUserValues;
  if (n >= 1 && v[0] != kParamsVersion) return "hpcz: filter parameters of an unknown version (word 0 must be 1)";
  if (n >= 2 && !codec_of_id(v[1])) {
    static const std::string why = "hpcz: unknown mode (word 1 must be " + numbered(codec_names(), parse_codec) + ")";
    return why.c_str();
  }
  if (n >= 3 && !bound_mode_of_id(v[2])) {
    static const std::string why =
        "hpcz: unknown bound kind (word 2 must be " + numbered(bound_mode_names(), parse_bound_mode) + ")";
    return why.c_str();
  }
  if (n == 4) return "hpcz: the bound is given by half (words 3 and 4 are one double)";
  if (n >= 5) {
    const double bound = double_of(v[3], v[4]);
    if (!(bound >= 0) || bound - bound != 0) return "hpcz: the error bound must be a finite number >= 0";
  }
  if (n >= 6 && (v[5] & ~(kFlagFill | kFlagLossless))) return "hpcz: unknown flags (word 5)";
  if (n >= 6 && (v[5] & kFlagFill)) {
    if (n < 8) return "hpcz: the fill flag is set but no fill value is given (words 6 and 7)";
    const double fill = double_of(v[6], v[7]);
    if (fill - fill != 0) return "hpcz: the fill value must be finite";
    const char* why = nullptr;  // the fill must be a value of the dataset's type (by its width)
    detail::for_each_dtype([&](auto tr) {
      static const std::string msg = std::string("hpcz: the fill value is not representable as ") + tr.name;
      if (8 * value_bytes == tr.bits && double(typename decltype(tr)::value_type(fill)) != fill) why = msg.c_str();
    });
    if (why) return why;
  }
  return nullptr;
}

// Parses a complete parameter list (the user's words and set_local's); false if it is not a valid one.
inline bool parse_params(size_t n, const unsigned* v, FilterParams& p) {
  if (n < kUserValues + kLocalValues || v[0] != kParamsVersion) return false;
  const unsigned rank = v[kUserValues + 1];
  if (rank < 1 || n < kUserValues + kLocalValues + rank) return false;
  const auto dtype = dtype_of_id(v[kUserValues]);
  if (!dtype || invalid_words(kUserValues, v, dtype_size(*dtype))) return false;
  p.options = Options{};
  p.options.codec = *codec_of_id(v[1]);  // invalid_words refused an unknown one
  p.options.mode = *bound_mode_of_id(v[2]);
  p.options.bound = double_of(v[3], v[4]);
  if (v[5] & kFlagFill) p.options.fill = double_of(v[6], v[7]);
  p.options.second_stage = v[5] & kFlagLossless;
  p.dtype = *dtype;
  p.dims = coded_dims(v + kUserValues + kLocalValues, rank);
  p.n_values = 1;
  for (uint64_t d : p.dims) p.n_values *= d;
  const size_t at = kUserValues + kLocalValues + rank;
  if (n >= at + 3 && v[at] == 1) p.padding = double_of(v[at + 1], v[at + 2]);
  return true;
}

// The finite values of x[0, n) that are not the fill value nor `skip`: their min and max; false if none.
template <class T>
bool value_range(const T* x, uint64_t n, const std::optional<double>& fill, const double* skip, double& lo, double& hi) {
  T mn = 0, mx = 0;
  bool any = false;
  const T f = fill ? T(*fill) : T(0), s = skip ? T(*skip) : T(0);
  for (uint64_t i = 0; i < n; ++i) {
    const T v = x[i];
    if (!(v - v == T(0)) || (fill && v == f) || (skip && v == s)) continue;
    if (!any) mn = mx = v, any = true;
    mn = v < mn ? v : mn, mx = v > mx ? v : mx;
  }
  lo = double(mn), hi = double(mx);
  return any;
}

// rel x (hi - lo), rounded toward zero (never above the exact product): hi - lo rounded down where it
// is not a double, then the product's rounding error (fma) decides (python/hpcz/_bounds.py, the same).
inline double rel_to_abs(double rel, double lo, double hi) {
  double r = hi - lo;
  const double bv = r - hi, err = (hi - (r - bv)) + (-lo - bv);
  if (err < 0) r = std::nextafter(r, 0.0);
  if (!(r > 0) || !(rel > 0)) return 0.0;
  if (!(r <= std::numeric_limits<double>::max())) r = std::numeric_limits<double>::max();
  double p = rel * r;
  if (!(p <= std::numeric_limits<double>::max())) return std::numeric_limits<double>::max();
  if (std::fma(rel, r, -p) < 0) p = std::nextafter(p, 0.0);
  return p;
}

// A rel bound over a chunk that HDF5 padded with `pad`: where pad is an end of the chunk's range it
// would widen it, and the chunk is coded with abs = rel x the range of its other values (padding, and
// values equal to it, are then within that bound: never looser than rel x the range written). Elsewhere
// leaving it out changes nothing: the rel bound as it is. (The filter calls it only where the rel
// archive's header says pad is an end of the range.)
inline void leave_out_padding(const void* chunk, DType dtype, uint64_t n, double pad, Options& o) {
  if (o.mode != BoundMode::rel) return;
  double lo, hi;
  auto range = [&](const double* skip) {
    return detail::dispatch_dtype(dtype, [&](auto tr) {
      return value_range(static_cast<const typename decltype(tr)::value_type*>(chunk), n, o.fill, skip, lo, hi);
    });
  };
  if (!range(nullptr) || (lo != pad && hi != pad)) return;
  const double bound = range(&pad) ? rel_to_abs(o.bound, lo, hi) : 0.0;
  o.mode = BoundMode::abs, o.bound = bound;
}

// Whether pad is an end of the range an archive's header records (the encoder's own: no pass of ours).
inline bool padding_at_end(const uint8_t* archive, size_t size, double pad) {
  const ArchiveInfo info = inspect_header(archive, size);
  return info.range_valid && (info.range_min == pad || info.range_max == pad);
}

// The filter's rule, once: `archive` (size bytes) is the chunk coded with o. Where o is a rel bound and
// pad an end of the chunk's range, o becomes the abs bound that leaves the padding out, and true says to
// code the chunk again with it.
inline bool padding_recode(const uint8_t* archive, size_t size, const void* chunk, DType dtype, uint64_t n, double pad,
                           Options& o) {
  if (o.mode != BoundMode::rel || !padding_at_end(archive, size, pad)) return false;
  leave_out_padding(chunk, dtype, n, pad, o);
  return true;
}

}  // namespace hpcz::h5z
