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
// The first n (<= 16) of the 16 bytes, the rest of them zero; n = 0 reads nothing (gmem must still be
// a valid address).
__device__ __forceinline__ void copy_async16_zfill(void* smem, const void* gmem, uint32_t n) {
  const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sa), "l"(gmem), "r"(n) : "memory");
}
__device__ __forceinline__ void copy_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

}  // namespace hpcz::gpu
