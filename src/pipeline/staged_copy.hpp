// Host <-> device copies of pageable memory at pinned-memory speed, for the host convenience path.
#pragma once
#include <cstddef>

namespace hpcz::pipeline {

// Synchronous. Large copies go through two pinned buffers: all host threads fill (or drain) one while
// the copy engine moves the other. Small copies, and host memory that is already pinned, take one
// cudaMemcpy. Throw Error(cuda) on failure.
void copy_to_device(void* d_dst, const void* h_src, size_t n);
void copy_to_host(void* h_dst, const void* d_src, size_t n);

}  // namespace hpcz::pipeline
