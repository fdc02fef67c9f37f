// How a streaming call is cut (stream_plan.cpp): slabs of whole chunks, lanes on GPUs or the CPU,
// each lane's buffers, within the call's host and device budgets.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "format/header.hpp"
#include "hpcz/hpcz.hpp"

namespace hpcz::pipeline {

// How a call is cut: slab_chunks chunks a slab, one lane per entry of `lanes` (a GPU id, or -1: the CPU).
struct Plan {
  uint64_t slab_chunks = 1, n_slabs = 0;
  std::vector<int> lanes;
  size_t in_bytes = 0, out_bytes = 0, ws_bytes = 0;  // a lane's buffers
};

Plan plan_stream(const format::HeaderFields& h, Backend backend, const StreamOptions& so, bool compress);

}  // namespace hpcz::pipeline
