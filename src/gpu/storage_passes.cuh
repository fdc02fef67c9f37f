// A storage type's edges on the GPU (common/storage.hpp): its values widened to the code type before
// the codec's kernels, and the decoded code values narrowed back into the caller's array. The same
// conversions as the host's (StorageTraits), so the same bits.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "common/cuda_check.hpp"
#include "common/error.hpp"
#include "common/storage.hpp"

namespace hpcz::gpu {

constexpr int kStorageThreads = 256;

// Each thread converts groups of 16 bytes of the narrower side (16 / sizeof(S) values: one vector load
// or store of it, one to four of the wider side); both sides are 16-byte aligned (the device API's
// rule and the workspace's layout). The last n % group values one a thread.
template <class S, class From, class To, bool kWiden>
__global__ void __launch_bounds__(kStorageThreads) storage_convert_kernel(const From* __restrict__ in, unsigned long long n,
                                                                          To* __restrict__ out) {
  using Tr = detail::StorageTraits<S>;
  constexpr int kGroup = 16 / int(sizeof(S));
  static_assert(kGroup * sizeof(S) == 16 && (kGroup * sizeof(typename Tr::code_type)) % 16 == 0, "vector groups");
  const unsigned long long groups = n / kGroup, stride = (unsigned long long)gridDim.x * blockDim.x;
  const unsigned long long first = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  for (unsigned long long g = first; g < groups; g += stride) {
    From a[kGroup];
    To b[kGroup];
    const uint4* src = reinterpret_cast<const uint4*>(in + g * kGroup);
#pragma unroll
    for (int v = 0; v < int(sizeof a / 16); ++v) {
      const uint4 w = src[v];
      std::memcpy(reinterpret_cast<uint8_t*>(a) + 16 * v, &w, 16);
    }
#pragma unroll
    for (int k = 0; k < kGroup; ++k) {
      if constexpr (kWiden) b[k] = Tr::widen(a[k]);
      else b[k] = Tr::narrow(a[k]);
    }
    uint4* dst = reinterpret_cast<uint4*>(out + g * kGroup);
#pragma unroll
    for (int v = 0; v < int(sizeof b / 16); ++v) {
      uint4 w;
      std::memcpy(&w, reinterpret_cast<const uint8_t*>(b) + 16 * v, 16);
      dst[v] = w;
    }
  }
  for (unsigned long long i = groups * kGroup + first; i < n; i += stride) {
    if constexpr (kWiden) out[i] = Tr::widen(in[i]);
    else out[i] = Tr::narrow(in[i]);
  }
}

inline unsigned storage_grid(unsigned long long n, int sms) {
  const unsigned long long want = (n / 8 + kStorageThreads - 1) / kStorageThreads;
  return unsigned(std::max<unsigned long long>(1, std::min<unsigned long long>(want, (unsigned long long)sms * 16)));
}

// n values converted on stream s between storage type t and its code type, both in device memory:
// widened (kWiden: in holds t's values, out the code values) or narrowed (the other way).
template <bool kWiden>
void convert_on_device(const void* in, DType t, unsigned long long n, void* out, int sms, cudaStream_t s) {
  if (n == 0) return;
  detail::dispatch_storage(t, [&](auto tr) {
    using Tr = decltype(tr);
    using S = typename Tr::storage_type;
    using C = typename Tr::code_type;
    if constexpr (!std::is_same_v<S, C>) {
      using From = std::conditional_t<kWiden, S, C>;
      using To = std::conditional_t<kWiden, C, S>;
      storage_convert_kernel<S, From, To, kWiden><<<storage_grid(n, sms), kStorageThreads, 0, s>>>(
          static_cast<const From*>(in), n, static_cast<To*>(out));
      check(cudaGetLastError(), kWiden ? "widen kernel" : "narrow kernel");
    }
  });
}
inline void widen_on_device(const void* in, DType t, unsigned long long n, void* out, int sms, cudaStream_t s) {
  convert_on_device<true>(in, t, n, out, sms, s);
}
inline void narrow_on_device(const void* in, DType t, unsigned long long n, void* out, int sms, cudaStream_t s) {
  convert_on_device<false>(in, t, n, out, sms, s);
}

}  // namespace hpcz::gpu
