// Ratio-mode CUDA kernels. They write and read exactly the bytes of the CPU reference
// (codecs/ratio_class/chunk.hpp), using the same per-value functions (quantize, lorenzo_delta,
// quant_symbol), the same codebook steps and the same stream helpers.
//
// Compression, all on the caller's stream, sizes known to the host from the dims alone:
//   range -> dual_quant (symbols, per-chunk histograms, per-tile outlier and exception counts), or for
//   chunks whose planes are too large for it prequant (q per value) -> lorenzo -> scans of the tile counts -> book (per chunk: sort, lengths, codes) -> bit counts
//   per tile -> scan -> layout (chunk sizes and offsets, raw fallback) -> zero -> encode (codewords,
//   gaps, sequence starts) + emit (outliers, exceptions) + chunk headers + raw chunks -> checksums -> seal.
// Decompression:
//   table check -> parse (per chunk: checksum, layout, decode tables) -> decode (one thread per
//   1024-bit subsequence, count, block scan, decode) -> outliers -> prefix sums along z, y, then x fused
//   with dequantization -> exceptions, raw chunks.
// Tiles of kTile values never straddle a chunk, so every per-tile result belongs to one chunk.
//
// This header holds what the stages share: the launch shape, the tile grid and the per-chunk records.
#pragma once
#include <type_traits>

#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_store.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "codecs/ratio_class/chunk.hpp"
#include "codecs/ratio_class/dual_plan.hpp"
#include "codecs/ratio_class/recon_plan.hpp"
#include "format/header.hpp"
#include "gpu/archive_passes.cuh"
#include "gpu/lookback.cuh"
#include "huffman/stream.hpp"
#include "quant/bound.hpp"

namespace hpcz::ratio::cuda {

using namespace gpu;  // the archive passes, DecodeStatus

using predict::ChunkShape;

constexpr int kThreads = 256;
constexpr int kPerThread = 16;
constexpr uint32_t kTile = kThreads * kPerThread;  // 4096 values
constexpr int kSortPerThread = kMaxRadius * 2 / kThreads;  // 16 keys per thread: 4096 symbols (books, decode tables)

// Where chunk c and tile t sit; identical for every chunk but the last (host computes the same).
struct Grid {
  ChunkShape full, last;        // shapes of a full chunk and of the last chunk
  uint64_t n_chunks, chunk_values;
  uint32_t tiles_per_chunk;     // tiles of a full chunk
  uint64_t n_tiles;
  __host__ __device__ ChunkShape shape(uint64_t c) const { return c + 1 == n_chunks ? last : full; }
  __host__ __device__ uint64_t chunk_of_tile(uint64_t t) const { return t / tiles_per_chunk; }
  __host__ __device__ uint64_t first_tile(uint64_t c) const { return c * tiles_per_chunk; }
};

// Chunks [first_chunk, first_chunk + n_chunks) of an array of shape s (a slab: codecs::Slab).
inline Grid make_grid(const predict::Shape& s, uint64_t first_chunk, uint64_t n_chunks) {
  Grid g{};
  g.n_chunks = n_chunks;
  g.chunk_values = s.chunk_values();
  if (!n_chunks) return g;
  g.full = predict::chunk_shape(s, 0);
  g.last = predict::chunk_shape(s, first_chunk + n_chunks - 1);
  g.tiles_per_chunk = uint32_t(div_ceil(g.full.count(), kTile));
  g.n_tiles = (n_chunks - 1) * g.tiles_per_chunk + div_ceil(g.last.count(), kTile);
  return g;
}

// Per-chunk results of compression.
struct ChunkInfo {
  unsigned long long offset;  // in the archive
  uint32_t size, raw;
  uint32_t skip;  // the interpolation codec: the other predictor's chunk was chosen (choose_kernel)
  uint32_t total_bits, n_out, n_exc, out_base, exc_base;  // bases: exclusive tile-scan values at the chunk
  unsigned long long sum;                                  // checksum terms, summed by checksum_kernel
};

struct CompressBuffers {
  gpu::CompressState* st;
  uint32_t* q;             // n
  uint16_t* sym;           // n
  uint32_t* hist;          // n_chunks * nsym
  uint32_t* tile_out;      // n_tiles (counts, then exclusive prefixes)
  uint32_t* tile_exc;      // n_tiles
  unsigned long long* tile_desc;  // n_tiles: look-back descriptors of the encoder (bits per tile)
  uint8_t* len;            // n_chunks * nsym
  uint32_t* code;          // n_chunks * nsym
  ChunkInfo* info;         // n_chunks
};

__device__ __forceinline__ void local_xyz(const ChunkShape& c, uint32_t i, uint32_t& z, uint32_t& y, uint32_t& x) {
  const uint32_t plane = c.cy * c.cx;
  z = i / plane;
  const uint32_t r = i - z * plane;
  y = r / c.cx;
  x = r - y * c.cx;
}

// The tile holding global value index gi (only for the rare exceptions: it divides).
__device__ __forceinline__ uint64_t tile_of(const Grid& g, uint64_t gi) {
  const uint64_t c = gi / g.chunk_values;
  return g.first_tile(c) + (gi - c * g.chunk_values) / kTile;
}

struct DecodeChunk {
  uint32_t bad, raw;
  uint32_t zeros;  // outlier symbols seen by the decoder
  uint32_t expect; // checksum from the table
  uint32_t kind;   // kKindCoded, kKindRaw or (the interpolation codec) kKindInterp
  uint32_t params, masked;     // an interpolation chunk's
  unsigned long long mask_bits;
  ChunkLayout L;
  unsigned long long offset;
  unsigned long long sum;  // checksum terms, summed by verify_kernel
};

// Chunks the Lorenzo reconstruction leaves alone: rejected, raw (exception_kernel copies them) or
// interpolation chunks (interp_kernels.cuh).
__device__ __forceinline__ bool lorenzo_skips(const DecodeChunk& d) { return d.bad || d.raw || d.kind == kKindInterp; }

// A chunk's table of codes longer than kFastBits (huffman::LongTable), built by parse_kernel.
using huffman::LongTable;

// Checksums, for the encoder and the decoder (HPCZ-SUM is a sum of position-keyed terms: partial sums
// from many blocks add up). This block's share of words [0, n) of w, added to *sum. Four loads in flight a
// step: with one, compression's and decompression's checksum passes waited on each load in turn.
static __device__ void add_checksum_terms(const uint32_t* __restrict__ w, uint32_t n, unsigned long long* sum) {
  using Sum = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ typename Sum::TempStorage tmp;
  const uint64_t stride = uint64_t(gridDim.x) * kThreads;
  uint64_t k = uint64_t(blockIdx.x) * kThreads + threadIdx.x;
  unsigned long long s = 0;
  for (; k + 3 * stride < n; k += 4 * stride) {
    const uint32_t a = w[k], b = w[k + stride], c = w[k + 2 * stride], d = w[k + 3 * stride];
    s += format::checksum_term(k, a) + format::checksum_term(k + stride, b) + format::checksum_term(k + 2 * stride, c) +
         format::checksum_term(k + 3 * stride, d);
  }
  for (; k < n; k += stride) s += format::checksum_term(k, w[k]);
  s = Sum(tmp).Sum(s);
  if (threadIdx.x == 0 && s) atomicAdd(sum, s);
}

}  // namespace hpcz::ratio::cuda
