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
};
enum hpcz_dtype { HPCZ_F32 = 1, HPCZ_F64 = 2 };
enum hpcz_bound_mode { HPCZ_ABS = 1, HPCZ_REL = 2 };
enum hpcz_backend { HPCZ_AUTO = 0, HPCZ_CPU = 1, HPCZ_GPU = 2 };
enum hpcz_codec { HPCZ_FAST = 1, HPCZ_RATIO = 2 };

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
} hpcz_options;

size_t hpcz_max_compressed_size(uint64_t n_values, int dtype);
/* dims slowest to fastest. out has out_capacity bytes; *out_size receives the archive size. */
int hpcz_compress(const void* data, int dtype, const uint64_t* dims, int ndims, const hpcz_options* opt,
                  void* out, size_t out_capacity, size_t* out_size);
/* Reads the header: dtype, rank, dims (4 entries) and value count. */
int hpcz_inspect(const void* archive, size_t size, int* dtype, int* ndims, uint64_t* dims, uint64_t* n_values);
int hpcz_decompress(const void* archive, size_t size, void* out, size_t out_capacity, int backend);
const char* hpcz_last_error(void);
const char* hpcz_version(void);

#ifdef __cplusplus
}
#endif
#endif
