/* hpcz C API: a thin layer over the C++ API for bindings (Python, HDF5 filters, Fortran).
 * Every call returns HPCZ_OK or an error code; hpcz_last_error() gives the message (thread-local). */
#ifndef HPCZ_H
#define HPCZ_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum hpcz_status {
  HPCZ_OK = 0,
  HPCZ_INVALID_ARGUMENT = 1,
  HPCZ_CORRUPT_ARCHIVE = 2,
  HPCZ_UNSUPPORTED = 3,
  HPCZ_BACKEND_UNAVAILABLE = 4,
  HPCZ_CUDA_ERROR = 5,
  HPCZ_OUT_OF_SPACE = 6, /* caller's buffer too small; *size holds what is needed */
  HPCZ_INTERNAL = 7,     /* a bug in hpcz (an archive it wrote did not read back): please report it */
  HPCZ_IO = 8,           /* reading the input or writing the output of a streaming call failed */
};
enum hpcz_dtype {
  HPCZ_F32 = 1, HPCZ_F64 = 2, HPCZ_F16 = 3, HPCZ_BF16 = 4, HPCZ_I8 = 5, HPCZ_U8 = 6, HPCZ_I16 = 7, HPCZ_U16 = 8,
  HPCZ_I32 = 9, HPCZ_U32 = 10, HPCZ_I64 = 11, HPCZ_U64 = 12 /* i64, u64: values within +-2^53 (format version 9) */
};
/* HPCZ_ABS_AND_REL, HPCZ_ABS_OR_REL: bound is the rel factor, abs_bound the absolute bound; every value
 * within the smaller of the two (AND) or the larger (OR). Format version 6. */
/* HPCZ_PW_REL: every value within bound x |value| (0 < bound < 1; the fast codec). Format version 6. */
/* HPCZ_PSNR, HPCZ_NRMSE: a target PSNR (dB) or NRMSE over the array, met or exceeded (hpcz_compress). */
enum hpcz_bound_mode {
  HPCZ_ABS = 1, HPCZ_REL = 2, HPCZ_PW_REL = 3, HPCZ_PSNR = 4, HPCZ_NRMSE = 5, HPCZ_ABS_AND_REL = 6, HPCZ_ABS_OR_REL = 7
};
enum hpcz_backend { HPCZ_AUTO = 0, HPCZ_CPU = 1, HPCZ_GPU = 2 };
enum hpcz_codec { HPCZ_FAST = 1, HPCZ_RATIO = 2, HPCZ_INTERP = 3 };

/* Zero-initialize, then set what you need: new fields are only ever appended, and 0 means default. */
typedef struct hpcz_options {
  int mode;          /* hpcz_bound_mode */
  double bound;
  int has_fill;
  double fill;
  int backend;       /* hpcz_backend */
  int codec;         /* hpcz_codec; 0 = HPCZ_FAST */
  unsigned radius;   /* HPCZ_RATIO: quant-code radius 1..2048; 0 = 512 */
  int second_stage;  /* 1: a lossless pass (Deflate or ORC RLE v2) per chunk; format version 2 */
  double abs_bound;  /* HPCZ_ABS_AND_REL, HPCZ_ABS_OR_REL: the absolute bound (bound: the rel factor) */
} hpcz_options;

/* The codec's name ("fast", "ratio", "interp": the names the CLI's --mode and Python's mode= take), or
 * NULL for a number that is no codec; and back: the codec's number, or 0 for a name that is none. */
const char* hpcz_codec_name(int codec);
int hpcz_parse_codec(const char* name);

size_t hpcz_max_compressed_size(uint64_t n_values, int dtype);
/* dims slowest to fastest. out has out_capacity bytes; *out_size receives the archive size. */
int hpcz_compress(const void* data, int dtype, const uint64_t* dims, int ndims, const hpcz_options* opt,
                  void* out, size_t out_capacity, size_t* out_size);
/* Reads the header: dtype, rank, dims (4 entries) and value count. */
int hpcz_inspect(const void* archive, size_t size, int* dtype, int* ndims, uint64_t* dims, uint64_t* n_values);
int hpcz_decompress(const void* archive, size_t size, void* out, size_t out_capacity, int backend);
/* hpcz_decompress for archives from untrusted sources: refuses with HPCZ_INVALID_ARGUMENT, before decoding
 * anything, an archive whose array is larger than max_output bytes (0: no limit). hpcz_inspect gives the
 * array's size to allocate out; see docs/SECURITY.md for what decoding costs. */
int hpcz_decompress_limited(const void* archive, size_t size, void* out, size_t out_capacity, int backend,
                            uint64_t max_output);
