// The hpcz filter's cd_values (docs/FORMAT.md, "HDF5 filter"), read once for the plugin and the
// direct chunk writer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "hpcz/hpcz.hpp"

namespace hpcz::h5z {

constexpr unsigned kFilterId = 32767 + 1753;  // 34520, in the range HDF5 leaves unregistered
constexpr unsigned kParamsVersion = 1;
constexpr size_t kUserValues = 8;   // version, mode, bound kind, bound (2 words), flags, fill (2 words)
constexpr size_t kLocalValues = 2;  // set_local adds: dtype, rank; then the chunk's dims
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
};

// Parses a complete parameter list (the user's words and set_local's); false if it is not one.
inline bool parse_params(size_t n, const unsigned* v, FilterParams& p) {
  if (n < kUserValues + kLocalValues || v[0] != kParamsVersion) return false;
  const unsigned rank = v[kUserValues + 1];
  if (rank < 1 || n < kUserValues + kLocalValues + rank) return false;
  p.options = Options{};
  p.options.codec = v[1] == 3 ? Codec::interp : (v[1] == 2 ? Codec::ratio : Codec::fast);
  p.options.mode = v[2] == 1 ? BoundMode::abs : BoundMode::rel;
  p.options.bound = double_of(v[3], v[4]);
  if (v[5] & kFlagFill) p.options.fill = double_of(v[6], v[7]);
  p.options.second_stage = v[5] & kFlagLossless;
  p.dtype = v[kUserValues] == 2 ? DType::f64 : DType::f32;
  p.dims = coded_dims(v + kUserValues + kLocalValues, rank);
  p.n_values = 1;
  for (uint64_t d : p.dims) p.n_values *= d;
  return true;
}

}  // namespace hpcz::h5z
