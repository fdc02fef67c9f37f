// When the CPU backend's OpenMP loops take more threads than the calling one. Host only.
#pragma once
#include <cstdint>

#include <omp.h>

namespace hpcz {

// Arrays below this many bytes are coded on the calling thread alone (every parallel region of the
// call gets if(false)): waking OpenMP's threads costs 10-50 us where they slept between calls (2-core
// VM: an empty region after a 10 ms pause, 50 us; at times milliseconds), and below it one core codes
// the array in under 0.5 ms (the fast encoder: 2 us a KiB). At or above it, a call wakes them once.
constexpr uint64_t kParallelMinBytes = uint64_t(256) << 10;

// cost: a pass's one-core time a byte in units of the fast encoder's (a costlier pass repays the
// threads on fewer bytes).
inline bool parallel_worth(uint64_t bytes, uint64_t cost = 1) { return bytes * cost >= kParallelMinBytes; }

// The threads a pass over `bytes` of values takes: OpenMP's count, or 1 where parallel_worth is not.
inline int threads_for(uint64_t bytes, uint64_t cost = 1) {
  return parallel_worth(bytes, cost) ? omp_get_max_threads() : 1;
}

}  // namespace hpcz
