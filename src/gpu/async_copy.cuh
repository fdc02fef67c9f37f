// Asynchronous copies from global into shared memory (cp.async, sm_80 on): the data goes to shared
// memory without passing through registers, so a kernel can ask for its next data early without
// holding registers for it. A thread's copies are complete after copy_async_wait_all(); other threads
// see them after a barrier that follows it.
#pragma once
#include <cstdint>

namespace hpcz::gpu {

// 16 bytes; both addresses 16-byte aligned. Cached in L2 only (.cg).
__device__ __forceinline__ void copy_async16(void* smem, const void* gmem) {
  const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sa), "l"(gmem) : "memory");
}
// 4 bytes; both addresses 4-byte aligned (this size is cached in L1: .ca).
__device__ __forceinline__ void copy_async4(void* smem, const void* gmem) {
  const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(sa), "l"(gmem) : "memory");
}
__device__ __forceinline__ void copy_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

}  // namespace hpcz::gpu
