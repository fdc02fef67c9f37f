// Glue between the lossless API (lossless.cpp) and its GPU part (lossless_cuda.cu, or the stub).
#pragma once
#include <cstdint>
#include <vector>

#include "hpcz/hpcz.hpp"

namespace hpcz::lossless {

// One chunk of a host blob: its input bytes and where its output goes in the output buffer.
struct ChunkRef {
  uint64_t in_offset, in_size, out_offset, out_capacity;
};

// Decodes the chunks of `blob` into `out` on the GPU (copies in, one batched launch, copies back all of
// `out`: bytes no chunk covers come back undefined, so `out` should hold chunk outputs only).
// sizes[i] and status[i] as in lossless_decompress_batch. with_workspace = false passes no workspace
// (batches then go in index order, not largest first; the tests compare the two).
void decode_chunks_gpu(const LosslessOptions& opt, const uint8_t* blob, uint64_t blob_size,
                       const std::vector<ChunkRef>& chunks, uint8_t* out, uint64_t out_size,
                       std::vector<uint64_t>& sizes, std::vector<LosslessStatus>& status, bool with_workspace = true);

// Decodes chunks on o.backend; throws Error(corrupt_archive) naming the first bad chunk (names[i] if
// given, else i) unless every chunk decodes to exactly its out_capacity.
void decode_chunks_checked(const LosslessOptions& o, const uint8_t* blob, uint64_t blob_size,
                           const std::vector<ChunkRef>& chunks, uint8_t* out, uint64_t out_size,
                           const std::vector<uint64_t>& names);

// One chunk, encoded alone: raw Deflate (empty if this build has no zlib) or an ORC RLE stream.
std::vector<uint8_t> encode_chunk(const uint8_t* data, size_t size, const LosslessOptions& o);

}  // namespace hpcz::lossless
