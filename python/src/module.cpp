// hpcz._hpcz: the C++ host API for Python. Arrays arrive checked by hpcz/__init__.py (dtype, rank,
// C order); this layer only moves pointers, releases the GIL while coding and maps hpcz::Error to the
// hpcz.Error subclass of its code.
#include "module.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>

#include "hpcz/hpcz.hpp"
#ifdef HPCZ_HAS_CUDA
#include <cuda_runtime.h>
#endif

namespace nb = nanobind;

namespace hpcz_python {

hpcz::Codec codec_of(const std::string& mode) {
  if (const auto c = hpcz::parse_codec(mode)) return *c;
  throw hpcz::Error(hpcz::ErrorCode::invalid_argument,
                    "mode must be " + hpcz::names_list(hpcz::codec_names()) + ", not '" + mode + "'");
}

hpcz::BoundMode bound_mode_of(const std::string& kind) {
  if (const auto m = hpcz::parse_bound_mode(kind)) return *m;
  throw hpcz::Error(hpcz::ErrorCode::invalid_argument,
                    "the bound kind must be " + hpcz::names_list(hpcz::bound_mode_names()) + ", not '" + kind + "'");
}

// The vocabulary (hpcz.hpp, "names") for the Python side: {name: number}, by number.
template <class Enum>
nb::dict names_of(const std::vector<std::string>& names, std::optional<Enum> (*parse)(std::string_view)) {
  nb::dict d;
  for (const std::string& n : names) d[n.c_str()] = int(*parse(n));
  return d;
}

hpcz::DType dtype_of(int bits) {
  if (bits == 32) return hpcz::DType::f32;
  if (bits == 64) return hpcz::DType::f64;
  throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "values must be float32 or float64");
}
// A device array's type for the one-array device calls: 32 or 64 (float32, float64: the bits, as the
// batches take them), or the number of a storage type (hpcz.hpp's DType, _hpcz.dtypes()).
hpcz::DType device_dtype_of(int code) {
  if (code == 32 || code == 64) return dtype_of(code);
  for (const std::string& n : hpcz::dtype_names())
    if (const auto t = hpcz::parse_dtype(n); t && int(*t) == code) return *t;
  throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "unknown device dtype " + std::to_string(code));
}

// A host array's dtype: its name from hpcz/__init__.py (float16, bfloat16 as uint16 bits, the integers),
// checked against the buffer's size; "" for a float32 or float64 array, read from the buffer itself.
hpcz::DType host_dtype_of(const ReadValues& a, const std::string& name) {
  if (name.empty()) {
    if (a.dtype().code != uint8_t(nb::dlpack::dtype_code::Float))
      throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "values must be float32 or float64");
    return dtype_of(a.dtype().bits);
  }
  const auto t = hpcz::parse_dtype(name);
  if (!t) throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "unknown dtype '" + name + "'");
  if (size_t(a.dtype().bits) != 8 * hpcz::dtype_size(*t))
    throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "values of " + std::to_string(a.dtype().bits) + " bits for " + name);
  return *t;
}

hpcz::Backend backend_of(const std::string& device) {
  if (device == "auto") return hpcz::Backend::automatic;
  if (device == "cpu") return hpcz::Backend::cpu;
  if (device == "gpu") return hpcz::Backend::gpu;
  throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "device must be 'auto', 'cpu' or 'gpu', not '" + device + "'");
}

// A bytes object of the archive. The copy (and the first touch of the new object's pages) is a
// single thread's memcpy of up to a fifth of the input: done from every core, without the GIL.
nb::bytes to_bytes(const std::vector<uint8_t>& v) {
  PyObject* b = PyBytes_FromStringAndSize(nullptr, Py_ssize_t(v.size()));
  if (!b) throw nb::python_error();
  char* dst = PyBytes_AS_STRING(b);
  {
    nb::gil_scoped_release unlocked;
    constexpr int64_t piece = int64_t(4) << 20;
    const int64_t n = int64_t(v.size()), pieces = (n + piece - 1) / piece;
#pragma omp parallel for schedule(static) if (pieces > 1)
    for (int64_t k = 0; k < pieces; ++k)
      std::memcpy(dst + k * piece, v.data() + k * piece, size_t(std::min(piece, n - k * piece)));
  }
  return nb::steal<nb::bytes>(b);
}

