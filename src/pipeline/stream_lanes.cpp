// The streaming path's lanes: their threads, coders and the start and end of a call's work.
#include "pipeline/stream_lanes.hpp"

#include <algorithm>

namespace hpcz::pipeline {
namespace {
std::unique_ptr<SlabCoder> make_coder(int lane, const format::HeaderFields& h, const Plan& p) {
  if (lane < 0) return make_cpu_coder(h, p.in_bytes, p.out_bytes);
  return make_gpu_coder(lane, h, p.in_bytes, p.out_bytes, p.ws_bytes);
}
}  // namespace

Lanes::Lanes(const Plan& p, const format::HeaderFields& h, Gate& gate, std::function<void(SlabCoder&, LaneTimes&)> fn)
    : gate_(gate), fn_(std::move(fn)) {
  try {
    for (int lane : p.lanes) start(lane, h, p);
  } catch (...) {  // no thread to be had: the lanes started end without running, then the error
    release(false);
    for (auto& t : threads_) t.join();
    threads_.clear();
    throw;
  }
}

Lanes::~Lanes() {
  if (!threads_.empty()) {
    release(false);
    for (auto& t : threads_) t.join();
  }
}

void Lanes::join(StreamStats* stats) {
  release(false);  // no-op after go()
  for (auto& t : threads_) t.join();
  threads_.clear();
  if (stats) {
    stats->setup = setup_;
    stats->read = times_.read, stats->code = times_.code, stats->write = times_.write;
  }
  if (first_) std::rethrow_exception(first_);
}

void Lanes::start(int lane, const format::HeaderFields& h, const Plan& p) {
  threads_.emplace_back([this, lane, h, &p] {
    LaneTimes t;
    try {
      const Clock::time_point t0 = Clock::now();
      std::unique_ptr<SlabCoder> coder = make_coder(lane, h, p);
      note_setup(since(t0));
      if (wait_go()) fn_(*coder, t);
    } catch (...) {
      std::lock_guard<std::mutex> g(m_);
      if (!first_) first_ = std::current_exception();
      gate_.abort();
    }
    std::lock_guard<std::mutex> g(m_);
    times_.read += t.read, times_.code += t.code, times_.write += t.write;
  });
}

void Lanes::release(bool run) {
  {
    std::lock_guard<std::mutex> g(m_);
    if (released_) return;
    released_ = true;
    run_ = run;
  }
  cv_.notify_all();
}

bool Lanes::wait_go() {
  std::unique_lock<std::mutex> g(m_);
  cv_.wait(g, [&] { return released_; });
  return run_;
}

void Lanes::note_setup(double s) {
  std::lock_guard<std::mutex> g(m_);
  setup_ = std::max(setup_, s);
}

}  // namespace hpcz::pipeline
