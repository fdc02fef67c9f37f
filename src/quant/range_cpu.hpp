// The CPU's range pass over one run of values, shared by the in-memory CPU backend and the streaming
// path. Host only.
#pragma once
#include <cstdint>

#include "quant/range.hpp"

namespace hpcz::quant {

// Folds the narrow keys (narrow_key) of the finite, non-fill values of v[0, n) into [nmin, nmax]:
// exactly what the scalar loop over in_range_set and narrow_key gives, vectorized where the CPU has
// AVX2 (the range pass is the only full read of the input before a rel bound can code anything).
void fold_range_keys(const float* v, uint64_t n, bool has_fill, float fill, uint32_t& nmin, uint32_t& nmax);
void fold_range_keys(const double* v, uint64_t n, bool has_fill, double fill, uint64_t& nmin, uint64_t& nmax);

// The largest sample_key among the step's samples (step_sample_index) that lie in v[0, count), the
// values first, first + 1, ... of an n-value array, folded into mag: over the whole array at once or
// piece by piece, the same result.
template <class T>
uint64_t fold_step_samples(const T* v, uint64_t first, uint64_t count, uint64_t n, bool has_fill, T fill, uint64_t mag) {
  const uint64_t samples = step_sample_count(n);
  // step_sample_index(k) < k (n / kStepSamples + 1), so no sample before this k reaches first.
  uint64_t k = n <= kStepSamples ? first : first / (n / kStepSamples + 1);
  while (k < samples && step_sample_index(k, n) < first) ++k;
  for (; k < samples; ++k) {
    const uint64_t i = step_sample_index(k, n);
    if (i >= first + count) break;
    const uint64_t key = sample_key(v[i - first], has_fill, fill);
    mag = key > mag ? key : mag;
  }
  return mag;
}

// fold_step_samples over a whole array of at most kStepSamples values (every value a sample), from the
// narrow keys its range pass folded (nmin > nmax: no value): a set's largest |x| is at its min or max.
template <class T>
uint64_t step_samples_from_range(typename detail::Bits<T>::type nmin, typename detail::Bits<T>::type nmax) {
  if (nmin > nmax) return 0;
  const uint64_t a = sample_key(narrow_value<T>(nmin), false, T(0)), b = sample_key(narrow_value<T>(nmax), false, T(0));
  return a > b ? a : b;
}

}  // namespace hpcz::quant