// The Python call's words as Options. abs_bound: the absolute bound of abs_and_rel and abs_or_rel (bound
// is then the rel factor); unused by abs and rel.
hpcz::Options host_options(const std::string& mode, const std::string& bound_kind, double bound, bool lossless,
                           std::optional<double> fill, const std::string& device, double abs_bound) {
  hpcz::Options o;
  o.codec = codec_of(mode);
  o.mode = bound_mode_of(bound_kind);
  o.bound = bound;
  o.abs_bound = abs_bound;
  o.second_stage = lossless;
  o.fill = fill;
  o.backend = backend_of(device);
  return o;
}

nb::bytes compress(ReadValues a, const std::string& mode, const std::string& bound_kind, double bound, bool lossless,
                   std::optional<double> fill, const std::string& device, double abs_bound, const std::string& dtype_name) {
  const hpcz::Options o = host_options(mode, bound_kind, bound, lossless, fill, device, abs_bound);
  const hpcz::DType dtype = host_dtype_of(a, dtype_name);
  std::vector<uint64_t> dims(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) dims[i] = uint64_t(a.shape(i));
  if (!lossless && hpcz::resolve_backend(o.backend, o.codec, o.mode) == hpcz::Backend::gpu) {
    // The GPU path copies the archive from the device straight into the bytes object, which is then
    // cut to size (a realloc that shrinks in place).
    uint64_t n = 1;
    for (uint64_t d : dims) n *= d;
    const size_t cap = hpcz::max_compressed_size(n, dtype);
    nb::object holder = nb::steal(PyBytes_FromStringAndSize(nullptr, Py_ssize_t(cap)));
    if (!holder.is_valid()) throw nb::python_error();
    char* dst = PyBytes_AS_STRING(holder.ptr());
    size_t size;
    {
      nb::gil_scoped_release unlocked;
      size = hpcz::compress(a.data(), dtype, dims, o, dst, cap);
    }
    PyObject* raw = holder.release().ptr();
    if (_PyBytes_Resize(&raw, Py_ssize_t(size)) < 0) throw nb::python_error();
    return nb::steal<nb::bytes>(raw);
  }
  std::vector<uint8_t> out;
  {
    nb::gil_scoped_release unlocked;
    out = hpcz::compress(a.data(), dtype, dims, o);
  }
  return to_bytes(out);
}

// Decodes into out (a writable C-order array of the archive's size), as decompress() fills a buffer.
void decompress_into(Bytes archive, Values out, const std::string& device, uint64_t max_output) {
  const hpcz::Backend backend = backend_of(device);
  const uint8_t* a = archive.data();
  const size_t size = archive.size();
  void* dst = out.data();
  const size_t capacity = out.nbytes();
  nb::gil_scoped_release unlocked;
  hpcz::decompress(a, size, dst, capacity, backend, hpcz::DecodeLimits{max_output});
}

// Each item's outcome as (code, message); code 0 for success.
nb::list statuses_of(const std::vector<hpcz::ItemStatus>& st) {
  nb::list out;
  for (const auto& s : st) out.append(nb::make_tuple(s.code, s.message));
  return out;
}

