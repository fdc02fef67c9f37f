// Where the one-shot host path's time goes: a real field tiled to GIB GiB in pageable memory, and
//   * hpcz::compress into a buffer and hpcz::decompress into the array's size (both touched before);
//   * the copies alone, each way: the driver's pageable cudaMemcpy; pinned staging through a ring of
//     four pieces of 2, 8, 32 MiB, the host side copied by every OpenMP thread in 1 MiB slices, by
//     each thread in one contiguous share, or by hpcz's copy pool; cudaHostRegister and unregister of
//     the whole array.
// Median of REPS, GB/s of the array. usage: host_path_probe FIELD [GIB=1] [REPS=5]
#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "hpcz/hpcz.hpp"
#include "pipeline/host_copy.hpp"

namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

template <class F> double median_s(int reps, F&& f) {
  std::vector<double> t;
  f();
  for (int r = 0; r < reps; ++r) {
    const double t0 = now();
    f();
    t.push_back(now() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "probe: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(3);
  }
}

void copy_sliced(uint8_t* d, const uint8_t* s, size_t n) {
  constexpr size_t kSlice = size_t(1) << 20;
  const long long k = (long long)((n + kSlice - 1) / kSlice);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < k; ++i) std::memcpy(d + i * kSlice, s + i * kSlice, std::min(kSlice, n - size_t(i) * kSlice));
}

void copy_shares(uint8_t* d, const uint8_t* s, size_t n) {
#pragma omp parallel
  {
    const size_t t = size_t(omp_get_thread_num()), T = size_t(omp_get_num_threads());
    const size_t a = n * t / T / 64 * 64, b = t + 1 == T ? n : n * (t + 1) / T / 64 * 64;
    std::memcpy(d + a, s + a, b - a);
  }
}

void copy_threads(uint8_t* d, const uint8_t* s, size_t n) {
  const size_t T = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> ts;
  for (size_t t = 0; t < T; ++t)
    ts.emplace_back([=] {
      const size_t a = n * t / T / 64 * 64, b = t + 1 == T ? n : n * (t + 1) / T / 64 * 64;
      std::memcpy(d + a, s + a, b - a);
    });
  for (auto& t : ts) t.join();
}

