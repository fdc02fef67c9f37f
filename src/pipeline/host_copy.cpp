#include "pipeline/host_copy.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

namespace hpcz::pipeline {
namespace {

// Slices of a copy: small enough that a 8 MiB staging piece spreads over 16 cores, large enough that
// a slice's bookkeeping is noise beside its memcpy.
constexpr size_t kSlice = size_t(512) << 10;
// Below this a copy is one memcpy on the caller's thread: waking the pool costs more.
constexpr size_t kParallelBytes = size_t(1) << 20;

// One copy at a time on the pool (each uses every core anyway); its slices are taken by index.
// Never destroyed (its threads are detached): at exit they may still wait for work.
class Pool {
 public:
  Pool() {
    const unsigned n = std::max(1u, std::thread::hardware_concurrency()) - 1;
    for (unsigned t = 0; t < n; ++t) std::thread([this] { serve(); }).detach();
  }

  void run(const std::vector<CopySegment>& slices) {
    std::lock_guard<std::mutex> one_at_a_time(owner_);
    {
      // A thread that woke too late for the last copy still holds its (empty) view of it: the
      // counter is reset once it has let go.
      std::unique_lock<std::mutex> g(m_);
      finished_.wait(g, [&] { return active_ == 0; });
      slices_ = slices.data();
      count_ = slices.size();
      next_ = 0;
      done_ = 0;
      ++generation_;
    }
    work_.notify_all();
    const size_t mine = take(slices.data(), slices.size());
    // The slices other threads took, and every thread that saw this copy, finished before the
    // caller's buffers are given back.
    std::unique_lock<std::mutex> g(m_);
    done_ += mine;
    finished_.wait(g, [&] { return done_ == count_ && active_ == 0; });
    slices_ = nullptr;
    count_ = 0;
  }

 private:
  size_t take(const CopySegment* slices, size_t count) {
    size_t mine = 0;
    for (size_t k; (k = next_.fetch_add(1)) < count; ++mine) std::memcpy(slices[k].dst, slices[k].src, slices[k].size);
    return mine;
  }
  void serve() {
    uint64_t seen = 0;
    for (;;) {
      const CopySegment* slices;
      size_t count;
      {
        std::unique_lock<std::mutex> g(m_);
        work_.wait(g, [&] { return generation_ != seen; });
        seen = generation_;
        slices = slices_;
        count = count_;
        ++active_;
      }
      const size_t mine = count ? take(slices, count) : 0;
      std::lock_guard<std::mutex> g(m_);
      done_ += mine;
      --active_;
      finished_.notify_all();
    }
  }

  std::mutex owner_, m_;
  std::condition_variable work_, finished_;
  const CopySegment* slices_ = nullptr;  // the copy under way (m_)
  size_t count_ = 0, done_ = 0, active_ = 0;
  uint64_t generation_ = 0;
  std::atomic<size_t> next_{0};
};

// The pool of this process. A forked child has none of the parent's threads and may inherit its
// mutexes locked: the child forgets the parent's pool (leaked, never touched again) and starts its own
// at its first copy. The prepare handler holds made_ across fork so that no pool is half made in the child.
std::mutex made_;
Pool* pool_ = nullptr;  // (made_)

Pool& pool() {
  static const bool registered = pthread_atfork([] { made_.lock(); }, [] { made_.unlock(); },
                                                [] { pool_ = nullptr, made_.unlock(); }) == 0;
  (void)registered;
  std::lock_guard<std::mutex> g(made_);
  if (!pool_) pool_ = new Pool;
  return *pool_;
}

}  // namespace

void parallel_copy(const std::vector<CopySegment>& segments) {
  size_t total = 0;
  for (const auto& s : segments) total += s.size;
  if (total < kParallelBytes) {
    for (const auto& s : segments) std::memcpy(s.dst, s.src, s.size);
    return;
  }
  std::vector<CopySegment> slices;
  slices.reserve(total / kSlice + segments.size());
  for (const auto& s : segments)
    for (size_t at = 0; at < s.size; at += kSlice) slices.push_back({s.dst + at, s.src + at, std::min(kSlice, s.size - at)});
  pool().run(slices);
}

}  // namespace hpcz::pipeline