// (archives, statuses): archive i a bytes object (None where item i failed). The bytes objects are made
// as the batch places each archive (under the GIL, one at a time) and filled without it.
nb::tuple compress_batch(nb::list values, const std::string& mode, const std::string& bound_kind, double bound,
                         bool lossless, std::optional<double> fill, const std::string& device, double abs_bound,
                         const std::vector<std::string>& dtype_names) {
  const hpcz::Options o = host_options(mode, bound_kind, bound, lossless, fill, device, abs_bound);
  const size_t n = nb::len(values);
  std::vector<ReadValues> held;  // keeps each array's buffer for the call
  held.reserve(n);
  std::vector<hpcz::ArrayRef> arrays(n);
  for (size_t i = 0; i < n; ++i) {
    held.push_back(nb::cast<ReadValues>(values[i]));
    const ReadValues& a = held.back();
    arrays[i].data = a.data();
    arrays[i].dtype = host_dtype_of(a, i < dtype_names.size() ? dtype_names[i] : std::string());
    arrays[i].dims.resize(a.ndim());
    for (size_t d = 0; d < a.ndim(); ++d) arrays[i].dims[d] = uint64_t(a.shape(d));
  }
  nb::list blobs;
  for (size_t i = 0; i < n; ++i) blobs.append(nb::none());
  std::vector<hpcz::ItemStatus> st;
  {
    nb::gil_scoped_release unlocked;
    st = hpcz::compress_batch(arrays, o, [&](size_t i, size_t size) -> uint8_t* {
      nb::gil_scoped_acquire held_gil;
      PyObject* b = PyBytes_FromStringAndSize(nullptr, Py_ssize_t(size));
      if (!b) {
        PyErr_Clear();
        throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "out of memory for an archive of " + std::to_string(size) + " bytes");
      }
      blobs[i] = nb::steal(b);
      return reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(b));
    });
  }
  return nb::make_tuple(blobs, statuses_of(st));
}

// Decodes archives[i] into outs[i] (writable C-order arrays, sized by the caller from each header).
nb::list decompress_batch_into(nb::list archives, nb::list outs, const std::string& device) {
  const hpcz::Backend backend = backend_of(device);
  const size_t n = nb::len(archives);
  if (nb::len(outs) != n) throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "one out per archive");
  std::vector<Bytes> held_a;
  std::vector<Values> held_o;
  held_a.reserve(n);
  held_o.reserve(n);
  std::vector<hpcz::ArchiveRef> in(n);
  std::vector<hpcz::OutputRef> out(n);
  for (size_t i = 0; i < n; ++i) {
    held_a.push_back(nb::cast<Bytes>(archives[i]));
    held_o.push_back(nb::cast<Values>(outs[i]));
    in[i] = {held_a.back().data(), held_a.back().size()};
    out[i] = {held_o.back().data(), held_o.back().nbytes()};
  }
  std::vector<hpcz::ItemStatus> st;
  {
    nb::gil_scoped_release unlocked;
    st = hpcz::decompress_batch(in, out, backend);
  }
  return statuses_of(st);
}

