// The codec interface: what the pipeline needs of a codec, and nothing more. Each codec (a folder
// under src/codecs/) defines one CodecOps; registry.cpp lists them, and the pipeline looks one up
// by the header's codec id. A codec builds on the shared layers (quant/, predict/, huffman/, gpu/,
// format/) and never includes another codec.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "format/header.hpp"
#include "hpcz/hpcz.hpp"

namespace hpcz::codecs {

// A compression's encoded chunks on the host: chunk c is sizes[c] bytes at at(c).
struct EncodedChunks {
  std::vector<uint32_t> sizes;
  std::unique_ptr<uint8_t[]> slab;  // chunk c at slab + c * slot (codecs with a fixed worst case) ...
  uint64_t slot = 0;
  std::vector<std::vector<uint8_t>> separate;  // ... or in its own buffer
  const uint8_t* at(uint64_t c) const { return slab ? slab.get() + c * slot : separate[c].data(); }
};

// A run of whole chunks of an array, coded as an archive of its own: the streaming path cuts an array
// larger than memory into such slabs. A slab archive is laid out as an array's (header, table, chunks;
// offsets from its own start) under a slab header: the array's header with n_values and n_chunks of
// the run (dims stay the array's: a codec finds its chunk shapes from them and first_chunk). The whole
// array is the slab {0, false} of its own header.
struct Slab {
  uint64_t first_chunk = 0;
  // Compression: the header's range fields are the whole array's (found by a first pass), so the
  // encoder takes them instead of reducing its own input, and sample_maxabs is the whole array's step
  // sample (quant::settle): a slab's bound is settled as the array's.
  bool range_given = false;
  double sample_maxabs = 0.0;
};

// The slab header of chunks [first_chunk, first_chunk + n_chunks) of an array with header h.
inline format::HeaderFields slab_header(const format::HeaderFields& h, uint64_t first_chunk, uint64_t n_chunks) {
  format::HeaderFields s = h;
  const uint64_t v0 = first_chunk * h.chunk_values, v1 = (first_chunk + n_chunks) * h.chunk_values;
  s.n_values = (v1 < h.n_values ? v1 : h.n_values) - v0;
  s.n_chunks = n_chunks;
  return s;
}

// A codec's device entry points (its *_gpu.cu): the caller's stream and workspace, no allocation, no
// synchronization (see hpcz.hpp's device calls). h is a slab header, d_in the slab's first value.
// An array of a device batch: its values, its header template (dims, n_values, n_chunks), its archive.
struct DeviceBatchItem {
  const void* d_in;
  format::HeaderFields h;
  uint8_t* d_out;
  uint64_t* d_size;  // device
};

// An archive of a device batch to decode: its header, its bytes, its values' place, its status word.
struct DeviceDecodeItem {
  format::HeaderFields h;
  const uint8_t* d_archive;
  void* d_out;
  uint32_t* d_status;  // device
};

struct DeviceOps {
  size_t (*compress_workspace)(const format::HeaderFields& h, const Slab& slab);
  void (*compress)(const void* d_in, const format::HeaderFields& h, const Slab& slab, uint8_t* d_out,
                   uint64_t* d_size, void* d_ws, void* stream);
  size_t (*decompress_workspace)(const format::HeaderFields& h, const Slab& slab);
  void (*decompress)(const format::HeaderFields& h, const Slab& slab, const uint8_t* d_archive, void* d_out,
                     uint32_t* d_status, void* d_ws, void* stream);
  // Optional (nullptr: the pipeline codes a batch's arrays one after another): arrays of one dtype
  // in one set of launches, each archive's size to its d_size. The workspace holds the batch's tables,
  // copied there from host memory (a copy that may wait for the stream's earlier work).
  size_t (*compress_batch_workspace)(const DeviceBatchItem* items, size_t n);
  void (*compress_batch)(const DeviceBatchItem* items, size_t n, void* d_ws, void* stream);
  // Optional, as compress_batch: archives (any dtype) decoded in as few sets of launches as their
  // dtypes and versions allow, each one's status to its d_status.
  size_t (*decompress_batch_workspace)(const DeviceDecodeItem* items, size_t n);
  void (*decompress_batch)(const DeviceDecodeItem* items, size_t n, void* d_ws, void* stream);
  // Optional (nullptr: every array or archive): those compress_batch and decompress_batch are for; the
  // pipeline codes the others one after another (in lanes).
  bool (*compress_batch_takes)(const format::HeaderFields& h) = nullptr;
  bool (*decompress_batch_takes)(const format::HeaderFields& h) = nullptr;
};

struct CodecOps {
  Codec id;
  const char* name;
  uint64_t codec_params;  // the header's bytes 128..135, fixed per codec (its format's parameters)

  // Fills the header's chunk fields (chunk_values, block_param, n_chunks) from its
  // dtype and dims and the options; throws invalid_argument for options the codec refuses.
  void (*plan)(format::HeaderFields& h, const Options& opt);
  // The same fields of a parsed header: the message of the first inconsistency, or nullptr.
  const char* (*check_plan)(const format::HeaderFields& h);
  // The most bytes chunk c of a valid header may take (every block or value stored raw).
  uint64_t (*chunk_bound)(const format::HeaderFields& h, uint64_t c);
  // The fewest bytes its decoder accepts for chunk c: a chunk table entry, or a second-stage plain
  // size, outside [chunk_min, chunk_bound] cannot be valid, and is refused before anything is sized
  // from it (the values a chunk table declares must be justified by the bytes that are there).
  uint64_t (*chunk_min)(const format::HeaderFields& h, uint64_t c);
  // An upper bound on any archive of n values of this dtype (header and table included).
  uint64_t (*archive_bound)(uint64_t n, DType dtype);

  // CPU. encode: every chunk of a slab (h its slab header, in its first value), once the header's
  // range, eb_abs and step are settled.
  EncodedChunks (*encode)(const void* in, const format::HeaderFields& h, const Slab& slab);
  // Decodes chunk c (its checksum already verified) into out, the chunk's first value; false if its
  // bytes are malformed. `threads` > 1: the caller hands this chunk all its threads.
  bool (*decode_chunk)(const format::HeaderFields& h, uint64_t c, const uint8_t* src, uint32_t size, void* out,
                       int threads);
  // Chunks of millions of values (decoded one at a time by all threads when there are few of them).
  bool large_chunks;
  // The CPU decoder's one-core time a byte in units of the fast encoder's (parallel_worth: a costlier
  // decoder takes threads on smaller arrays).
  uint32_t decode_cost;
  // Adds plain chunk c's bytes (`size` of them) to z by stage, from the chunk's first
  // min(size, stage_head_bytes) bytes alone (head): false if those are malformed. Optional (nullptr:
  // a chunk adds nothing). `hpcz info` reads no more of a chunk than this: under the second stage,
  // only that prefix of it is decoded.
  bool (*chunk_stages)(const ArchiveInfo& info, uint64_t c, const uint8_t* head, uint32_t size, StageSizes& z);
  uint32_t stage_head_bytes;

  // GPU: nullptr in a build without CUDA.
  const struct DeviceOps* device;
};

// The codec with this id, or nullptr.
const CodecOps* find(Codec id);
// The codec with this id; throws invalid_argument for an unknown one.
const CodecOps& get(Codec id);
// Every registered codec.
const std::vector<const CodecOps*>& all();

}  // namespace hpcz::codecs
