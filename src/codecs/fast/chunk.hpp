// Fast mode, one chunk at a time on the CPU. A chunk is
//   [one code byte per block][block payloads, in block order][exception values, in block/lane order]
//   [lane blocks' descriptors, in block order (format version 4)]
// or, where most blocks are code 0 (every delta zero: runs of zeros or of one repeated value), the
// sparse form (format version 3) with a bit a block instead of a byte:
//   [kSparseChunk][bitmap, bit b: block b's code is listed][the listed codes][payloads][exceptions]
// and is decodable on its own. The CUDA kernels produce and consume the same layouts.
#pragma once
#include <cstring>

#include "codecs/fast/block.hpp"

namespace hpcz::fast {

constexpr uint32_t kChunkBytes = 65536;  // every chunk covers 64 KiB of input (the last one: less)
template <class T> constexpr uint32_t chunk_values() { return kChunkBytes / sizeof(T); }

// A sparse chunk's first byte: raw with an exception flag, never a valid code.
constexpr uint8_t kSparseChunk = 0xff;
// Bytes before the payloads: the code bytes, or the marker, the bitmap and the listed codes. The
// sparse form is written where it is strictly smaller.
HPCZ_HD uint32_t sparse_head_bytes(uint32_t nb, uint32_t listed) { return 1 + (nb + 7) / 8 + listed; }
HPCZ_HD bool sparse_is_smaller(uint32_t nb, uint32_t listed) { return sparse_head_bytes(nb, listed) < nb; }
HPCZ_HD uint32_t sparse_bitmap_bytes(uint32_t nb) { return (nb + 7) / 8; }
// Whether a sparse chunk of size bytes holds its whole bitmap, with no bit set past block nb - 1.
HPCZ_HD bool sparse_bitmap_ok(const uint8_t* src, uint32_t size, uint32_t nb) {
  const uint32_t bm = sparse_bitmap_bytes(nb);
  return size >= 1 + bm && !(nb % 8 && (src[bm] >> (nb % 8)) != 0);
}
// Whether block b's code is listed in a sparse chunk.
HPCZ_HD bool sparse_listed(const uint8_t* src, uint32_t b) { return (src[1 + b / 8] >> (b % 8)) & 1; }

// A chunk's codes, one per block, and where its payloads start: from the code bytes, or expanded
// from the sparse form (unlisted blocks are code 0). False if the sparse form is malformed (the
// bitmap or the listed codes past size, bitmap bits set past the last block).
HPCZ_HD bool chunk_codes(const uint8_t* src, uint32_t size, uint32_t nb, uint8_t* codes, uint32_t& head) {
  if (size < 1 || src[0] != kSparseChunk) {
    for (uint32_t b = 0; b < nb && b < size; ++b) codes[b] = src[b];
    head = nb;
    return size >= nb;
  }
  if (!sparse_bitmap_ok(src, size, nb)) return false;
  const uint32_t bm = sparse_bitmap_bytes(nb);
  uint32_t listed = 0;
  for (uint32_t b = 0; b < nb; ++b) {
    const bool on = sparse_listed(src, b);
    if (on && 1 + bm + listed >= size) return false;
    codes[b] = on ? src[1 + bm + listed++] : uint8_t(0);
  }
  head = 1 + bm + listed;
  return true;
}

// Worst case: every block raw, plus its code byte.
HPCZ_HD uint64_t max_chunk_bytes(uint64_t count, uint32_t value_bytes) {
  uint64_t nb = div_ceil(count, kB);
  return nb + nb * kB * value_bytes;
}
// Best case, the fewest bytes chunk_codes accepts: a code byte per block, or the sparse form's marker
// and bitmap (every block code 0: no payload).
HPCZ_HD uint64_t min_chunk_bytes(uint64_t count) {
  const uint64_t nb = div_ceil(count, kB), sparse = 1 + (nb + 7) / 8;
  return nb < sparse ? nb : sparse;
}

// Encodes count (<= chunk_values) values; dst holds max_chunk_bytes, exc_scratch count values (the
// exceptions, until the payloads' end is known). Returns the chunk's size.
// Blocks are chained: a block's first delta is taken against the q that ended the previous block.
template <class T>
uint32_t encode_chunk(const T* in, uint32_t count, const QuantParams<T>& p, uint8_t* dst, uint8_t* exc_scratch) {
  const uint32_t nb = uint32_t(div_ceil(count, kB));
  uint8_t desc[kLanesDescBytes * (chunk_values<float>() / kB)];  // the lane blocks' descriptors
  uint32_t pos = nb, nexc = 0, nlanes = 0;
  int32_t prev = 0;
  for (uint32_t b = 0; b < nb; ++b) {
    T v[kB];
    int32_t q[kB];
    int cnt = int(count - b * kB < uint32_t(kB) ? count - b * kB : kB);
    for (int i = 0; i < kB; ++i) v[i] = i < cnt ? in[size_t(b) * kB + i] : T(0);
    int32_t tail;
    bool has_tail;
    uint32_t invalid = quantize_lanes(v, cnt, p, q, tail, has_tail);
    chain_fill(q, invalid, prev);
    const int32_t next = q[kB - 1];  // block_deltas turns q into magnitudes
    const BlockDeltas bd = block_deltas(q, prev);
    BlockPlan bp = plan_block(bd, invalid & lanes_below(cnt), sizeof(T), uniform_bits(v, cnt));
    dst[b] = bp.code;
    uint8_t* exc = exc_scratch + size_t(nexc) * sizeof(T);
    write_block<T>(bp, [&](int i) { return v[i]; }, cnt, q, bd, dst + pos, [&](int j, T x) { store_value_le<T>(exc + j * sizeof(T), x); });
    if (bp.code == kCodeLanes) write_lanes_desc(bd, desc + kLanesDescBytes * nlanes++);
    pos += bp.payload;
    nexc += bp.nexc;
    prev = next;
  }
  std::memcpy(dst + pos, exc_scratch, size_t(nexc) * sizeof(T));
  std::memcpy(dst + pos + nexc * sizeof(T), desc, kLanesDescBytes * nlanes);
  const uint32_t size = pos + nexc * uint32_t(sizeof(T)) + kLanesDescBytes * nlanes;
  uint32_t listed = 0;
  for (uint32_t b = 0; b < nb; ++b) listed += dst[b] != 0;
  if (!sparse_is_smaller(nb, listed)) return size;
  // The sparse form: the head rewritten in place, the payloads and exceptions moved down after it.
  const uint32_t head = sparse_head_bytes(nb, listed), bm = sparse_bitmap_bytes(nb);
  uint8_t h[1 + chunk_values<float>() / kB / 8 + chunk_values<float>() / kB] = {};  // the largest head
  h[0] = kSparseChunk;
  for (uint32_t b = 0, k = 0; b < nb; ++b)
    if (dst[b]) {
      h[1 + b / 8] |= uint8_t(1u << (b % 8));
      h[1 + bm + k++] = dst[b];
    }
  std::memmove(dst + head, dst + nb, size - nb);
  std::memcpy(dst, h, head);
  return size - (nb - head);
}

// Decodes a chunk of `size` bytes holding count values. Returns false if the bytes are not a
// well-formed chunk (unknown code, sections that do not add up to size); never reads outside src.
template <class T>
bool decode_chunk(const uint8_t* src, uint32_t size, uint32_t count, const QuantParams<T>& p, T* out) {
  const uint32_t nb = uint32_t(div_ceil(count, kB));
  uint8_t codes[chunk_values<float>() / kB];
  uint32_t head = 0;
  if (nb > sizeof codes || !chunk_codes(src, size, nb, codes, head)) return false;
  // The lane blocks' descriptors end the chunk.
  uint64_t nlanes = 0;
  for (uint32_t b = 0; b < nb; ++b) nlanes += codes[b] == kCodeLanes;
  if (head + kLanesDescBytes * nlanes > size) return false;
  const uint8_t* desc = src + size - kLanesDescBytes * nlanes;
  uint64_t pay = head, nexc = 0;
  for (uint32_t b = 0, k = 0; b < nb; ++b) {
    int s = block_payload_bytes(codes[b], desc + kLanesDescBytes * k, sizeof(T));
    k += codes[b] == kCodeLanes;
    if (s < 0 || pay + s > size) return false;
    if (has_exceptions(codes[b])) nexc += popcount32(load_u32_le(src + pay));
    pay += s;
  }
  if (pay + nexc * sizeof(T) + kLanesDescBytes * nlanes != size) return false;
  uint64_t pos = head, x = 0;
  int32_t prev = 0;
  for (uint32_t b = 0; b < nb; ++b) {
    T v[kB];
    const uint8_t* exc = src + pay + x * sizeof(T);
    int cnt = int(count - b * kB < uint32_t(kB) ? count - b * kB : kB);
    const int ps = block_payload_bytes(codes[b], desc, sizeof(T));
    int32_t last = decode_block<T>(codes[b], src + pos, desc, prev, p,
                                   [&](int j) { return load_value_le<T>(exc + j * sizeof(T)); }, v);
    if (codes[b] == kCodeLanes) desc += kLanesDescBytes;
    if (holds_values(codes[b])) {
      int32_t t;
      if (stored_block_tail(codes[b], src + pos, cnt, p, t)) last = t;
    }
    prev = last;
    std::memcpy(out + size_t(b) * kB, v, cnt * sizeof(T));
    if (has_exceptions(codes[b])) x += popcount32(load_u32_le(src + pos));
    pos += ps;
  }
  return true;
}

}  // namespace hpcz::fast
