// The ratio-class GPU engine's entry points (engine_gpu.cu): the kernel sequence of the ratio and
// interp codecs, Lorenzo on every chunk and, given one, a second predictor chosen per chunk
// (predictor.cuh). Each codec's DeviceOps call these with its predictor (nullptr: Lorenzo alone).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "codecs/codec.hpp"

namespace hpcz::ratio {

struct Predictor;

size_t compress_workspace(const format::HeaderFields& h, const codecs::Slab& slab, const Predictor* extra);
void compress_device(const void* d_in, const format::HeaderFields& h, const codecs::Slab& slab, uint8_t* d_out,
                     uint64_t* d_size, void* ws, void* stream, const Predictor* extra);
size_t decompress_workspace(const format::HeaderFields& h, const codecs::Slab& slab, const Predictor* extra);
void decompress_device(const format::HeaderFields& h, const codecs::Slab& slab, const uint8_t* d_archive, void* d_out,
                       uint32_t* d_status, void* ws, void* stream, const Predictor* extra);

// An archive this library wrote on the device in the same call, its size on the device (d_archive_size):
// decoded without the table and checksum checks (they are not computed for it), d_status not reset.
void decompress_written(const format::HeaderFields& h, const codecs::Slab& slab, const uint8_t* d_archive,
                        const unsigned long long* d_archive_size, void* d_out, uint32_t* d_status, void* ws, void* stream,
                        const Predictor* extra);

// A device batch of the ratio codec's arrays (Lorenzo alone; the same options and dtype) in one set of
// launches a slice of the batch (batch_gpu.cu), each archive the one-array call's bytes. The batch
// takes arrays below BatchSlicePolicy::batched_below bytes; the pipeline codes larger ones alone.
bool compress_batch_takes(const format::HeaderFields& h);
size_t compress_batch_workspace(const codecs::DeviceBatchItem* items, size_t n);
void compress_batch(const codecs::DeviceBatchItem* items, size_t n, void* ws, void* stream);
// And a batch of its archives (any dtypes and radii): those whose reconstruction is the fused one
// (recon_plan.hpp: decompress_batch_takes) in one set of launches a dtype and slice, the others one
// after another.
bool decompress_batch_takes(const format::HeaderFields& h);
size_t decompress_batch_workspace(const codecs::DeviceDecodeItem* items, size_t n);
void decompress_batch(const codecs::DeviceDecodeItem* items, size_t n, void* ws, void* stream);

// The codebook kernel on its own (tests and the codebook benchmark): one book per histogram of nsym
// counts, a thread block each; returns the code lengths (nsym per book); *ms gets the median kernel
// time of reps launches after a warm-up.
std::vector<uint8_t> gpu_build_books(const std::vector<uint32_t>& hists, uint32_t nsym, double* ms, int reps = 1);

}  // namespace hpcz::ratio
