// When the CPU backend's OpenMP loops take more threads than the calling one. Host only.
#pragma once
#include <cstdint>

#include <omp.h>

namespace hpcz {

// Arrays below this many bytes are coded on the calling thread alone (every parallel region of the
// call gets if(false)): waking OpenMP's threads costs 10-50 us where they slept between calls (2-core
// VM: an empty region after a 10 ms pause, 50 us), as long as one core takes for 16-64 KiB, and an
// array below 4 fast-mode chunks has little to share. At or above it, a call wakes them once.
constexpr uint64_t kParallelMinBytes = uint64_t(256) << 10;

inline bool parallel_worth(uint64_t bytes) { return bytes >= kParallelMinBytes; }

// The threads a call over `bytes` of values takes: OpenMP's count, or 1 below kParallelMinBytes.
inline int threads_for(uint64_t bytes) { return parallel_worth(bytes) ? omp_get_max_threads() : 1; }

}  // namespace hpcz
