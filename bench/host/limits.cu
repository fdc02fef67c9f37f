// The limits a file-to-file run on this machine cannot beat, measured the way the host path uses the
// hardware: pinned host->device and device->host copies (one large cudaMemcpy, median of 5), a
// multi-threaded memcpy between pageable buffers, and a new file in DIR written by several threads two
// ways: pwrite (one file's writes may serialize on its inode) and stores into a shared mapping.
// Prints one "name GB/s" line each. usage: limits [GIB=2] [DIR=/dev/shm] [THREADS=hardware]
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

template <class F> double median_gbps(size_t bytes, int reps, F&& f) {
  std::vector<double> t;
  f();  // warm-up
  for (int r = 0; r < reps; ++r) {
    const double t0 = now();
    f();
    t.push_back(now() - t0);
  }
  std::sort(t.begin(), t.end());
  return double(bytes) / t[t.size() / 2] / 1e9;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "limits: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(3);
  }
}

template <class F> void in_threads(int n, F&& f) {
  std::vector<std::thread> ts;
  for (int k = 0; k < n; ++k) ts.emplace_back(f, k);
  for (auto& t : ts) t.join();
}
}  // namespace

int main(int argc, char** argv) {
  const size_t bytes = size_t(argc > 1 ? std::atof(argv[1]) * double(1ull << 30) : double(2ull << 30)) & ~size_t(4095);
  const std::string dir = argc > 2 ? argv[2] : "/dev/shm";
  const int threads = argc > 3 ? std::atoi(argv[3]) : int(std::max(1u, std::thread::hardware_concurrency()));
  void *h = nullptr, *d = nullptr;
  check(cudaMallocHost(&h, bytes), "cudaMallocHost");
  check(cudaMalloc(&d, bytes), "cudaMalloc");
  std::memset(h, 1, bytes);
  std::printf("pinned_h2d %.2f\n", median_gbps(bytes, 5, [&] { check(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice), "h2d"); }));
  std::printf("pinned_d2h %.2f\n", median_gbps(bytes, 5, [&] { check(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost), "d2h"); }));
  cudaFree(d);
  cudaFreeHost(h);
  std::vector<char> a(bytes, 1), b(bytes, 0);
  const size_t part = (bytes / threads + 4095) & ~size_t(4095);
  std::printf("memcpy_%dthreads %.2f\n", threads, median_gbps(bytes, 5, [&] {
                in_threads(threads, [&](int k) {
                  const size_t at = std::min(bytes, size_t(k) * part), n = std::min(part, bytes - at);
                  std::memcpy(b.data() + at, a.data() + at, n);
                });
              }));
  // A new file each time (what an output is): its pages are allocated as it is written.
  const std::string path = dir + "/.hpcz-limits-write";
  std::printf("write_%dthreads %.2f\n", threads, median_gbps(bytes, 3, [&] {
                ::unlink(path.c_str());
                const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
                if (fd < 0 || ::ftruncate(fd, off_t(bytes)) != 0) { std::perror("limits: write"); std::exit(2); }
                in_threads(threads, [&](int k) {
                  const size_t at = std::min(bytes, size_t(k) * part), n = std::min(part, bytes - at);
                  for (size_t o = 0; o < n;) {
                    const ssize_t w = ::pwrite(fd, a.data() + at + o, std::min<size_t>(n - o, 64 << 20), off_t(at + o));
                    if (w <= 0) { std::perror("limits: pwrite"); std::exit(2); }
                    o += size_t(w);
                  }
                });
                ::close(fd);
              }));
  std::printf("mmap_write_%dthreads %.2f\n", threads, median_gbps(bytes, 3, [&] {
                ::unlink(path.c_str());
                const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
                if (fd < 0 || ::ftruncate(fd, off_t(bytes)) != 0) { std::perror("limits: mmap write"); std::exit(2); }
                void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                if (m == MAP_FAILED) { std::perror("limits: mmap"); std::exit(2); }
                in_threads(threads, [&](int k) {
                  const size_t at = std::min(bytes, size_t(k) * part), n = std::min(part, bytes - at);
                  std::memcpy(static_cast<char*>(m) + at, a.data() + at, n);
                });
                ::munmap(m, bytes);
                ::close(fd);
              }));
  ::unlink(path.c_str());
  return 0;
}
