// Helpers for the tests: real fields, the strict bound check.
#pragma once
#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "harness.hpp"
#include "hpcz/hpcz.hpp"

namespace testutil {

struct Field {
  std::string name;
  hpcz::DType dtype;
  std::vector<uint64_t> dims;
  std::vector<uint8_t> bytes;
  uint64_t n() const { return bytes.size() / hpcz::dtype_size(dtype); }
};

inline std::vector<uint8_t> read_all(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

inline std::vector<uint64_t> dims_of(const std::string& s) {
  std::vector<uint64_t> d;
  size_t a = 0;
  while (a <= s.size()) {
    size_t b = s.find('x', a);
    if (b == std::string::npos) b = s.size();
    d.push_back(std::stoull(s.substr(a, b - a)));
    a = b + 1;
  }
  return d;
}

// The bundled sample, plus every field of ../shared/data when that folder is there.
inline std::vector<Field> real_fields() {
  std::vector<Field> out;
  std::regex re(R"(^(.*)_([0-9x]+)_(f32|f64)\.bin$)");
  for (const std::string& dir : {harness::data_dir_bundled(), harness::data_dir_shared()}) {
    if (dir.empty()) continue;
    DIR* d = opendir(dir.c_str());
    if (!d) continue;
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      std::smatch m;
      if (!std::regex_match(n, m, re)) continue;
      if (std::any_of(out.begin(), out.end(), [&](const Field& f) { return f.name == n; })) continue;
      Field f{n, m[3] == "f64" ? hpcz::DType::f64 : hpcz::DType::f32, dims_of(m[2]), read_all(dir + "/" + n)};
      uint64_t cnt = 1;
      for (auto x : f.dims) cnt *= x;
      if (cnt * hpcz::dtype_size(f.dtype) == f.bytes.size()) out.push_back(std::move(f));
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end(), [](const Field& a, const Field& b) { return a.name < b.name; });
  return out;
}

struct Check {
  uint64_t violations = 0;   // finite values off by more than eb, or non-finite/fill values not bit-exact
  double worst = 0;          // max |x - x'| / eb over finite values
};

// The guarantee, checked exactly: |x - x'| <= eb in double (exact for f32; for f64 the subtraction's
// rounding cannot turn a violation into a pass except at == eb, where the result is checked by TwoSum).
template <class T>
Check strict_check(const T* x, const T* y, uint64_t n, double eb, const std::optional<double>& fill) {
  Check c;
  for (uint64_t i = 0; i < n; ++i) {
    // eb == 0 asks for every value itself, bit for bit (-0 is not +0).
    bool exact_needed = !std::isfinite(x[i]) || (fill && x[i] == T(*fill)) || eb == 0;
    if (exact_needed) {
      if (std::memcmp(&x[i], &y[i], sizeof(T))) ++c.violations;
      continue;
    }
    double a = double(x[i]), b = double(y[i]);
    double d = b - a, ad = std::fabs(d);
    bool ok = ad < eb;
    if (!ok && ad == eb) {
      double bv = d - b, err = (b - (d - bv)) + (-a - bv);
      ok = err == 0 || ((err > 0) != (d > 0));
    }
    if (!ok) ++c.violations;
    if (eb > 0) c.worst = std::max(c.worst, ad / eb);
  }
  return c;
}

inline Check strict_check(const std::vector<uint8_t>& x, const std::vector<uint8_t>& y, hpcz::DType t, double eb,
                          const std::optional<double>& fill = std::nullopt) {
  if (x.size() != y.size()) return Check{~0ull, 0};
  if (t == hpcz::DType::f64)
    return strict_check(reinterpret_cast<const double*>(x.data()), reinterpret_cast<const double*>(y.data()),
                        x.size() / 8, eb, fill);
  return strict_check(reinterpret_cast<const float*>(x.data()), reinterpret_cast<const float*>(y.data()), x.size() / 4,
                      eb, fill);
}

// The absolute bound the request asks for, from the data (finite, non-fill values), in long double
// (x86's 80-bit format: max - min of doubles neither overflows nor loses more than 2^-64 of itself).
// The archive's eb_abs never exceeds it: hpcz rounds toward zero, and this long double product can only
// round to a value at or above that (its range and product round to nearest in a wider format).
template <class T>
long double requested_bound(const T* x, uint64_t n, const hpcz::Options& o) {
  if (o.mode == hpcz::BoundMode::abs) return o.bound;
  long double mn = 0, mx = 0;
  bool any = false;
  for (uint64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i]) || (o.fill && x[i] == T(*o.fill))) continue;
    const long double v = x[i];
    mn = any ? std::min(mn, v) : v;
    mx = any ? std::max(mx, v) : v;
    any = true;
  }
  const long double rel = any ? (long double)o.bound * (mx - mn) : 0.0L, abs = o.abs_bound;
  if (o.mode == hpcz::BoundMode::abs_and_rel) return std::min(abs, rel);
  if (o.mode == hpcz::BoundMode::abs_or_rel) return std::max(abs, rel);
  return rel;
}
inline bool eb_within_request(double eb_abs, long double requested) {
  return (long double)eb_abs <= requested;
}

template <class T> std::vector<uint8_t> as_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

}  // namespace testutil
