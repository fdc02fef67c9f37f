// Ratio-mode CUDA kernels. The Huffman stages (src/huffman/: book_kernels.cuh, encode_kernels.cuh,
// decode_kernels.cuh) see the codec's chunks through HuffmanChunks: the tile grid, where chunk_layout
// puts a chunk's stream, and the symbols' deltas; their records are ChunkInfo (book, encoder) and
// DecodeChunk (decoder). The interp codec's chunks take the same stages, through the same adapter.
#pragma once
#include "codecs/ratio_class/kernels_common.cuh"
#include "huffman/book_kernels.cuh"
#include "huffman/decode_kernels.cuh"
#include "huffman/encode_kernels.cuh"

namespace hpcz::ratio::cuda {

// Passed by value where the kernels took the Grid (the same bytes).
struct HuffmanChunks {
  Grid g;
  // The encoder's tile is the grid's: one look-back state per tile.
  static constexpr int kBlockThreads = cuda::kThreads, kItemsPerThread = cuda::kPerThread;
  using Info = ChunkInfo;
  using Decode = DecodeChunk;

  __device__ __forceinline__ uint64_t chunk_of_tile(uint64_t t) const { return g.chunk_of_tile(t); }
  __device__ __forceinline__ uint64_t first_tile(uint64_t c) const { return g.first_tile(c); }
  __device__ __forceinline__ uint32_t count(uint64_t c) const { return g.shape(c).count(); }
  __device__ __forceinline__ uint64_t first_value(uint64_t c) const { return c * g.chunk_values; }

  // The stream's place in a chunk of head header bytes (chunk.hpp's layout), and in a parsed chunk.
  __device__ __forceinline__ static huffman::StreamPlace place(uint32_t nsym, const ChunkInfo& i, uint32_t head) {
    const ChunkLayout L = chunk_layout(nsym, i.total_bits, i.n_out, i.n_exc, 0, head);
    return {L.total_bits, L.seq_first, L.gaps, L.bits};
  }
  __device__ __forceinline__ static huffman::StreamPlace place(const DecodeChunk& d) {
    return {d.L.total_bits, d.L.seq_first, d.L.gaps, d.L.bits};
  }
  // The decoder's output word for a symbol: the Lorenzo (or interpolation) delta.
  __device__ __forceinline__ static uint32_t delta(uint32_t sym, uint32_t radius) { return predict::symbol_delta(sym, radius); }
};
static_assert(sizeof(HuffmanChunks) == sizeof(Grid), "passed where the Grid was");

using EncodeSource = huffman::cuda::EncodeSource<ChunkInfo>;
using huffman::cuda::decode_kernel;
using huffman::cuda::encode_kernel;
using huffman::cuda::launch_books;

}  // namespace hpcz::ratio::cuda
