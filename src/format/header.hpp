// The archive header (144 bytes, little-endian) and chunk table entries: layout in docs/FORMAT.md.
// write_header and read_header are the only code that knows the byte offsets (HeaderOffset); the CPU
// backend and the GPU seal kernel both write through write_header, so they emit the same bytes.
#pragma once
#include "common/hd.hpp"
#include "common/storage.hpp"
#include "format/checksum.hpp"
#include "hpcz/hpcz.hpp"

namespace hpcz::format {

// The newest version this build reads. 2: the lossless second stage (kFlagSecondStage); 3: fast-codec
// chunks may hold two-level blocks (codes 0x7d, 0x7e) and take the sparse form (first byte 0xff);
// 4: fast-codec chunks may hold lane blocks (code 0xfc, descriptors at the chunk's end); 5: chunk
// checksums of fast-codec archives are HPCZ-SUM32 (chunk_checksum); 6: bound modes 6 and 7 (abs_and_rel,
// abs_or_rel), in archives of any codec, and 3 (pw_rel) in fast-codec archives; 7: storage types (dtype
// byte 3..10: float16, bfloat16, the integers), coded as their code type (common/storage.hpp); 8: mode 3
// (pw_rel) in ratio and interp archives, through the log2 transform (chunk kind 3), and modes 3, 6 and 7 on
// the storage types; 9: the storage types int64 and uint64 (dtype byte 11, 12).
constexpr uint16_t kVersion = 9;
constexpr uint32_t kHeaderBytes = 144;
constexpr uint32_t kChunkEntryBytes = 16;
constexpr uint32_t kHeaderChecksumWords = 35;  // the header checksum covers bytes 0..139

// Byte offsets of the header's fields (docs/FORMAT.md, section 3).
enum HeaderOffset : uint32_t {
  kOffMagic = 0, kOffVersion = 4, kOffHeaderBytes = 6, kOffDType = 8, kOffRank = 9, kOffMode = 10,
  kOffCodec = 11, kOffFlags = 12, kOffReserved = 13, kOffDims = 16, kOffNValues = 48, kOffBound = 56,
  kOffEbAbs = 64, kOffRangeMin = 72, kOffRangeMax = 80, kOffFill = 88, kOffStep = 96, kOffChunkValues = 104,
  kOffBlockParam = 108, kOffNChunks = 112, kOffArchiveSize = 120, kOffCodecParams = 128,
  kOffTableChecksum = 136, kOffHeaderChecksum = 140
};

enum HeaderFlags : uint8_t { kFlagFill = 1, kFlagRangeValid = 2, kFlagSecondStage = 4 };

// The fields write_header stores (version as read back: see below). Plain members, no containers:
// usable in device code. The range, bound and step are a quant::Bound's (quant::store, quant::bound_of).
struct HeaderFields {
  DType dtype;    // the code type: what the codecs code (f32 or f64)
  DType storage;  // the array's type, in the dtype byte: a storage type coded as dtype, else dtype or 0
  uint8_t ndims;  // 1..4
  BoundMode mode;
  Codec codec;
  uint8_t flags;
  uint64_t dims[4];
  uint64_t n_values;
  double bound;
  double eb_abs;
  double range_min, range_max;
  double fill;
  double step;  // quantization step (a value of the array's type)
  uint32_t chunk_values;
  uint32_t block_param;  // fast: values per block (32); ratio: the quant-code radius
  uint64_t n_chunks;
  uint64_t archive_size;
  uint32_t table_checksum;
  uint64_t codec_params;  // 0 for fast; ratio, interp: max code length | predictor family << 8
  uint32_t quality;       // bytes 13..15 (24 bits), modes psnr and nrmse: the PSNR achieved in 0.01 dB,
                          // rounded down, 0xffffff where every value is exact; 0 in every other mode
  // The archive's format version, as read_header and pipeline::header_of find it (the decoders pick
  // their chunk checksum by it); writers need not set it: write_header writes archive_version().
  uint16_t version;
};

// What read_header finds besides the fields: the parts write_header fixes or the second stage sets.
struct StoredHeader {
  uint16_t version;
  uint16_t header_bytes;
  bool reserved_zero;  // bytes 13..15
  uint32_t header_checksum;
  HeaderFields f;
};

HPCZ_HD void store_f64_le(uint8_t* p, double v) { detail::store_u64_le(p, detail::to_bits(v)); }
HPCZ_HD double load_f64_le(const uint8_t* p) { return detail::from_bits<double>(detail::load_u64_le(p)); }

// HPCZ-SUM over the header's first 140 bytes, as stored at kOffHeaderChecksum.
HPCZ_HD uint32_t header_checksum(const uint8_t* d) {
  uint64_t s = 0;
  for (uint32_t i = 0; i < kHeaderChecksumWords; ++i) s += checksum_term(i, detail::load_u32_le(d + 4 * i));
  return checksum_fold(s);
}

// The lowest version that holds what a writer wrote, so that archives older readers can read stay as
// they were: 9 for an int64 or uint64 array; 8 for pw_rel in the ratio and interp codecs, and for a
// storage type's array with mode 3, 6 or 7; 7 for any other array of a storage type; 6 with a combined or pointwise-relative bound mode; else 5 for the fast codec (lane blocks, HPCZ-SUM32 chunk
// checksums), 2 for the others with the second stage and 1 without.
HPCZ_HD bool mode_needs_v6(BoundMode mode) { return mode != BoundMode::abs && mode != BoundMode::rel; }
// Modes whose archives record the quality achieved in bytes 13..15.
HPCZ_HD bool mode_records_quality(BoundMode mode) { return mode == BoundMode::psnr || mode == BoundMode::nrmse; }
// array_type: the array's type (array_dtype), or 0 where it is a code type.
HPCZ_HD bool is_wide_integer(DType t) { return t == DType::i64 || t == DType::u64; }
HPCZ_HD uint16_t archive_version(Codec codec, bool second_stage, BoundMode mode, DType array_type = DType(0)) {
  const bool storage_type = detail::code_dtype_or_self(array_type) != array_type;
  if (is_wide_integer(array_type)) return 9;
  if (mode == BoundMode::pw_rel && codec != Codec::fast) return 8;
  if (storage_type) return mode == BoundMode::pw_rel || mode == BoundMode::abs_and_rel || mode == BoundMode::abs_or_rel ? 8 : 7;
  if (mode_needs_v6(mode)) return 6;
  return codec == Codec::fast ? uint16_t(5) : uint16_t(second_stage ? 2 : 1);
}

// The chunk checksum of an archive: HPCZ-SUM32 in fast-codec archives from version 5 on, HPCZ-SUM in
// the others (the ratio and interp codecs' at every version).
HPCZ_HD bool chunk_sum32(Codec codec, uint16_t version) { return codec == Codec::fast && version >= 5; }
inline uint32_t chunk_checksum(Codec codec, uint16_t version, const uint8_t* p, uint64_t n) {
  return chunk_sum32(codec, version) ? checksum32(p, n) : checksum(p, n);
}

// Whether the header's array is of a storage type (coded as h.dtype).
HPCZ_HD bool has_storage_type(const HeaderFields& h) { return h.storage != DType(0) && h.storage != h.dtype; }
// The type of the array's values as the caller holds them: its storage type, else the code type.
HPCZ_HD DType array_dtype(const HeaderFields& h) { return has_storage_type(h) ? h.storage : h.dtype; }

// Writes the 144 bytes but the header checksum (write_header adds it).
HPCZ_HD void write_header_fields(uint8_t* d, const HeaderFields& h) {
  d[kOffMagic] = 'H'; d[kOffMagic + 1] = 'P'; d[kOffMagic + 2] = 'C'; d[kOffMagic + 3] = 'Z';
  const uint16_t version = archive_version(h.codec, h.flags & kFlagSecondStage, h.mode, array_dtype(h));
  d[kOffVersion] = uint8_t(version); d[kOffVersion + 1] = uint8_t(version >> 8);
  d[kOffHeaderBytes] = uint8_t(kHeaderBytes); d[kOffHeaderBytes + 1] = uint8_t(kHeaderBytes >> 8);
  d[kOffDType] = uint8_t(has_storage_type(h) ? h.storage : h.dtype); d[kOffRank] = h.ndims; d[kOffMode] = uint8_t(h.mode);
  d[kOffCodec] = uint8_t(h.codec); d[kOffFlags] = h.flags;
  d[kOffReserved] = uint8_t(h.quality);
  d[kOffReserved + 1] = uint8_t(h.quality >> 8);
  d[kOffReserved + 2] = uint8_t(h.quality >> 16);
  for (int i = 0; i < 4; ++i) detail::store_u64_le(d + kOffDims + 8 * i, h.dims[i]);
  detail::store_u64_le(d + kOffNValues, h.n_values);
  store_f64_le(d + kOffBound, h.bound);
  store_f64_le(d + kOffEbAbs, h.eb_abs);
  store_f64_le(d + kOffRangeMin, h.range_min);
  store_f64_le(d + kOffRangeMax, h.range_max);
  store_f64_le(d + kOffFill, h.fill);
  store_f64_le(d + kOffStep, h.step);
  detail::store_u32_le(d + kOffChunkValues, h.chunk_values);
  detail::store_u32_le(d + kOffBlockParam, h.block_param);
  detail::store_u64_le(d + kOffNChunks, h.n_chunks);
  detail::store_u64_le(d + kOffArchiveSize, h.archive_size);
  detail::store_u64_le(d + kOffCodecParams, h.codec_params);
  detail::store_u32_le(d + kOffTableChecksum, h.table_checksum);
}

// Writes all 144 bytes, header checksum included.
HPCZ_HD void write_header(uint8_t* d, const HeaderFields& h) {
  write_header_fields(d, h);
  detail::store_u32_le(d + kOffHeaderChecksum, header_checksum(d));
}

// Reads the 144 bytes at d back (magic not checked, nothing validated: that is the reader's job).
inline StoredHeader read_header(const uint8_t* d) {
  StoredHeader s;
  HeaderFields& h = s.f;
  s.version = uint16_t(d[kOffVersion] | d[kOffVersion + 1] << 8);
  h.version = s.version;
  s.header_bytes = uint16_t(d[kOffHeaderBytes] | d[kOffHeaderBytes + 1] << 8);
  s.reserved_zero = !d[kOffReserved] && !d[kOffReserved + 1] && !d[kOffReserved + 2];
  h.quality = uint32_t(d[kOffReserved]) | uint32_t(d[kOffReserved + 1]) << 8 | uint32_t(d[kOffReserved + 2]) << 16;
  s.header_checksum = detail::load_u32_le(d + kOffHeaderChecksum);
  h.storage = DType(d[kOffDType]);
  h.dtype = detail::code_dtype_or_self(h.storage);
  h.ndims = d[kOffRank];
  h.mode = BoundMode(d[kOffMode]);
  h.codec = Codec(d[kOffCodec]);
  h.flags = d[kOffFlags];
  for (int i = 0; i < 4; ++i) h.dims[i] = detail::load_u64_le(d + kOffDims + 8 * i);
  h.n_values = detail::load_u64_le(d + kOffNValues);
  h.bound = load_f64_le(d + kOffBound);
  h.eb_abs = load_f64_le(d + kOffEbAbs);
  h.range_min = load_f64_le(d + kOffRangeMin);
  h.range_max = load_f64_le(d + kOffRangeMax);
  h.fill = load_f64_le(d + kOffFill);
  h.step = load_f64_le(d + kOffStep);
  h.chunk_values = detail::load_u32_le(d + kOffChunkValues);
  h.block_param = detail::load_u32_le(d + kOffBlockParam);
  h.n_chunks = detail::load_u64_le(d + kOffNChunks);
  h.archive_size = detail::load_u64_le(d + kOffArchiveSize);
  h.codec_params = detail::load_u64_le(d + kOffCodecParams);
  h.table_checksum = detail::load_u32_le(d + kOffTableChecksum);
  return s;
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
