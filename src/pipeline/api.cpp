// Convenience API: validate, pick a backend, run it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "common/storage.hpp"
#include "pipeline/internal.hpp"
#include "quant/bound.hpp"

namespace hpcz {

namespace pipeline {
void check_reads_back(const uint8_t* a, size_t size) {
  try {
    parse_archive(a, size, true);
  } catch (const Error& e) {
    fail(ErrorCode::internal, std::string("internal error: the archive written does not read back (") + e.what() + ")");
  }
}
}  // namespace pipeline

namespace {
// A quality target is met by coding the array as a rel bound of factor c 10^(-target/20) of the value
// range, measuring, and moving c by what the measure missed or exceeded. PSNR = 20 log10(range / RMSE);
// errors spread evenly within eb have an RMSE of eb / sqrt(3), the first try's c. A try that misses is
// followed by a tighter one; one that exceeds by more than `slack`, by a looser one (predictors whose
// errors are mostly far below eb), the smallest archive that meets the target kept. c below 1 bounds the
// RMSE by eb itself (every error is within it), so a last try with none kept yet meets it whatever the data.
struct QualityPolicy {
  static constexpr int attempts = 3;
  static constexpr double first = 1.7320508075688772;  // sqrt(3)
  static constexpr double last = 0.98;                 // below 1: room for the measure's rounding up
  static constexpr double aim = 0.995;                 // a retry aims a little past the target
  static constexpr double slack = 0.3;                 // dB above the target worth a looser try
};

std::vector<uint8_t> compress_to_quality(const void* data, DType dtype, const std::vector<uint64_t>& dims,
                                         const Options& opt) {
  const double target = pipeline::quality_target_psnr(opt);
  Options o = opt;
  o.mode = BoundMode::rel;
  double c = QualityPolicy::first, best_got = 0;
  std::vector<uint8_t> best, back;
  for (int attempt = 0; attempt < QualityPolicy::attempts; ++attempt) {
    if (best.empty() && (attempt == QualityPolicy::attempts - 1 || c <= QualityPolicy::last))
      c = std::min(c, QualityPolicy::last);
    o.bound = c * std::pow(10.0, -target / 20.0);
    std::vector<uint8_t> a = compress(data, dtype, dims, o);
    const ArchiveInfo info = decompress(a.data(), a.size(), back, opt.backend);
    const double got = pipeline::psnr_lower_bound(data, back.data(), info);
    const bool met = got >= target;
    if (met && (best.empty() || a.size() < best.size())) best = std::move(a), best_got = got;
    // Done once one is kept, unless this one met the target with room to spare (or infinitely: exact).
    if (!best.empty() && !(met && got - target > QualityPolicy::slack && std::isfinite(got))) break;
    if (!best.empty() && attempt > 0) break;  // a looser try after a kept one: no third
    const double f = std::pow(10.0, (got - target) / 20.0);
    c *= std::isfinite(f) && f > 0 ? f * QualityPolicy::aim : 0.5;
  }
  if (best.empty()) fail(ErrorCode::internal, "internal error: PSNR below the target " + std::to_string(target) + " dB");
  pipeline::record_quality(best, opt, best_got);
  pipeline::check_reads_back(best.data(), best.size());
  return best;
}
}  // namespace

std::vector<uint8_t> compress(const void* data, DType dtype, const std::vector<uint64_t>& dims, const Options& opt) {
  if (quant::mode_quality(opt.mode)) return compress_to_quality(data, dtype, dims, opt);
  format::HeaderFields h = pipeline::header_template(dtype, dims, opt);
  if (h.n_values && !data) throw Error(ErrorCode::invalid_argument, "null input");
  if (format::has_storage_type(h)) pipeline::check_widens_exactly(data, dtype, h.n_values);
  // A storage type's values are coded as their code type's (h.dtype): widened on the GPU by the device
  // calls, here for the CPU.
  std::unique_ptr<uint8_t[]> widened;
  auto code_values = [&] {
    if (!format::has_storage_type(h)) return data;
    widened = pipeline::widen_values(data, dtype, h.n_values);
    return static_cast<const void*>(widened.get());
  };
  std::vector<uint8_t> a;
  if (resolve_backend(opt.backend, opt.codec) != Backend::gpu) a = pipeline::compress_cpu(code_values(), h);
  else if (const pipeline::GpuRoom room = pipeline::current_gpu_room();
           pipeline::gpu_one_shot_bytes(h, true) <= room.bytes)
    pipeline::compress_gpu_host(data, h, [&](size_t size) { a.resize(size); return a.data(); });
  else if (format::has_storage_type(h))  // the slabs' path takes float32 and float64 arrays; the CPU writes the same bytes
    a = pipeline::compress_cpu(code_values(), h);
  else  // larger than the GPU's free memory: in slabs
    a = pipeline::compress_host_stream(data, dtype, dims, opt, room);
  pipeline::check_reads_back(a.data(), a.size());
  if (!opt.second_stage) return a;
  a = pipeline::add_second_stage(a);
  pipeline::check_reads_back(a.data(), a.size());
  return a;
}

size_t compress(const void* data, DType dtype, const std::vector<uint64_t>& dims, const Options& opt, void* out,
                size_t out_capacity) {
  if (quant::mode_quality(opt.mode)) {
    const std::vector<uint8_t> a = compress(data, dtype, dims, opt);  // checks dims first
    if (!out || out_capacity < max_compressed_size(inspect_header(a.data(), a.size()).n_values, dtype))
      throw Error(ErrorCode::invalid_argument, "output buffer below max_compressed_size()");
    if (a.size() > out_capacity) throw Error(ErrorCode::invalid_argument, "output buffer below the archive's size");
    std::memcpy(out, a.data(), a.size());
    return a.size();
  }
  format::HeaderFields h = pipeline::header_template(dtype, dims, opt);
  if (h.n_values && !data) throw Error(ErrorCode::invalid_argument, "null input");
  if (!out || out_capacity < max_compressed_size(h.n_values, dtype))
    throw Error(ErrorCode::invalid_argument, "output buffer below max_compressed_size()");
  auto* dst = static_cast<uint8_t*>(out);
  if (!opt.second_stage && resolve_backend(opt.backend, opt.codec) == Backend::gpu) {
    const pipeline::GpuRoom room = pipeline::current_gpu_room();
    if (pipeline::gpu_one_shot_bytes(h, true) <= room.bytes) {
      if (format::has_storage_type(h)) pipeline::check_widens_exactly(data, dtype, h.n_values);
      const size_t size = pipeline::compress_gpu_host(data, h, [&](size_t) { return dst; });
      pipeline::check_reads_back(dst, size);
      return size;
    }
  }
  const std::vector<uint8_t> a = compress(data, dtype, dims, opt);  // the other paths build the archive in memory
  if (a.size() > out_capacity) throw Error(ErrorCode::invalid_argument, "output buffer below the archive's size");
  std::memcpy(dst, a.data(), a.size());
  return a.size();
}

// A quality target needs the whole array at once (it is measured, and may be coded again): the input is
// read into memory (the bytes it holds justify it), coded by compress(), and written out in one piece.
// So is a storage type's (widened in memory: compress()).
ArchiveInfo compress_stream(Source& in, DType dtype, const std::vector<uint64_t>& dims, const Options& opt, Sink& out,
                            const StreamOptions& so) {
  if (!quant::mode_quality(opt.mode) && !detail::is_storage_type(dtype))
    return pipeline::compress_slabs(in, dtype, dims, opt, out, so);
  Options plain = opt;
  if (quant::mode_quality(opt.mode)) plain.mode = BoundMode::rel;
  const format::HeaderFields h = pipeline::header_template(dtype, dims, plain);  // the dims and the rest, checked
  const uint64_t bytes = h.n_values * dtype_size(dtype);
  if (in.size() != bytes)
    fail(ErrorCode::invalid_argument, "the input has " + std::to_string(in.size()) + " bytes; the dims need " +
                                          std::to_string(bytes));
  std::vector<uint8_t> values;
  const uint8_t* data = in.data();
  if (!data) {
    values.resize(bytes);
    constexpr size_t kPiece = size_t(64) << 20;
    for (uint64_t at = 0; at < bytes; at += kPiece) in.read(at, values.data() + at, size_t(std::min<uint64_t>(kPiece, bytes - at)));
    data = values.data();
  }
  const std::vector<uint8_t> a = compress(data, dtype, dims, opt);
  out.reserve(a.size());
  out.write(0, a.data(), a.size());
  out.finish(a.size());
  if (so.progress) so.progress(bytes, bytes);
  return inspect_header(a.data(), a.size());
}

// A storage type's archive is decoded in memory (decompress() narrows the code values; the bytes it
// holds justify it); every other array slab by slab.
ArchiveInfo decompress_stream(Source& in, Sink& out, Backend backend, const StreamOptions& so, const DecodeLimits& limits) {
  uint8_t head[format::kHeaderBytes];
  const size_t got = size_t(std::min<uint64_t>(in.size(), sizeof head));
  in.read(0, head, got);
  const ArchiveInfo info = inspect_header(head, got);
  if (!detail::is_storage_type(info.dtype)) return pipeline::decompress_slabs(in, out, backend, so, limits);
  pipeline::check_limits(info, limits);
  if (in.size() != info.archive_size)
    fail(ErrorCode::corrupt_archive,
         in.size() < info.archive_size ? "corrupt archive: truncated (" + std::to_string(in.size()) + " of " +
                                             std::to_string(info.archive_size) + " bytes)"
                                       : std::string("corrupt archive: trailing bytes after the archive"));
  std::vector<uint8_t> archive(info.archive_size), values;
  constexpr size_t kPiece = size_t(64) << 20;
  for (uint64_t at = 0; at < archive.size(); at += kPiece)
    in.read(at, archive.data() + at, size_t(std::min<uint64_t>(kPiece, archive.size() - at)));
  const ArchiveInfo full = decompress(archive.data(), archive.size(), values, backend, limits);
  out.reserve(values.size());
  out.write(0, values.data(), values.size());
  out.finish(values.size());
  if (so.progress) so.progress(values.size(), values.size());
  return full;
}

namespace {
ArchiveInfo decode_code_values(const uint8_t* archive, size_t size, const ArchiveInfo& info, void* out, Backend backend);

// Decodes an archive that inspect() accepted (info) into out, which holds n_values values of its dtype:
// a storage type's decoded as its code type, then narrowed (on the GPU by the device calls).
ArchiveInfo decode_into(const uint8_t* archive, size_t size, const ArchiveInfo& info, void* out, Backend backend) {
  if (info.n_values == 0 || !detail::is_storage_type(info.dtype)) return decode_code_values(archive, size, info, out, backend);
  if (resolve_backend(backend, info.codec) == Backend::gpu) {
    if (info.second_stage) {  // the stage off as the array's type
      const std::vector<uint8_t> plain = pipeline::remove_second_stage(archive, size, info, backend);
      decode_into(plain.data(), plain.size(), inspect(plain.data(), plain.size()), out, backend);
      return info;
    }
    if (pipeline::gpu_one_shot_bytes(pipeline::header_of(info), false) <= pipeline::current_gpu_room().bytes) {
      pipeline::decompress_gpu_host(archive, info, out);
      return info;
    }
  }
  const ArchiveInfo code = pipeline::code_info(info);
  const std::unique_ptr<uint8_t[]> values = pipeline::code_buffer(info.dtype, info.n_values);
  decode_code_values(archive, size, code, values.get(), backend);
  pipeline::narrow_values(values.get(), info.dtype, info.n_values, out);
  return info;
}

// Decodes into out, which holds n_values values of info's code type (info.dtype is one; a storage type's
// archive with the stage comes here only on the CPU: decode_into takes it off on the GPU first).
ArchiveInfo decode_code_values(const uint8_t* archive, size_t size, const ArchiveInfo& info, void* out, Backend backend) {
  if (info.n_values == 0) return info;
  const bool gpu = resolve_backend(backend, info.codec) == Backend::gpu;
  if (info.second_stage && !gpu) {
    pipeline::decompress_staged_cpu(archive, info, out);  // a run of chunks at a time
  } else if (info.second_stage) {  // the stage off in batches on the GPU's lossless decoder, then the plain archive
    const std::vector<uint8_t> plain = pipeline::remove_second_stage(archive, size, info, backend);
    decode_code_values(plain.data(), plain.size(), inspect(plain.data(), plain.size()), out, backend);
  } else if (!gpu) {
    pipeline::decompress_cpu(archive, info, out);
  } else if (const pipeline::GpuRoom room = pipeline::current_gpu_room();
             pipeline::gpu_one_shot_bytes(pipeline::header_of(info), false) <= room.bytes) {
    pipeline::decompress_gpu_host(archive, info, out);
  } else if (format::has_storage_type(format::read_header(archive).f)) {
    pipeline::decompress_cpu(archive, info, out);  // the slabs' path narrows whole arrays: not for a slab of one
  } else {  // larger than the GPU's free memory: in slabs
    pipeline::decompress_host_stream(archive, size, out, info.n_values * dtype_size(info.dtype), Backend::gpu, room);
  }
  return info;
}
}  // namespace

ArchiveInfo decompress(const uint8_t* archive, size_t size, std::vector<uint8_t>& out, Backend backend,
                       const DecodeLimits& limits) {
  const ArchiveInfo info = inspect(archive, size);
  pipeline::check_limits(info, limits);
  if (info.second_stage) pipeline::check_stage_heads(archive, info);  // what the chunks declare, before sizing
  out.resize(info.n_values * dtype_size(info.dtype));
  return decode_into(archive, size, info, out.data(), backend);
}

ArchiveInfo decompress(const uint8_t* archive, size_t size, void* out, size_t out_capacity, Backend backend,
                       const DecodeLimits& limits) {
  const ArchiveInfo info = inspect(archive, size);
  pipeline::check_limits(info, limits);
  if (info.second_stage) pipeline::check_stage_heads(archive, info);  // what the chunks declare, before sizing
  const uint64_t need = info.n_values * dtype_size(info.dtype);
  if (need > out_capacity)
    throw Error(ErrorCode::invalid_argument, "output buffer of " + std::to_string(out_capacity) + " bytes; the array needs " +
                                                 std::to_string(need));
  return decode_into(archive, size, info, out, backend);
}

StageSizes stage_sizes(const uint8_t* archive, size_t size) {
  const ArchiveInfo info = pipeline::code_info(inspect(archive, size));  // the codec's view: its code type
  StageSizes z;
  z.header_and_table = info.data_offset;
  const codecs::CodecOps& codec = codecs::get(info.codec);
  // Each chunk's first bytes only (its stage header, and under the stage the beginning of its first
  // piece): memory and time do not grow with what the chunks declare.
  std::vector<uint8_t> head(codec.stage_head_bytes);
  for (uint64_t c = 0; c < info.n_chunks; ++c) {
    const ChunkEntry& e = info.chunks[c];
    const uint8_t* s = archive + e.offset;
    uint64_t plain = e.size;
    const uint8_t* h = s;
    if (info.second_stage) {
      const pipeline::StageHead sh = pipeline::read_stage_head(s, e.size, info, c);
      plain = sh.plain;
      if (codec.chunk_stages) pipeline::stage_plain_head(s, sh, head.data(), head.size());
      h = head.data();
      z.second_stage_saved += int64_t(plain) - int64_t(e.size);
    }
    if (codec.chunk_stages && !codec.chunk_stages(info, c, h, uint32_t(plain), z))
      fail(ErrorCode::corrupt_archive, "corrupt archive: chunk " + std::to_string(c) + ": malformed");
  }
  return z;
}

// The release, the format versions written (format::archive_version) and the newest one read.
const char* version_string() {
  static const std::string s = std::string("hpcz ") + HPCZ_RELEASE + " (writes format " +
                               std::to_string(format::archive_version(Codec::fast, false, BoundMode::abs)) + " in the fast mode, " +
                               std::to_string(format::archive_version(Codec::ratio, false, BoundMode::abs)) + " (" +
                               std::to_string(format::archive_version(Codec::ratio, true, BoundMode::abs)) +
                               " with the second stage) in the ratio and interp modes, 6 with the bound modes pw_rel, psnr, nrmse, abs_and_rel and "
                               "abs_or_rel, 7 for the storage types, 8 for pw_rel in the ratio and interp modes and for pw_rel "
                               "and the combined modes on the storage types; reads 1 to " +
                               std::to_string(format::kVersion) + ")";
  return s.c_str();
}

}  // namespace hpcz
