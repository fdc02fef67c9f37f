// Built where HDF5's headers are found (CMakeLists.txt): h5_decls.hpp, from which the filter plugin is
// built, against HDF5's own declarations. Compiling is the test: each prototype there redeclares
// HDF5's (a different type is an error) and the values and the class struct's layout are asserted.
#include <hdf5.h>
#include <H5PLextern.h>

#define HPCZ_H5_DECLS_CHECK
#include "h5_decls.hpp"

static_assert(H5Z_CLASS_T_VERS == hpcz_h5_abi::kClassVersion && H5Z_FLAG_OPTIONAL == hpcz_h5_abi::kFlagOptional &&
              H5Z_FLAG_REVERSE == hpcz_h5_abi::kFlagReverse && H5E_DEFAULT == hpcz_h5_abi::kErrorDefault);
static_assert(H5PL_TYPE_FILTER == hpcz_h5_abi::kTypeFilter && H5T_FLOAT == hpcz_h5_abi::kFloat &&
              H5T_ORDER_LE == hpcz_h5_abi::kOrderLE && H5T_SGN_NONE == hpcz_h5_abi::kSignNone &&
              H5T_SGN_2 == hpcz_h5_abi::kSign2);
static_assert(H5D_FILL_TIME_NEVER == hpcz_h5_abi::kFillTimeNever &&
              H5D_FILL_VALUE_USER_DEFINED == hpcz_h5_abi::kFillUserDefined);
// The types and the class struct's layout: asserted in h5_decls.hpp itself, here of HDF5's own.
