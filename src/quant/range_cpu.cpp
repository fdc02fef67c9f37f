#include "quant/range_cpu.hpp"

#include <algorithm>

#include "quant/range.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HPCZ_RANGE_AVX2 1
#endif

namespace hpcz::quant {
namespace {

template <class T, class K>
void fold_scalar(const T* v, uint64_t n, bool has_fill, T fill, K& nmin, K& nmax) {
  K a = nmin, b = nmax;
  for (uint64_t i = 0; i < n; ++i)
    if (in_range_set(v[i], has_fill, fill)) {
      const K k = narrow_key(v[i]);
      a = std::min(a, k);
      b = std::max(b, k);
    }
  nmin = a;
  nmax = b;
}

#ifdef HPCZ_RANGE_AVX2
// Keys in the signed domain: s = bits ^ (sign ? 0x7f..f : 0) orders as the values do (-0 < +0), and
// s ^ top is narrow_key. A value outside the set takes the neutral key of each side.
__attribute__((target("avx2"))) void fold_avx2(const float* v, uint64_t n, bool has_fill, float fill, uint32_t& nmin,
                                               uint32_t& nmax) {
  const __m256i magnitude = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
  const __m256 f = _mm256_set1_ps(fill);
  __m256i lo = _mm256_set1_epi32(0x7fffffff), hi = _mm256_set1_epi32(int32_t(0x80000000u));
  uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + i));
    __m256i in = _mm256_cmpgt_epi32(inf, _mm256_and_si256(x, magnitude));  // finite
    if (has_fill) in = _mm256_andnot_si256(_mm256_castps_si256(_mm256_cmp_ps(_mm256_castsi256_ps(x), f, _CMP_EQ_OQ)), in);
    const __m256i s = _mm256_xor_si256(x, _mm256_and_si256(_mm256_srai_epi32(x, 31), magnitude));
    lo = _mm256_blendv_epi8(lo, _mm256_min_epi32(lo, s), in);
    hi = _mm256_blendv_epi8(hi, _mm256_max_epi32(hi, s), in);
  }
  alignas(32) int32_t l[8], h[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(l), lo);
  _mm256_store_si256(reinterpret_cast<__m256i*>(h), hi);
  uint32_t a = nmin, b = nmax;
  for (int j = 0; j < 8; ++j) {
    if (l[j] != 0x7fffffff || h[j] != int32_t(0x80000000u)) {  // the lane saw a value
      a = std::min(a, uint32_t(l[j]) ^ 0x80000000u);
      b = std::max(b, uint32_t(h[j]) ^ 0x80000000u);
    }
  }
  fold_scalar(v + i, n - i, has_fill, fill, a, b);
  nmin = a;
  nmax = b;
}

__attribute__((target("avx2"))) void fold_avx2(const double* v, uint64_t n, bool has_fill, double fill, uint64_t& nmin,
                                               uint64_t& nmax) {
  const __m256i magnitude = _mm256_set1_epi64x(0x7fffffffffffffffll), inf = _mm256_set1_epi64x(0x7ff0000000000000ll);
  const __m256d f = _mm256_set1_pd(fill);
  __m256i lo = magnitude, hi = _mm256_set1_epi64x(int64_t(0x8000000000000000ull));
  uint64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + i));
    __m256i in = _mm256_cmpgt_epi64(inf, _mm256_and_si256(x, magnitude));
    if (has_fill) in = _mm256_andnot_si256(_mm256_castpd_si256(_mm256_cmp_pd(_mm256_castsi256_pd(x), f, _CMP_EQ_OQ)), in);
    const __m256i sign = _mm256_cmpgt_epi64(_mm256_setzero_si256(), x);
    const __m256i s = _mm256_xor_si256(x, _mm256_and_si256(sign, magnitude));
    const __m256i take_lo = _mm256_and_si256(in, _mm256_cmpgt_epi64(lo, s));
    const __m256i take_hi = _mm256_and_si256(in, _mm256_cmpgt_epi64(s, hi));
    lo = _mm256_blendv_epi8(lo, s, take_lo);
    hi = _mm256_blendv_epi8(hi, s, take_hi);
  }
  alignas(32) int64_t l[4], h[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(l), lo);
  _mm256_store_si256(reinterpret_cast<__m256i*>(h), hi);
  uint64_t a = nmin, b = nmax;
  for (int j = 0; j < 4; ++j) {
    if (l[j] != 0x7fffffffffffffffll || h[j] != int64_t(0x8000000000000000ull)) {
      a = std::min<uint64_t>(a, uint64_t(l[j]) ^ 0x8000000000000000ull);
      b = std::max<uint64_t>(b, uint64_t(h[j]) ^ 0x8000000000000000ull);
    }
  }
  fold_scalar(v + i, n - i, has_fill, fill, a, b);
  nmin = a;
  nmax = b;
}

bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

}  // namespace

void fold_range_keys(const float* v, uint64_t n, bool has_fill, float fill, uint32_t& nmin, uint32_t& nmax) {
#ifdef HPCZ_RANGE_AVX2
  if (has_avx2()) return fold_avx2(v, n, has_fill, fill, nmin, nmax);
#endif
  fold_scalar(v, n, has_fill, fill, nmin, nmax);
}

void fold_range_keys(const double* v, uint64_t n, bool has_fill, double fill, uint64_t& nmin, uint64_t& nmax) {
#ifdef HPCZ_RANGE_AVX2
  if (has_avx2()) return fold_avx2(v, n, has_fill, fill, nmin, nmax);
#endif
  fold_scalar(v, n, has_fill, fill, nmin, nmax);
}

}  // namespace hpcz::quant