/* ---- batches: n items in one call (hpcz.hpp's compress_batch), as nvCOMP's batched calls ----
 * Item i: data[i], of dtypes[i], ndims[i] dims at dims[4 * i ...] (slowest to fastest). Its archive goes
 * to outs[i] (out_capacities[i] bytes; hpcz_max_compressed_size always suffices), its size to
 * out_sizes[i] (also when HPCZ_OUT_OF_SPACE: what it needs), its outcome to statuses[i]. A bad item
 * leaves the others coded. Returns HPCZ_OK when every item succeeded, else the first failed item's
 * status (hpcz_last_error names that item). */
int hpcz_compress_batch(size_t n, const void* const* data, const int* dtypes, const uint64_t* dims, const int* ndims,
                        const hpcz_options* opt, void* const* outs, const size_t* out_capacities, size_t* out_sizes,
                        int* statuses);
/* Decodes archives[i] (sizes[i] bytes) into outs[i] (out_capacities[i] bytes); statuses[i] as above. */
int hpcz_decompress_batch(size_t n, const void* const* archives, const size_t* sizes, void* const* outs,
                          const size_t* out_capacities, int backend, int* statuses);
/* ---- device API: a CUDA build (else HPCZ_BACKEND_UNAVAILABLE) ----
 * Data pointers are device pointers, 16-byte aligned (cudaMalloc's are); stream is a cudaStream_t
 * (NULL: the legacy default stream). The calls only enqueue work on the stream, in the caller's
 * workspace: they allocate nothing and do not synchronize. The second stage is host-API only. */
int hpcz_compress_device_workspace_size(int dtype, const uint64_t* dims, int ndims, const hpcz_options* opt,
                                        size_t* workspace_size);
/* Writes the archive to d_out (out_capacity >= hpcz_max_compressed_size) and its size to *d_size, a
 * device uint64_t. opt->backend is ignored. */
int hpcz_compress_device(const void* d_in, int dtype, const uint64_t* dims, int ndims, const hpcz_options* opt,
                         void* d_out, size_t out_capacity, uint64_t* d_size, void* d_workspace, size_t workspace_size,
                         void* stream);
/* header: a host copy of the archive's first header_size bytes (at least 144), validated here. */
int hpcz_decompress_device_workspace_size(const void* header, size_t header_size, size_t* workspace_size);
/* Decodes the archive at d_archive into d_out (n_values values). *d_status, a device uint32_t, receives
 * 0 on success, else an error mask (bit 0: a chunk checksum mismatch, bit 1: a malformed chunk or chunk
 * table entry, bit 2: a chunk table checksum mismatch). */
int hpcz_decompress_device(const void* header, size_t header_size, const void* d_archive, void* d_out,
                           uint32_t* d_status, void* d_workspace, size_t workspace_size, void* stream);

/* Device batches (hpcz.hpp's compress_device_batch): item i's values at d_in[i] (a device pointer),
 * dtypes[i], ndims[i] dims at dims[4 * i ...], one set of options for all; archive i to d_outs[i]
 * (out_capacities[i] >= hpcz_max_compressed_size), its size to d_sizes[i] (a device array of n uint64_t).
 * One set of launches in the fast mode. The call copies the batch's tables from host memory into the
 * workspace, a copy that may wait for the stream's earlier work. */
int hpcz_compress_device_batch_workspace_size(size_t n, const int* dtypes, const uint64_t* dims, const int* ndims,
                                              const hpcz_options* opt, size_t* workspace_size);
int hpcz_compress_device_batch(size_t n, const void* const* d_in, const int* dtypes, const uint64_t* dims,
                               const int* ndims, const hpcz_options* opt, void* const* d_outs,
                               const size_t* out_capacities, uint64_t* d_sizes, void* d_workspace,
                               size_t workspace_size, void* stream);
/* The first HPCZ header bytes (hpcz_header_size) of each of n device archives, header after header,
 * into host memory h_headers; see hpcz::read_device_headers. */
int hpcz_read_device_headers_workspace_size(size_t n, size_t* workspace_size);
int hpcz_read_device_headers(const void* const* d_archives, const size_t* sizes, size_t n, void* h_headers,
                             void* d_workspace, size_t workspace_size, void* stream);
/* headers: n host copies of the archives' first header_size bytes, header_size apart. Archive i at
 * d_archives[i] to d_outs[i]; its status word (as hpcz_decompress_device's) to d_status[i] (a device
 * array of n uint32_t). */
int hpcz_decompress_device_batch_workspace_size(size_t n, const void* headers, size_t header_size,
                                                size_t* workspace_size);
int hpcz_decompress_device_batch(size_t n, const void* headers, size_t header_size, const void* const* d_archives,
                                 void* const* d_outs, uint32_t* d_status, void* d_workspace, size_t workspace_size,
                                 void* stream);

const char* hpcz_last_error(void);
const char* hpcz_version(void);

#ifdef __cplusplus
}
#endif
#endif
