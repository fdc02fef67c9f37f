// Properties of the current CUDA device that launch shapes follow.
#pragma once
#include <cuda_runtime.h>

namespace hpcz::gpu {

// Streaming multiprocessors of the current device (132 if the query fails: an H100 SXM's count).
inline int sm_count() {
  int dev = 0, v = 0;
  cudaGetDevice(&dev);
  return cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess && v > 0 ? v : 132;
}

}  // namespace hpcz::gpu
