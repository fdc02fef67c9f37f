// The hpcz HDF5 filter plugin: one HDF5 chunk is one hpcz archive. HDF5 finds it through
// HDF5_PLUGIN_PATH (H5PLget_plugin_info) or an application registers the class (h5py, via hpcz.hdf5).
//
// The plugin links no HDF5 library: the same file serves h5dump and netCDF (the system's libhdf5) and
// h5py (its own copy, loaded privately). Decoding needs no HDF5 call at all; set_local's few calls are
// looked up at run time in the process's HDF5 (hpcz_h5z_use_library names it where it is not global).
// cd_values are documented in docs/FORMAT.md ("HDF5 filter").
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "filter_params.hpp"
#include "h5_decls.hpp"  // HDF5's declarations the plugin uses, so it builds without HDF5's headers
#include "hpcz/hpcz.hpp"

namespace {

using namespace hpcz::h5z;
// Chunks of at least this many bytes are coded on the GPU where there is one: below it the GPU host
// path's fixed costs (copies both ways, a synchronization) outweigh the CPU's coding time. Each call
// reuses the buffers and stream of a kept lane (pipeline/host_lanes.cu): no allocation a chunk.
constexpr size_t kGpuChunkBytes = size_t(4) << 20;

struct Hdf5 {
  decltype(&H5Pget_filter_by_id2) get_filter = nullptr;
  decltype(&H5Pget_nfilters) nfilters = nullptr;
  decltype(&H5Pget_filter2) filter_at = nullptr;
  decltype(&H5Pmodify_filter) modify_filter = nullptr;
  decltype(&H5Pget_chunk) get_chunk = nullptr;
  decltype(&H5Tget_class) type_class = nullptr;
  decltype(&H5Tget_size) type_size = nullptr;
  decltype(&H5Tget_order) type_order = nullptr;
  decltype(&H5Tget_sign) type_sign = nullptr;      // integers: signed or not
  decltype(&H5Tget_fields) type_fields = nullptr;  // 2-byte floats: float16 or bfloat16 by their field widths
  decltype(&H5Pget_fill_time) fill_time = nullptr;
  decltype(&H5Pfill_value_defined) fill_defined = nullptr;
  decltype(&H5Pget_fill_value) fill_value = nullptr;
  // Optional: where found, set_local's reason for refusing goes on HDF5's error stack.
  decltype(&H5Epush2) push = nullptr;
  const hid_t *err_class = nullptr, *err_major = nullptr, *err_minor = nullptr;
  bool complete() const {
    return get_filter && nfilters && filter_at && modify_filter && get_chunk && type_class && type_size && type_order &&
           type_sign && type_fields && fill_time && fill_defined && fill_value;
  }
};
Hdf5 g_hdf5;
std::mutex g_hdf5_mutex;

bool resolve(void* where, Hdf5& api) {
  api.get_filter = reinterpret_cast<decltype(api.get_filter)>(dlsym(where, "H5Pget_filter_by_id2"));
  api.modify_filter = reinterpret_cast<decltype(api.modify_filter)>(dlsym(where, "H5Pmodify_filter"));
  api.get_chunk = reinterpret_cast<decltype(api.get_chunk)>(dlsym(where, "H5Pget_chunk"));
  api.type_class = reinterpret_cast<decltype(api.type_class)>(dlsym(where, "H5Tget_class"));
  api.type_size = reinterpret_cast<decltype(api.type_size)>(dlsym(where, "H5Tget_size"));
  api.type_order = reinterpret_cast<decltype(api.type_order)>(dlsym(where, "H5Tget_order"));
  api.type_sign = reinterpret_cast<decltype(api.type_sign)>(dlsym(where, "H5Tget_sign"));
  api.type_fields = reinterpret_cast<decltype(api.type_fields)>(dlsym(where, "H5Tget_fields"));
  api.nfilters = reinterpret_cast<decltype(api.nfilters)>(dlsym(where, "H5Pget_nfilters"));
  api.filter_at = reinterpret_cast<decltype(api.filter_at)>(dlsym(where, "H5Pget_filter2"));
  api.fill_time = reinterpret_cast<decltype(api.fill_time)>(dlsym(where, "H5Pget_fill_time"));
  api.fill_defined = reinterpret_cast<decltype(api.fill_defined)>(dlsym(where, "H5Pfill_value_defined"));
  api.fill_value = reinterpret_cast<decltype(api.fill_value)>(dlsym(where, "H5Pget_fill_value"));
  api.push = reinterpret_cast<decltype(api.push)>(dlsym(where, "H5Epush2"));
  api.err_class = static_cast<const hid_t*>(dlsym(where, "H5E_ERR_CLS_g"));
  api.err_major = static_cast<const hid_t*>(dlsym(where, "H5E_PLINE_g"));
  api.err_minor = static_cast<const hid_t*>(dlsym(where, "H5E_SETLOCAL_g"));
  return api.complete();
}

// The functions of the HDF5 library that holds `caller` (an address in its code), looked up once a library.
struct Caller {
  const void* base = nullptr;
  Hdf5 api;
};
Caller g_callers[8];
int g_n_callers = 0;

const Hdf5* hdf5_holding(const void* caller) {
  Dl_info where;
  if (!caller || !dladdr(caller, &where) || !where.dli_fname || !where.dli_fbase) return nullptr;
  std::lock_guard<std::mutex> g(g_hdf5_mutex);
  for (int i = 0; i < g_n_callers; ++i)
    if (g_callers[i].base == where.dli_fbase) return g_callers[i].api.complete() ? &g_callers[i].api : nullptr;
  if (g_n_callers == int(sizeof g_callers / sizeof g_callers[0])) return nullptr;
  Caller& c = g_callers[g_n_callers++];
  c.base = where.dli_fbase;
  if (void* h = dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD)) resolve(h, c.api);
  return c.api.complete() ? &c.api : nullptr;
}

