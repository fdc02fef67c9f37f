// Estimates, before a codec is built on it, what the interpolation predictor (src/predict/interp.hpp)
// would give on a field: the size of the ratio mode's Huffman stage (codebook of radius 512, 8 bytes an
// outlier; chunk headers and exceptions left out) for
//   lorenzo  Lorenzo on prequantized q (today's ratio mode),
//   iq<b>    interpolation on prequantized q (residual q - rounded prediction),
//   ir<b>    interpolation on reconstructed values, SZ3-style (residual quantized, reconstruction
//            pred + r * step fed to later predictions; exact values where the bound fails),
// b the InterpParams bits (0 linear / 1 cubic, +2 fastest axis first), each as CR of the Huffman stream
// alone and, after "/", with zlib -6 over the stream (a stand-in for a stage that goes below one bit a
// value). The whole field as one chunk (the first chunk's worth where it is larger), rel bounds of the
// finite range. Build and run:
//   g++ -O2 -std=c++17 -fopenmp -Isrc -Iinclude bench/ratio/interp_estimate.cpp -o /tmp/interp_estimate -lz
//   /tmp/interp_estimate ../shared/data/*.bin
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "codecs/ratio_class/chunk.hpp"
#include "predict/interp.hpp"
#include "predict/lorenzo.hpp"
#include "quant/quantizer.hpp"

using namespace hpcz;

namespace {

struct Cost {
  double huffman, zlib;  // bytes, outliers included
};

Cost cost(const std::vector<uint32_t>& d) {
  const uint32_t radius = 512, nsym = 2 * radius;
  std::vector<uint32_t> hist(nsym, 0), sym(d.size());
  uint64_t outliers = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    sym[i] = predict::quant_symbol(d[i], radius);
    ++hist[sym[i]];
    outliers += sym[i] == 0;
  }
  const ratio::Book book = ratio::build_book(hist.data(), nsym);
  uint64_t bits = 0;
  for (uint32_t k = 0; k < nsym; ++k) bits += uint64_t(hist[k]) * book.len[k];
  std::vector<uint8_t> stream((bits + 7) / 8 + 8, 0);
  uint64_t pos = 0;
  for (uint32_t s : sym)
    for (int b = int(book.len[s]) - 1; b >= 0; --b, ++pos)
      if ((book.code[s] >> b) & 1) stream[pos >> 3] |= uint8_t(0x80 >> (pos & 7));
  uLongf zn = compressBound(uLong(stream.size()));
  std::vector<uint8_t> z(zn);
  compress2(z.data(), &zn, stream.data(), uLong(stream.size()), 6);
  return {bits / 8.0 + 8.0 * outliers, std::min<double>(zn, stream.size()) + 8.0 * outliers};
}

template <class T>
void run(const std::vector<T>& v, std::vector<uint64_t> dims) {
  double mn = INFINITY, mx = -INFINITY;
  for (T x : v)
    if (std::isfinite(x)) mn = std::min(mn, double(x)), mx = std::max(mx, double(x));
  const predict::Shape sh = predict::working_shape(dims.data(), int(dims.size()));
  const predict::ChunkShape c = predict::chunk_shape(sh, 0);
  const uint64_t n = c.count();
  const double raw = double(n * sizeof(T));
  for (double rel : {1e-2, 1e-3, 1e-4}) {
    const double eb = rel * (mx - mn), step = quant::choose_step<T>(eb, true, mn, mx);
    const auto p = quant::make_params<T>(eb, step, false, 0);
    std::vector<uint32_t> q(n), d(n), zero(c.cx, 0);
    for (uint64_t i = 0; i < n; ++i) {
      int32_t k;
      q[i] = quant::quantize(v[i], p, k) ? uint32_t(k) : 0u;
    }
    predict::lorenzo_values(c, q.data(), zero.data(), 0, n, [&](uint32_t i, uint32_t x) { d[i] = x; });
    Cost L = cost(d);
    std::printf("  rel %g  lorenzo %6.2f/%6.2f ", rel, raw / L.huffman, raw / L.zlib);
    for (uint8_t b = 0; b < predict::kInterpParamsCount; ++b) {
      predict::interp_residuals(c, predict::InterpParams{b}, q.data(), d.data());
      const Cost I = cost(d);
      std::printf(" iq%d %6.2f", b, raw / I.huffman);
    }
    for (uint8_t b = 0; b < predict::kInterpParamsCount; ++b) {
      std::vector<T> xr(n);
      predict::interp_traverse<T>(
          c, predict::InterpParams{b}, [&](uint64_t j) { return xr[j]; },
          [&](uint64_t i, T pred, bool) {
            const T r = std::nearbyint((v[i] - pred) / p.step);
            const T rec = pred + r * p.step;
            const bool ok = std::fabs(double(r)) < quant::kQLimit && quant::within_bound(double(v[i]), double(rec), eb);
            xr[i] = ok ? rec : v[i];
            d[i] = ok ? uint32_t(int32_t(r)) : 0x80000000u;  // an outlier symbol
          });
      const Cost R = cost(d);
      std::printf("  ir%d %6.2f/%6.2f", b, raw / R.huffman, raw / R.zlib);
    }
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int a = 1; a < argc; ++a) {
    const std::string path = argv[a];
    const size_t u = path.rfind('_'), u2 = path.rfind('_', u - 1);
    const std::string ds = path.substr(u2 + 1, u - u2 - 1);
    std::vector<uint64_t> dims;
    uint64_t n = 1;
    for (size_t s = 0; s <= ds.size();) {
      size_t e = ds.find('x', s);
      if (e == std::string::npos) e = ds.size();
      dims.push_back(std::stoull(ds.substr(s, e - s)));
      n *= dims.back();
      s = e + 1;
    }
    std::ifstream f(path, std::ios::binary);
    std::printf("%s\n", path.substr(path.rfind('/') + 1).c_str());
    if (path.find("_f64") != std::string::npos) {
      std::vector<double> v(n);
      f.read(reinterpret_cast<char*>(v.data()), std::streamsize(n * 8));
      run(v, dims);
    } else {
      std::vector<float> v(n);
      f.read(reinterpret_cast<char*>(v.data()), std::streamsize(n * 4));
      run(v, dims);
    }
  }
}
