// Small arrays on the CPU backend: what one hpcz::compress / hpcz::decompress call costs on a piece of
// a real field of 16 KiB, 64 KiB, 1 MiB (as a Zarr or HDF5 chunk is coded), and on a large tiled array
// for comparison. Each piece is a 1-D array cut from the field (consecutive pieces, cycled, so that no
// call codes the same bytes as the one before it); every call is timed alone, after warm-up, and the
// median (the lowest of a few trials' medians) is reported in us a call and GB/s of input. Options.backend = Backend::cpu; the thread count
// is OpenMP's (run it again under OMP_NUM_THREADS=1 for one core).
//
// usage: hpcz_small_chunks [--field PATH] [--modes fast,ratio,interp] [--bounds rel:1e-3,abs:0.01]
//                          [--dtypes f32,f64] [--sizes 16K,64K,1M,64M] [--reps N] [--trials T] [--gap-us US]
//   --field   a raw little-endian f32 field (default: the bundled ncar_csm_b003_ts); f64 widens it
//   --sizes   bytes of each array (K, M suffixes); an array larger than the field tiles it
//   --reps    calls timed per trial (default: about 0.3 s of calls, 20 to 2000)
//   --trials  trials per row (default 3); a row gives the lowest of the trials' medians, since another
//             process on a shared machine only ever slows a trial down
//   --gap-us  sleep between calls (a caller that does other work between chunks: OpenMP's threads
//             may go to sleep in between)
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hpcz/hpcz.hpp"

#ifndef HPCZ_BUNDLED_FIELD
#define HPCZ_BUNDLED_FIELD "data/climate-ncar_csm_b003_ts_100x64x128_f32.bin"
#endif

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string part; std::getline(ss, part, ',');)
    if (!part.empty()) out.push_back(part);
  return out;
}

uint64_t parse_bytes(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  const std::string unit = end;
  const double scale = unit == "K" || unit == "k" ? 1024.0 : unit == "M" || unit == "m" ? 1048576.0 : 1.0;
  return uint64_t(v * scale);
}

std::string size_label(uint64_t bytes) {
  char b[32];
  if (bytes >= (1u << 20)) std::snprintf(b, sizeof b, "%g MiB", double(bytes) / 1048576.0);
  else std::snprintf(b, sizeof b, "%g KiB", double(bytes) / 1024.0);
  return b;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

void pause_us(double us) {
  if (us <= 0) return;
  timespec t{time_t(us / 1e6), long(std::fmod(us, 1e6) * 1e3)};
  nanosleep(&t, nullptr);
}

struct Row {
  double comp_us, decomp_us, cr;
  int reps;
};

// The arrays of `count` values each (pieces of the field, or the field tiled), the calls timed.
template <class T>
Row run(const std::vector<T>& field, uint64_t count, hpcz::DType dtype, const hpcz::Options& opt, int reps_asked,
        int trials, double gap_us) {
  const uint64_t fn = field.size();
  const uint64_t n_pieces = count >= fn ? 1 : std::min<uint64_t>(8, fn / count);
  std::vector<std::vector<T>> pieces(n_pieces);
  for (uint64_t k = 0; k < n_pieces; ++k) {
    pieces[k].resize(count);
    const uint64_t first = count >= fn ? 0 : k * (fn / n_pieces);
    for (uint64_t i = 0; i < count; ++i) pieces[k][i] = field[(first + i) % fn];
  }
  std::vector<std::vector<uint8_t>> archives(n_pieces);
  std::vector<T> out(count);
  uint64_t in_bytes = 0, out_bytes = 0;
  // Each piece once: its archive, and its values checked against the bound the archive records.
  for (uint64_t k = 0; k < n_pieces; ++k) {
    archives[k] = hpcz::compress(pieces[k].data(), dtype, {count}, opt);
    const hpcz::ArchiveInfo info = hpcz::decompress(archives[k].data(), archives[k].size(), out.data(),
                                                    count * sizeof(T), hpcz::Backend::cpu);
    for (uint64_t i = 0; i < count; ++i) {
      const T x = pieces[k][i], y = out[i];
      const bool ok = std::isfinite(x) ? std::fabs(double(x) - double(y)) <= info.eb_abs
                                       : std::memcmp(&x, &y, sizeof(T)) == 0;
      if (!ok) {
        std::fprintf(stderr, "value %llu of piece %llu outside the bound\n", (unsigned long long)i,
                     (unsigned long long)k);
        std::exit(1);
      }
    }
    in_bytes += count * sizeof(T);
    out_bytes += archives[k].size();
  }
  // The first call's time, to size the run: about 0.3 s of calls each way.
  const auto t0 = Clock::now();
  hpcz::compress(pieces[0].data(), dtype, {count}, opt);
  const double first = std::chrono::duration<double>(Clock::now() - t0).count();
  const int reps = reps_asked > 0 ? reps_asked : int(std::clamp(0.3 / std::max(first, 1e-7), 20.0, 2000.0));
  const int warm = std::max(3, reps / 10);
  // Each trial times every call; a row reports the lowest of the trials' medians (a trial that another
  // process on the machine disturbed shows a higher median).
  double best_c = 1e300, best_d = 1e300;
  size_t sink = 0;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<double> tc, td;
    for (int r = -warm; r < reps; ++r) {
      const auto& p = pieces[size_t(r + warm) % n_pieces];
      pause_us(gap_us);
      const auto a = Clock::now();
      const std::vector<uint8_t> archive = hpcz::compress(p.data(), dtype, {count}, opt);
      const auto b = Clock::now();
      sink += archive.size();
      if (r >= 0) tc.push_back(std::chrono::duration<double, std::micro>(b - a).count());
    }
    for (int r = -warm; r < reps; ++r) {
      const auto& z = archives[size_t(r + warm) % n_pieces];
      pause_us(gap_us);
      const auto a = Clock::now();
      hpcz::decompress(z.data(), z.size(), out.data(), count * sizeof(T), hpcz::Backend::cpu);
      const auto b = Clock::now();
      sink += size_t(out[count / 2] != out[count / 2]);
      if (r >= 0) td.push_back(std::chrono::duration<double, std::micro>(b - a).count());
    }
    best_c = std::min(best_c, median(tc));
    best_d = std::min(best_d, median(td));
  }
  if (sink == 0) std::fprintf(stderr, "?\n");
  return {best_c, best_d, double(in_bytes) / double(out_bytes), reps};
}

}  // namespace

