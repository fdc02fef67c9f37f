// The fast codec's tuning by value type (one specialisation a type, as CUB's per-architecture tuning
// structs): the constants its kernels and launches pick by type, each with its reason. Sizes that are
// byte counts (sizeof(T) in layouts, loads) stay where they are used. A type without a specialisation
// does not compile in the GPU codec, rather than taking another type's tuning.
#pragma once

namespace hpcz::fast {

template <class T> struct FastPolicy;

template <> struct FastPolicy<float> {
  // Encoder blocks per SM (launch bounds): registers 65536 / (256 x 2) = 128; at 3 they spill and the
  // kernel is short of issue, not of warps (docs/EXPERIMENTS.md).
  static constexpr int encode_min_blocks = 2;
  // A persistent grid, a block taking chunk after chunk: no chunk but a block's first starts on a DRAM
  // wait (ncu: the first round's loads were 15% of the stall samples with a chunk a block).
  static constexpr bool persistent = true;
  // A round's input reaches shared memory by cp.async while the round before it is coded.
  static constexpr bool staged_rounds = true;
  // The first decoding pass's blocks per SM: 6 (40 registers, a few spills) is 13% faster than the
  // natural 4 on an H200 (docs/EXPERIMENTS.md).
  static constexpr int decode_min_blocks = 6;
};

template <> struct FastPolicy<double> {
  static constexpr int encode_min_blocks = 2;     // as f32: 3 spills (shared memory would hold 3)
  static constexpr bool persistent = false;       // held across chunks the registers spill (3-6% slower)
  static constexpr bool staged_rounds = false;    // one round a chunk: loaded straight into registers
  static constexpr int decode_min_blocks = 1;     // no minimum: the compiler's register choice
};

}  // namespace hpcz::fast