struct Ring {
  uint8_t* pin = nullptr;
  size_t piece;
  cudaStream_t st;
  cudaEvent_t ev[4];
  explicit Ring(size_t p) : piece(p) {
    check(cudaHostAlloc(reinterpret_cast<void**>(&pin), 4 * p, 0), "pin");
    check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream");
    for (auto& e : ev) check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "event");
  }
  template <class Copy> void up(uint8_t* d, const uint8_t* h, size_t n, Copy copy) {
    for (size_t k = 0, at = 0; at < n; ++k, at += piece) {
      const size_t len = std::min(piece, n - at), slot = k % 4;
      if (k >= 4) check(cudaEventSynchronize(ev[slot]), "sync");
      copy(pin + slot * piece, h + at, len);
      check(cudaMemcpyAsync(d + at, pin + slot * piece, len, cudaMemcpyHostToDevice, st), "h2d");
      check(cudaEventRecord(ev[slot], st), "rec");
    }
    check(cudaStreamSynchronize(st), "sync");
  }
  template <class Copy> void down(uint8_t* h, const uint8_t* d, size_t n, Copy copy) {
    const size_t pieces = (n + piece - 1) / piece;
    auto issue = [&](size_t k) {
      const size_t at = k * piece;
      check(cudaMemcpyAsync(pin + (k % 4) * piece, d + at, std::min(piece, n - at), cudaMemcpyDeviceToHost, st), "d2h");
      check(cudaEventRecord(ev[k % 4], st), "rec");
    };
    for (size_t k = 0; k < std::min<size_t>(pieces, 3); ++k) issue(k);
    for (size_t k = 0; k < pieces; ++k) {
      if (k + 3 < pieces) issue(k + 3);
      check(cudaEventSynchronize(ev[k % 4]), "sync");
      copy(h + k * piece, pin + (k % 4) * piece, std::min(piece, n - k * piece));
    }
  }
};
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const double gib = argc > 2 ? std::atof(argv[2]) : 1.0;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 5;
  std::ifstream f(argv[1], std::ios::binary);
  std::vector<uint8_t> field((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t n = size_t(gib * double(1ull << 30)) / 4 * 4;
  std::vector<uint8_t> a(n), back(n), arch(hpcz::max_compressed_size(n / 4, hpcz::DType::f32));
  for (size_t at = 0; at < n; at += field.size()) std::memcpy(a.data() + at, field.data(), std::min(field.size(), n - at));
  std::memset(back.data(), 1, n);
  std::memset(arch.data(), 1, arch.size());
  const double G = double(n) / 1e9;
  std::printf("# %s tiled to %zu bytes, median of %d, %d OpenMP threads\n", argv[1], n, reps, omp_get_max_threads());
  hpcz::Options o;
  o.backend = hpcz::Backend::gpu;
  size_t size = 0;
  std::printf("hpcz::compress into a buffer             %8.2f GB/s\n",
              G / median_s(reps, [&] { size = hpcz::compress(a.data(), hpcz::DType::f32, {n / 4}, o, arch.data(), arch.size()); }));
  std::printf("hpcz::decompress into a buffer           %8.2f GB/s\n",
              G / median_s(reps, [&] { hpcz::decompress(arch.data(), size, back.data(), n, hpcz::Backend::gpu); }));
  uint8_t* d = nullptr;
  check(cudaMalloc(&d, n), "malloc");
  std::printf("cudaMemcpy pageable, to device           %8.2f GB/s\n",
              G / median_s(reps, [&] { check(cudaMemcpy(d, a.data(), n, cudaMemcpyHostToDevice), "h2d"); }));
  std::printf("cudaMemcpy pageable, to host             %8.2f GB/s\n",
              G / median_s(reps, [&] { check(cudaMemcpy(back.data(), d, n, cudaMemcpyDeviceToHost), "d2h"); }));
  std::printf("memcpy, 1 MiB slices, every thread       %8.2f GB/s\n",
              G / median_s(reps, [&] { copy_sliced(back.data(), a.data(), n); }));
  std::printf("memcpy, a share a thread                 %8.2f GB/s\n",
              G / median_s(reps, [&] { copy_shares(back.data(), a.data(), n); }));
  std::printf("memcpy, a share a std::thread           %8.2f GB/s\n",
              G / median_s(reps, [&] { copy_threads(back.data(), a.data(), n); }));
  std::printf("memcpy, hpcz's copy pool                 %8.2f GB/s\n",
              G / median_s(reps, [&] { hpcz::pipeline::parallel_copy(back.data(), a.data(), n); }));
  std::printf("memcpy, one thread                       %8.2f GB/s\n",
              G / median_s(reps, [&] { std::memcpy(back.data(), a.data(), n); }));
  for (size_t mib : {2, 8, 32}) {
    Ring r(mib << 20);
    std::printf("ring of 4 x %2zu MiB, slices, to device   %8.2f GB/s\n", mib,
                G / median_s(reps, [&] { r.up(d, a.data(), n, copy_sliced); }));
    std::printf("ring of 4 x %2zu MiB, shares, to device   %8.2f GB/s\n", mib,
                G / median_s(reps, [&] { r.up(d, a.data(), n, copy_shares); }));
    std::printf("ring of 4 x %2zu MiB, slices, to host     %8.2f GB/s\n", mib,
                G / median_s(reps, [&] { r.down(back.data(), d, n, copy_sliced); }));
    std::printf("ring of 4 x %2zu MiB, shares, to host     %8.2f GB/s\n", mib,
                G / median_s(reps, [&] { r.down(back.data(), d, n, copy_shares); }));
    auto pool = [](uint8_t* dst, const uint8_t* src, size_t len) { hpcz::pipeline::parallel_copy(dst, src, len); };
    std::printf("ring of 4 x %2zu MiB, copy pool, to device %7.2f GB/s\n", mib,
                G / median_s(reps, [&] { r.up(d, a.data(), n, pool); }));
    std::printf("ring of 4 x %2zu MiB, copy pool, to host  %8.2f GB/s\n", mib,
                G / median_s(reps, [&] { r.down(back.data(), d, n, pool); }));
  }
  double reg = median_s(1, [&] {
    check(cudaHostRegister(a.data(), n, cudaHostRegisterDefault), "register");
    check(cudaHostUnregister(a.data()), "unregister");
  });
  std::printf("cudaHostRegister + unregister            %8.2f GB/s\n", G / reg);
  return 0;
}