// The header as a dict. detail (hpcz.info with verify): also the chunk table and, for the ratio-class
// codecs, the stage sizes, as `hpcz info --json` prints them.
nb::dict info(Bytes archive, bool verify, bool detail) {
  hpcz::ArchiveInfo i;
  hpcz::StageSizes z{};
  detail = detail && verify;
  {
    nb::gil_scoped_release unlocked;
    i = verify ? hpcz::inspect(archive.data(), archive.size()) : hpcz::inspect_header(archive.data(), archive.size());
    if (detail && i.codec != hpcz::Codec::fast) z = hpcz::stage_sizes(archive.data(), archive.size());
  }
  nb::dict d;
  d["version"] = i.version;
  d["dtype"] = hpcz::dtype_name(i.dtype);
  nb::list shape;
  for (uint64_t x : i.dims) shape.append(x);
  d["shape"] = nb::tuple(shape);
  d["mode"] = hpcz::codec_name(i.codec);
  d["bound_kind"] = hpcz::bound_mode_name(i.mode);
  d["bound"] = i.bound;
  d["eb_abs"] = i.eb_abs;
  // The psnr and nrmse modes: the PSNR achieved (dB, rounded down to 0.01; inf where every value is exact,
  // which `hpcz info --json` writes as null). Absent in the other modes, as in the CLI's JSON.
  if (i.psnr_achieved) d["psnr_achieved"] = *i.psnr_achieved;
  d["range"] = i.range_valid ? nb::object(nb::make_tuple(i.range_min, i.range_max)) : nb::none();
  d["fill"] = i.fill ? nb::object(nb::float_(*i.fill)) : nb::none();
  d["step"] = i.step;
  d["lossless"] = i.second_stage;
  d["n_values"] = i.n_values;
  d["n_chunks"] = i.n_chunks;
  d["chunk_values"] = i.chunk_values;
  d["archive_size"] = i.archive_size;
  // `hpcz info --json`'s names for the same fields (README, "Archive info keys"), and what it prints
  // besides; its dtype stays "f32", this one "float32".
  d["format_version"] = i.version;
  d["dims"] = shape;
  d["codec"] = hpcz::codec_name(i.codec);
  d["bound_mode"] = hpcz::bound_mode_name(i.mode);
  d["second_stage"] = i.second_stage;
  d["archive_bytes"] = i.archive_size;
  d["block_values"] = i.block_values;
  d["compression_ratio"] = double(i.n_values * hpcz::dtype_size(i.dtype)) / double(i.archive_size);
  if (detail) {
    if (i.codec != hpcz::Codec::fast) {
      nb::dict st;
      st["header_and_table"] = z.header_and_table;
      st["codebook"] = z.codebook;
      st["gap_metadata"] = z.gap_metadata;
      st["codes"] = z.codes;
      st["outliers"] = z.outliers;
      st["exceptions"] = z.exceptions;
      st["raw_chunks"] = z.raw_chunks;
      st["second_stage_saved"] = z.second_stage_saved;
      d["stages"] = st;
    }
    nb::list chunks;
    for (const hpcz::ChunkEntry& c : i.chunks) {
      nb::dict e;
      e["offset"] = c.offset;
      e["size"] = c.size;
      e["checksum"] = c.checksum;
      chunks.append(e);
    }
    d["chunks"] = chunks;
  }
  return d;
}

hpcz::Options options_of(const std::string& mode, const std::string& bound_kind, double bound,
                        std::optional<double> fill, double abs_bound) {
  return host_options(mode, bound_kind, bound, false, fill, "gpu", abs_bound);
}

// Device arrays: hpcz/__init__.py reads their pointers (__cuda_array_interface__) and allocates the
// output and workspace on the array's device with cupy (or torch); these only enqueue on `stream`.
// This module's CUDA runtime keeps its own current device per thread (cupy's is another library):
// set it to the array's before enqueueing.
void use_device(int device) {
#ifdef HPCZ_HAS_CUDA
  if (cudaSetDevice(device) != cudaSuccess)
    throw hpcz::Error(hpcz::ErrorCode::cuda, "cudaSetDevice(" + std::to_string(device) + ") failed");
#else
  (void)device;
  throw hpcz::Error(hpcz::ErrorCode::backend_unavailable, "this build of hpcz has no CUDA");
#endif
}

size_t compress_device_workspace(int dtype, const std::vector<uint64_t>& dims, const std::string& mode,
                                 const std::string& bound_kind, double bound, std::optional<double> fill,
                                 double abs_bound) {
  return hpcz::compress_device_workspace_size(device_dtype_of(dtype), dims,
                                              options_of(mode, bound_kind, bound, fill, abs_bound));
}

