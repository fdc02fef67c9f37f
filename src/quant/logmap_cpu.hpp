// The log2 transform's per-value passes on the CPU (logmap.hpp), over whole runs of values: the same
// bits as log2_det, exp2_det and pw_rel_within value by value, vectorized where the CPU has AVX2 and
// FMA or AVX-512 (each lane runs the scalar maps' IEEE operations in their order; an exact fused
// multiply-add is the same result in hardware or library). Host only.
#pragma once
#include <cstdint>

namespace hpcz::quant {

// The instruction sets these passes can use: 0 scalar, 1 AVX2 and FMA, 2 AVX-512F. Each pass takes a
// level (kSimdBest: the best this CPU has; a level above it runs as that one), so that tests can
// compare every level the CPU has.
constexpr int kSimdBest = -1;
int logmap_simd_best();

// y[i] = log2_det(|x[i]|) where regular[i] (x[i] then a normal value), else special.
template <class T>
void log2_abs_run(const T* x, const uint8_t* regular, uint64_t n, double special, double* y, int level = kSimdBest);

// out[i] = T(exp2_det(y[i])); out may be y itself (float64).
template <class T> void exp2_run(const double* y, uint64_t n, T* out, int level = kSimdBest);

// The encoder's check of its own reconstruction: where flags[i] is nonzero (a regular value), flags[i]
// becomes 1 if +-T(exp2_det(yr[i])), with x[i]'s sign, is within r |x[i]| (pw_rel_within), else 2.
template <class T>
void pw_log_check_run(const T* x, const double* yr, uint64_t n, double r, uint8_t* flags, int level = kSimdBest);

}  // namespace hpcz::quant
