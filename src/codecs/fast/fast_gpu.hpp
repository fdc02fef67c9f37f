// The fast codec on the GPU (fast_gpu.cu): the caller's stream and workspace, no allocation, no
// synchronization.
#pragma once
#include "format/header.hpp"

namespace hpcz::fast {

size_t compress_workspace(const format::HeaderFields& h);
void compress_device(const void* d_in, const format::HeaderFields& h, uint8_t* d_out, uint64_t* d_size, void* d_ws,
                     void* stream);
size_t decompress_workspace(const format::HeaderFields& h);
void decompress_device(const format::HeaderFields& h, const uint8_t* d_archive, void* d_out, uint32_t* d_status,
                       void* d_ws, void* stream);

}  // namespace hpcz::fast
