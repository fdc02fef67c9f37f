// libdeflate_bench: raw-Deflate decompression throughput of libdeflate on all CPU cores.
//
//   libdeflate_bench [options] DIR | chunks.bin chunks.idx [expected.bin]
//     --threads T     worker threads (default: all hardware threads)
//     --iters N       timed runs (default 10); --warmup W (default 2)
//     --replicate K   decode K independent copies of the input per run (bigger batch)
//     --no-verify     skip the comparison with expected.bin
//
// Each chunk is decoded with libdeflate_deflate_decompress into its own slice of one
// output buffer. A persistent pool of std::threads takes chunks from an atomic counter;
// the time of one run is the wall clock from waking the pool until the last chunk is done
// (thread creation and decompressor allocation are outside). Prints one line:
//   libdeflate chunks=.. in_bytes=.. out_bytes=.. threads=.. median_ms=.. out_GBps=.. verified=..
// GB/s = 1e9 bytes/s of uncompressed output.
#include "chunkset.hpp"

#include <libdeflate.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

using namespace cmpbench;

namespace {

struct Item {
  const uint8_t* in;
  size_t in_size;
  uint8_t* out;
  size_t out_size;
};

class Pool {
 public:
  Pool(unsigned nthreads, const std::vector<Item>& items, std::vector<int>& status)
      : items_(items), status_(status) {
    for (unsigned t = 0; t < nthreads; ++t) {
      libdeflate_decompressor* d = libdeflate_alloc_decompressor();
      if (!d) die("libdeflate_alloc_decompressor failed");
      decs_.push_back(d);
    }
    for (unsigned t = 0; t < nthreads; ++t) threads_.emplace_back([this, t] { worker(t); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> g(m_);
      quit_ = true;
      ++gen_;
    }
    cv_.notify_all();
    for (auto& th : threads_) th.join();
    for (auto* d : decs_) libdeflate_free_decompressor(d);
  }
  // One full pass over all items; returns when every item is done.
  void run() {
    next_.store(0, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> g(m_);
      active_ = (unsigned)threads_.size();
      ++gen_;
    }
    cv_.notify_all();
    std::unique_lock<std::mutex> lk(m_);
    done_cv_.wait(lk, [this] { return active_ == 0; });
  }

 private:
  void worker(unsigned t) {
    uint64_t seen = 0;
    libdeflate_decompressor* d = decs_[t];
    const size_t n = items_.size();
    const size_t grain = 4;
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return gen_ != seen; });
        seen = gen_;
        if (quit_) return;
      }
      for (;;) {
        size_t b = next_.fetch_add(grain, std::memory_order_relaxed);
        if (b >= n) break;
        size_t e = std::min(n, b + grain);
        for (size_t i = b; i < e; ++i) {
          const Item& it = items_[i];
          size_t actual = 0;
          libdeflate_result r = libdeflate_deflate_decompress(d, it.in, it.in_size, it.out, it.out_size, &actual);
          status_[i] = (r == LIBDEFLATE_SUCCESS && actual == it.out_size) ? 0 : (r != LIBDEFLATE_SUCCESS ? (int)r : 100);
        }
      }
      {
        std::lock_guard<std::mutex> g(m_);
        if (--active_ == 0) done_cv_.notify_one();
      }
    }
  }

  const std::vector<Item>& items_;
  std::vector<int>& status_;
  std::vector<libdeflate_decompressor*> decs_;
  std::vector<std::thread> threads_;
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  uint64_t gen_ = 0;
  unsigned active_ = 0;
  bool quit_ = false;
  std::atomic<size_t> next_{0};
};

void usage() {
  std::fprintf(stderr,
               "usage: libdeflate_bench [--threads T] [--iters N] [--warmup W] [--replicate K] [--no-verify]\n"
               "                        DIR | chunks.bin chunks.idx [expected.bin]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  unsigned threads = std::thread::hardware_concurrency();
  if (threads == 0) threads = 1;
  int iters = 10, warmup = 2, replicate = 1;
  bool verify = true;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&]() -> long {
      if (i + 1 >= argc) usage();
      return std::strtol(argv[++i], nullptr, 10);
    };
    if (a == "--threads") threads = (unsigned)val();
    else if (a == "--iters") iters = (int)val();
    else if (a == "--warmup") warmup = (int)val();
    else if (a == "--replicate") replicate = (int)val();
    else if (a == "--no-verify") verify = false;
    else if (a == "-h" || a == "--help") usage();
    else if (!a.empty() && a[0] == '-') usage();
    else paths.push_back(a);
  }
  if (threads < 1 || iters < 1 || warmup < 0 || replicate < 1) usage();

  ChunkSet cs = load(paths, verify);
  const size_t n = cs.chunks.size();
  const size_t total_items = n * (size_t)replicate;

  // Independent copies of the compressed data (so replicas do not share cache lines).
  std::vector<uint8_t> comp((size_t)cs.comp_total * replicate);
  std::vector<uint8_t> out((size_t)cs.raw_total * replicate);
  std::vector<Item> items(total_items);
  {
    size_t coff = 0;
    for (int r = 0; r < replicate; ++r)
      for (size_t i = 0; i < n; ++i) {
        const Chunk& c = cs.chunks[i];
        std::memcpy(comp.data() + coff, cs.comp.data() + c.comp_off, c.comp_size);
        items[r * n + i] = Item{comp.data() + coff, (size_t)c.comp_size,
                                out.data() + (size_t)r * cs.raw_total + c.raw_off, (size_t)c.raw_size};
        coff += c.comp_size;
      }
  }
  std::vector<int> status(total_items, -1);

  std::vector<double> ms;
  {
    Pool pool(threads, items, status);
    for (int it = 0; it < warmup + iters; ++it) {
      auto t0 = std::chrono::steady_clock::now();
      pool.run();
      auto t1 = std::chrono::steady_clock::now();
      if (it >= warmup) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
  }

  size_t failed = 0;
  for (size_t i = 0; i < total_items; ++i)
    if (status[i] != 0) {
      if (failed < 10)
        std::fprintf(stderr, "decode failure: chunk %zu (replica %zu) libdeflate_result/status=%d\n", i % n, i / n,
                     status[i]);
      ++failed;
    }

  std::string verified = "skipped";
  size_t mismatches = 0;
  if (verify && cs.have_expected) {
    int reported = 0;
    for (int r = 0; r < replicate; ++r)
      for (size_t i = 0; i < n; ++i) {
        const Chunk& c = cs.chunks[i];
        if (!check_chunk(i, out.data() + (size_t)r * cs.raw_total + c.raw_off, c.raw_size,
                         cs.expected.data() + c.raw_off, c.raw_size, reported))
          ++mismatches;
      }
    verified = (mismatches == 0 && failed == 0) ? "yes" : "no";
  } else if (failed) {
    verified = "no";
  }

  double med = median(ms);
  double mn = *std::min_element(ms.begin(), ms.end());
  double out_bytes = (double)cs.raw_total * replicate, in_bytes = (double)cs.comp_total * replicate;
  std::printf(
      "libdeflate chunks=%zu in_bytes=%.0f out_bytes=%.0f threads=%u replicate=%d iters=%d median_ms=%.4f "
      "min_ms=%.4f out_GBps=%.3f in_GBps=%.3f failed=%zu mismatches=%zu verified=%s libdeflate_version=%s\n",
      total_items, in_bytes, out_bytes, threads, replicate, iters, med, mn, out_bytes / (med * 1e6),
      in_bytes / (med * 1e6), failed, mismatches, verified.c_str(), LIBDEFLATE_VERSION_STRING);
  return (failed || mismatches) ? 1 : 0;
}
