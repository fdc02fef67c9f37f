// The CPU's range pass over one run of values, shared by the in-memory CPU backend and the streaming
// path. Host only.
#pragma once
#include <cstdint>

namespace hpcz::quant {

// Folds the narrow keys (narrow_key) of the finite, non-fill values of v[0, n) into [nmin, nmax]:
// exactly what the scalar loop over in_range_set and narrow_key gives, vectorized where the CPU has
// AVX2 (the range pass is the only full read of the input before a rel bound can code anything).
void fold_range_keys(const float* v, uint64_t n, bool has_fill, float fill, uint32_t& nmin, uint32_t& nmax);
void fold_range_keys(const double* v, uint64_t n, bool has_fill, double fill, uint64_t& nmin, uint64_t& nmax);

}  // namespace hpcz::quant
