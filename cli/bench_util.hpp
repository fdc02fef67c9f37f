// Helpers shared by the benchmarks (bench.cpp: the lossy modes; bench/internal/: lossless, codebook).
#pragma once
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "cli_util.hpp"
#if HPCZ_HAS_CUDA
#include <cuda_runtime.h>
#endif

namespace hpcz::cli {

struct Field {
  std::string name, path;
  DType dtype;
  std::vector<uint64_t> dims;
};

// --data's default: the shared fields beside a checkout, else the bundled sample (a user's clone, run
// from its root or from anywhere).
inline std::string default_data_dir() {
  struct stat st;
  for (const char* d : {"../shared/data", "data", HPCZ_BUNDLED_DATA})
    if (::stat(d, &st) == 0 && S_ISDIR(st.st_mode)) return d;
  return "data";
}

// The fields in dir whose file name contains one of filter's comma-separated parts (all where filter is
// empty). A filter that matches nothing is an error, not an empty table.
inline std::vector<Field> find_fields(const std::string& dir, const std::string& filter) {
  std::vector<std::string> parts;
  for (size_t at = 0; at <= filter.size();) {
    const size_t comma = std::min(filter.find(',', at), filter.size());
    parts.push_back(filter.substr(at, comma - at));
    at = comma + 1;
  }
  std::vector<Field> out;
  DIR* d = opendir(dir.c_str());
  if (!d) throw InputError(dir, std::string("cannot open the data folder: ") + std::strerror(errno));
  std::regex re(R"(^(.*)_([0-9x]+)_(f32|f64)\.bin$)");
  while (dirent* e = readdir(d)) {
    std::smatch m;
    std::string n = e->d_name;
    if (!std::regex_match(n, m, re)) continue;
    bool match = false;
    for (const std::string& part : parts) match |= n.find(part) != std::string::npos;
    if (match) out.push_back({m[1].str(), dir + "/" + n, parse_dtype(m[3].str()), parse_dims(m[2].str())});
  }
  closedir(d);
  if (out.empty() && !filter.empty()) throw InputError(dir, "no field matches --fields '" + filter + "'");
  std::sort(out.begin(), out.end(), [](const Field& a, const Field& b) { return a.name < b.name; });
  return out;
}

// The value after option args[i] (i moves to it), or a usage error.
inline std::string option_value(const std::vector<std::string>& args, size_t& i) {
  if (i + 1 >= args.size()) throw UsageError(args[i] + " needs a value");
  return args[++i];
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]));
}

inline std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

#if HPCZ_HAS_CUDA
inline void ck(cudaError_t e, const char* w) {
  if (e != cudaSuccess) throw Error(ErrorCode::cuda, std::string(w) + ": " + cudaGetErrorString(e));
}

// Median seconds of run() on stream s between CUDA events, after 2 warm-ups (reps timed runs).
template <class F> double median_seconds(int reps, cudaStream_t s, F&& run) {
  cudaEvent_t e0, e1;
  ck(cudaEventCreate(&e0), "event");
  ck(cudaEventCreate(&e1), "event");
  std::vector<double> t;
  for (int r = 0; r < reps + 2; ++r) {
    cudaEventRecord(e0, s);
    run();
    cudaEventRecord(e1, s);
    ck(cudaEventSynchronize(e1), "timed call");
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    if (r >= 2) t.push_back(ms / 1e3);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return median(t);
}

// Device-to-device copy bandwidth, counted as bytes read + written per second (the roofline).
inline double copy_bandwidth(size_t bytes, int reps, cudaStream_t s) {
  void *a, *b;
  ck(cudaMalloc(&a, bytes), "malloc");
  ck(cudaMalloc(&b, bytes), "malloc");
  ck(cudaMemset(a, 1, bytes), "memset");
  const double t = median_seconds(reps, s, [&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s); });
  cudaFree(a);
  cudaFree(b);
  return 2.0 * double(bytes) / t;
}
#endif

}  // namespace hpcz::cli
