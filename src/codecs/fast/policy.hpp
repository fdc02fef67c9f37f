// The fast codec's tuning by value type (one specialisation a type, as CUB's per-architecture tuning
// structs): the constants its kernels and launches pick by type, each with its reason. Sizes that are
// byte counts (sizeof(T) in layouts, loads) stay where they are used. A type without a specialisation
// does not compile in the GPU codec, rather than taking another type's tuning.
#pragma once
#include <cstdint>

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

// ---- by GPU: the encoder's staging ---------------------------------------------------------------
// The f32 encoder's shared memory is its 66 KiB stage, its 32 KiB round buffer and about 4 KB of
// static arrays: 101 KB a block, 2 an SM on an H100 or B200 (228 KB an SM), but 1 on an A100 (164 KB)
// and none on the GPUs with 99 KB a block (sm_86, sm_89, sm_120: RTX 30/40/50, A40, L40S). There the
// encoder is launched without the round buffer (FastPolicyNoRoundBuffer: each thread loads its round
// into registers, as f64 does; 70 KB a block, 2 an A100 SM, 1 on the 99 KB parts). The staging decides
// only where a round's input waits before it is coded: the chunks, and so the archive, are the same
// bytes (the stage, which holds a whole chunk as it is assembled, is the same in both).
template <class T> struct FastPolicyNoRoundBuffer : FastPolicy<T> {
  static constexpr bool staged_rounds = false;
};

// Which encoder a launch takes: automatic (by the device: choose_staging), or one forced (tests).
enum class EncodeStaging : int { automatic = 0, round_buffer = 1, registers = 2 };

// A device's shared memory (cudaDevAttrMaxSharedMemoryPerBlockOptin, ...PerMultiprocessor,
// cudaDevAttrReservedSharedMemoryPerBlock: the 1 KB the system takes from each block's share).
struct SmemLimits {
  uint32_t per_block_optin, per_sm, reserved_per_block;
};

// The round buffer where `blocks` blocks of block_bytes (static + dynamic shared memory with it) fit
// an SM at once, as the encoder's launch bounds assume (FastPolicy<float>::encode_min_blocks); else
// registers. That a second block without the buffer beats one with it (16 warps an SM against 8) is
// assumed, not measured (docs/DESIGN.md, "GPU generations").
constexpr EncodeStaging choose_staging(uint32_t block_bytes, int blocks, const SmemLimits& l) {
  const uint64_t need = uint64_t(blocks) * (uint64_t(block_bytes) + l.reserved_per_block);
  return block_bytes <= l.per_block_optin && need <= l.per_sm ? EncodeStaging::round_buffer : EncodeStaging::registers;
}

// Forces the encoder's staging for every later GPU launch in this process (automatic: back to the
// device's choice); the library's own code never calls it. For tests: both stagings must write the
// same archive (tests/test_roundtrip.cpp). Defined with the GPU codec (CUDA builds only).
void force_encode_staging(EncodeStaging s);

}  // namespace hpcz::fast
