// Convenience API: validate, pick a backend, run it.
#include <cstring>
#include <cmath>
#include <string>

#include "common/dtype.hpp"
#include "pipeline/internal.hpp"

namespace hpcz {

namespace pipeline {

format::HeaderFields header_template(DType dtype, const std::vector<uint64_t>& dims, const Options& opt) {
  // The fill value must be a value of the array's type; an unknown dtype is refused by its number.
  const bool fill_exact = detail::dispatch_dtype(dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    return !opt.fill || !std::isfinite(*opt.fill) || double(T(*opt.fill)) == *opt.fill;
  });
  if (dims.empty() || dims.size() > 4) fail(ErrorCode::invalid_argument, "rank must be 1 to 4");
  if (!(opt.bound >= 0) || !std::isfinite(opt.bound))
    fail(ErrorCode::invalid_argument, "error bound must be a finite number >= 0");
  if (opt.mode != BoundMode::abs && opt.mode != BoundMode::rel) fail(ErrorCode::invalid_argument, "bound mode");
  const codecs::CodecOps& codec = codecs::get(opt.codec);
  if (opt.fill && !std::isfinite(*opt.fill)) fail(ErrorCode::invalid_argument, "fill value must be finite");
  if (!fill_exact)
    fail(ErrorCode::invalid_argument, std::string("fill value is not representable as ") + dtype_short_name(dtype));
  format::HeaderFields h{};
  h.dtype = dtype;
  h.ndims = uint8_t(dims.size());
  h.mode = opt.mode;
  h.codec = opt.codec;
  h.flags = opt.fill ? format::kFlagFill : 0;
  uint64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != 0 && n > (uint64_t(1) << 60) / dims[i]) fail(ErrorCode::invalid_argument, "array too large");
    n *= dims[i];
    h.dims[i] = dims[i];
  }
  h.n_values = n;
  h.bound = opt.bound;
  h.fill = opt.fill ? *opt.fill : 0.0;
  h.codec_params = codec.codec_params;
  codec.plan(h, opt);
  return h;
}

}  // namespace pipeline

Backend resolve_backend(Backend b) {
  if (b == Backend::cpu) return b;
  if (b == Backend::gpu) {
    if (!gpu_available()) pipeline::fail_no_gpu();
    return b;
  }
  return gpu_available() ? Backend::gpu : Backend::cpu;
}

Backend resolve_backend(Backend b, Codec codec) {
  const codecs::CodecOps* c = codecs::find(codec);
  if (b == Backend::automatic && c && !c->device) return Backend::cpu;
  return resolve_backend(b);
}

namespace pipeline {
void check_reads_back(const uint8_t* a, size_t size) {
  try {
    parse_archive(a, size, true);
  } catch (const Error& e) {
    fail(ErrorCode::internal, std::string("internal error: the archive written does not read back (") + e.what() + ")");
  }
}
}  // namespace pipeline

std::vector<uint8_t> compress(const void* data, DType dtype, const std::vector<uint64_t>& dims, const Options& opt) {
  format::HeaderFields h = pipeline::header_template(dtype, dims, opt);
  if (h.n_values && !data) throw Error(ErrorCode::invalid_argument, "null input");
  std::vector<uint8_t> a;
  if (resolve_backend(opt.backend, opt.codec) != Backend::gpu) a = pipeline::compress_cpu(data, h);
  else if (const pipeline::GpuRoom room = pipeline::current_gpu_room();
           pipeline::gpu_one_shot_bytes(h, true) <= room.bytes)
    pipeline::compress_gpu_host(data, h, [&](size_t size) { a.resize(size); return a.data(); });
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
  format::HeaderFields h = pipeline::header_template(dtype, dims, opt);
  if (h.n_values && !data) throw Error(ErrorCode::invalid_argument, "null input");
  if (!out || out_capacity < max_compressed_size(h.n_values, dtype))
    throw Error(ErrorCode::invalid_argument, "output buffer below max_compressed_size()");
  auto* dst = static_cast<uint8_t*>(out);
  if (!opt.second_stage && resolve_backend(opt.backend, opt.codec) == Backend::gpu) {
    const pipeline::GpuRoom room = pipeline::current_gpu_room();
    if (pipeline::gpu_one_shot_bytes(h, true) <= room.bytes) {
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

namespace pipeline {
void check_limits(const ArchiveInfo& info, const DecodeLimits& limits) {
  const uint64_t need = info.n_values * dtype_size(info.dtype);
  if (limits.max_output && need > limits.max_output)
    fail(ErrorCode::invalid_argument, "the archive's array is " + std::to_string(need) +
                                          " bytes, above the max_output limit of " + std::to_string(limits.max_output));
}
}  // namespace pipeline

namespace {
// Decodes an archive that inspect() accepted (info) into out, which holds n_values values.
ArchiveInfo decode_into(const uint8_t* archive, size_t size, const ArchiveInfo& info, void* out, Backend backend) {
  if (info.n_values == 0) return info;
  const bool gpu = resolve_backend(backend, info.codec) == Backend::gpu;
  if (info.second_stage && !gpu) {
    pipeline::decompress_staged_cpu(archive, info, out);  // a run of chunks at a time
  } else if (info.second_stage) {  // the stage off in batches on the GPU's lossless decoder, then the plain archive
    const std::vector<uint8_t> plain = pipeline::remove_second_stage(archive, size, info, backend);
    decode_into(plain.data(), plain.size(), inspect(plain.data(), plain.size()), out, backend);
  } else if (!gpu) {
    pipeline::decompress_cpu(archive, info, out);
  } else if (const pipeline::GpuRoom room = pipeline::current_gpu_room();
             pipeline::gpu_one_shot_bytes(pipeline::header_of(info), false) <= room.bytes) {
    pipeline::decompress_gpu_host(archive, info, out);
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

// The release, the format versions written (format::archive_version) and the newest one read.
const char* version_string() {
  static const std::string s = std::string("hpcz ") + HPCZ_RELEASE + " (writes format " +
                               std::to_string(format::archive_version(Codec::fast, false)) + " in the fast mode, " +
                               std::to_string(format::archive_version(Codec::ratio, false)) + " (" +
                               std::to_string(format::archive_version(Codec::ratio, true)) +
                               " with the second stage) in the ratio and interp modes; reads 1 to " +
                               std::to_string(format::kVersion) + ")";
  return s.c_str();
}

}  // namespace hpcz
