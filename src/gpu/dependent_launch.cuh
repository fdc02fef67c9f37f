// Programmatic dependent launch (sm_90): a kernel launched with launch_dependent may be scheduled once
// every block of the kernel before it on the stream has called let_dependents_launch() (or exited), so
// that its launch and prologue overlap that kernel's tail. The rules a chain of such kernels keeps:
//  - its first kernel is an ordinary launch, so it starts after all earlier work on the stream;
//  - a dependent kernel calls wait_for_prior_grid() before it touches anything the kernels before it
//    write (it returns once the kernel just before has finished and its writes are visible), and before
//    it exits: so each kernel's end implies its predecessor's, and work after the chain sees it all;
//  - before that wait it reads only what no kernel of the chain writes (the caller's input).
// In a kernel launched the ordinary way the wait returns at once.
// The wait is compiled for sm_90 on only (griddepcontrol); a GPU that runs code compiled for an older
// architecture (compute_80 PTX on an H100, say, in a build without sm_90) gets ordinary launches
// (dependent_launch_allowed), or a kernel could read what the one before it has not yet written.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <utility>

namespace hpcz::gpu {

// griddepcontrol is sm_90 PTX; on older targets kernels run one after another anyway.
__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void let_dependents_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Whether the current device runs `kernel` from code compiled for sm_90 or later (its PTX version:
// machine code for sm_90 on, or PTX of compute_90 on compiled when loaded), so that its
// wait_for_prior_grid waits. Every kernel of the library is compiled for the same architectures, so
// the answer is kept per device, from the first kernel asked about.
inline bool dependent_launch_allowed(const void* kernel) {
  constexpr int kCached = 64;
  static std::atomic<int> cache[kCached];  // 0: not asked yet, 1: no, 2: yes
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0) dev = kCached;
  if (dev < kCached)
    if (const int c = cache[dev].load(std::memory_order_relaxed)) return c == 2;
  cudaFuncAttributes fa{};
  const bool ok = cudaFuncGetAttributes(&fa, kernel) == cudaSuccess && fa.ptxVersion >= 90;
  if (dev < kCached) cache[dev].store(ok ? 2 : 1, std::memory_order_relaxed);
  return ok;
}

// The arguments convert to the kernel's parameter types (cudaLaunchKernelEx's template does it).
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
  cfg.numAttrs = dependent_launch_allowed(reinterpret_cast<const void*>(kernel)) ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

}  // namespace hpcz::gpu