int main(int argc, char** argv) {
  std::string field_path = HPCZ_BUNDLED_FIELD, modes = "fast,ratio,interp", bounds = "rel:1e-3", dtypes = "f32",
              sizes = "16K,64K,1M";
  int reps = 0, trials = 3;
  double gap_us = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value (see the usage at the top of bench/host/small_chunks.cpp)\n", a.c_str());
      return 2;
    }
    const std::string v = argv[++i];
    if (a == "--field") field_path = v;
    else if (a == "--modes") modes = v;
    else if (a == "--bounds") bounds = v;
    else if (a == "--dtypes") dtypes = v;
    else if (a == "--sizes") sizes = v;
    else if (a == "--reps") reps = std::atoi(v.c_str());
    else if (a == "--trials") trials = std::max(1, std::atoi(v.c_str()));
    else if (a == "--gap-us") gap_us = std::atof(v.c_str());
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  std::ifstream f(field_path, std::ios::binary | std::ios::ate);
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", field_path.c_str());
    return 2;
  }
  std::vector<float> field32(size_t(f.tellg()) / 4);
  f.seekg(0);
  f.read(reinterpret_cast<char*>(field32.data()), std::streamsize(field32.size() * 4));
  const std::vector<double> field64(field32.begin(), field32.end());

  std::printf("hpcz_small_chunks: %s, %zu values; CPU backend, %d OpenMP threads, gap %g us, %d trials\n\n",
              field_path.c_str(), field32.size(), omp_get_max_threads(), gap_us, trials);
  std::printf("| mode | dtype | bound | array | CR | compress us | GB/s | decompress us | GB/s | reps |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& m : split(modes)) {
    hpcz::Options opt;
    opt.backend = hpcz::Backend::cpu;
    if (m == "fast") opt.codec = hpcz::Codec::fast;
    else if (m == "ratio") opt.codec = hpcz::Codec::ratio;
    else if (m == "interp") opt.codec = hpcz::Codec::interp;
    else {
      std::fprintf(stderr, "unknown mode %s\n", m.c_str());
      return 2;
    }
    for (const std::string& b : split(bounds)) {
      const size_t colon = b.find(':');
      if (colon == std::string::npos) {
        std::fprintf(stderr, "bound %s: rel:E or abs:E\n", b.c_str());
        return 2;
      }
      opt.mode = b.substr(0, colon) == "abs" ? hpcz::BoundMode::abs : hpcz::BoundMode::rel;
      opt.bound = std::atof(b.c_str() + colon + 1);
      for (const std::string& t : split(dtypes))
        for (const std::string& s : split(sizes)) {
          const uint64_t bytes = parse_bytes(s);
          const bool f64 = t == "f64";
          const uint64_t count = bytes / (f64 ? 8 : 4);
          const Row r = f64 ? run(field64, count, hpcz::DType::f64, opt, reps, trials, gap_us)
                            : run(field32, count, hpcz::DType::f32, opt, reps, trials, gap_us);
          std::printf("| %s | %s | %s | %s | %.2f | %.1f | %.3f | %.1f | %.3f | %d |\n", m.c_str(), t.c_str(), b.c_str(),
                      size_label(bytes).c_str(), r.cr, r.comp_us, double(bytes) / r.comp_us / 1e3, r.decomp_us,
                      double(bytes) / r.decomp_us / 1e3, r.reps);
          std::fflush(stdout);
        }
    }
  }
  return 0;
}
