// Reading and validating archives: every field is checked before it is used.
#include <string>

#include "codecs/fast/chunk.hpp"
#include "codecs/ratio/chunk.hpp"
#include "pipeline/internal.hpp"

namespace hpcz::pipeline {

namespace {
void corrupt(const std::string& msg) { fail(ErrorCode::corrupt_archive, "corrupt archive: " + msg); }
}

uint64_t plain_chunk_bound(const ArchiveInfo& info, uint64_t count, uint32_t vb) {
  return info.codec == Codec::ratio ? ratio::max_chunk_bytes(count, vb) : fast::max_chunk_bytes(count, vb);
}

ArchiveInfo parse_archive(const uint8_t* a, size_t size, bool full) {
  using namespace format;
  using detail::load_u32_le;
  using detail::load_u64_le;
  if (size < 4 || a[0] != 'H' || a[1] != 'P' || a[2] != 'C' || a[3] != 'Z')
    fail(ErrorCode::corrupt_archive, "not an hpcz archive (bad magic)");
  if (size < kHeaderBytes)
    corrupt("truncated header (" + std::to_string(size) + " of " + std::to_string(kHeaderBytes) + " bytes)");
  ArchiveInfo info;
  info.version = uint16_t(a[4] | a[5] << 8);
  if (info.version == 0) corrupt("format version 0");
  if (info.version > kVersion)
    fail(ErrorCode::unsupported, "archive format version " + std::to_string(info.version) +
                                     " is newer than this hpcz reads (" + std::to_string(kVersion) + ")");
  uint64_t s = 0;
  for (uint32_t i = 0; i < 35; ++i) s += checksum_term(i, load_u32_le(a + 4 * i));
  if (!checksum_matches(checksum_fold(s), load_u32_le(a + 140))) corrupt("header checksum mismatch");
  if ((a[6] | a[7] << 8) != kHeaderBytes) corrupt("header size field");
  if (a[8] != 1 && a[8] != 2) corrupt("dtype " + std::to_string(a[8]));
  info.dtype = DType(a[8]);
  const int ndims = a[9];
  if (ndims < 1 || ndims > 4) corrupt("rank " + std::to_string(ndims));
  if (a[10] != 1 && a[10] != 2) corrupt("error-bound mode " + std::to_string(a[10]));
  info.mode = BoundMode(a[10]);
  if (a[11] != 1 && a[11] != 2) fail(ErrorCode::unsupported, "unknown codec id " + std::to_string(a[11]));
  info.codec = Codec(a[11]);
  const uint8_t flags = a[12];
  if (flags & ~(kFlagFill | kFlagRangeValid | kFlagSecondStage) || a[13] || a[14] || a[15]) corrupt("reserved header bits set");
  info.second_stage = flags & kFlagSecondStage;
  if (info.second_stage && info.version < 2) corrupt("second-stage flag in a version 1 archive");
  uint64_t n = 1;
  for (int i = 0; i < 4; ++i) {
    uint64_t d = load_u64_le(a + 16 + 8 * i);
    if (i >= ndims) {
      if (d != 0) corrupt("dimension beyond the rank");
      continue;
    }
    if (d != 0 && n > (uint64_t(1) << 60) / d) corrupt("dimensions overflow");
    n *= d;
    info.dims.push_back(d);
  }
  info.n_values = load_u64_le(a + 48);
  if (info.n_values != n) corrupt("value count does not match the dimensions");
  info.bound = load_f64_le(a + 56);
  info.eb_abs = load_f64_le(a + 64);
  if (!(info.bound >= 0 && info.bound <= 1.7976931348623157e308)) corrupt("bound");
  if (!(info.eb_abs >= 0 && info.eb_abs <= 1.7976931348623157e308)) corrupt("absolute bound");
  info.range_valid = flags & kFlagRangeValid;
  info.range_min = load_f64_le(a + 72);
  info.range_max = load_f64_le(a + 80);
  if (flags & kFlagFill) info.fill = load_f64_le(a + 88);
  info.step = load_f64_le(a + 96);
  info.chunk_values = load_u32_le(a + 104);
  info.block_values = load_u32_le(a + 108);
  info.n_chunks = load_u64_le(a + 112);
  info.archive_size = load_u64_le(a + 120);
  const uint64_t params = load_u64_le(a + 128);
  if (params != (info.codec == Codec::ratio ? ratio::kCodecParams : 0)) corrupt("codec parameters");
  info.table_checksum = load_u32_le(a + 136);
  // The step is a value of the array's type, >= 0, and never above 2 eb (except eb == 0, see FORMAT.md).
  const double step_t = info.dtype == DType::f32 ? double(float(info.step)) : info.step;
  if (!(info.step >= 0) || step_t != info.step || (info.eb_abs > 0 && info.step > 2 * info.eb_abs))
    corrupt("quantization step");
  const uint32_t vb = uint32_t(dtype_size(info.dtype));
  if (info.codec == Codec::ratio) {
    const predict::Shape shape = predict::working_shape(info.dims.data(), ndims);
    if (info.chunk_values != shape.chunk_values()) corrupt("chunk size");
    if (info.block_values < 1 || info.block_values > ratio::kMaxRadius) corrupt("radius");
    if (info.n_chunks != detail::div_ceil(shape.slabs, shape.chunk_slabs)) corrupt("chunk count");
  } else {
    if (info.chunk_values != kChunkInputBytes / vb) corrupt("chunk size");
    if (info.block_values != kBlockValues) corrupt("block size");
    if (info.n_chunks != detail::div_ceil(n, info.chunk_values)) corrupt("chunk count");
  }
  info.data_offset = data_offset(info.n_chunks);
  if (info.archive_size < info.data_offset) corrupt("archive size smaller than its chunk table");
  if (!full) return info;
  if (size < info.archive_size)
    corrupt("truncated (" + std::to_string(size) + " of " + std::to_string(info.archive_size) + " bytes)");
  if (size > info.archive_size) corrupt("trailing bytes after the archive");
  const uint8_t* t = a + kHeaderBytes;
  if (!checksum_matches(checksum(t, info.n_chunks * kChunkEntryBytes), info.table_checksum)) corrupt("chunk table checksum mismatch");
  info.chunks.resize(info.n_chunks);
  uint64_t expect = info.data_offset;
  for (uint64_t c = 0; c < info.n_chunks; ++c) {
    ChunkEntry& e = info.chunks[c];
    e.offset = load_u64_le(t + 16 * c);
    e.size = load_u32_le(t + 16 * c + 8);
    e.checksum = load_u32_le(t + 16 * c + 12);
    const uint64_t count = std::min<uint64_t>(info.chunk_values, n - c * info.chunk_values);
    const uint64_t most = plain_chunk_bound(info, count, vb) + (info.second_stage ? 1 : 0);  // + the stage tag
    if (e.offset != expect || e.size > most || e.size > info.archive_size - e.offset)
      corrupt("chunk " + std::to_string(c) + " lies outside its place");
    expect += e.size;
  }
  if (expect != info.archive_size) corrupt("chunks do not fill the archive");
  return info;
}

}  // namespace hpcz::pipeline

