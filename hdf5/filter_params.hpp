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

#include "common/storage.hpp"  // header-only: the plugin and the chunk writer take src/ for it alone
#include "quant/logmap.hpp"     // header-only: kPwLogMinBound
#include "hpcz/hpcz.hpp"

namespace hpcz::h5z {

constexpr unsigned kFilterId = 32767 + 1753;  // 34520, in the range HDF5 leaves unregistered
constexpr unsigned kParamsVersion = 1;    // what the abs and rel bound kinds are written with
constexpr unsigned kParamsVersion2 = 2;   // the absolute bound appended: needed by abs_and_rel, abs_or_rel
constexpr size_t kUserValues = 8;    // version 1: version, mode, bound kind, bound (2 words), flags, fill (2 words)
constexpr size_t kUserValuesV2 = 10;  // version 2: version 1's, then the absolute bound (2 words)
constexpr size_t kLocalValues = 2;  // set_local adds: dtype, rank; then the chunk's dims; then, for a
                                    // bound relative to the range (rel, abs_and_rel, abs_or_rel), 1 and
                                    // the padding value (2 words), where it is finite
constexpr size_t kMaxValues = kUserValuesV2 + kLocalValues + 32 + 3;  // rank 32 (HDF5's most) and the padding
constexpr unsigned kFlagFill = 1, kFlagLossless = 2;

// The user's words of a parameters version (where set_local's words begin): version 1's layout for
// any version but 2 (an unknown one is refused where it matters, invalid_words).
inline size_t user_values(unsigned version) { return version == kParamsVersion2 ? kUserValuesV2 : kUserValues; }

// The bound kinds whose bound depends on the range of the values: a chunk's padding in that range could
// loosen them (leave_out_padding).
inline bool range_relative(BoundMode m) {
  return m == BoundMode::rel || m == BoundMode::abs_and_rel || m == BoundMode::abs_or_rel;
}
inline bool combined(BoundMode m) { return m == BoundMode::abs_and_rel || m == BoundMode::abs_or_rel; }

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
  std::optional<double> padding;  // what HDF5 pads the chunks with, for a bound relative to the range
};


// "1 fast, 2 ratio or 3 interp": names with their numbers (hpcz.hpp, "names"), for messages.
template <class Enum>
std::string numbered(const std::vector<std::string>& names, std::optional<Enum> (*parse)(std::string_view)) {
  std::vector<std::string> v;
  for (const std::string& n : names) v.push_back(std::to_string(unsigned(*parse(n))) + " " + n);
  return names_list(v, "");
}

// Why the user's words (v[0..n), the first user_values(v[0]) of them read) are not valid for a dataset
// of the DType numbered dtype_id, or nullptr if they are. Only words that were given are checked: set_local
// fills the rest from the defaults, but the combined bound kinds need their absolute bound given. Every
// check is one whose failure would otherwise surface only when a chunk is coded, too late (h5py adds
// the filter as optional: HDF5 would store the chunk raw).
inline const char* invalid_words(size_t n, const unsigned* v, unsigned dtype_id) {
  if (n >= 1 && v[0] != kParamsVersion && v[0] != kParamsVersion2)
    return "hpcz: filter parameters of an unknown version (word 0 must be 1 or 2)";
  if (n >= 1 && n > user_values(v[0])) n = user_values(v[0]);
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
    const char* why = nullptr;  // the fill must be a value of the dataset's type
    if (const auto t = dtype_of_id(dtype_id))
      detail::dispatch_storage(*t, [&](auto tr) {
        using Tr = decltype(tr);
        using C = typename Tr::code_type;
        static const std::string msg = std::string("hpcz: the fill value is not representable as ") + tr.name;
        bool exact;
        if constexpr (Tr::is_integer) exact = Tr::holds(fill);
        else exact = double(C(fill)) == fill && double(Tr::widen(Tr::narrow(C(fill)))) == fill;
        if (!exact) why = msg.c_str();
      });
    if (why) return why;
  }
  if (n == kUserValuesV2 - 1) return "hpcz: the absolute bound is given by half (words 8 and 9 are one double)";
  if (n >= kUserValuesV2) {
    const double abs_bound = double_of(v[8], v[9]);
    if (!(abs_bound >= 0) || abs_bound - abs_bound != 0) return "hpcz: the absolute bound must be a finite number >= 0";
  }
  if (n >= 3 && combined(*bound_mode_of_id(v[2]))) {
    if (v[0] != kParamsVersion2)
      return "hpcz: the bound kinds abs_and_rel and abs_or_rel need parameters version 2 (word 0), their absolute "
             "bound in words 8 and 9";
    if (n < kUserValuesV2) return "hpcz: the bound kinds abs_and_rel and abs_or_rel need their absolute bound (words 8 and 9)";
  }
  // pw_rel (bound kind 3): what the library refuses when a chunk is coded, refused here with its words.
  if (n >= 3 && *bound_mode_of_id(v[2]) == BoundMode::pw_rel) {
    if (n >= 5 && !(double_of(v[3], v[4]) > 0 && double_of(v[3], v[4]) < 1))
      return "hpcz: a pointwise-relative bound (pw_rel, bound kind 3) must be above 0 and below 1 (words 3 and 4)";
    if (n >= 5 && *codec_of_id(v[1]) != Codec::fast && double_of(v[3], v[4]) < quant::kPwLogMinBound)
      return "hpcz: pw_rel (bound kind 3) in the ratio and interp modes takes bounds from 1e-06 (words 3 and 4); the "
             "fast mode codes any";
  }
  // psnr, nrmse (bound kinds 4, 5): the targets the library refuses when a chunk is coded, refused here.
  if (n >= 5 && *bound_mode_of_id(v[2]) == BoundMode::psnr && !(double_of(v[3], v[4]) > 0))
    return "hpcz: a PSNR target (psnr, bound kind 4) must be a finite number of dB above 0 (words 3 and 4)";
  if (n >= 5 && *bound_mode_of_id(v[2]) == BoundMode::nrmse &&
      !(double_of(v[3], v[4]) > 0 && double_of(v[3], v[4]) < 1))
    return "hpcz: an NRMSE target (nrmse, bound kind 5) must be above 0 and below 1 (words 3 and 4)";
  return nullptr;
}