void compress_device(uintptr_t in, int dtype, const std::vector<uint64_t>& dims, const std::string& mode,
                     const std::string& bound_kind, double bound, std::optional<double> fill, uintptr_t out,
                     size_t out_capacity, uintptr_t size, uintptr_t workspace, size_t workspace_size, uintptr_t stream,
                     double abs_bound) {
  const hpcz::Options o = options_of(mode, bound_kind, bound, fill, abs_bound);
  nb::gil_scoped_release unlocked;
  hpcz::compress_device(reinterpret_cast<const void*>(in), device_dtype_of(dtype), dims, o, reinterpret_cast<void*>(out),
                        out_capacity, reinterpret_cast<uint64_t*>(size), reinterpret_cast<void*>(workspace),
                        workspace_size, reinterpret_cast<void*>(stream));
}

// A device batch: values at ptrs[i] (dtypes[i] as device_dtype_of takes them, dims[i]), archives to
// outs[i] (caps[i] bytes), sizes to the device u64 array at `sizes`.
std::vector<hpcz::ArrayRef> device_arrays(const std::vector<uintptr_t>& ptrs, const std::vector<int>& dtypes,
                                          const std::vector<std::vector<uint64_t>>& dims) {
  if (dtypes.size() != ptrs.size() || dims.size() != ptrs.size())
    throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "a batch's pointers, dtypes and shapes differ in number");
  std::vector<hpcz::ArrayRef> arrays(ptrs.size());
  for (size_t i = 0; i < ptrs.size(); ++i)
    arrays[i] = {reinterpret_cast<const void*>(ptrs[i]), device_dtype_of(dtypes[i]), dims[i]};
  return arrays;
}

size_t compress_device_batch_workspace(const std::vector<int>& dtypes, const std::vector<std::vector<uint64_t>>& dims,
                                       const std::string& mode, const std::string& bound_kind, double bound,
                                       std::optional<double> fill, double abs_bound) {
  return hpcz::compress_device_batch_workspace_size(device_arrays(std::vector<uintptr_t>(dtypes.size()), dtypes, dims),
                                                    options_of(mode, bound_kind, bound, fill, abs_bound));
}

void compress_device_batch(const std::vector<uintptr_t>& ptrs, const std::vector<int>& dtypes,
                           const std::vector<std::vector<uint64_t>>& dims, const std::string& mode,
                           const std::string& bound_kind, double bound, std::optional<double> fill,
                           const std::vector<uintptr_t>& outs, const std::vector<size_t>& caps, uintptr_t sizes,
                           uintptr_t workspace, size_t workspace_size, uintptr_t stream, double abs_bound) {
  const std::vector<hpcz::ArrayRef> arrays = device_arrays(ptrs, dtypes, dims);
  if (outs.size() != ptrs.size() || caps.size() != ptrs.size())
    throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "a batch's arrays and outputs differ in number");
  const hpcz::Options o = options_of(mode, bound_kind, bound, fill, abs_bound);
  std::vector<void*> out_ptrs(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) out_ptrs[i] = reinterpret_cast<void*>(outs[i]);
  nb::gil_scoped_release unlocked;
  hpcz::compress_device_batch(arrays, o, out_ptrs.data(), caps.data(), reinterpret_cast<uint64_t*>(sizes),
                              reinterpret_cast<void*>(workspace), workspace_size, reinterpret_cast<void*>(stream));
}

// The first header_size() bytes of each device archive (fewer for a shorter one, zeros after), one
// copy each into pinned memory and one wait: a device batch's headers for the host to read.
size_t device_headers_workspace(size_t n) { return hpcz::read_device_headers_workspace_size(n); }

// The first kHeaderSize bytes of each device archive (hpcz::read_device_headers: one gather, one wait).
std::string read_headers(const std::vector<uintptr_t>& archives, const std::vector<size_t>& sizes, uintptr_t workspace,
                         size_t workspace_size, uintptr_t stream) {
  if (sizes.size() != archives.size())
    throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "a batch's archives and sizes differ in number");
  std::string bytes(archives.size() * hpcz::kHeaderSize, '\0');
  std::vector<const void*> a(archives.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = reinterpret_cast<const void*>(archives[i]);
  nb::gil_scoped_release unlocked;
  hpcz::read_device_headers(a.data(), sizes.data(), a.size(), reinterpret_cast<uint8_t*>(bytes.data()),
                            reinterpret_cast<void*>(workspace), workspace_size, reinterpret_cast<void*>(stream));
  return bytes;
}

