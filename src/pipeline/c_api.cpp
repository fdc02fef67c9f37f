// C API over the C++ API: exceptions become status codes.
#include "hpcz/hpcz.h"

#include <cstring>
#include <string>
#include <vector>

#include "hpcz/hpcz.hpp"

namespace {
thread_local std::string g_last_error;

template <class F> int guard(F&& f) {
  try {
    g_last_error.clear();
    return f();
  } catch (const hpcz::Error& e) {
    g_last_error = e.what();
    return int(e.code());
  } catch (const std::exception& e) {
    g_last_error = e.what();
    return HPCZ_INVALID_ARGUMENT;
  }
}
hpcz::Backend backend_of(int b) {
  return b == HPCZ_CPU ? hpcz::Backend::cpu : b == HPCZ_GPU ? hpcz::Backend::gpu : hpcz::Backend::automatic;
}
// The C request as the C++ one; throws invalid_argument for anything outside the enums.
struct Request {
  hpcz::DType dtype;
  std::vector<uint64_t> dims;
  hpcz::Options opt;
};
// The C enums' numbers are the C++ enums' (hpcz.hpp, "names"): an unknown one is refused, never
// mapped to a default.
Request request_of(int dtype, const uint64_t* dims, int ndims, const hpcz_options* opt) {
  if (!opt || !dims || ndims < 1 || ndims > 4 || opt->backend < HPCZ_AUTO || opt->backend > HPCZ_GPU)
    throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "invalid argument");
  const auto t = dtype < 0 ? std::nullopt : hpcz::dtype_of_id(unsigned(dtype));
  const auto mode = opt->mode < 0 ? std::nullopt : hpcz::bound_mode_of_id(unsigned(opt->mode));
  const auto codec = opt->codec <= 0 ? std::nullopt : hpcz::codec_of_id(unsigned(opt->codec));
  if (!t || !mode || (opt->codec != 0 && !codec)) throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "invalid argument");
  Request r{*t, std::vector<uint64_t>(dims, dims + ndims), {}};
  hpcz::Options& o = r.opt;
  o.mode = *mode;
  o.bound = opt->bound;
  // Read only for the modes that have it: a caller built against a header without the field passes a
  // struct that ends before it (and cannot ask for those modes).
  if (*mode == hpcz::BoundMode::abs_and_rel || *mode == hpcz::BoundMode::abs_or_rel) o.abs_bound = opt->abs_bound;
  if (opt->has_fill) o.fill = opt->fill;
  o.backend = backend_of(opt->backend);
  o.codec = codec.value_or(hpcz::Options{}.codec);  // 0: the default
  if (opt->radius) o.radius = opt->radius;
  o.second_stage = opt->second_stage != 0;
  return r;
}
hpcz::ArchiveInfo header_of(const void* header, size_t header_size) {
  if (!header) throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "invalid argument");
  return hpcz::inspect_header(static_cast<const uint8_t*>(header), header_size);
}
// A device batch's arrays and their common options (the item's own request for each).
std::vector<hpcz::ArrayRef> device_batch_arrays(size_t n, const void* const* d_in, const int* dtypes,
                                                const uint64_t* dims, const int* ndims, const hpcz_options* opt,
                                                hpcz::Options& o) {
  if (n && (!dtypes || !dims || !ndims)) throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "invalid argument");
  std::vector<hpcz::ArrayRef> arrays(n);
  for (size_t i = 0; i < n; ++i) {
    const Request r = request_of(dtypes[i], dims + 4 * i, ndims[i], opt);
    arrays[i] = {d_in ? d_in[i] : nullptr, r.dtype, r.dims};
    o = r.opt;
  }
  return arrays;
}
std::vector<hpcz::ArchiveInfo> device_batch_infos(size_t n, const void* headers, size_t header_size) {
  if (n && !headers) throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "invalid argument");
  std::vector<hpcz::ArchiveInfo> infos;
  for (size_t i = 0; i < n; ++i)
    infos.push_back(header_of(static_cast<const uint8_t*>(headers) + i * header_size, header_size));
  return infos;
}

}  // namespace

extern "C" {

const char* hpcz_codec_name(int codec) {
  const auto c = codec <= 0 ? std::nullopt : hpcz::codec_of_id(unsigned(codec));
  return c ? hpcz::codec_name(*c) : nullptr;
}

int hpcz_parse_codec(const char* name) {
  const auto c = name ? hpcz::parse_codec(name) : std::nullopt;
  return c ? int(*c) : 0;
}

size_t hpcz_max_compressed_size(uint64_t n, int dtype) {
  const auto t = dtype < 0 ? std::nullopt : hpcz::dtype_of_id(unsigned(dtype));
  if (!t) return 0;
  return hpcz::max_compressed_size(n, *t);
}

int hpcz_compress(const void* data, int dtype, const uint64_t* dims, int ndims, const hpcz_options* opt, void* out,
                  size_t out_capacity, size_t* out_size) {
  return guard([&] {
    if (!out_size) throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "invalid argument");
    const Request r = request_of(dtype, dims, ndims, opt);
    auto a = hpcz::compress(data, r.dtype, r.dims, r.opt);
    *out_size = a.size();
    if (a.size() > out_capacity) {
      g_last_error = "output buffer too small";
      return int(HPCZ_OUT_OF_SPACE);
    }
    std::memcpy(out, a.data(), a.size());
    return int(HPCZ_OK);
  });
}