// Parses a complete parameter list (the user's words and set_local's); false if it is not a valid one.
inline bool parse_params(size_t n, const unsigned* v, FilterParams& p) {
  if (n < 1 || (v[0] != kParamsVersion && v[0] != kParamsVersion2)) return false;
  const size_t user = user_values(v[0]);
  if (n < user + kLocalValues) return false;
  const unsigned rank = v[user + 1];
  if (rank < 1 || n < user + kLocalValues + rank) return false;
  const auto dtype = dtype_of_id(v[user]);
  if (!dtype || invalid_words(user, v, unsigned(*dtype))) return false;
  p.options = Options{};
  p.options.codec = *codec_of_id(v[1]);  // invalid_words refused an unknown one
  p.options.mode = *bound_mode_of_id(v[2]);
  p.options.bound = double_of(v[3], v[4]);
  if (user >= kUserValuesV2) p.options.abs_bound = double_of(v[8], v[9]);
  if (v[5] & kFlagFill) p.options.fill = double_of(v[6], v[7]);
  p.options.second_stage = v[5] & kFlagLossless;
  p.dtype = *dtype;
  p.dims = coded_dims(v + user + kLocalValues, rank);
  p.n_values = 1;
  for (uint64_t d : p.dims) p.n_values *= d;
  const size_t at = user + kLocalValues + rank;
  if (n >= at + 3 && v[at] == 1) p.padding = double_of(v[at + 1], v[at + 2]);
  return true;
}

// The finite values of x[0, n) that are not the fill value nor `skip`: their min and max; false if none.
// Tr: the values' StorageTraits (compared as their code type, exactly).
template <class Tr, class S = typename Tr::storage_type>
bool value_range(const S* x, uint64_t n, const std::optional<double>& fill, const double* skip, double& lo, double& hi) {
  using T = typename Tr::code_type;
  T mn = 0, mx = 0;
  bool any = false;
  const T f = fill ? T(*fill) : T(0), s = skip ? T(*skip) : T(0);
  for (uint64_t i = 0; i < n; ++i) {
    const T v = Tr::widen(x[i]);
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
// archive's header says pad is an end of the range.) abs_and_rel and abs_or_rel the same way: abs =
// the smaller (and) or the larger (or) of their absolute bound and that rel part, as the library settles them.
inline void leave_out_padding(const void* chunk, DType dtype, uint64_t n, double pad, Options& o) {
  if (!range_relative(o.mode)) return;
  double lo, hi;
  auto range = [&](const double* skip) {
    return detail::dispatch_storage(dtype, [&](auto tr) {
      using Tr = decltype(tr);
      return value_range<Tr>(static_cast<const typename Tr::storage_type*>(chunk), n, o.fill, skip, lo, hi);
    });
  };
  if (!range(nullptr) || (lo != pad && hi != pad)) return;
  const double rel = range(&pad) ? rel_to_abs(o.bound, lo, hi) : 0.0;
  double bound = rel;
  if (o.mode == BoundMode::abs_and_rel) bound = o.abs_bound < rel ? o.abs_bound : rel;
  if (o.mode == BoundMode::abs_or_rel) bound = o.abs_bound > rel ? o.abs_bound : rel;
  o.mode = BoundMode::abs, o.bound = bound, o.abs_bound = 0;
}

// Whether pad is an end of the range an archive's header records (the encoder's own: no pass of ours).
inline bool padding_at_end(const uint8_t* archive, size_t size, double pad) {
  const ArchiveInfo info = inspect_header(archive, size);
  return info.range_valid && (info.range_min == pad || info.range_max == pad);
}

// The filter's rule, once: `archive` (size bytes) is the chunk coded with o. Where o is a bound relative
// to the range (range_relative) and pad an end of the chunk's range, o becomes the abs bound that leaves
// the padding out, and true says to code the chunk again with it.
inline bool padding_recode(const uint8_t* archive, size_t size, const void* chunk, DType dtype, uint64_t n, double pad,
                           Options& o) {
  if (!range_relative(o.mode) || !padding_at_end(archive, size, pad)) return false;
  leave_out_padding(chunk, dtype, n, pad, o);
  return true;
}

}  // namespace hpcz::h5z
