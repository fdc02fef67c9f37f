// Archive header v1 (144 bytes, little-endian) and chunk table: layout in docs/FORMAT.md.
// write_header is shared by the CPU backend and the GPU seal kernel so both emit the same bytes.
#pragma once
#include "common/hd.hpp"
#include "format/checksum.hpp"

namespace hpcz::format {

constexpr uint16_t kVersion = 2;       // the newest this build reads; 2: the lossless second stage (kFlagSecondStage)
constexpr uint16_t kPlainVersion = 1;  // what write_header writes: an archive without the second stage
constexpr uint32_t kHeaderBytes = 144;
constexpr uint32_t kChunkEntryBytes = 16;
constexpr uint32_t kChunkInputBytes = 65536;  // every chunk covers 64 KiB of input (last one: less)
constexpr uint32_t kBlockValues = 32;

enum HeaderFlags : uint8_t { kFlagFill = 1, kFlagRangeValid = 2, kFlagSecondStage = 4 };

// Plain fields, no containers: usable in device code.
struct HeaderFields {
  uint8_t dtype;   // 1 f32, 2 f64
  uint8_t ndims;   // 1..4
  uint8_t mode;    // 1 abs, 2 rel
  uint8_t codec;   // 1 fast, 2 ratio
  uint8_t flags;
  uint64_t dims[4];
  uint64_t n_values;
  double bound;
  double eb_abs;
  double range_min, range_max;
  double fill;
  double step;  // quantization step (a value of the array's type)
  uint32_t chunk_values;
  uint32_t block_values;
  uint64_t n_chunks;
  uint64_t archive_size;
  uint32_t table_checksum;
  uint64_t codec_params;  // bytes 128..135: 0 for fast; ratio: max code length | predictor << 8
};

HPCZ_HD void store_f64_le(uint8_t* p, double v) { detail::store_u64_le(p, detail::to_bits(v)); }
HPCZ_HD double load_f64_le(const uint8_t* p) { return detail::from_bits<double>(detail::load_u64_le(p)); }

// Writes all 144 bytes, header checksum included (HPCZ-SUM over bytes 0..139).
HPCZ_HD void write_header(uint8_t* d, const HeaderFields& h) {
  d[0] = 'H'; d[1] = 'P'; d[2] = 'C'; d[3] = 'Z';
  d[4] = uint8_t(kPlainVersion); d[5] = uint8_t(kPlainVersion >> 8);
  d[6] = uint8_t(kHeaderBytes); d[7] = uint8_t(kHeaderBytes >> 8);
  d[8] = h.dtype; d[9] = h.ndims; d[10] = h.mode; d[11] = h.codec; d[12] = h.flags;
  d[13] = d[14] = d[15] = 0;
  for (int i = 0; i < 4; ++i) detail::store_u64_le(d + 16 + 8 * i, h.dims[i]);
  detail::store_u64_le(d + 48, h.n_values);
  store_f64_le(d + 56, h.bound);
  store_f64_le(d + 64, h.eb_abs);
  store_f64_le(d + 72, h.range_min);
  store_f64_le(d + 80, h.range_max);
  store_f64_le(d + 88, h.fill);
  store_f64_le(d + 96, h.step);
  detail::store_u32_le(d + 104, h.chunk_values);
  detail::store_u32_le(d + 108, h.block_values);
  detail::store_u64_le(d + 112, h.n_chunks);
  detail::store_u64_le(d + 120, h.archive_size);
  detail::store_u64_le(d + 128, h.codec_params);
  detail::store_u32_le(d + 136, h.table_checksum);
  uint64_t s = 0;
  for (uint32_t i = 0; i < 35; ++i) s += checksum_term(i, detail::load_u32_le(d + 4 * i));
  detail::store_u32_le(d + 140, checksum_fold(s));
}

HPCZ_HD void write_chunk_entry(uint8_t* d, uint64_t offset, uint32_t size, uint32_t checksum) {
  detail::store_u64_le(d, offset);
  detail::store_u32_le(d + 8, size);
  detail::store_u32_le(d + 12, checksum);
}

// Entry c's share of the chunk table's checksum sum (its four words, as checksum_sum over the table
// counts them): lets each GPU block add its own entry instead of a pass over the table.
HPCZ_HD uint64_t chunk_entry_terms(uint64_t c, uint64_t offset, uint32_t size, uint32_t checksum) {
  return checksum_term(4 * c, uint32_t(offset)) + checksum_term(4 * c + 1, uint32_t(offset >> 32)) +
         checksum_term(4 * c + 2, size) + checksum_term(4 * c + 3, checksum);
}

HPCZ_HD uint64_t data_offset(uint64_t n_chunks) { return kHeaderBytes + n_chunks * kChunkEntryBytes; }

}  // namespace hpcz::format
