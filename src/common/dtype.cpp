// dtype_size (hpcz.hpp): in the common layer, below the codecs that size their buffers with it and the
// names above them.
#include "common/storage.hpp"

namespace hpcz {

size_t dtype_size(DType t) {
  return detail::dispatch_storage(t, [](auto tr) { return sizeof(typename decltype(tr)::storage_type); });
}

}  // namespace hpcz
