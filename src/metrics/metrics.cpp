// Quality metrics with the qcat / Z-checker definitions (docs: ../shared/papers/anchors_ecosystem.md §5):
// R = max - min of the original; PSNR = 20 log10(R) - 10 log10(MSE); NRMSE = RMSE / R. Accumulated in
// double. Non-finite values are compared bit for bit and counted apart; fill values are skipped.
#include <cmath>
#include <cstring>
#include <limits>

#include "hpcz/hpcz.hpp"

namespace hpcz {
namespace {
template <class T>
Metrics compare_t(const T* a, const T* b, uint64_t n, std::optional<double> fill) {
  Metrics m;
  m.n = n;
  double mn = std::numeric_limits<double>::infinity(), mx = -mn, sq = 0;
  uint64_t counted = 0;
  const T f = fill ? T(*fill) : T(0);
  for (uint64_t i = 0; i < n; ++i) {
    double x = a[i], y = b[i];
    if (fill && a[i] == f) {
      if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) ++m.nonfinite_mismatch;
      continue;
    }
    if (!std::isfinite(x) || !std::isfinite(y)) {
      if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) ++m.nonfinite_mismatch;
      continue;
    }
    mn = std::min(mn, x);
    mx = std::max(mx, x);
    double e = std::fabs(x - y);
    m.max_abs_error = std::max(m.max_abs_error, e);
    sq += (x - y) * (x - y);
    ++counted;
  }
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
  if (dtype == DType::f64)
    return compare_t(static_cast<const double*>(original), static_cast<const double*>(reconstructed), n, fill);
  return compare_t(static_cast<const float*>(original), static_cast<const float*>(reconstructed), n, fill);
}

}  // namespace hpcz
