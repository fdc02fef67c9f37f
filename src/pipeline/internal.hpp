// Glue between the public API, the archive format, the codecs and the backends. Each section names the
// file that defines it. The files call downwards only, so that each can be read and tested above the
// ones it uses: request.cpp and archive.cpp; the CPU backend and the GPU part; backend.cpp (which of
// them a call takes); second_stage.cpp; the streaming files; on top api.cpp, batch.cpp, c_api.cpp
// (docs/DESIGN.md, Layers).
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "codecs/codec.hpp"
#include "common/error.hpp"
#include "format/header.hpp"
#include "hpcz/hpcz.hpp"
#include "lossless/lossless_internal.hpp"

namespace hpcz::pipeline {

// ---- a call's request (request.cpp) ----
// Checks the request and fills every header field that does not depend on the data (the codec
// plans its chunks).
format::HeaderFields header_template(DType dtype, const std::vector<uint64_t>& dims, const Options& opt);

// ---- storage types (storage.cpp; common/storage.hpp) ----
// n values of a storage type widened to its code type, and n code values narrowed into out.
// Throws invalid_argument naming the first value of a storage type's array (int64, uint64) that its code
// type does not hold exactly; the others always widen exactly.
void check_widens_exactly(const void* in, DType storage, uint64_t n);
std::unique_ptr<uint8_t[]> widen_values(const void* in, DType storage, uint64_t n);
void narrow_values(const void* in, DType storage, uint64_t n, void* out);
// A buffer for n code values of a storage type, its pages touched on all cores (a decoder fills it).
std::unique_ptr<uint8_t[]> code_buffer(DType storage, uint64_t n);
// info as its codec decodes it: the dtype its code type (the decoders write code values).
ArchiveInfo code_info(ArchiveInfo info);

// Error(invalid_argument) where the archive's array is above limits.max_output.
void check_limits(const ArchiveInfo& info, const DecodeLimits& limits);

// ---- quality targets (quality.cpp; the loop is api.cpp's) ----
// The PSNR (dB) a psnr or nrmse request asks for (NRMSE e: -20 log10 e); Error(invalid_argument) for a
// target out of range.
double quality_target_psnr(const Options& opt);
// A lower bound of the PSNR of y (decoded) against x over the finite, non-fill values, with the range
// and eb_abs of info (their archive's); infinity where every such value is exact. The same on every
// backend for the same bytes.
double psnr_lower_bound(const void* x, const void* y, const ArchiveInfo& info);
// Header bytes 13..15 for a PSNR and back (0.01 dB, rounded down; 0xffffff: infinite).
uint32_t quality_field(double psnr);
double quality_of_field(uint32_t q);
uint32_t quality_field_of(double recorded);  // quality_of_field's value back to its field, exactly
// Rewrites a rel archive's header as the quality request's: its mode and target, the PSNR achieved
// (the version follows the mode: format::archive_version).
void record_quality(std::vector<uint8_t>& archive, const Options& opt, double psnr);

// ---- reading archives (archive.cpp) ----
// Parses the header; with full, also the chunk table, which must lie inside `size` bytes.
ArchiveInfo parse_archive(const uint8_t* a, size_t size, bool full);

// Checks a parsed header's chunk table (its checksum, every entry in its place) and fills info.chunks.
void parse_table(ArchiveInfo& info, const uint8_t* table);

// The header fields of a parsed archive (what the codecs' decoders take).
format::HeaderFields header_of(const ArchiveInfo& info);

// ---- the lossless second stage (second_stage.cpp; a stored chunk's layout: stage_layout.hpp) ----
// Wraps a finished version 1 archive (CPU), and unwraps
// a version 2 archive with the stage into the plain archive (the chunk decoding on `backend`).
std::vector<uint8_t> add_second_stage(const std::vector<uint8_t>& plain);
// Chunks' stored forms under the stage (each the smallest of as-is, Deflate, ORC RLE v2): chunk c's
// bytes src[c], size[c]. run(tasks, fn) calls fn(k) for every k < tasks, in any order, on any threads
// (each piece of each chunk, with each codec, is a task).
using RunEach = std::function<void(uint64_t, const std::function<void(uint64_t)>&)>;
std::vector<std::vector<uint8_t>> stage_chunks(const uint8_t* const* src, const uint32_t* size, uint64_t n,
                                               const RunEach& run);
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
// A stored chunk's stage header (FORMAT.md 13).
struct StageHead {
  uint8_t tag = 0;      // 0: the plain chunk as it is; 1: Deflate pieces; 2: ORC RLE v2 pieces
  int log2 = 0;         // tags 1, 2: pieces of 2^log2 plain bytes (the last one shorter)
  uint64_t plain = 0;   // the plain chunk's size
  uint64_t pieces = 0;  // tags 1, 2: how many
};
// Stored chunk c of a staged archive (size bytes at s; its checksum is the caller's), checked without
// decoding any of it: the tag, the piece size, a plain size within the codec's [chunk_min, chunk_bound]
// for chunk c, the piece table inside the chunk, and pieces that fill it exactly, each long enough to
// decode to its plain length (lossless::kMaxDeflateExpansion, kMaxRleValuesPerByte). Error(corrupt_archive).
StageHead read_stage_head(const uint8_t* s, uint32_t size, const ArchiveInfo& info, uint64_t c);
// How many of a stored chunk's first bytes read_stage_head reads (its stage header and piece table), from
// the first min(size, 6) of them: what a reader that has not the whole chunk must fetch first.
uint64_t stage_head_bytes(const uint8_t* s, uint32_t size);
// read_stage_head of every chunk: what decompress() checks before it sizes the output.
void check_stage_heads(const uint8_t* archive, const ArchiveInfo& info);
// The plain chunk's first min(want, sh.plain) bytes into out: decodes the beginning of its first piece only.
uint64_t stage_plain_head(const uint8_t* s, const StageHead& sh, uint8_t* out, uint64_t want);
// The pieces are decoded in batches of at most batch_bytes decoded bytes (16 Ki pieces of 16 KiB: a batch
// still gives every warp of a large GPU work), each densely into a scratch buffer, then placed: the
// memory removal takes beyond the plain archive is that, whatever the archive's size.
constexpr uint64_t kStageBatchBytes = uint64_t(256) << 20;
std::vector<uint8_t> remove_second_stage(const uint8_t* archive, size_t size, const ArchiveInfo& info, Backend backend,
                                         uint64_t batch_bytes = kStageBatchBytes);
// The values of a staged archive (inspect()'s info) into out, on the CPU: the stage comes off a run of
// chunks at a time (batch_bytes of plain chunks, or one chunk), each run decoded straight into out, so
// that the memory it takes beyond out stays about twice that whatever the archive's size.
void decompress_staged_cpu(const uint8_t* archive, const ArchiveInfo& info, void* out,
                           uint64_t batch_bytes = kStageBatchBytes);

// ---- the streaming path (stream.cpp, stream_pool, stream_plan, stream_lanes, stream_io) ----
// A lane's coder: the buffers of one slab (codecs::Slab) and the calls that code it, on the CPU or on
// one GPU. Results stay valid until the next call.
class SlabCoder {
 public:
  virtual ~SlabCoder() = default;
  // compress: the slab's values go here; decompress: the slab archive.
  virtual uint8_t* input() = 0;
  // The slab archive of the values in input() (sh: the slab header, range settled); *size its bytes.
  virtual const uint8_t* compress(const format::HeaderFields& sh, const codecs::Slab& slab, uint64_t& size) = 0;
  // The values of the slab archive in input() (sh: its header), its chunk checksums verified.
  virtual const uint8_t* decompress(const format::HeaderFields& sh, const codecs::Slab& slab) = 0;
};
// h: the array's header; in_bytes, out_bytes: the largest input and output of a slab.
std::unique_ptr<SlabCoder> make_cpu_coder(const format::HeaderFields& h, size_t in_bytes, size_t out_bytes);
// Defined in the CUDA part (or a stub that throws): a lane on GPU `device`, its own stream, pinned
// host buffers and device buffers (ws_bytes of workspace, from gpu_slab_workspace).
std::unique_ptr<SlabCoder> make_gpu_coder(int device, const format::HeaderFields& h, size_t in_bytes,
                                          size_t out_bytes, size_t ws_bytes);
size_t gpu_slab_workspace(const format::HeaderFields& sh, bool compress);

// The array's header, chunks [first_chunk, first_chunk + entries.size()) at their entries' offsets in
// a (checksums verified): their values into out, the first chunk's first value.
void decode_chunks_cpu(const uint8_t* a, const format::HeaderFields& h, const std::vector<ChunkEntry>& entries,
                       uint64_t first_chunk, void* out);
// Lays out header (h, its archive_size and table checksum filled in), table and chunks.
std::vector<uint8_t> assemble(format::HeaderFields& h, const codecs::EncodedChunks& chunks);

// The backends. compress_*: a header template in, the finished archive out (the range pass settles
// the bound and step). decompress_*: a parsed plain archive into out (n_values values).
std::vector<uint8_t> compress_cpu(const void* in, format::HeaderFields h);
void decompress_cpu(const uint8_t* archive, const ArchiveInfo& info, void* out);
// Defined in the CUDA part (or as stubs that throw when the build has no CUDA).
// The archive of in: its size first, then its bytes copied to place(size) (a vector's, or a caller's
// buffer: no copy in between).
size_t compress_gpu_host(const void* in, const format::HeaderFields& h, const std::function<uint8_t*(size_t)>& place);
void decompress_gpu_host(const uint8_t* archive, const ArchiveInfo& info, void* out);
// The current GPU and what a call may take of its free memory. Where the one-shot GPU host path's
// buffers (gpu_one_shot_bytes) exceed it, the host calls take the streaming path (stream.cpp) on that
// GPU alone, within that memory, instead of failing.
struct GpuRoom {
  int device = 0;
  size_t bytes = 0;
};
GpuRoom current_gpu_room();
size_t gpu_one_shot_bytes(const format::HeaderFields& h, bool compress);
// The device calls' workspace for a header: the codec's, then a storage type's code values (widened
// there before coding, or decoded there before narrowing).
size_t device_compress_workspace(const format::HeaderFields& h);
size_t device_decompress_workspace(const format::HeaderFields& h);
// The host calls on the streaming path: the whole archive (plain: no second stage) of an array in
// memory, and the values of a plain archive in memory into out; a GPU backend uses room's GPU alone.
// compress_stream for the modes coded slab by slab (every mode but the quality targets: api.cpp).
ArchiveInfo compress_slabs(Source& in, DType dtype, const std::vector<uint64_t>& dims, const Options& opt, Sink& out,
                           const StreamOptions& so);
// decompress_stream for archives decoded slab by slab (every array but a storage type's: api.cpp).
ArchiveInfo decompress_slabs(Source& in, Sink& out, Backend backend, const StreamOptions& so, const DecodeLimits& limits);
std::vector<uint8_t> compress_host_stream(const void* in, DType dtype, const std::vector<uint64_t>& dims,
                                          const Options& opt, const GpuRoom& room);
void decompress_host_stream(const uint8_t* archive, size_t size, void* out, size_t out_capacity, Backend backend,
                            const GpuRoom& room);

// ---- batches (batch.cpp; the GPU side in host_lanes.cu) ----
// hpcz never hands out an archive it cannot read back: the whole frame is checked (header, codec
// fields, chunk table: a pass over the table, not over the data); Error(internal) otherwise (api.cpp).
void check_reads_back(const uint8_t* a, size_t size);
struct BatchCompressItem {
  size_t index;  // in the caller's batch
  const void* data;
  format::HeaderFields h;  // header_template's
};
// Item k's archive is ready (bytes valid during the call): checks it and returns where its size bytes
// go, or nullptr where the item failed or the callback placed it itself. From several threads at once.
using PlaceBatchArchive = std::function<uint8_t*(size_t k, const uint8_t* bytes, size_t size)>;
// Codes items on the current GPU; a failure goes to status[items[k].index] (the other items go on).
void compress_batch_gpu(const std::vector<BatchCompressItem>& items, const PlaceBatchArchive& place,
                        std::vector<ItemStatus>& status);
struct BatchDecodeItem {
  size_t index;
  const uint8_t* archive;
  ArchiveInfo info;  // inspect()'s: a plain archive (no second stage) of at least one value
  void* out;
};
void decompress_batch_gpu(const std::vector<BatchDecodeItem>& items, std::vector<ItemStatus>& status);
void release_gpu_buffers();
// Why gpu_available() is false, for Error(backend_unavailable): no CUDA in this build, no usable GPU,
// or a child forked after CUDA was started in its parent (CUDA cannot be used there at all).
std::string gpu_unavailable_reason();
[[noreturn]] void fail_no_gpu();

}  // namespace hpcz::pipeline
