// The C++ host calls the Python package wraps, timed alone: hpcz::compress and hpcz::decompress (into
// a caller's buffer) of one array from a raw file, median of REPS after a warm-up. numpy_host.py runs
// it in the same process tree on the same bytes.
// usage: host_call FILE f32|f64 DIMS(a,b,c) fast|ratio REL REPS [gpu|cpu]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hpcz/hpcz.hpp"

int main(int argc, char** argv) {
  if (argc < 7) return std::fprintf(stderr, "usage: host_call FILE f32|f64 DIMS fast|ratio REL REPS [gpu|cpu]\n"), 1;
  std::ifstream f(argv[1], std::ios::binary);
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const hpcz::DType dtype = std::string(argv[2]) == "f64" ? hpcz::DType::f64 : hpcz::DType::f32;
  std::vector<uint64_t> dims;
  std::stringstream ss(argv[3]);
  for (std::string x; std::getline(ss, x, ',');) dims.push_back(std::stoull(x));
  hpcz::Options o;
  o.codec = std::string(argv[4]) == "ratio" ? hpcz::Codec::ratio : hpcz::Codec::fast;
  o.mode = hpcz::BoundMode::rel;
  o.bound = std::atof(argv[5]);
  const int reps = std::atoi(argv[6]);
  o.backend = argc > 7 && std::string(argv[7]) == "cpu" ? hpcz::Backend::cpu : hpcz::Backend::gpu;
  using clk = std::chrono::steady_clock;
  auto median = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  std::vector<double> tc, td;
  std::vector<uint8_t> a, out(data.size());
  for (int r = 0; r <= reps; ++r) {
    auto t0 = clk::now();
    a = hpcz::compress(data.data(), dtype, dims, o);
    if (r) tc.push_back(std::chrono::duration<double>(clk::now() - t0).count());
  }
  for (int r = 0; r <= reps; ++r) {
    auto t0 = clk::now();
    hpcz::decompress(a.data(), a.size(), out.data(), out.size(), o.backend);
    if (r) td.push_back(std::chrono::duration<double>(clk::now() - t0).count());
  }
  std::printf("%.6f %.6f %zu\n", median(tc), median(td), a.size());
}
