// How the fused dual-quantization kernel (quant_kernels.cuh, dual_quant_kernel) covers a chunk: host
// code, here so that its invariants are tested without a GPU.
#pragma once
#include <algorithm>
#include <cstdint>

#include "common/hd.hpp"
#include "predict/lorenzo.hpp"

namespace hpcz::ratio {

constexpr int kDualPer = 8;                 // values per thread and step
constexpr uint32_t kDualStep = 8 * 256;     // values per step: kDualPer x the kernel's 256 threads
constexpr uint32_t kDualMaxRing = 16384;    // row differences kept in shared memory: 64 KiB

struct DualPlan {
  uint32_t history;  // how far back a prediction looks (0: no fused pass for this shape)
  uint32_t ring;     // row differences kept: a power of two >= history + kDualStep
  uint32_t range;    // values per block, a multiple of kDualStep
  uint32_t blocks_per_chunk;
};

// full: the shape of a full chunk (the last one may have fewer planes: the same plan covers it).
// A prediction reads the row differences a plane and a row back (lorenzo_yz); history adds one
// value for the row difference's own left neighbour.
inline DualPlan dual_plan(const predict::ChunkShape& full, uint64_t n_chunks) {
  DualPlan d{};
  if (!n_chunks) return d;
  const uint64_t plane = uint64_t(full.cy) * full.cx;
  const uint64_t h = full.cz > 1 ? plane + full.cx + 1 : (full.cy > 1 ? uint64_t(full.cx) + 1 : 1);
  uint64_t ring = 1;
  while (ring < h + kDualStep) ring *= 2;
  if (ring > kDualMaxRing) return d;
  d.history = uint32_t(h);
  d.ring = uint32_t(ring);
  // Long ranges keep the halo small (at most 1/8 of the work); 32 Ki values at least.
  const uint64_t r = std::max<uint64_t>(32768, 8 * h);
  d.range = uint32_t(detail::div_ceil(r, kDualStep) * kDualStep);
  d.blocks_per_chunk = uint32_t(detail::div_ceil(full.count(), d.range));
  return d;
}

}  // namespace hpcz::ratio
