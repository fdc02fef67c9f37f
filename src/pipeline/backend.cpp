// Which backend a call runs on (Backend::automatic: the GPU where one is usable and the codec has a
// device implementation). Below the calls that choose and above the GPU part that answers.
#include "pipeline/internal.hpp"

namespace hpcz {

Backend resolve_backend(Backend b) {
  if (b == Backend::cpu) return b;
  if (b == Backend::gpu) {
    if (!gpu_available()) pipeline::fail_no_gpu();
    return b;
  }
  return gpu_available() ? Backend::gpu : Backend::cpu;
}

Backend resolve_backend(Backend b, Codec codec) {
  const codecs::CodecOps* c = codecs::find(codec);
  if (b == Backend::automatic && c && !c->device) return Backend::cpu;
  return resolve_backend(b);
}

Backend resolve_backend(Backend b, Codec codec, BoundMode) { return resolve_backend(b, codec); }

}  // namespace hpcz
