// Glue between the public API, the archive format, the codecs and the backends.
#pragma once
#include <vector>

#include "codecs/codec.hpp"
#include "common/error.hpp"
#include "format/header.hpp"
#include "hpcz/hpcz.hpp"
#include "lossless/lossless_internal.hpp"

namespace hpcz::pipeline {

// Checks the request and fills every header field that does not depend on the data (the codec
// plans its chunks).
format::HeaderFields header_template(DType dtype, const std::vector<uint64_t>& dims, const Options& opt);

// Parses the header; with full, also the chunk table, which must lie inside `size` bytes.
ArchiveInfo parse_archive(const uint8_t* a, size_t size, bool full);

// The header fields of a parsed archive (what the codecs' decoders take).
format::HeaderFields header_of(const ArchiveInfo& info);

// The lossless second stage (second_stage.cpp): wraps a finished version 1 archive (CPU), and unwraps
// a version 2 archive with the stage into the plain archive (the chunk decoding on `backend`).
std::vector<uint8_t> add_second_stage(const std::vector<uint8_t>& plain);
// The encoded pieces of a staged archive, by codec (0 Deflate, 1 ORC RLE v2): where each lies in the
// archive and where it goes in a dense output buffer of dense[k] bytes, the chunk it belongs to, and
// every chunk's plain size. Validates checksums and the stage headers.
struct StagePieces {
  std::vector<lossless::ChunkRef> refs[2];
  std::vector<uint64_t> chunk_of[2];
  uint64_t dense[2] = {0, 0};
  std::vector<uint64_t> plain_size;
};
StagePieces second_stage_pieces(const uint8_t* archive, const ArchiveInfo& info);
std::vector<uint8_t> remove_second_stage(const uint8_t* archive, size_t size, const ArchiveInfo& info, Backend backend);

// The backends. compress_*: a header template in, the finished archive out (the range pass settles
// the bound and step). decompress_*: a parsed plain archive into out (n_values values).
std::vector<uint8_t> compress_cpu(const void* in, format::HeaderFields h);
void decompress_cpu(const uint8_t* archive, const ArchiveInfo& info, void* out);
// Defined in the CUDA part (or as stubs that throw when the build has no CUDA).
std::vector<uint8_t> compress_gpu_host(const void* in, const format::HeaderFields& h);
void decompress_gpu_host(const uint8_t* archive, const ArchiveInfo& info, void* out);

}  // namespace hpcz::pipeline
