// CUDA runtime errors as hpcz::Error(cuda), for the backend's host code (one definition for every file).
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "hpcz/hpcz.hpp"

namespace hpcz::pipeline {
inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(ErrorCode::cuda, std::string(what) + ": " + cudaGetErrorString(e));
}
}  // namespace hpcz::pipeline
