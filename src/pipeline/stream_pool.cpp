// The streaming path's I/O pool and the reads and writes spread over it.
#include "pipeline/stream_pool.hpp"

#include <algorithm>

namespace hpcz::pipeline {

Pool::Pool(unsigned n) {
  try {
    for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this] { work(); });
  } catch (...) {  // no thread to be had (a process limit): stop those started, then report it
    stop();
    throw;
  }
}

void Pool::run(uint64_t n, const std::function<void(uint64_t)>& fn) {
  if (!n) return;
  Job j(&fn, n);
  {
    std::lock_guard<std::mutex> g(m_);
    jobs_.push_back(&j);
  }
  cv_.notify_all();
  for (;;) {  // help until every index is claimed
    uint64_t i;
    {
      std::lock_guard<std::mutex> g(m_);
      if (!claim(&j, i)) break;
    }
    execute(&j, i);
  }
  std::unique_lock<std::mutex> g(j.m);
  j.cv.wait(g, [&] { return j.done == j.n; });
  if (j.err) std::rethrow_exception(j.err);
}

// Under m_: the next index of j; the last claim takes j off the queue (nothing touches it after).
bool Pool::claim(Job* j, uint64_t& i) {
  if (j->next >= j->n) return false;
  i = j->next++;
  if (j->next == j->n) jobs_.erase(std::find(jobs_.begin(), jobs_.end(), j));
  return true;
}

void Pool::execute(Job* j, uint64_t i) {
  std::exception_ptr e;
  try {
    (*j->fn)(i);
  } catch (...) {
    e = std::current_exception();
  }
  std::lock_guard<std::mutex> g(j->m);
  if (e && !j->err) j->err = e;
  if (++j->done == j->n) j->cv.notify_all();
}

void Pool::stop() {
  {
    std::lock_guard<std::mutex> g(m_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void Pool::work() {
  for (;;) {
    Job* j;
    uint64_t i;
    {
      std::unique_lock<std::mutex> g(m_);
      cv_.wait(g, [&] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      j = jobs_.front();
      claim(j, i);
    }
    execute(j, i);
  }
}

unsigned io_threads() { return std::max(4u, std::min(32u, std::thread::hardware_concurrency())); }

void read_range(Pool& pool, Source& in, uint64_t off, uint8_t* dst, uint64_t n) {
  pool.run((n + kIoPiece - 1) / kIoPiece, [&](uint64_t k) {
    const uint64_t at = k * kIoPiece;
    in.read(off + at, dst + at, size_t(std::min(kIoPiece, n - at)));
  });
}

void write_range(Pool& pool, Sink& out, uint64_t off, const uint8_t* src, uint64_t n) {
  if (out.sequential()) {
    out.write(off, src, n);
    return;
  }
  pool.run((n + kIoPiece - 1) / kIoPiece, [&](uint64_t k) {
    const uint64_t at = k * kIoPiece;
    out.write(off + at, src + at, size_t(std::min(kIoPiece, n - at)));
  });
}

}  // namespace hpcz::pipeline
