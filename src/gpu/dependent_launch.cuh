// Programmatic dependent launch (sm_90): a kernel launched with launch_dependent may be scheduled while
// the kernel before it on the stream is still running, so that its launch and prologue overlap that
// kernel's tail instead of following it. Such a kernel calls wait_for_prior_grid() before it reads or
// writes anything the earlier kernels touch (it returns once they have finished and their writes are
// visible); a kernel calls let_dependents_launch() once the kernel after it may be scheduled. Both are
// no-ops in a kernel launched the ordinary way.
#pragma once
#include <cuda_runtime.h>

namespace hpcz::gpu {

__device__ __forceinline__ void wait_for_prior_grid() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void let_dependents_launch() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

template <class... Params, class... Args>
cudaError_t launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t s,
                             Args&&... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

}  // namespace hpcz::gpu
