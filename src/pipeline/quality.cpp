// Quality targets (BoundMode::psnr, nrmse): the PSNR a request asks for, a lower bound of the PSNR an
// archive's reconstruction achieves, and the header that records it. api.cpp runs the loop: code as a
// rel bound, measure, tighten.
#include <cmath>
#include <cstring>
#include <limits>

#include "common/storage.hpp"
#include "pipeline/internal.hpp"
#include "quant/bound.hpp"

namespace hpcz::pipeline {

double quality_target_psnr(const Options& opt) {
  const double b = opt.bound;
  if (opt.mode == BoundMode::psnr) {
    if (!(b > 0) || !std::isfinite(b)) fail(ErrorCode::invalid_argument, "a PSNR target must be a finite number of dB above 0");
    return b;
  }
  if (!(b > 0 && b < 1)) fail(ErrorCode::invalid_argument, "an NRMSE target must be above 0 and below 1");
  return -20.0 * std::log10(b);
}

namespace {
// sum of squared errors over the finite, non-fill values, as an upper bound in units of (eb 2^-31)^2:
// each |x' - x| / eb scaled by 2^31 (ldexp: no product that leaves the doubles for any eb) and rounded
// up, one more unit covering the double arithmetic's rounding, summed exactly in 128 bits, so the total
// does not depend on the order (or the threads) it is taken in. IEEE doubles only, so every platform
// takes the same decisions from the same bytes.
// Tr: the array's StorageTraits (its values widened to the code type, exactly).
template <class Tr, class S = typename Tr::storage_type>
unsigned __int128 scaled_sse(const S* xs, const S* ys, uint64_t n, const std::optional<double>& fill, double eb,
                             uint64_t& counted) {
  using T = typename Tr::code_type;
  unsigned __int128 sum = 0;
  counted = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const T x = Tr::widen(xs[i]), y = Tr::widen(ys[i]);
    if (!std::isfinite(x) || (fill && x == T(*fill))) continue;
    ++counted;
    const double d = std::fabs(double(y) - double(x));
    if (d == 0) continue;
    const double u = std::ceil(std::ldexp(d / eb, 31) * (1 + 0x1p-50)) + 1;
    const uint64_t v = u < 0x1p62 ? uint64_t(u) : (uint64_t(1) << 62);  // beyond eb: never, but bounded
    sum += (unsigned __int128)v * v;
  }
  return sum;
}
}  // namespace

double psnr_lower_bound(const void* x, const void* y, const ArchiveInfo& info) {
  if (!info.range_valid || info.n_values == 0) return std::numeric_limits<double>::infinity();
  const double eb = info.eb_abs;
  uint64_t counted = 0;
  unsigned __int128 sse = 0;
  if (eb > 0) {
    sse = detail::dispatch_storage(info.dtype, [&](auto tr) {
      using Tr = decltype(tr);
      using S = typename Tr::storage_type;
      return scaled_sse<Tr>(static_cast<const S*>(x), static_cast<const S*>(y), info.n_values, info.fill, eb, counted);
    });
  }
  if (sse == 0 || counted == 0) return std::numeric_limits<double>::infinity();  // every value exact
  // PSNR = 20 log10(range / eb) - 10 log10(MSE / eb^2), MSE / eb^2 <= sse 2^-62 / counted: in the log
  // domain, so that no product leaves the doubles at any magnitude. The range from the halves of its
  // ends (exact; their difference cannot overflow), rounded down, and the sum rounded up, each with a
  // margin far above the doubles' rounding.
  const double half_range = (0.5 * info.range_max - 0.5 * info.range_min) * (1 - 0x1p-50);
  const double mse_units = double(sse) * (1 + 0x1p-40) / double(counted);  // in units of (eb 2^-31)^2
  return 20 * (std::log10(half_range) + std::log10(2.0) - std::log10(eb)) + 20 * 31 * std::log10(2.0) -
         10 * std::log10(mse_units) - 1e-9;
}

uint32_t quality_field(double psnr) {
  if (!(psnr < 167772.15)) return 0xffffffu;  // infinite (every value exact) or beyond the field
  if (!(psnr > 0)) return 0;
  return uint32_t(std::floor(psnr * 100.0));
}

double quality_of_field(uint32_t q) { return q == 0xffffffu ? std::numeric_limits<double>::infinity() : q / 100.0; }
uint32_t quality_field_of(double recorded) {
  return std::isinf(recorded) ? 0xffffffu : uint32_t(std::llround(recorded * 100.0));
}

void record_quality(std::vector<uint8_t>& archive, const Options& opt, double psnr) {
  format::StoredHeader s = format::read_header(archive.data());
  s.f.mode = opt.mode;
  s.f.bound = opt.bound;
  s.f.quality = quality_field(psnr);
  format::write_header(archive.data(), s.f);
}

}  // namespace hpcz::pipeline
