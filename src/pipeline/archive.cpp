// Reading and validating archives: every field is checked before it is used. The header comes in
// through format::read_header; the codec checks its own fields (CodecOps::check_plan) and bounds its
// chunks (CodecOps::chunk_bound).
#include <string>

#include "common/storage.hpp"
#include "pipeline/internal.hpp"
#include "pipeline/stage_layout.hpp"
#include "quant/bound.hpp"

namespace hpcz::pipeline {

namespace {
[[noreturn]] void corrupt(const std::string& msg) { fail(ErrorCode::corrupt_archive, "corrupt archive: " + msg); }
constexpr double kMaxFinite = 1.7976931348623157e308;
}  // namespace

// The fields an ArchiveInfo and a header both hold, as pairs (f(info's, header's)) for copying either way.
template <class Info, class Header, class F> void shared_fields(Info& i, Header& h, F&& f) {
  f(i.dtype, h.dtype); f(i.mode, h.mode); f(i.codec, h.codec); f(i.n_values, h.n_values); f(i.bound, h.bound);
  f(i.eb_abs, h.eb_abs); f(i.range_min, h.range_min); f(i.range_max, h.range_max); f(i.step, h.step);
  f(i.chunk_values, h.chunk_values); f(i.block_values, h.block_param); f(i.n_chunks, h.n_chunks);
  f(i.archive_size, h.archive_size); f(i.table_checksum, h.table_checksum);
}

format::HeaderFields header_of(const ArchiveInfo& info) {
  format::HeaderFields h{};
  shared_fields(info, h, [](const auto& from, auto& to) { to = from; });
  h.ndims = uint8_t(info.dims.size());
  h.flags = uint8_t((info.fill ? format::kFlagFill : 0) | (info.range_valid ? format::kFlagRangeValid : 0) |
                    (info.second_stage ? format::kFlagSecondStage : 0));
  for (size_t i = 0; i < info.dims.size() && i < 4; ++i) h.dims[i] = info.dims[i];
  h.fill = info.fill.value_or(0.0);
  h.storage = info.dtype;
  h.dtype = detail::code_dtype_or_self(info.dtype);
  h.codec_params = codecs::get(info.codec).codec_params;
  h.version = info.version;
  if (info.psnr_achieved) h.quality = quality_field_of(*info.psnr_achieved);
  return h;
}

ArchiveInfo parse_archive(const uint8_t* a, size_t size, bool full) {
  using namespace format;
  if (size < 4 || a[0] != 'H' || a[1] != 'P' || a[2] != 'C' || a[3] != 'Z')
    fail(ErrorCode::corrupt_archive, "not an hpcz archive (bad magic)");
  if (size < kHeaderBytes)
    corrupt("truncated header (" + std::to_string(size) + " of " + std::to_string(kHeaderBytes) + " bytes)");
  const StoredHeader s = read_header(a);
  const HeaderFields& h = s.f;
  ArchiveInfo info;
  shared_fields(info, h, [](auto& to, const auto& from) { to = from; });
  info.version = s.version;
  if (info.version == 0) corrupt("format version 0");
  if (info.version > kVersion)
    fail(ErrorCode::unsupported, "archive format version " + std::to_string(info.version) +
                                     " is newer than this hpcz reads (" + std::to_string(kVersion) + ")");
  if (!checksum_matches(header_checksum(a), s.header_checksum)) corrupt("header checksum mismatch");
  if (s.header_bytes != kHeaderBytes) corrupt("header size field");
  info.dtype = h.storage;  // the array's type (h.dtype: its code type)
  if (!dtype_of_id(unsigned(h.storage))) corrupt("dtype " + std::to_string(int(h.storage)));
  if (format::has_storage_type(h) && info.version < (format::is_wide_integer(h.storage) ? 9 : 7))
    corrupt(std::string(dtype_name(h.storage)) + " array in a version " + std::to_string(info.version) + " archive");
  if (format::has_storage_type(h) && info.version < 8 && (h.mode == BoundMode::pw_rel || quant::mode_combined(h.mode)))
    corrupt(std::string(bound_mode_name(h.mode)) + " bound on a " + dtype_name(h.storage) + " array in a version " +
            std::to_string(info.version) + " archive");
  if (h.ndims < 1 || h.ndims > 4) corrupt("rank " + std::to_string(int(h.ndims)));
  if (!quant::mode_known(h.mode)) corrupt("error-bound mode " + std::to_string(int(h.mode)));
  const codecs::CodecOps* codec = codecs::find(h.codec);
  if (!codec) fail(ErrorCode::unsupported, "unknown codec id " + std::to_string(int(h.codec)));
  // Bytes 13..15 hold the PSNR achieved in the quality modes, and are reserved (0) in the others.
  if (h.flags & ~(kFlagFill | kFlagRangeValid | kFlagSecondStage) || (!s.reserved_zero && !mode_records_quality(h.mode)))
    corrupt("reserved header bits set");
  if (mode_records_quality(h.mode)) info.psnr_achieved = quality_of_field(h.quality);
  info.second_stage = h.flags & kFlagSecondStage;
  if (info.second_stage && info.version < 2) corrupt("second-stage flag in a version 1 archive");
  uint64_t n = 1;
  for (int i = 0; i < 4; ++i) {
    const uint64_t d = h.dims[i];
    if (i >= h.ndims) {
      if (d != 0) corrupt("dimension beyond the rank");
      continue;
    }
    if (d != 0 && n > (uint64_t(1) << 60) / d) corrupt("dimensions overflow");
    n *= d;
    info.dims.push_back(d);
  }
  if (info.n_values != n) corrupt("value count does not match the dimensions");
  if (!(info.bound >= 0 && info.bound <= kMaxFinite)) corrupt("bound");
  if (!(info.eb_abs >= 0 && info.eb_abs <= kMaxFinite)) corrupt("absolute bound");
  info.range_valid = h.flags & kFlagRangeValid;
  if (h.flags & kFlagFill) info.fill = h.fill;
  // The step is a value of the array's type, >= 0, and never above 2 eb (except eb == 0, see FORMAT.md).
  const double step_t = detail::dispatch_dtype(h.dtype, [&](auto tr) {
    return double(typename decltype(tr)::value_type(info.step));
  });
  if (h.mode == BoundMode::pw_rel && h.codec != Codec::fast) {
    // The log2 transform (version 8): the factor, and the bound and step of the logs that follow from it.
    if (info.version < 8) corrupt("pointwise-relative bound in a version " + std::to_string(info.version) + " " + codec->name + " archive");
    if (!(info.bound >= quant::kPwLogMinBound && info.bound < 1)) corrupt("pointwise-relative bound");
    if (info.eb_abs != quant::pw_eb_abs(quant::Transform::log2, h.dtype, h.storage, info.bound)) corrupt("absolute bound");
    const double eb = info.eb_abs;
    if (info.step != quant::pw_log_step(eb)) corrupt("quantization step");
  } else if (h.mode == BoundMode::pw_rel) {
    // The factor, the code factor in eb_abs (the factor itself but for a storage type's values) and the
    // width of the magnitude steps that follows from it.
    if (!(info.bound > 0 && info.bound < 1) ||
        info.eb_abs != quant::pw_eb_abs(quant::Transform::identity, h.dtype, h.storage, info.bound))
      corrupt("pointwise-relative bound");
    const double w = detail::dispatch_dtype(h.dtype, [&](auto tr) {
      return quant::pw_rel_step<typename decltype(tr)::value_type>(info.eb_abs);
    });
    if (info.step != w) corrupt("quantization step");
  } else if (!(info.step >= 0) || step_t != info.step || (info.eb_abs > 0 && info.step > 2 * info.eb_abs)) {
    corrupt("quantization step");
  }
  // Ratio and interp archives are written at versions 1, 2, 6, 7 and 8 only (format::archive_version); the
  // combined bound modes need version 6.
  if (h.codec != Codec::fast && info.version > format::archive_version(h.codec, true, BoundMode::abs) &&
      info.version < 6)
    corrupt("version " + std::to_string(info.version) + " for the " + codec->name + " codec");
  if (format::mode_needs_v6(h.mode) && info.version < 6)
    corrupt("bound mode " + std::string(bound_mode_name(h.mode)) + " in a version " + std::to_string(info.version) +
            " archive");
  if (h.codec_params != codec->codec_params) corrupt("codec parameters");
  if (const char* bad = codec->check_plan(h)) corrupt(bad);
  info.data_offset = data_offset(info.n_chunks);
  if (info.archive_size < info.data_offset) corrupt("archive size smaller than its chunk table");
  if (!full) return info;
  if (size < info.archive_size)
    corrupt("truncated (" + std::to_string(size) + " of " + std::to_string(info.archive_size) + " bytes)");
  if (size > info.archive_size) corrupt("trailing bytes after the archive");
  parse_table(info, a + kHeaderBytes);
  return info;
}

void parse_table(ArchiveInfo& info, const uint8_t* t) {
  using namespace format;
  const HeaderFields h = header_of(info);
  const codecs::CodecOps* codec = &codecs::get(info.codec);
  if (!checksum_matches(checksum(t, info.n_chunks * kChunkEntryBytes), info.table_checksum))
    corrupt("chunk table checksum mismatch");
  info.chunks.resize(info.n_chunks);
  uint64_t expect = info.data_offset;
  for (uint64_t c = 0; c < info.n_chunks; ++c) {
    ChunkEntry& e = info.chunks[c];
    e.offset = detail::load_u64_le(t + kChunkEntryBytes * c);
    e.size = detail::load_u32_le(t + kChunkEntryBytes * c + 8);
    e.checksum = detail::load_u32_le(t + kChunkEntryBytes * c + 12);
    const uint64_t most = codec->chunk_bound(h, c) + (info.second_stage ? 1 : 0);  // + the stage tag
    if (e.offset != expect || e.size > most || e.size > info.archive_size - e.offset)
      corrupt("chunk " + std::to_string(c) + " lies outside its place");
    // Its values need at least chunk_min bytes (under the stage: stored bytes that can decode to that
    // many), so the values the header declares are justified by the bytes there before any is sized.
    const uint64_t least = codec->chunk_min(h, c);
    if ((info.second_stage ? stage_plain_bound(e.size) : e.size) < least)
      corrupt("chunk " + std::to_string(c) + ": " + std::to_string(e.size) + " bytes cannot hold its values (" +
              (info.second_stage ? "they decode to " + std::to_string(least) + " bytes at the least"
                                 : std::to_string(least) + " bytes at the least") + ")");
    expect += e.size;
  }
  if (expect != info.archive_size) corrupt("chunks do not fill the archive");
}

}  // namespace hpcz::pipeline

namespace hpcz {

ArchiveInfo inspect(const uint8_t* archive, size_t size) { return pipeline::parse_archive(archive, size, true); }

ArchiveInfo inspect_header(const uint8_t* archive, size_t available) {
  return pipeline::parse_archive(archive, available, false);
}

size_t archive_prefix_size(const uint8_t* header, size_t available) {
  return pipeline::parse_archive(header, available, false).data_offset;
}

size_t max_compressed_size(uint64_t n, DType dtype) {
  uint64_t most = 0;
  for (const codecs::CodecOps* c : codecs::all()) most = std::max<uint64_t>(most, c->archive_bound(n, detail::code_dtype(dtype)));
  return most;
}

}  // namespace hpcz
