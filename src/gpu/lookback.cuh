// Decoupled look-back (Merrill and Garland), the one implementation every kernel uses. Tiles (a fast
// chunk, a ratio encoder tile, a ratio reconstruction segment) take tickets in launch order, so every
// tile a look-back waits on is already running; each publishes its aggregate as soon as it is known
// and its inclusive prefix once it has one. Two layouts, as CUB's ScanTileState has:
//  - PackedTileState: status and value in one 64-bit word (the value < 2^62), one atomic store;
//  - TileStatusWords: a status word per tile, the values in arrays of the caller's (vectors of sums
//    too large for a word), published with release and read with acquire ordering.
#pragma once
#include <cstdint>

namespace hpcz::gpu {

enum class TileStatus : uint32_t { invalid = 0, aggregate = 1, inclusive = 2 };

// How a look-back waits for a predecessor that has published nothing yet.
template <unsigned kNanos> struct FixedBackoff {
  __device__ __forceinline__ void operator()() const { __nanosleep(kNanos); }
};

struct PackedTileState {
  static constexpr unsigned kStatusShift = 62;
  static constexpr unsigned long long kValueMask = (1ull << kStatusShift) - 1;
  unsigned long long* desc;  // one word per tile, zeroed (TileStatus::invalid) before the launch

  __device__ __forceinline__ static unsigned long long pack(TileStatus s, unsigned long long value) {
    return (static_cast<unsigned long long>(s) << kStatusShift) | value;
  }
  __device__ __forceinline__ static TileStatus status_of(unsigned long long d) { return TileStatus(d >> kStatusShift); }

  // Tile t's aggregate, as soon as it is known (tile 0's is already its inclusive prefix): later tiles'
  // look-backs can sum it while this tile is still being written.
  __device__ __forceinline__ void publish_aggregate(unsigned long long t, unsigned long long value) const {
    atomicExch(desc + t, pack(t == 0 ? TileStatus::inclusive : TileStatus::aggregate, value));
  }

  // Called by one whole warp after publish_aggregate(t). Returns the exclusive prefix of the values
  // before tile t and publishes t's inclusive prefix. Lane k reads predecessor t-1-k: a window of 32
  // at once, summed up to the nearest inclusive one.
  template <class Backoff = FixedBackoff<20>>
  __device__ __forceinline__ unsigned long long exclusive_prefix(unsigned long long t, unsigned long long value,
                                                                 Backoff backoff = {}) const {
    const int lane = threadIdx.x & 31;
    if (t == 0) return 0;
    unsigned long long excl = 0;
    long long pred = (long long)t - 1;
    while (true) {
      const long long idx = pred - lane;
      unsigned long long d = pack(TileStatus::inclusive, 0);  // before tile 0: an inclusive prefix of 0
      if (idx >= 0) d = *(volatile unsigned long long*)(desc + idx);
      const TileStatus status = status_of(d);
      const unsigned inclusive = __ballot_sync(0xffffffffu, status == TileStatus::inclusive);
      const unsigned invalid = __ballot_sync(0xffffffffu, status == TileStatus::invalid);
      const int stop = inclusive ? __ffs(inclusive) - 1 : 31;  // lanes 0..stop matter
      const unsigned need = stop == 31 ? 0xffffffffu : ((1u << (stop + 1)) - 1);
      if (invalid & need) {
        backoff();
        continue;
      }
      unsigned long long v = lane <= stop ? (d & kValueMask) : 0;
      for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
      excl += v;
      if (inclusive) break;
      pred -= 32;
    }
    if (lane == 0) atomicExch(desc + t, pack(TileStatus::inclusive, excl + value));
    return excl;
  }
};

struct TileStatusWords {
  uint32_t* status;  // one word per tile, zeroed (TileStatus::invalid) before the launch

  // After the tile's values are written (and fenced): makes them visible with the status.
  __device__ __forceinline__ void publish(uint64_t t, TileStatus s) const {
    asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(status + t), "r"(static_cast<uint32_t>(s)) : "memory");
  }
  __device__ __forceinline__ TileStatus load(uint64_t t) const {
    uint32_t x;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(x) : "l"(status + t) : "memory");
    return TileStatus(x);
  }
};

}  // namespace hpcz::gpu
