// When the CPU backend's loops take more threads than the calling one, and how they run. Host only.
#pragma once
#include <algorithm>
#include <cstdint>
#include <exception>

#include "common/threads.hpp"

namespace hpcz {

// Fork safety: GNU libgomp hangs a forked child in its first parallel region when the parent had run
// one (the child waits for the parent's pool threads, which do not exist in it). A pthread_atfork
// handler releases the forking thread's OpenMP pool before each fork (omp_pause_resource_all), so the
// child starts a fresh one; the parent's next region starts its threads again (tens of us). Registered
// once, by the first of hpcz's translation units with OpenMP regions to be initialised (this variable).
bool register_fork_handlers();
inline const bool fork_handlers_registered = register_fork_handlers();

// Arrays below this many bytes are coded on the calling thread alone: waking OpenMP's threads costs
// 10-50 us where they slept between calls (2-core VM: an empty region after a 10 ms pause, 50 us; at
// times milliseconds), and below it one core codes the array in under 0.5 ms (the fast encoder: 2 us
// a KiB). At or above it, a call wakes them once.
constexpr uint64_t kParallelMinBytes = uint64_t(256) << 10;

// cost: a pass's one-core time a byte in units of the fast encoder's (a costlier pass repays the
// threads on fewer bytes).
inline bool parallel_worth(uint64_t bytes, uint64_t cost = 1) { return bytes * cost >= kParallelMinBytes; }

// The threads a pass over `bytes` of values takes: OpenMP's count, or 1 where parallel_worth is not.
inline int threads_for(uint64_t bytes, uint64_t cost = 1) {
  return parallel_worth(bytes, cost) ? max_threads() : 1;
}

// body(i, state) for every i in [0, n), each thread with a state of its own from make(): on `threads`
// of OpenMP's threads (schedule(dynamic, grain)) where threads > 1, else on the calling thread without
// entering OpenMP at all, since a parallel region costs about 10 us even under if(false) where
// libgomp's code and data went cold between calls (one thread, after a 10 ms pause; 0.3 us back to back).
template <class Make, class Body>
void for_each_index(int64_t n, int threads, int grain, Make&& make, Body&& body) {
  if (threads <= 1) {
    auto state = make();
    for (int64_t i = 0; i < n; ++i) body(i, state);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    auto state = make();
#pragma omp for schedule(dynamic, grain)
    for (int64_t i = 0; i < n; ++i) body(i, state);
  }
}

// body(i, share, state) for every i in [0, n), the items all at once, each on its share of `threads`
// (nested OpenMP teams: item i is coded by `share` threads of its own), each team with a state of its
// own from make(). For a few large items, each with parts that run on one thread (a ratio-class
// chunk's bit stream, tables and checks): four chunks on 16 cores as four teams of four rather than
// each chunk by all 16 in turn. One item, one thread, or a caller already in a parallel region (a
// batch's item a thread; its regions get one thread, as everywhere else): the calling thread's loop,
// each item with all the threads. The first exception an item throws is rethrown once all have ended.
template <class Make, class Body>
void for_each_share(int64_t n, int threads, Make&& make, Body&& body) {
  if (n <= 1 || threads <= 1 || in_active_parallel()) {
    auto state = make();
    for (int64_t i = 0; i < n; ++i) body(i, threads, state);
    return;
  }
  [[maybe_unused]] const int teams = int(std::min<int64_t>(n, threads));
  std::exception_ptr error;
#pragma omp parallel num_threads(teams)
  {
    const int t = thread_num(), got = omp_team_size();
    // Regions nested in this one take threads (a data-environment setting: the caller's is unchanged).
    if (got > 1) enable_nested_teams();
    // Items t, t + got, ...; the threads split evenly among the teams that started.
    const int share = threads / got + (t < threads % got ? 1 : 0);
    try {
      auto state = make();
      for (int64_t i = t; i < n; i += got) body(i, share, state);
    } catch (...) {
#pragma omp critical(hpcz_for_each_share)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

// The same without a state: body(i).
template <class Body>
void for_each_index(int64_t n, int threads, int grain, Body&& body) {
  for_each_index(n, threads, grain, [] { return 0; }, [&](int64_t i, int) { body(i); });
}

}  // namespace hpcz