namespace hpcz {

ArchiveInfo inspect(const uint8_t* archive, size_t size) {
  return pipeline::parse_archive(archive, size, true);
}

ArchiveInfo inspect_header(const uint8_t* archive, size_t available) {
  return pipeline::parse_archive(archive, available, false);
}

StageSizes stage_sizes(const uint8_t* archive, size_t size) {
  const ArchiveInfo staged = inspect(archive, size);
  if (staged.second_stage) {  // the stages of the plain archive inside, and what the second stage saved
    const auto plain = pipeline::remove_second_stage(archive, size, staged, Backend::cpu);
    StageSizes z = stage_sizes(plain.data(), plain.size());
    z.second_stage_saved = int64_t(plain.size()) - int64_t(size);
    return z;
  }
  const ArchiveInfo& info = staged;
  StageSizes z;
  z.header_and_table = info.data_offset;
  if (info.codec != Codec::ratio) return z;
  const predict::Shape shape = predict::working_shape(info.dims.data(), int(info.dims.size()));
  const uint32_t vb = uint32_t(dtype_size(info.dtype)), nsym = 2 * info.block_values;
  for (uint64_t c = 0; c < info.n_chunks; ++c) {
    const ChunkEntry& e = info.chunks[c];
    const uint8_t* src = archive + e.offset;
    const uint32_t count = predict::chunk_shape(shape, c).count();
    if (!format::checksum_matches(format::checksum(src, e.size), e.checksum))
      fail(ErrorCode::corrupt_archive, "corrupt archive: chunk " + std::to_string(c) + ": checksum mismatch");
    ratio::ChunkLayout L;
    if (ratio::is_raw_chunk(src, e.size, count, vb)) {
      z.raw_chunks += e.size;
    } else if (ratio::parse_chunk(src, e.size, count, nsym, vb, L)) {
      z.codebook += L.seq_first;
      z.gap_metadata += L.bits - L.seq_first;
      z.codes += L.out_idx - L.bits;
      z.outliers += L.exc_idx - L.out_idx;
      z.exceptions += L.size - L.exc_idx;
    } else {
      fail(ErrorCode::corrupt_archive, "corrupt archive: chunk " + std::to_string(c) + ": malformed");
    }
  }
  return z;
}

size_t archive_prefix_size(const uint8_t* header, size_t available) {
  return pipeline::parse_archive(header, available, false).data_offset;
}

size_t max_compressed_size(uint64_t n, DType dtype) {
  const uint32_t vb = uint32_t(dtype_size(dtype));
  const uint64_t cv = format::kChunkInputBytes / vb, nc = detail::div_ceil(n, cv);
  uint64_t full = n / cv, rest = n % cv;
  // (+ 1 byte per chunk: the second stage's tag on a chunk it stores as is)
  const uint64_t fast = format::data_offset(nc) + full * fast::max_chunk_bytes(cv, vb) + fast::max_chunk_bytes(rest, vb) + nc;
  // Ratio mode: every chunk but the last holds more than kTargetChunkValues / 2 values (whole slabs of
  // at most kTargetChunkValues, or one larger slab), and no chunk exceeds its raw form.
  const uint64_t nc_ratio = n / (predict::kTargetChunkValues / 2) + 1;
  const uint64_t ratio = format::data_offset(nc_ratio) + nc_ratio * (ratio::kChunkHeaderBytes + 1) + n * vb;
  return fast > ratio ? fast : ratio;
}

}  // namespace hpcz