int hpcz_inspect(const void* archive, size_t size, int* dtype, int* ndims, uint64_t* dims, uint64_t* n_values) {
  return guard([&] {
    auto info = hpcz::inspect(static_cast<const uint8_t*>(archive), size);
    if (dtype) *dtype = int(info.dtype);
    if (ndims) *ndims = int(info.dims.size());
    if (dims)
      for (size_t i = 0; i < 4; ++i) dims[i] = i < info.dims.size() ? info.dims[i] : 0;
    if (n_values) *n_values = info.n_values;
    return int(HPCZ_OK);
  });
}

int hpcz_decompress_limited(const void* archive, size_t size, void* out, size_t out_capacity, int backend,
                            uint64_t max_output) {
  return guard([&] {
    const auto* a = static_cast<const uint8_t*>(archive);
    const hpcz::ArchiveInfo head = hpcz::inspect_header(a, size);
    const uint64_t need = head.n_values * hpcz::dtype_size(head.dtype);
    if (need > out_capacity && (!max_output || need <= max_output)) {  // above the limit: refused below
      g_last_error = "output buffer too small";
      return int(HPCZ_OUT_OF_SPACE);
    }
    hpcz::decompress(a, size, out, out_capacity, backend_of(backend), hpcz::DecodeLimits{max_output});
    return int(HPCZ_OK);
  });
}

int hpcz_decompress(const void* archive, size_t size, void* out, size_t out_capacity, int backend) {
  return hpcz_decompress_limited(archive, size, out, out_capacity, backend, 0);
}

int hpcz_compress_batch(size_t n, const void* const* data, const int* dtypes, const uint64_t* dims, const int* ndims,
                        const hpcz_options* opt, void* const* outs, const size_t* out_capacities, size_t* out_sizes,
                        int* statuses) {
  return guard([&] {
    if (n && (!data || !dtypes || !dims || !ndims || !outs || !out_capacities || !out_sizes || !statuses))
      throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "invalid argument");
    std::vector<hpcz::ArrayRef> arrays(n);
    hpcz::Options o;
    std::vector<int> bad(n, 0);  // an item the request itself refuses
    for (size_t i = 0; i < n; ++i) {
      try {
        const Request r = request_of(dtypes[i], dims + 4 * i, ndims[i], opt);
        arrays[i] = {data[i], r.dtype, r.dims};
        o = r.opt;
      } catch (const hpcz::Error&) {
        bad[i] = HPCZ_INVALID_ARGUMENT;
        arrays[i] = {nullptr, hpcz::DType::f32, {}};  // refused by compress_batch too (rank 0)
      }
    }
    std::vector<uint8_t> overflow;  // archives larger than their buffer land here (place() is serial)
    std::vector<hpcz::ItemStatus> st = hpcz::compress_batch(arrays, o, [&](size_t i, size_t size) {
      out_sizes[i] = size;
      if (size <= out_capacities[i]) return static_cast<uint8_t*>(outs[i]);
      overflow.resize(size);
      return overflow.data();
    });
    int first = HPCZ_OK;
    for (size_t i = 0; i < n; ++i) {
      int code = bad[i] ? bad[i] : st[i].code;
      std::string msg = bad[i] ? std::string("invalid argument") : st[i].message;
      if (code == HPCZ_OK && out_sizes[i] > out_capacities[i]) code = HPCZ_OUT_OF_SPACE, msg = "output buffer too small";
      if (code != HPCZ_OK) out_sizes[i] = code == HPCZ_OUT_OF_SPACE ? out_sizes[i] : 0;
      statuses[i] = code;
      if (code != HPCZ_OK && first == HPCZ_OK) {
        first = code;
        g_last_error = "item " + std::to_string(i) + ": " + msg;
      }
    }
    return first;
  });
}

int hpcz_decompress_batch(size_t n, const void* const* archives, const size_t* sizes, void* const* outs,
                          const size_t* out_capacities, int backend, int* statuses) {
  return guard([&] {
    if (n && (!archives || !sizes || !outs || !out_capacities || !statuses))
      throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "invalid argument");
    std::vector<hpcz::ArchiveRef> in(n);
    std::vector<hpcz::OutputRef> out(n);
    for (size_t i = 0; i < n; ++i) {
      in[i] = {static_cast<const uint8_t*>(archives[i]), sizes[i]};
      out[i] = {outs[i], out_capacities[i]};
    }
    const std::vector<hpcz::ItemStatus> st = hpcz::decompress_batch(in, out, backend_of(backend));
    int first = HPCZ_OK;
    for (size_t i = 0; i < n; ++i) {
      statuses[i] = st[i].code;
      if (st[i].code != HPCZ_OK && first == HPCZ_OK) {
        first = st[i].code;
        g_last_error = "item " + std::to_string(i) + ": " + st[i].message;
      }
    }
    return first;
  });
}

