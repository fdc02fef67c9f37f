// A second predictor of the ratio-class engine (engine_gpu.cu), chosen per chunk against Lorenzo: a
// table of its stages, which the engine's sequence calls at their places. Lorenzo's stages always run
// (on the chunks the predictor leaves to it); the predictor's kernels and buffers are its own (its part
// of the workspace). A new predictor is a table like the interp codec's (interp_gpu.cu) and its kernels;
// its chunks are a kind of the shared chunk format (chunk.hpp), which parse_kernel reads.
#pragma once
#include <cuda_runtime.h>

#include "codecs/codec.hpp"
#include "codecs/ratio_class/kernels_common.cuh"

namespace hpcz::ratio {

inline size_t align256(size_t b) { return (b + 255) & ~size_t(255); }

// Carves a workspace into aligned arrays; with base == nullptr it only adds up the size.
struct Carver {
  uint8_t* base;
  size_t used = 0;
  template <class P> P* take(size_t bytes) {
    P* p = base ? reinterpret_cast<P*>(base + used) : nullptr;
    used += align256(bytes ? bytes : 1);
    return p;
  }
};

// Blocks of 256 threads for `items`, at least 1 and at most cap.
inline unsigned blocks_for(uint64_t items, uint64_t cap = 4096) {
  uint64_t b = (items + 255) / 256;
  return unsigned(b < 1 ? 1 : (b > cap ? cap : b));
}

// One compression's sequence, as a predictor's stages see it.
struct CompressRun {
  const void* d_in;  // the slab's values (h->dtype)
  const format::HeaderFields* h;
  const codecs::Slab* slab;
  cuda::Grid g;
  cuda::CompressBuffers b;  // Lorenzo's
  bool q_is_delta;          // dual_quant_kernel ran: b.q holds Lorenzo's deltas (LorenzoEmit)
  unsigned range_grid;      // the range pass's blocks
  void* scan_temp;
  size_t scan_bytes;
  void* ws;                 // the predictor's part of the workspace (its compress_bytes)
  uint8_t* d_out;
  cudaStream_t s;
};

// One decompression's, after the engine's parse (dc) and Huffman decode (v: the symbols' deltas).
struct DecompressRun {
  const format::HeaderFields* h;
  cuda::Grid g;
  const uint8_t* d_archive;
  cuda::DecodeChunk* dc;
  uint32_t* v;
  void* d_out;  // the values (h->dtype)
  uint32_t* d_status;
  void* ws;     // the predictor's part of the workspace (its decompress_bytes)
  cudaStream_t s;
};

// What the engine's own kernels take of the predictor's buffers.
struct PredictorChunks {
  const uint32_t* lorenzo_skip;  // n_chunks: 1 where the Lorenzo stages leave the chunk out
  // Its coded chunks (symbols, books, records, the encoder's tile states, header bytes a chunk):
  // zero_kernel and encode_kernel serve both predictors' chunks in one launch each.
  const uint16_t* sym;
  const uint8_t* len;
  const uint32_t* code;
  const cuda::ChunkInfo* info;
  unsigned long long* tile_desc;
  uint32_t head;
  cuda::ChunkInfo* chosen;  // n_chunks: each chunk's record once chosen (checksums, table)
};

struct Predictor {
  // Its workspace for this header and grid (0: it does not run on it; Lorenzo codes every chunk).
  size_t (*compress_bytes)(const format::HeaderFields& h, const cuda::Grid& g);
  size_t (*decompress_bytes)(const format::HeaderFields& h, const cuda::Grid& g);
  PredictorChunks (*chunks)(const CompressRun& r);
  // Compression, in the sequence's order:
  void (*init)(const CompressRun& r);    // after the engine's init kernel
  bool (*range)(const CompressRun& r);   // a range pass with its own hook (true), else the engine's
  void (*sample)(const CompressRun& r);  // before Lorenzo's stages: which predictors run on each chunk
  void (*sizes)(const CompressRun& r);   // after Lorenzo's layout: its chunks' sizes, each chunk's choice
  void (*emit)(const CompressRun& r);    // outliers and exceptions of every chunk, Lorenzo's included
  void (*head)(const CompressRun& r);    // after Lorenzo's chunk headers: its chunks' headers
  // Decompression:
  void (*scatter)(const DecompressRun& r);      // after the outliers, before Lorenzo's reconstruction
  void (*reconstruct)(const DecompressRun& r);  // after Lorenzo's reconstruction, before the exceptions
};

// The engine's launches that a predictor's stages share (engine_gpu.cu): the codebook kernel on n
// histograms, and chunk sizes from tile counts and histograms (the counts' scans, the books, the layout
// with `head` header bytes a chunk).
void build_books(uint32_t nsym, unsigned n, const uint32_t* hist, uint8_t* len, uint32_t* code, cuda::ChunkInfo* info,
                 cudaStream_t s);
void size_chunks(const CompressRun& r, uint32_t* tile_out, uint32_t* tile_exc, const uint32_t* hist, uint8_t* len,
                 uint32_t* code, cuda::ChunkInfo* info, uint32_t head);

}  // namespace hpcz::ratio
