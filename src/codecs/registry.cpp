// The one table of codecs. Adding a codec: its folder under src/codecs/, its CodecOps, one line here.
#include "codecs/codec.hpp"
#include "common/error.hpp"

namespace hpcz {
namespace fast { extern const codecs::CodecOps kCodec; }
namespace ratio { extern const codecs::CodecOps kCodec; }
namespace interp { extern const codecs::CodecOps kCodec; }

namespace codecs {

const std::vector<const CodecOps*>& all() {
  static const std::vector<const CodecOps*> table = {
      &fast::kCodec,
      &ratio::kCodec,
      &interp::kCodec,
  };
  return table;
}

const CodecOps* find(Codec id) {
  for (const CodecOps* c : all())
    if (c->id == id) return c;
  return nullptr;
}

const CodecOps& get(Codec id) {
  const CodecOps* c = find(id);
  if (!c) fail(ErrorCode::invalid_argument, "unknown codec");
  return *c;
}

}  // namespace codecs
}  // namespace hpcz
