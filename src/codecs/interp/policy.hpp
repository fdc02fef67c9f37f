// The interp codec's tuning by value type (one specialisation a type, as CUB's per-architecture tuning
// structs), each constant with its reason. A type without a specialisation does not compile in the GPU
// codec, rather than taking another type's tuning.
#pragma once
#include <cstdint>

namespace hpcz::ratio {

template <class T> struct InterpPolicy;

template <> struct InterpPolicy<float> {
  // Threads of an interpolation tile block (encoder, decoder, sampling): 192 (6 blocks an SM) compressed
  // faster than 256 (5) or 128 (10).
  static constexpr uint32_t interp_tile_threads = 192;
};

template <> struct InterpPolicy<double> {
  // f64 boxes take twice the shared memory: fewer, larger blocks.
  static constexpr uint32_t interp_tile_threads = 256;
};

}  // namespace hpcz::ratio
