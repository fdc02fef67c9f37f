// The streaming path's threads (stream_pool.cpp): the I/O pool that reads, writes and runs per-chunk
// work for every lane, and the gate that hands slabs their place in order.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "hpcz/hpcz.hpp"

namespace hpcz::pipeline {

// Pieces the I/O threads read and write: large enough for the kernel's fast path, small enough that
// a slab is spread over every thread.
constexpr uint64_t kIoPiece = uint64_t(4) << 20;

// A fixed set of threads for the lanes' reads, writes and per-chunk work. run() may be called from
// several lanes at once; the caller works on its own job too.
class Pool {
 public:
  explicit Pool(unsigned n);
  ~Pool() { stop(); }
  // fn(i) for every i < n; rethrows the first exception once all have run.
  void run(uint64_t n, const std::function<void(uint64_t)>& fn);

 private:
  struct Job {
    Job(const std::function<void(uint64_t)>* f, uint64_t count) : fn(f), n(count) {}
    const std::function<void(uint64_t)>* fn;
    uint64_t n, next = 0, done = 0;
    std::exception_ptr err;
    std::mutex m;
    std::condition_variable cv;
  };
  bool claim(Job* j, uint64_t& i);
  void execute(Job* j, uint64_t i);
  void stop();
  void work();
  std::vector<std::thread> threads_;
  std::deque<Job*> jobs_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
};

unsigned io_threads();

// Reads [off, off + n) of `in` into dst, in pieces over the pool.
void read_range(Pool& pool, Source& in, uint64_t off, uint8_t* dst, uint64_t n);
void write_range(Pool& pool, Sink& out, uint64_t off, const uint8_t* src, uint64_t n);

// Slabs pass in order: slab k learns where it goes (the sum of the sizes before it) once slabs < k
// have passed. abort() wakes every waiter with the error of the lane that failed.
class Gate {
 public:
  uint64_t wait(uint64_t k) {
    std::unique_lock<std::mutex> g(m_);
    cv_.wait(g, [&] { return aborted_ || passed_ == k; });
    if (aborted_) throw Error(ErrorCode::internal, "aborted");  // never surfaces: the first error does
    return base_;
  }
  void pass(uint64_t size) {
    {
      std::lock_guard<std::mutex> g(m_);
      base_ += size;
      ++passed_;
    }
    cv_.notify_all();
  }
  void abort() {
    {
      std::lock_guard<std::mutex> g(m_);
      aborted_ = true;
    }
    stopped_ = true;
    cv_.notify_all();
  }
  // A lane failed: the others take no further slab.
  bool stopped() const { return stopped_; }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  uint64_t passed_ = 0, base_ = 0;
  bool aborted_ = false;
  std::atomic<bool> stopped_{false};
};

}  // namespace hpcz::pipeline