// The HDF5 that calls set_local (`caller`, its return address) is the one whose identifiers it is given:
// its functions first, even where they are not global (h5py's private copy, found through
// HDF5_PLUGIN_PATH without hpcz.hdf5), so that set_local works, and says why it refuses, in any process.
// Then hpcz_h5z_use_library's library, or the global one.
const Hdf5* hdf5(const void* caller) {
  if (const Hdf5* api = hdf5_holding(caller)) return api;
  std::lock_guard<std::mutex> g(g_hdf5_mutex);
  if (!g_hdf5.complete()) resolve(RTLD_DEFAULT, g_hdf5);
  return g_hdf5.complete() ? &g_hdf5 : nullptr;
}

hpcz::Backend backend_for(size_t bytes, hpcz::Codec codec, hpcz::BoundMode mode) {
  return bytes >= kGpuChunkBytes && hpcz::resolve_backend(hpcz::Backend::automatic, codec, mode) == hpcz::Backend::gpu
             ? hpcz::Backend::gpu
             : hpcz::Backend::cpu;
}

// set_local's refusal: the reason on HDF5's error stack (h5py shows it in its exception), then -1,
// which fails the dataset's creation even for an optional filter.
herr_t refuse(const Hdf5* api, const char* why) {
  if (api && api->push && api->err_class && api->err_major && api->err_minor)
    api->push(H5E_DEFAULT, __FILE__, "hpcz set_local", __LINE__, *api->err_class, *api->err_major, *api->err_minor, "%s",
              why);
  return -1;
}

