// Compresses and decompresses a small array through the installed public API and checks the bound.
#include <hpcz/hpcz.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

int main() {
  std::vector<float> x(64 * 48);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.01f * float(i)) * 100.0f + 0.5f * float(i % 7);
  hpcz::Options opt;
  opt.mode = hpcz::BoundMode::abs;
  opt.bound = 0.01;
  opt.backend = hpcz::Backend::cpu;
  std::vector<uint8_t> archive = hpcz::compress(x.data(), hpcz::DType::f32, {64, 48}, opt);
  std::vector<uint8_t> bytes;
  hpcz::ArchiveInfo info = hpcz::decompress(archive.data(), archive.size(), bytes, hpcz::Backend::cpu);
  if (bytes.size() != x.size() * sizeof(float) || info.n_values != x.size()) {
    std::fprintf(stderr, "consumer: %zu bytes back for %zu values\n", bytes.size(), x.size());
    return 1;
  }
  std::vector<float> y(x.size());
  std::memcpy(y.data(), bytes.data(), bytes.size());
  double max_err = 0;
  for (size_t i = 0; i < x.size(); ++i) max_err = std::fmax(max_err, std::fabs(double(x[i]) - double(y[i])));
  std::printf("%s: %zu values in %zu bytes, max error %g (bound %g)\n", hpcz::version_string(), x.size(),
              archive.size(), max_err, opt.bound);
  return max_err <= opt.bound ? 0 : 1;
}
