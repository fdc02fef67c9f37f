// Quality metrics with the qcat / Z-checker definitions (docs: ../shared/papers/anchors_ecosystem.md §5):
// R = max - min of the original; PSNR = 20 log10(R) - 10 log10(MSE); NRMSE = RMSE / R. Accumulated in
// double. Non-finite values are compared bit for bit and counted apart; fill values are skipped.
#include <cmath>
#include <cstring>
#include <limits>

#include "common/storage.hpp"
#include "common/parallel.hpp"  // its fork handlers: this file has OpenMP regions
#include "hpcz/hpcz.hpp"

namespace hpcz {
namespace {
template <class Tr, class S = typename Tr::storage_type>
Metrics compare_t(const S* a, const S* b, uint64_t n, std::optional<double> fill) {
  using T = typename Tr::code_type;
  Metrics m;
  m.n = n;
  double mn = std::numeric_limits<double>::infinity(), mx = -mn, sq = 0, max_err = 0;
  uint64_t counted = 0, mismatch = 0;
  const bool has_fill = fill.has_value();
  const T f = fill ? T(*fill) : T(0);
  // All cores; the sum of squares is added in a thread-count-dependent order (PSNR to ~1e-12 dB).
#pragma omp parallel for reduction(min : mn) reduction(max : mx, max_err) reduction(+ : sq, counted, mismatch) \
    schedule(static)
  for (int64_t i = 0; i < int64_t(n); ++i) {
    const double x = Tr::widen(a[i]), y = Tr::widen(b[i]);
    if ((has_fill && Tr::widen(a[i]) == f) || !std::isfinite(x) || !std::isfinite(y)) {
      if (std::memcmp(&a[i], &b[i], sizeof(S)) != 0) ++mismatch;
      continue;
    }
    mn = std::min(mn, x);
    mx = std::max(mx, x);
    max_err = std::max(max_err, std::fabs(x - y));
    sq += (x - y) * (x - y);
    ++counted;
  }
  m.max_abs_error = max_err;
  m.nonfinite_mismatch = mismatch;
  m.value_range = counted ? mx - mn : 0;
  m.mse = counted ? sq / double(counted) : 0;
  m.max_rel_error = m.value_range > 0 ? m.max_abs_error / m.value_range : 0;
  double rmse = std::sqrt(m.mse);
  m.nrmse = m.value_range > 0 ? rmse / m.value_range : 0;
  m.psnr = (m.mse > 0 && m.value_range > 0) ? 20 * std::log10(m.value_range) - 10 * std::log10(m.mse)
                                            : std::numeric_limits<double>::infinity();
  return m;
}
}  // namespace

Metrics compare(const void* original, const void* reconstructed, DType dtype, uint64_t n, std::optional<double> fill) {
  return detail::dispatch_storage(dtype, [&](auto tr) {
    using Tr = decltype(tr);
    using S = typename Tr::storage_type;
    return compare_t<Tr>(static_cast<const S*>(original), static_cast<const S*>(reconstructed), n, fill);
  });
}

}  // namespace hpcz
