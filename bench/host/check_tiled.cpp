// Checks a decompressed array that is a real field tiled along its slowest axis (as file_to_file.sh and
// large.sh build them) against the field, value by value, without the tiled original on disk: every
// finite value within EB (checked exactly, in long double), every other value bit for bit.
// usage: check_tiled FIELD f32|f64 DECOMPRESSED EB        (exit 0: all within the bound)
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

template <class T>
uint64_t check(const std::vector<T>& field, int fd, uint64_t n, long double eb, double& worst) {
  const uint64_t piece = (uint64_t(64) << 20) / sizeof(T), pieces = (n + piece - 1) / piece;
  uint64_t bad = 0;
  double w = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : bad) reduction(max : w)
  for (uint64_t k = 0; k < pieces; ++k) {
    const uint64_t first = k * piece, cnt = std::min(piece, n - first);
    std::vector<T> got(cnt);
    uint8_t* p = reinterpret_cast<uint8_t*>(got.data());
    for (uint64_t at = 0; at < cnt * sizeof(T);) {
      const ssize_t r = pread(fd, p + at, cnt * sizeof(T) - at, off_t(first * sizeof(T) + at));
      if (r <= 0) { bad += cnt; break; }
      at += uint64_t(r);
    }
    for (uint64_t i = 0; i < cnt; ++i) {
      const T x = field[(first + i) % field.size()], y = got[i];
      if (!std::isfinite(x)) { bad += std::memcmp(&x, &y, sizeof(T)) != 0; continue; }
      const long double d = std::fabs((long double)y - (long double)x);
      bad += !(d <= eb);
      if (eb > 0) w = std::max(w, double(d / eb));
    }
  }
  worst = w;
  return bad;
}

int main(int argc, char** argv) {
  if (argc != 5) { std::fprintf(stderr, "usage: check_tiled FIELD f32|f64 DECOMPRESSED EB\n"); return 2; }
  std::ifstream f(argv[1], std::ios::binary);
  std::vector<char> raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const bool f64 = std::strcmp(argv[2], "f64") == 0;
  const int fd = open(argv[3], O_RDONLY);
  if (fd < 0 || raw.empty()) { std::perror("open"); return 2; }
  const uint64_t bytes = uint64_t(lseek(fd, 0, SEEK_END)), vb = f64 ? 8 : 4;
  const long double eb = std::strtold(argv[4], nullptr);
  double worst = 0;
  uint64_t bad;
  if (f64) {
    std::vector<double> v(raw.size() / 8);
    std::memcpy(v.data(), raw.data(), v.size() * 8);
    bad = check(v, fd, bytes / vb, eb, worst);
  } else {
    std::vector<float> v(raw.size() / 4);
    std::memcpy(v.data(), raw.data(), v.size() * 4);
    bad = check(v, fd, bytes / vb, eb, worst);
  }
  std::printf("%llu values, %llu outside the bound, max |error| / eb %.4f\n", (unsigned long long)(bytes / vb),
              (unsigned long long)bad, worst);
  return bad ? 1 : 0;
}
