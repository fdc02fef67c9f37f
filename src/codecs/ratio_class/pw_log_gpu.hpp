// The ratio-class codecs' device entry points with pw_rel's log2 transform (pw_log_gpu.cu: pw_log_chunk.hpp's
// chunks around the engine, the same bytes as the CPU's): the engine's own for every other header. Each
// codec's DeviceOps call these with its predictor (nullptr: Lorenzo alone).
#pragma once
#include <cstddef>
#include <cstdint>

#include "codecs/codec.hpp"

namespace hpcz::ratio {

struct Predictor;

size_t class_compress_workspace(const format::HeaderFields& h, const codecs::Slab& slab, const Predictor* extra);
void class_compress(const void* d_in, const format::HeaderFields& h, const codecs::Slab& slab, uint8_t* d_out,
                    uint64_t* d_size, void* ws, void* stream, const Predictor* extra);
size_t class_decompress_workspace(const format::HeaderFields& h, const codecs::Slab& slab, const Predictor* extra);
void class_decompress(const format::HeaderFields& h, const codecs::Slab& slab, const uint8_t* d_archive, void* d_out,
                      uint32_t* d_status, void* ws, void* stream, const Predictor* extra);

}  // namespace hpcz::ratio
