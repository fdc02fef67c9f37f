// The few HDF5 declarations the filter plugin (h5z_hpcz.cpp) uses, written from HDF5's public ABI, which
// is the same for these in 1.10, 1.12, 1.14 and 2.0 (hid_t is int64_t since 1.10). The plugin links no HDF5
// library and looks these functions up in the HDF5 that loads it, so it never needs HDF5's headers:
// it is built from this file always, with or without HDF5 installed, and a wheel or an install is the
// same file whatever HDF5 the build machine had. Where HDF5's headers are found, h5_decls_check.cpp
// compiles these against them (HPCZ_H5_DECLS_CHECK): the values and layout below are static_asserted
// and every prototype redeclares HDF5's own, which fails to compile on any difference.
// A function added to the plugin needs its prototype here (HDF5's H5?public.h gives it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

// The numbers, once: the declarations below are made of them, h5_decls_check.cpp compares them.
namespace hpcz_h5_abi {
constexpr int kClassVersion = 1;             // H5Z_CLASS_T_VERS
constexpr unsigned kFlagOptional = 0x0001;   // H5Z_FLAG_OPTIONAL
constexpr unsigned kFlagReverse = 0x0100;    // H5Z_FLAG_REVERSE
constexpr int kErrorDefault = 0;             // H5E_DEFAULT
constexpr int kTypeFilter = 0;               // H5PL_TYPE_FILTER
constexpr int kFillTimeNever = 1;            // H5D_FILL_TIME_NEVER
constexpr int kFillUserDefined = 2;          // H5D_FILL_VALUE_USER_DEFINED
constexpr int kFloat = 1;                    // H5T_FLOAT
constexpr int kOrderLE = 0;                  // H5T_ORDER_LE
constexpr int kSignNone = 0;                 // H5T_SGN_NONE
constexpr int kSign2 = 1;                    // H5T_SGN_2 (two's complement)
}  // namespace hpcz_h5_abi

#ifndef HPCZ_H5_DECLS_CHECK  // the types and constants, as HDF5 declares them
typedef int64_t hid_t;
typedef int herr_t;
typedef int htri_t;
typedef unsigned long long hsize_t;  // 1.14: uint64_t, the same 64-bit unsigned in the C ABI
typedef int H5Z_filter_t;

typedef enum H5T_class_t {
  H5T_NO_CLASS = -1,
  H5T_INTEGER = 0,
  H5T_FLOAT = hpcz_h5_abi::kFloat,
  H5T_TIME = 2,
  H5T_STRING = 3,
  H5T_BITFIELD = 4,
  H5T_OPAQUE = 5,
  H5T_COMPOUND = 6,
  H5T_REFERENCE = 7,
  H5T_ENUM = 8,
  H5T_VLEN = 9,
  H5T_ARRAY = 10,
  H5T_NCLASSES
} H5T_class_t;

typedef enum H5T_order_t {
  H5T_ORDER_ERROR = -1,
  H5T_ORDER_LE = hpcz_h5_abi::kOrderLE,
  H5T_ORDER_BE = 1,
  H5T_ORDER_VAX = 2,
  H5T_ORDER_MIXED = 3,
  H5T_ORDER_NONE = 4
} H5T_order_t;

typedef enum H5T_sign_t {
  H5T_SGN_ERROR = -1,
  H5T_SGN_NONE = hpcz_h5_abi::kSignNone,
  H5T_SGN_2 = hpcz_h5_abi::kSign2,
  H5T_NSGN = 2
} H5T_sign_t;

typedef enum H5D_fill_time_t {
  H5D_FILL_TIME_ERROR = -1,
  H5D_FILL_TIME_ALLOC = 0,
  H5D_FILL_TIME_NEVER = hpcz_h5_abi::kFillTimeNever,
  H5D_FILL_TIME_IFSET = 2
} H5D_fill_time_t;

typedef enum H5D_fill_value_t {
  H5D_FILL_VALUE_ERROR = -1,
  H5D_FILL_VALUE_UNDEFINED = 0,
  H5D_FILL_VALUE_DEFAULT = 1,
  H5D_FILL_VALUE_USER_DEFINED = hpcz_h5_abi::kFillUserDefined
} H5D_fill_value_t;

typedef enum H5PL_type_t {
  H5PL_TYPE_ERROR = -1,
  H5PL_TYPE_FILTER = hpcz_h5_abi::kTypeFilter,
  H5PL_TYPE_VOL = 1,
  H5PL_TYPE_NONE = 2
} H5PL_type_t;

#define H5Z_CLASS_T_VERS (hpcz_h5_abi::kClassVersion)
#define H5Z_FLAG_OPTIONAL (hpcz_h5_abi::kFlagOptional)
#define H5Z_FLAG_REVERSE (hpcz_h5_abi::kFlagReverse)
#define H5E_DEFAULT (hid_t(hpcz_h5_abi::kErrorDefault))