// The DType of a dataset's type, whatever its byte order: float32, float64, float16 and bfloat16 (a
// 2-byte float by its exponent and mantissa widths: 5 and 10, or 8 and 7), 1-, 2- and 4-byte integers;
// none for another type.
std::optional<hpcz::DType> dataset_dtype(const Hdf5* api, hid_t type) {
  const H5T_class_t cls = api->type_class(type);
  const size_t size = api->type_size(type);
  using hpcz::DType;
  if (cls == H5T_FLOAT) {
    if (size == 4) return DType::f32;
    if (size == 8) return DType::f64;
    size_t spos, epos, esize, mpos, msize;
    if (size == 2 && api->type_fields(type, &spos, &epos, &esize, &mpos, &msize) >= 0 && spos == 15) {
      if (esize == 5 && msize == 10) return DType::f16;
      if (esize == 8 && msize == 7) return DType::bf16;
    }
    return std::nullopt;
  }
  if (cls != H5T_INTEGER) return std::nullopt;
  const H5T_sign_t sign = api->type_sign(type);
  if (sign != H5T_SGN_NONE && sign != H5T_SGN_2) return std::nullopt;
  const bool is_signed = sign == H5T_SGN_2;
  if (size == 1) return is_signed ? DType::i8 : DType::u8;
  if (size == 2) return is_signed ? DType::i16 : DType::u16;
  if (size == 4) return is_signed ? DType::i32 : DType::u32;
  if (size == 8) return is_signed ? DType::i64 : DType::u64;
  return std::nullopt;
}

// Why the dataset's type is not one hpcz codes (little-endian float32, float64, float16, bfloat16, 8- to
// 64-bit integers), or nullptr if it is one.
const char* type_refusal(const Hdf5* api, hid_t type, char* why, size_t n) {
  const H5T_class_t cls = api->type_class(type);
  const size_t size = api->type_size(type);
  const std::optional<hpcz::DType> t = dataset_dtype(api, type);
  if (t && (size == 1 || api->type_order(type) == H5T_ORDER_LE)) return nullptr;
  if (t)
    std::snprintf(why, n, "hpcz: the dataset's type is big-endian %s: hpcz codes little-endian values: "
                  "create it with a little-endian type (numpy '<%c%d')", hpcz::dtype_name(*t),
                  cls == H5T_FLOAT ? 'f' : (hpcz::dtype_name(*t)[0] == 'u' ? 'u' : 'i'), int(size));
  else if (cls == H5T_FLOAT)
    std::snprintf(why, n, "hpcz: the dataset's type is a %d-byte float hpcz does not code (float32, float64, "
                  "float16 and bfloat16 datasets only)", int(size));
  else
    std::snprintf(why, n, "hpcz: the dataset's type is %s (%d bytes): hpcz codes float32, float64, float16, "
                  "bfloat16 and 8- to 64-bit integer datasets only",
                  cls == H5T_INTEGER ? "an integer" : cls == H5T_STRING ? "a string" : cls == H5T_COMPOUND ? "a compound" : "not a number",
                  int(size));
  return why;
}

// What HDF5 fills a new chunk with before the written values go in, so the padding of every edge chunk:
// the dataset's fill value where it is user-defined and the fill time is not "never", else zeros.
// False where HDF5 does not say.
bool padding_of(const Hdf5* api, hid_t dcpl, hid_t type, size_t size, double& pad) {
  H5D_fill_time_t when;
  H5D_fill_value_t status;
  if (api->fill_time(dcpl, &when) < 0 || api->fill_defined(dcpl, &status) < 0) return false;
  pad = 0;
  if (when == H5D_FILL_TIME_NEVER || status != H5D_FILL_VALUE_USER_DEFINED) return true;
  const std::optional<hpcz::DType> t = dataset_dtype(api, type);  // type_refusal accepted the type
  if (!t) return false;
  unsigned char bytes[16];
  if (api->fill_value(dcpl, type, bytes) < 0) return false;
  hpcz::detail::dispatch_storage(*t, [&](auto tr) {
    typename decltype(tr)::storage_type v;
    static_assert(sizeof v <= sizeof bytes);
    std::memcpy(&v, bytes, sizeof v);
    pad = double(decltype(tr)::widen(v));
  });
  return true;
}