nb::bytes device_headers(const std::vector<uintptr_t>& archives, const std::vector<size_t>& sizes, uintptr_t workspace,
                         size_t workspace_size, uintptr_t stream) {
  const std::string bytes = read_headers(archives, sizes, workspace, workspace_size, stream);
  return nb::bytes(bytes.data(), bytes.size());
}

hpcz::ArchiveInfo device_archive_info(const uint8_t* header, size_t available, size_t archive_size) {
  const hpcz::ArchiveInfo info = hpcz::inspect_header(header, available);
  if (archive_size != info.archive_size)
    throw hpcz::Error(hpcz::ErrorCode::corrupt_archive, "archive of " + std::to_string(archive_size) +
                                                            " bytes; its header says " + std::to_string(info.archive_size));
  if (info.second_stage)
    throw hpcz::Error(hpcz::ErrorCode::invalid_argument,
                      "an archive with the lossless stage decodes on the host (hpcz.decompress of its bytes)");
  return info;
}

std::string decode_status_message(uint32_t status) {
  static const std::pair<uint32_t, const char*> kWords[] = {
      {1, "chunk checksum mismatch"}, {2, "malformed chunk or chunk table entry"}, {4, "chunk table checksum mismatch"}};
  std::string s = "corrupt archive: ";
  bool first = true;
  for (const auto& [bit, word] : kWords)
    if (status & bit) {
      s += first ? "" : "; ";
      s += word;
      first = false;
    }
  if (first) s += "status " + std::to_string(status);
  return s;
}

// A device batch's archives read and checked in one call: their headers (the bytes, for
// decompress_device_batch_packed), and for archive i (0, "", dtype name, shape) where it decodes on the
// device, else (error code, message, None, None). What _device.decompress_batch did item by item.
nb::tuple device_batch_heads(const std::vector<uintptr_t>& archives, const std::vector<size_t>& sizes, uintptr_t workspace,
                             size_t workspace_size, uintptr_t stream) {
  const std::string bytes = read_headers(archives, sizes, workspace, workspace_size, stream);
  const size_t hs = hpcz::kHeaderSize;
  nb::list items;
  for (size_t i = 0; i < archives.size(); ++i) {
    try {
      const hpcz::ArchiveInfo info =
          device_archive_info(reinterpret_cast<const uint8_t*>(bytes.data()) + i * hs, std::min(hs, sizes[i]), sizes[i]);
      nb::list shape;
      for (uint64_t x : info.dims) shape.append(x);
      // The last element: whether the archive decodes on the CPU only (a codec and mode without a GPU
      // implementation; none now).
      const bool cpu_only = hpcz::resolve_backend(hpcz::Backend::automatic, info.codec, info.mode) != hpcz::Backend::gpu;
      items.append(nb::make_tuple(0, "", hpcz::dtype_name(info.dtype), nb::tuple(shape), cpu_only));
    } catch (const hpcz::Error& e) {
      items.append(nb::make_tuple(int(e.code()), e.what(), nb::none(), nb::none(), false));
    }
  }
  return nb::make_tuple(nb::bytes(bytes.data(), bytes.size()), items);
}

// The archives `which` of headers read by device_batch_heads (all of them valid there).
std::vector<hpcz::ArchiveInfo> packed_infos(const nb::bytes& heads, const std::vector<size_t>& which) {
  const size_t hs = hpcz::kHeaderSize;
  std::vector<hpcz::ArchiveInfo> infos;
  infos.reserve(which.size());
  for (size_t k : which) {
    if ((k + 1) * hs > heads.size()) throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "a header index past the headers");
    infos.push_back(hpcz::inspect_header(static_cast<const uint8_t*>(heads.data()) + k * hs, hs));
  }
  return infos;
}

