// Bit planes of a block's 32 magnitudes: plane j is a little-endian word whose bit i is bit j of
// magnitude i. The naive loop costs about 3 operations per bit, 96 per plane. Here the planes are
// made eight at a time: the 32x8 bit matrix of slice S (bits 8S..8S+7 of each magnitude) is four 8x8
// matrices, each transposed in a 64-bit word with 3 swap rounds, and byte b of plane 8S+c is row c of
// transposed matrix b. That is about 30 operations per matrix, so about 4 per plane bit-row instead
// of 96 per plane, and plane bytes go straight to or from memory: no plane words held in registers.
// The slice number is a template argument so that every shift is an immediate.
#pragma once
#include "common/hd.hpp"

namespace hpcz::fast {

// Transposes the 8x8 bit matrix whose row r is byte r of x (column c = bit c): bit 8r+c <-> bit 8c+r.
// Each round swaps the off-diagonal halves of the 2x2, then 4x4, then 8x8 sub-blocks.
HPCZ_HD uint64_t transpose8x8(uint64_t x) {
  uint64_t t;
  t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
  x ^= t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
  x ^= t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
  x ^= t ^ (t << 28);
  return x;
}

// Planes 8S..min(w, 8S+8)-1 of mag[0..31], plane j as 4 bytes at dst + 4j.
template <int S> HPCZ_HD void store_planes(const uint32_t* mag, int w, uint8_t* dst) {
HPCZ_UNROLL
  for (int b = 0; b < 4; ++b) {
    uint64_t m = 0;  // row r: byte S of mag[8b + r]
HPCZ_UNROLL
    for (int r = 0; r < 8; ++r) m |= uint64_t(mag[8 * b + r] >> (8 * S) & 0xffu) << (8 * r);
    m = transpose8x8(m);  // row c: bit 8S+c of mag[8b..8b+7]
HPCZ_UNROLL
    for (int c = 0; c < 8; ++c)
      if (8 * S + c < w) dst[4 * (8 * S + c) + b] = uint8_t(m >> (8 * c));
  }
}

// The inverse for the eight magnitudes 8b..8b+7 (mag8[0..7]): ORs planes 8S..min(w, 8S+8)-1, read at
// src + 4j, into their bits 8S.. .
template <int S> HPCZ_HD void load_plane_rows(const uint8_t* src, int w, int b, uint32_t* mag8) {
  uint64_t m = 0;  // row c: byte b of plane 8S+c
HPCZ_UNROLL
  for (int c = 0; c < 8; ++c)
    if (8 * S + c < w) m |= uint64_t(src[4 * (8 * S + c) + b]) << (8 * c);
  m = transpose8x8(m);  // row r: bits 8S..8S+7 of magnitude 8b + r
HPCZ_UNROLL
  for (int r = 0; r < 8; ++r) mag8[r] |= uint32_t(m >> (8 * r) & 0xffu) << (8 * S);
}

}  // namespace hpcz::fast
