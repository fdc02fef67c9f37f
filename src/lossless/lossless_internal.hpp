// Glue between the lossless API (lossless.cpp) and its GPU part (lossless_cuda.cu, or the stub).
#pragma once
#include <cstdint>
#include <vector>

#include "hpcz/hpcz.hpp"

namespace hpcz::lossless {

// The most a stream can expand, and so the fewest input bytes that can justify a claimed output size
// (checked before anything is sized from a claim). Deflate: a 258-byte match costs at least two bits
// (a length code and a distance code of one bit each), so 1032 bytes a byte (RFC 1951). ORC RLE (v1, v2):
// no run yields more than 128 values a byte (an RLE v2 delta run: 512 values in 4 bytes).
constexpr uint64_t kMaxDeflateExpansion = 1032;
constexpr uint64_t kMaxRleValuesPerByte = 128;

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

// The first bytes of one chunk (o.codec's stream, on the CPU): decodes until `want` bytes are out (or
// the stream ends) into out, which holds want bytes, and returns how many it got (fewer only when the
// stream decodes to fewer); throws Error(corrupt_archive) if the stream is malformed before then.
// Reads and writes no more than those bytes need: what a summary of a chunk (`hpcz info`) decodes.
uint64_t decode_prefix(const LosslessOptions& o, const uint8_t* in, uint64_t in_size, uint8_t* out, uint64_t want);

// One chunk, encoded alone: raw Deflate (empty if this build has no zlib) or an ORC RLE stream.
std::vector<uint8_t> encode_chunk(const uint8_t* data, size_t size, const LosslessOptions& o);

}  // namespace hpcz::lossless
