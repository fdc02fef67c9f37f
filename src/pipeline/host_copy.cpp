#include "pipeline/host_copy.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

namespace hpcz::pipeline {
namespace {

// Slices of a copy: small enough that a 8 MiB staging piece spreads over 16 cores, large enough that
// a slice's bookkeeping is noise beside its memcpy.
constexpr size_t kSlice = size_t(512) << 10;
// Below this a copy is one memcpy on the caller's thread: waking the pool costs more.
constexpr size_t kParallelBytes = size_t(1) << 20;

struct Job {
  std::vector<CopySegment> slices;
  std::atomic<size_t> next{0}, done{0};
  // Takes slices until none are left; true if this call finished the job's last slice.
  bool work() {
    size_t mine = 0;
    for (size_t k; (k = next.fetch_add(1)) < slices.size(); ++mine)
      std::memcpy(slices[k].dst, slices[k].src, slices[k].size);
    return mine && done.fetch_add(mine) + mine == slices.size();
  }
};

// Never destroyed (its threads are detached): at exit they may still wait for work.
class Pool {
 public:
  Pool() {
    const unsigned n = std::max(1u, std::thread::hardware_concurrency()) - 1;
    for (unsigned t = 0; t < n; ++t) std::thread([this] { serve(); }).detach();
  }
  void run(const std::shared_ptr<Job>& job) {
    {
      std::lock_guard<std::mutex> g(m_);
      queue_.push_back(job);
    }
    work_.notify_all();
    job->work();
    // The slices other threads took: wait for them (a forked child has no pool threads, and takes
    // every slice itself above).
    std::unique_lock<std::mutex> g(m_);
    finished_.wait(g, [&] { return job->done.load() == job->slices.size(); });
    queue_.erase(std::remove(queue_.begin(), queue_.end(), job), queue_.end());
  }

 private:
  void serve() {
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> g(m_);
        work_.wait(g, [&] {
          for (auto& j : queue_)
            if (j->next.load() < j->slices.size()) return true;
          return false;
        });
        for (auto& j : queue_)
          if (j->next.load() < j->slices.size()) {
            job = j;
            break;
          }
      }
      if (job->work()) {
        std::lock_guard<std::mutex> g(m_);  // the owner checks done under this lock: no lost wake-up
        finished_.notify_all();
      }
    }
  }
  std::mutex m_;
  std::condition_variable work_, finished_;
  std::deque<std::shared_ptr<Job>> queue_;
};

Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

}  // namespace

void parallel_copy(const std::vector<CopySegment>& segments) {
  size_t total = 0;
  for (const auto& s : segments) total += s.size;
  if (total < kParallelBytes) {
    for (const auto& s : segments) std::memcpy(s.dst, s.src, s.size);
    return;
  }
  auto job = std::make_shared<Job>();
  job->slices.reserve(total / kSlice + segments.size());
  for (const auto& s : segments)
    for (size_t at = 0; at < s.size; at += kSlice) job->slices.push_back({s.dst + at, s.src + at, std::min(kSlice, s.size - at)});
  pool().run(job);
}

}  // namespace hpcz::pipeline
