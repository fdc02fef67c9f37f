// The ratio codec's device entry points: the ratio-class engine with Lorenzo on every chunk.
#include "codecs/codec.hpp"
#include "codecs/ratio_class/engine_gpu.hpp"
#include "codecs/ratio_class/pw_log_gpu.hpp"

namespace hpcz::ratio {
namespace {

size_t compress_ws(const format::HeaderFields& h, const codecs::Slab& slab) {
  return ratio::class_compress_workspace(h, slab, nullptr);
}
void compress(const void* d_in, const format::HeaderFields& h, const codecs::Slab& slab, uint8_t* d_out, uint64_t* d_size,
              void* ws, void* stream) {
  class_compress(d_in, h, slab, d_out, d_size, ws, stream, nullptr);
}
size_t decompress_ws(const format::HeaderFields& h, const codecs::Slab& slab) {
  return ratio::class_decompress_workspace(h, slab, nullptr);
}
void decompress(const format::HeaderFields& h, const codecs::Slab& slab, const uint8_t* d_archive, void* d_out,
                uint32_t* d_status, void* ws, void* stream) {
  class_decompress(h, slab, d_archive, d_out, d_status, ws, stream, nullptr);
}

}  // namespace

extern const codecs::DeviceOps kDevice;
const codecs::DeviceOps kDevice = {compress_ws, compress, decompress_ws, decompress,
                                   ratio::compress_batch_workspace, ratio::compress_batch,
                                   ratio::decompress_batch_workspace, ratio::decompress_batch,
                                   ratio::compress_batch_takes, ratio::decompress_batch_takes};

}  // namespace hpcz::ratio
