// Ratio mode on the GPU (gpu_ratio.cu), called by the device API in gpu_backend.cu.
#pragma once
#include <cuda_runtime.h>

#include "format/header.hpp"
#include "hpcz/hpcz.hpp"

namespace hpcz::pipeline {

size_t ratio_compress_workspace(const format::HeaderFields& h);
void ratio_compress_device(const void* d_in, const format::HeaderFields& h, uint8_t* d_out, uint64_t* d_size, void* ws,
                           cudaStream_t s);
size_t ratio_decompress_workspace(const ArchiveInfo& info);
void ratio_decompress_device(const ArchiveInfo& info, const void* d_archive, void* d_out, uint32_t* d_status, void* ws,
                             cudaStream_t s);

}  // namespace hpcz::pipeline