// Takes dtype and chunk dims from the dataset; the user's values (or the defaults: fast, rel 1e-3) first.
// Refuses what would break the bound or fail every chunk later: a filter before hpcz (hpcz would bound
// the error of that filter's output, e.g. shuffled bytes read as floats, not of the values), a type it
// does not code, invalid words, a rel bound that the padding would loosen.
herr_t set_local(hid_t dcpl, hid_t type, hid_t) {
  const Hdf5* api = hdf5(__builtin_return_address(0));
  if (!api) {  // nowhere to put the reason but stderr; HDF5 says "error during user callback"
    std::fprintf(stderr, "hpcz: the HDF5 filter found no HDF5 library to ask about the dataset (in h5py: import hpcz.hdf5)\n");
    return -1;
  }
  unsigned flags = 0, values[kMaxValues] = {kParamsVersion, 1, 2, 0, 0, 0, 0, 0};
  const double rel_default = 1e-3;
  uint64_t u;
  std::memcpy(&u, &rel_default, sizeof u);
  values[3] = unsigned(u), values[4] = unsigned(u >> 32);
  unsigned given[kMaxValues];
  size_t n_given = sizeof given / sizeof given[0];
  if (api->get_filter(dcpl, kFilterId, &flags, &n_given, given, 0, nullptr, nullptr) < 0) return -1;
  char first[64] = "";
  unsigned first_flags = 0, first_config = 0;
  size_t first_n = 0;
  const H5Z_filter_t first_id = api->nfilters(dcpl) > 0
                                    ? api->filter_at(dcpl, 0, &first_flags, &first_n, nullptr, sizeof first, first, &first_config)
                                    : H5Z_filter_t(-1);
  if (first_id != H5Z_filter_t(kFilterId)) {
    char why[256];
    std::snprintf(why, sizeof why, "hpcz: a filter runs before hpcz (%s, id %d): hpcz must be the first filter, as it bounds the error of the values it is given",
                  first[0] ? first : "unnamed", int(first_id));
    return refuse(api, why);
  }
  // Little-endian values only: the filter codes the stored bytes as the machine's values.
  char type_why[256];
  if (const char* why = type_refusal(api, type, type_why, sizeof type_why)) return refuse(api, why);
  const size_t size = api->type_size(type);
  const hpcz::DType dtype = *dataset_dtype(api, type);  // type_refusal accepted the type
  if (const char* why = invalid_words(n_given, given, unsigned(dtype))) return refuse(api, why);
  // The given version's words (version 2: the absolute bound too; 0 where not given, for abs and rel).
  size_t n = n_given >= 1 ? user_values(given[0]) : kUserValues;
  for (size_t i = 0; i < std::min(n_given, n); ++i) values[i] = given[i];
  hsize_t dims[32];
  const int rank = api->get_chunk(dcpl, 32, dims);
  if (rank < 1) return refuse(api, "hpcz: the dataset is not chunked");
  values[n++] = unsigned(dtype);  // the DType's number
  values[n++] = unsigned(rank);
  for (int i = 0; i < rank; ++i) {
    if (dims[i] > 0xffffffffull) return refuse(api, "hpcz: a chunk dimension above 2^32 - 1");
    values[n++] = unsigned(dims[i]);
  }
  // A rel bound is relative to the range of the values written: HDF5 pads edge chunks (and the parts of
  // a chunk never written) with the padding value, which counted in a chunk's range loosened rel=1e-3
  // 2.6x for temperatures padded with 0. Stored after the dims for the encoder (filter_params.hpp); the
  // same for abs_and_rel and abs_or_rel, whose rel part is relative to the range too.
  double pad;
  const auto kind = hpcz::bound_mode_of_id(values[2]);  // invalid_words accepted it
  if (kind && range_relative(*kind) && padding_of(api, dcpl, type, size, pad) && pad - pad == 0) {
    uint64_t w;
    std::memcpy(&w, &pad, sizeof w);
    values[n++] = 1, values[n++] = unsigned(w), values[n++] = unsigned(w >> 32);
  }
  // Mandatory, whatever the caller asked (h5py adds third-party filters as optional): a chunk hpcz
  // fails to code then fails the write, instead of being stored raw without a word.
  return api->modify_filter(dcpl, kFilterId, flags & ~unsigned(H5Z_FLAG_OPTIONAL), n, values) < 0 ? -1 : 1;
}

