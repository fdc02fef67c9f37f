// The ratio codec on the GPU (ratio_gpu.cu): the caller's stream and workspace, no allocation, no
// synchronization; every grid size follows from the dims, so nothing is read back.
#pragma once
#include <vector>

#include "format/header.hpp"

namespace hpcz::ratio {

size_t compress_workspace(const format::HeaderFields& h);
void compress_device(const void* d_in, const format::HeaderFields& h, uint8_t* d_out, uint64_t* d_size, void* d_ws,
                     void* stream);
size_t decompress_workspace(const format::HeaderFields& h);
void decompress_device(const format::HeaderFields& h, const uint8_t* d_archive, void* d_out, uint32_t* d_status,
                       void* d_ws, void* stream);

// The codebook kernel on its own (tests and the codebook benchmark): one book per histogram of nsym
// counts, a thread block each; returns the code lengths (nsym per book); *ms gets the median kernel
// time of reps launches after a warm-up.
std::vector<uint8_t> gpu_build_books(const std::vector<uint32_t>& hists, uint32_t nsym, double* ms, int reps = 1);

}  // namespace hpcz::ratio