size_t decompress_device_batch_workspace_packed(const nb::bytes& heads, const std::vector<size_t>& which) {
  return hpcz::decompress_device_batch_workspace_size(packed_infos(heads, which));
}

void decompress_device_batch_packed(const nb::bytes& heads, const std::vector<size_t>& which,
                                    const std::vector<uintptr_t>& archives, const std::vector<uintptr_t>& outs,
                                    uintptr_t status, uintptr_t workspace, size_t workspace_size, uintptr_t stream) {
  if (archives.size() != which.size() || outs.size() != which.size())
    throw hpcz::Error(hpcz::ErrorCode::invalid_argument, "a batch's headers, archives and outputs differ in number");
  const std::vector<hpcz::ArchiveInfo> infos = packed_infos(heads, which);
  std::vector<const void*> a(archives.size());
  std::vector<void*> o(outs.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = reinterpret_cast<const void*>(archives[i]);
    o[i] = reinterpret_cast<void*>(outs[i]);
  }
  nb::gil_scoped_release unlocked;
  hpcz::decompress_device_batch(infos, a.data(), o.data(), reinterpret_cast<uint32_t*>(status),
                                reinterpret_cast<void*>(workspace), workspace_size, reinterpret_cast<void*>(stream));
}

size_t decompress_device_workspace(Bytes header) {
  return hpcz::decompress_device_workspace_size(hpcz::inspect_header(header.data(), header.size()));
}

void decompress_device(Bytes header, uintptr_t archive, uintptr_t out, uintptr_t status, uintptr_t workspace,
                       size_t workspace_size, uintptr_t stream) {
  const hpcz::ArchiveInfo info = hpcz::inspect_header(header.data(), header.size());
  nb::gil_scoped_release unlocked;
  hpcz::decompress_device(info, reinterpret_cast<const void*>(archive), reinterpret_cast<void*>(out),
                          reinterpret_cast<uint32_t*>(status), reinterpret_cast<void*>(workspace), workspace_size,
                          reinterpret_cast<void*>(stream));
}

}  // namespace hpcz_python

using namespace hpcz_python;