size_t filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes, size_t* buf_size, void** buf) {
  try {
    if (flags & H5Z_FLAG_REVERSE) {
      const auto* a = static_cast<const uint8_t*>(*buf);
      const hpcz::ArchiveInfo info = hpcz::inspect(a, nbytes);
      // The chunk is exactly one archive, of the dataset's dtype and chunk size (set_local's words), whose
      // chunk table can hold the values it declares (inspect): checked before the output is sized from it.
      if (nbytes != info.archive_size) return 0;
      const size_t user = cd_nelmts >= 1 ? user_values(cd_values[0]) : kUserValues;  // set_local's words follow
      if (cd_nelmts >= user + kLocalValues) {
        const unsigned rank = cd_values[user + 1];
        if (cd_nelmts < user + kLocalValues + rank) return 0;
        uint64_t n = 1;
        for (unsigned i = 0; i < rank; ++i) n *= cd_values[user + kLocalValues + i];
        const auto want = hpcz::dtype_of_id(cd_values[user]);
        if (info.n_values != n || !want || info.dtype != *want) return 0;
      }
      const size_t out_bytes = info.n_values * hpcz::dtype_size(info.dtype);
      void* out = std::malloc(out_bytes ? out_bytes : 1);
      if (!out) return 0;
      const hpcz::Backend backend = backend_for(out_bytes, info.codec, info.mode);
      try {
        hpcz::decompress(a, nbytes, out, out_bytes, backend);
      } catch (...) {
        std::free(out);
        throw;
      }
      std::free(*buf);
      *buf = out;
      *buf_size = out_bytes;
      return out_bytes;
    }
    FilterParams p;
    if (!parse_params(cd_nelmts, cd_values, p)) return 0;
    if (p.n_values * hpcz::dtype_size(p.dtype) != nbytes) return 0;
    hpcz::Options o = p.options;
    o.backend = backend_for(nbytes, o.codec, o.mode);
    const hpcz::DType dtype = p.dtype;
    const std::vector<uint64_t>& dims = p.dims;
    const uint64_t n = p.n_values;
    const size_t cap = hpcz::max_compressed_size(n, dtype);
    void* out = std::malloc(cap);
    if (!out) return 0;
    size_t size;
    try {
      size = hpcz::compress(*buf, dtype, dims, o, out, cap);
      // A bound relative to the range (rel, abs_and_rel, abs_or_rel) whose padding is an end of the
      // chunk's range: coded again with the padding left out.
      if (p.padding && padding_recode(static_cast<const uint8_t*>(out), size, *buf, dtype, n, *p.padding, o))
        size = hpcz::compress(*buf, dtype, dims, o, out, cap);
    } catch (...) {
      std::free(out);
      throw;
    }
    if (void* fit = std::realloc(out, size ? size : 1)) out = fit;
    std::free(*buf);
    *buf = out;
    *buf_size = size;
    return size;
  } catch (...) {
    return 0;  // HDF5 reports the filter's failure
  }
}

const H5Z_class2_t kClass = {
    H5Z_CLASS_T_VERS, kFilterId, 1, 1, "hpcz: error-bounded lossy compression (github hpcz)", nullptr, set_local, filter,
};

}  // namespace

extern "C" {
H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_FILTER; }
const void* H5PLget_plugin_info(void) { return &kClass; }
// Where the process's HDF5 functions are not global (h5py loads its HDF5 privately): a library whose
// dependencies include that HDF5 (h5py's extension module). 0 on success.
int hpcz_h5z_use_library(const char* path) {
  void* h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
  if (!h) h = dlopen(path, RTLD_LAZY);
  Hdf5 api;
  if (!h || !resolve(h, api)) return -1;
  std::lock_guard<std::mutex> g(g_hdf5_mutex);
  g_hdf5 = api;
  return 0;
}
}
