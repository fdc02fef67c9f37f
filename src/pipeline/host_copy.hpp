// Host memory copies on every core, for the staging copies of the GPU host path. A pool of its own
// threads rather than OpenMP: on an H200 host an OpenMP team's memcpy ran at one core's speed (8.7 GB/s
// where as many std::threads reached 41.7; bench/host/host_path_probe.cu), and lanes copy from several
// threads at once, which OpenMP would answer with a team each.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hpcz::pipeline {

struct CopySegment {
  uint8_t* dst;
  const uint8_t* src;
  size_t size;
};
// Copies every segment (none overlapping), spread over the pool's threads and the caller's; returns
// when all are done. Small totals are the caller's memcpy alone. Safe from several threads at once,
// and in a child forked from a process that used it (the child starts a pool of its own).
void parallel_copy(const std::vector<CopySegment>& segments);
inline void parallel_copy(uint8_t* dst, const uint8_t* src, size_t size) { parallel_copy({{dst, src, size}}); }

}  // namespace hpcz::pipeline
