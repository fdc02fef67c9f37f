// dtype_size (hpcz.hpp): in the common layer, below the codecs that size their buffers with it and the
// names above them.
#include "common/dtype.hpp"

namespace hpcz {

size_t dtype_size(DType t) {
  return detail::dispatch_dtype(t, [](auto tr) { return sizeof(typename decltype(tr)::value_type); });
}

}  // namespace hpcz