NB_MODULE(_hpcz, m) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const hpcz::Error& e) {
      // hpcz._errors.error_class(code) is the hpcz.Error subclass of the code.
      nb::gil_scoped_acquire held;
      nb::object cls = nb::module_::import_("hpcz._errors").attr("error_class")(int(e.code()));
      PyErr_SetObject(cls.ptr(), nb::make_tuple(e.what(), int(e.code())).ptr());
    }
  });
  // abs_bound (last, 0 by default): the absolute bound of "abs_and_rel" and "abs_or_rel", whose bound is
  // the rel factor. Appended to every call that takes bound_kind and bound: the others' places stay.
  m.def("compress", &compress, nb::arg("values"), nb::arg("mode"), nb::arg("bound_kind"), nb::arg("bound"),
        nb::arg("lossless"), nb::arg("fill").none(), nb::arg("device"), nb::arg("abs_bound") = 0.0,
        nb::arg("dtype") = std::string());
  m.def("decompress_into", &decompress_into, nb::arg("archive"), nb::arg("out"), nb::arg("device"),
        nb::arg("max_output") = 0);
  m.def("info", &info, nb::arg("archive"), nb::arg("verify"), nb::arg("detail") = false);
  m.def("codecs", [] { return names_of<hpcz::Codec>(hpcz::codec_names(), &hpcz::parse_codec); });
  m.def("dtypes", [] { return names_of<hpcz::DType>(hpcz::dtype_names(), &hpcz::parse_dtype); });
  m.def("bound_modes", [] { return names_of<hpcz::BoundMode>(hpcz::bound_mode_names(), &hpcz::parse_bound_mode); });
  // A bound kind's name ("abs", "rel", "abs_and_rel", "abs_or_rel"), whatever its spelling ("absolute",
  // "relative", "absolute_and_relative", "absolute_or_relative"); None if unknown.
  m.def("parse_bound_mode", [](const std::string& s) -> std::optional<std::string> {
    const auto m = hpcz::parse_bound_mode(s);
    if (!m) return std::nullopt;
    return std::string(hpcz::bound_mode_name(*m));
  });
  m.def("names_list", [](const std::vector<std::string>& names) { return hpcz::names_list(names); });
  m.def("compress_batch", &compress_batch, nb::arg("values"), nb::arg("mode"), nb::arg("bound_kind"), nb::arg("bound"),
        nb::arg("lossless"), nb::arg("fill").none(), nb::arg("device"), nb::arg("abs_bound") = 0.0,
        nb::arg("dtypes") = std::vector<std::string>());
  m.def("decompress_batch_into", &decompress_batch_into);
  m.def("release_cached_buffers", [] {
    nb::gil_scoped_release unlocked;
    hpcz::release_cached_buffers();
  });
  m.def("use_device", &use_device);
  m.def("compress_device_workspace", &compress_device_workspace, nb::arg("dtype"), nb::arg("dims"), nb::arg("mode"),
        nb::arg("bound_kind"), nb::arg("bound"), nb::arg("fill").none(), nb::arg("abs_bound") = 0.0);
  m.def("compress_device", &compress_device, nb::arg("values"), nb::arg("dtype"), nb::arg("dims"), nb::arg("mode"),
        nb::arg("bound_kind"), nb::arg("bound"), nb::arg("fill").none(), nb::arg("out"), nb::arg("out_capacity"),
        nb::arg("size"), nb::arg("workspace"), nb::arg("workspace_size"), nb::arg("stream"), nb::arg("abs_bound") = 0.0);
  m.def("decompress_device_workspace", &decompress_device_workspace);
  m.def("decompress_device", &decompress_device);
  m.def("compress_device_batch_workspace", &compress_device_batch_workspace, nb::arg("dtypes"), nb::arg("dims"),
        nb::arg("mode"), nb::arg("bound_kind"), nb::arg("bound"), nb::arg("fill").none(), nb::arg("abs_bound") = 0.0);
  m.def("compress_device_batch", &compress_device_batch, nb::arg("ptrs"), nb::arg("dtypes"), nb::arg("dims"),
        nb::arg("mode"), nb::arg("bound_kind"), nb::arg("bound"), nb::arg("fill").none(), nb::arg("outs"),
        nb::arg("caps"), nb::arg("sizes"), nb::arg("workspace"), nb::arg("workspace_size"), nb::arg("stream"),
        nb::arg("abs_bound") = 0.0);
  m.def("device_headers_workspace", &device_headers_workspace);
  m.def("device_headers", &device_headers);
  m.def("device_batch_heads", &device_batch_heads);
  m.def("decompress_device_batch_workspace_packed", &decompress_device_batch_workspace_packed);
  m.def("decompress_device_batch_packed", &decompress_device_batch_packed);
  m.def("decode_status_message", &decode_status_message);
  bind_cupy_batches(m);
  m.def("max_compressed_size", [](uint64_t n, int dtype) { return hpcz::max_compressed_size(n, device_dtype_of(dtype)); });
  m.def("header_size", [] { return hpcz::kHeaderSize; });
  m.def("gpu_available", [] { return hpcz::gpu_available(); });
  // Error(backend_unavailable) with the reason (no CUDA, no GPU, a forked child) where it is not.
  m.def("require_gpu", [] { hpcz::resolve_backend(hpcz::Backend::gpu); });
  m.def("gpu_name", [] { return hpcz::gpu_name(); });
  m.def("version", [] { return std::string(hpcz::version_string()); });
}
