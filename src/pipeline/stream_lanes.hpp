// The streaming path's lanes (stream_lanes.cpp): a thread each, with its SlabCoder, taking slabs in
// order; the call's progress and phase times.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "format/header.hpp"
#include "hpcz/hpcz.hpp"
#include "pipeline/internal.hpp"
#include "pipeline/stream_plan.hpp"
#include "pipeline/stream_pool.hpp"

namespace hpcz::pipeline {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A lane's time by phase, added to the call's StreamStats when the lane ends.
struct LaneTimes {
  double read = 0, code = 0, write = 0;
};

// One thread per lane. Each makes its coder at once (pinned buffers, a GPU's context: the slowest part
// of a start), then waits for go() (compression: once the range pass has settled the header) and runs
// fn. The first error stops the other lanes (through the gate) and is rethrown by join().
class Lanes {
 public:
  Lanes(const Plan& p, const format::HeaderFields& h, Gate& gate, std::function<void(SlabCoder&, LaneTimes&)> fn);
  ~Lanes();
  void go() { release(true); }
  // Waits for every lane; rethrows the first error. Adds the lanes' times to stats.
  void join(StreamStats* stats);

 private:
  void start(int lane, const format::HeaderFields& h, const Plan& p);
  void release(bool run);
  bool wait_go();
  void note_setup(double s);
  Gate& gate_;
  std::function<void(SlabCoder&, LaneTimes&)> fn_;
  std::vector<std::thread> threads_;
  std::mutex m_;
  std::condition_variable cv_;
  bool released_ = false, run_ = false;
  std::exception_ptr first_;
  double setup_ = 0;
  LaneTimes times_;
};

struct Progress {
  Progress(const StreamOptions& o, uint64_t t) : so(o), total(t) {}
  const StreamOptions& so;
  uint64_t total, done = 0;
  std::mutex m;
  void add(uint64_t bytes) {
    if (!so.progress) return;
    std::lock_guard<std::mutex> g(m);
    done += bytes;
    so.progress(done, total);
  }
};

}  // namespace hpcz::pipeline
