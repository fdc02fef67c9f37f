// CUDA runtime errors as hpcz::Error(cuda), for host code that launches kernels (one definition).
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "common/error.hpp"

namespace hpcz {
inline void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // a failed call leaves its (non-sticky) error behind: not the next call's to report
  fail(ErrorCode::cuda, std::string(what) + ": " + cudaGetErrorString(e));
}
}  // namespace hpcz