int hpcz_compress_device_workspace_size(int dtype, const uint64_t* dims, int ndims, const hpcz_options* opt,
                                        size_t* workspace_size) {
  return guard([&] {
    if (!workspace_size) throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "invalid argument");
    const Request r = request_of(dtype, dims, ndims, opt);
    *workspace_size = hpcz::compress_device_workspace_size(r.dtype, r.dims, r.opt);
    return int(HPCZ_OK);
  });
}

int hpcz_compress_device(const void* d_in, int dtype, const uint64_t* dims, int ndims, const hpcz_options* opt,
                         void* d_out, size_t out_capacity, uint64_t* d_size, void* d_workspace, size_t workspace_size,
                         void* stream) {
  return guard([&] {
    const Request r = request_of(dtype, dims, ndims, opt);
    hpcz::compress_device(d_in, r.dtype, r.dims, r.opt, d_out, out_capacity, d_size, d_workspace, workspace_size,
                          stream);
    return int(HPCZ_OK);
  });
}

int hpcz_decompress_device_workspace_size(const void* header, size_t header_size, size_t* workspace_size) {
  return guard([&] {
    if (!workspace_size) throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "invalid argument");
    *workspace_size = hpcz::decompress_device_workspace_size(header_of(header, header_size));
    return int(HPCZ_OK);
  });
}

int hpcz_decompress_device(const void* header, size_t header_size, const void* d_archive, void* d_out,
                           uint32_t* d_status, void* d_workspace, size_t workspace_size, void* stream) {
  return guard([&] {
    hpcz::decompress_device(header_of(header, header_size), d_archive, d_out, d_status, d_workspace, workspace_size,
                            stream);
    return int(HPCZ_OK);
  });
}


int hpcz_compress_device_batch_workspace_size(size_t n, const int* dtypes, const uint64_t* dims, const int* ndims,
                                              const hpcz_options* opt, size_t* workspace_size) {
  return guard([&] {
    if (!workspace_size) throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "invalid argument");
    hpcz::Options o;
    *workspace_size = hpcz::compress_device_batch_workspace_size(device_batch_arrays(n, nullptr, dtypes, dims, ndims, opt, o), o);
    return int(HPCZ_OK);
  });
}

int hpcz_compress_device_batch(size_t n, const void* const* d_in, const int* dtypes, const uint64_t* dims,
                               const int* ndims, const hpcz_options* opt, void* const* d_outs,
                               const size_t* out_capacities, uint64_t* d_sizes, void* d_workspace,
                               size_t workspace_size, void* stream) {
  return guard([&] {
    if (n && (!d_in || !d_outs || !out_capacities || !d_sizes))
      throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "invalid argument");
    hpcz::Options o;
    const auto arrays = device_batch_arrays(n, d_in, dtypes, dims, ndims, opt, o);
    hpcz::compress_device_batch(arrays, o, d_outs, out_capacities, d_sizes, d_workspace, workspace_size, stream);
    return int(HPCZ_OK);
  });
}

int hpcz_read_device_headers_workspace_size(size_t n, size_t* workspace_size) {
  return guard([&] {
    if (!workspace_size) throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "invalid argument");
    *workspace_size = hpcz::read_device_headers_workspace_size(n);
    return int(HPCZ_OK);
  });
}

int hpcz_read_device_headers(const void* const* d_archives, const size_t* sizes, size_t n, void* h_headers,
                             void* d_workspace, size_t workspace_size, void* stream) {
  return guard([&] {
    if (n && (!d_archives || !sizes || !h_headers)) throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "invalid argument");
    hpcz::read_device_headers(d_archives, sizes, n, static_cast<uint8_t*>(h_headers), d_workspace, workspace_size, stream);
    return int(HPCZ_OK);
  });
}

int hpcz_decompress_device_batch_workspace_size(size_t n, const void* headers, size_t header_size,
                                                size_t* workspace_size) {
  return guard([&] {
    if (!workspace_size) throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "invalid argument");
    *workspace_size = hpcz::decompress_device_batch_workspace_size(device_batch_infos(n, headers, header_size));
    return int(HPCZ_OK);
  });
}

int hpcz_decompress_device_batch(size_t n, const void* headers, size_t header_size, const void* const* d_archives,
                                 void* const* d_outs, uint32_t* d_status, void* d_workspace, size_t workspace_size,
                                 void* stream) {
  return guard([&] {
    if (n && (!d_archives || !d_outs || !d_status)) throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "invalid argument");
    hpcz::decompress_device_batch(device_batch_infos(n, headers, header_size), d_archives, d_outs, d_status, d_workspace,
                                  workspace_size, stream);
    return int(HPCZ_OK);
  });
}

const char* hpcz_last_error(void) { return g_last_error.c_str(); }
const char* hpcz_version(void) { return hpcz::version_string(); }
}