typedef htri_t (*H5Z_can_apply_func_t)(hid_t dcpl_id, hid_t type_id, hid_t space_id);
typedef herr_t (*H5Z_set_local_func_t)(hid_t dcpl_id, hid_t type_id, hid_t space_id);
typedef size_t (*H5Z_func_t)(unsigned int flags, size_t cd_nelmts, const unsigned int cd_values[], size_t nbytes,
                             size_t* buf_size, void** buf);

typedef struct H5Z_class2_t {
  int version;
  H5Z_filter_t id;
  unsigned encoder_present;
  unsigned decoder_present;
  const char* name;
  H5Z_can_apply_func_t can_apply;
  H5Z_set_local_func_t set_local;
  H5Z_func_t filter;
} H5Z_class2_t;
#endif  // HPCZ_H5_DECLS_CHECK

// Of this file's declarations, and under HPCZ_H5_DECLS_CHECK of HDF5's.
static_assert(std::is_same_v<hid_t, int64_t> && std::is_same_v<herr_t, int> && std::is_same_v<htri_t, int> &&
              std::is_same_v<H5Z_filter_t, int>);
static_assert(sizeof(hsize_t) == 8 && std::is_unsigned_v<hsize_t>);
static_assert(sizeof(H5T_class_t) == sizeof(int) && sizeof(H5T_order_t) == sizeof(int) && sizeof(H5T_sign_t) == sizeof(int) &&
              sizeof(H5PL_type_t) == sizeof(int) && sizeof(H5D_fill_time_t) == sizeof(int) &&
              sizeof(H5D_fill_value_t) == sizeof(int));
// H5Z_class2_t: int, int, unsigned, unsigned, then four pointers.
static_assert(offsetof(H5Z_class2_t, id) == 4 && offsetof(H5Z_class2_t, encoder_present) == 8 &&
              offsetof(H5Z_class2_t, decoder_present) == 12 && offsetof(H5Z_class2_t, name) == 16 &&
              offsetof(H5Z_class2_t, can_apply) == 16 + sizeof(void*) &&
              offsetof(H5Z_class2_t, set_local) == 16 + 2 * sizeof(void*) &&
              offsetof(H5Z_class2_t, filter) == 16 + 3 * sizeof(void*) && sizeof(H5Z_class2_t) == 16 + 4 * sizeof(void*));
static_assert(std::is_same_v<H5Z_func_t, size_t (*)(unsigned, size_t, const unsigned*, size_t, size_t*, void**)> &&
              std::is_same_v<H5Z_set_local_func_t, herr_t (*)(hid_t, hid_t, hid_t)> &&
              std::is_same_v<H5Z_can_apply_func_t, htri_t (*)(hid_t, hid_t, hid_t)>);

// HDF5's functions and variables, found at run time (dlsym) in the HDF5 of the process: declared for
// their types (decltype) only; nothing here is linked.
extern "C" {
herr_t H5Pget_filter_by_id2(hid_t plist_id, H5Z_filter_t id, unsigned int* flags, size_t* cd_nelmts,
                            unsigned cd_values[], size_t namelen, char name[], unsigned* filter_config);
int H5Pget_nfilters(hid_t plist_id);
H5Z_filter_t H5Pget_filter2(hid_t plist_id, unsigned idx, unsigned int* flags, size_t* cd_nelmts,
                            unsigned cd_values[], size_t namelen, char name[], unsigned* filter_config);
herr_t H5Pmodify_filter(hid_t plist_id, H5Z_filter_t filter, unsigned int flags, size_t cd_nelmts,
                        const unsigned int cd_values[]);
int H5Pget_chunk(hid_t plist_id, int max_ndims, hsize_t dim[]);
H5T_class_t H5Tget_class(hid_t type_id);
size_t H5Tget_size(hid_t type_id);
H5T_order_t H5Tget_order(hid_t type_id);
H5T_sign_t H5Tget_sign(hid_t type_id);
herr_t H5Tget_fields(hid_t type_id, size_t* spos, size_t* epos, size_t* esize, size_t* mpos, size_t* msize);
herr_t H5Pget_fill_time(hid_t plist_id, H5D_fill_time_t* fill_time);
herr_t H5Pfill_value_defined(hid_t plist, H5D_fill_value_t* status);
herr_t H5Pget_fill_value(hid_t plist_id, hid_t type_id, void* value);
int H5Sget_simple_extent_ndims(hid_t space_id);
int H5Sget_simple_extent_dims(hid_t space_id, hsize_t dims[], hsize_t maxdims[]);
herr_t H5Epush2(hid_t err_stack, const char* file, const char* func, unsigned line, hid_t cls_id, hid_t maj_id,
                hid_t min_id, const char* msg, ...);
// What a plugin exports (H5PLextern.h).
H5PL_type_t H5PLget_plugin_type(void);
const void* H5PLget_plugin_info(void);
}
