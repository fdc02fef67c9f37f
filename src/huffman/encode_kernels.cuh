// The GPU Huffman stream's encoder, shared by the ratio-class codecs: codewords with gaps and sequence
// starts, a tile per block. What it needs of the codec (CUB-style: a policy type and records by their
// members; the ratio codec's is codecs/ratio_class/huffman_chunks.cuh):
//   Chunks, passed by value: kBlockThreads and kItemsPerThread, the codec's tile (never straddling a
//     chunk; one look-back state per tile); Info, its per-chunk record; chunk_of_tile(t), first_tile(c),
//     count(c) (values) and first_value(c) (index of its first value); static place(nsym, info, head),
//     where the chunk's stream sits (a StreamPlace: stream.hpp).
//   Info: uint32_t raw, skip (no stream: stored raw, or the other source's chunk chosen), total_bits
//     (the book's, book_kernels.cuh), and the chunk's offset in the archive.
// Kernels are static: this header is included by more than one translation unit.
#pragma once
#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>

#include "gpu/archive_passes.cuh"
#include "gpu/lookback.cuh"
#include "huffman/stream.hpp"

namespace hpcz::huffman::cuda {

// One predictor's coded chunks for encode_kernel: symbols, codebooks, chunk records, the look-back's
// tile states, and the chunk header's bytes (more in an interpolation chunk).
template <class Info>
struct EncodeSource {
  const uint16_t* sym;
  const uint8_t* len;
  const uint32_t* code;
  const Info* info;
  unsigned long long* tile_desc;
  uint32_t head;
};

// Codewords of one tile, staged in shared memory; gaps and sequence starts of the subsequences whose
// first codeword is in this tile. Symbols are loaded coalesced and transposed so each thread codes 16
// consecutive ones; the codebook sits in shared memory. Each thread OR-s its codewords into the stage
// at the bit offsets of a block scan (Tian et al.'s reduce-shuffle wrote the same bytes more slowly:
// docs/EXPERIMENTS.md). alt (info null where there is none): a second predictor's chunks, coded where
// src's is skipped, so that one launch codes every chunk (a launch whose blocks all return cost about
// 35 us). Six blocks an SM: the choice of source took it to 48 registers (five) without the bound.
// The body is a device function, so that a codec's batch kernel runs it with an array's parameters.
template <class Chunks>
__device__ __forceinline__ void encode_tile(Chunks g, uint32_t nsym, EncodeSource<typename Chunks::Info> src,
                                            EncodeSource<typename Chunks::Info> alt, gpu::CompressState* st, uint8_t* out) {
  constexpr int kThreads = Chunks::kBlockThreads, kPerThread = Chunks::kItemsPerThread;
  constexpr uint32_t kTile = kThreads * kPerThread;
  // The tile's bits from its first word: a whole tile's stream fits.
  constexpr uint32_t kStageWords = kTile * huffman::kMaxLen / 32 + 2;
  using Load = cub::BlockLoad<uint16_t, kThreads, kPerThread, cub::BLOCK_LOAD_TRANSPOSE>;
  using Scan = cub::BlockScan<uint32_t, kThreads>;
  __shared__ uint32_t stage[kStageWords];
  __shared__ union { typename Load::TempStorage load; typename Scan::TempStorage scan; } tmp;
  extern __shared__ uint32_t s_code[];  // nsym codes, then nsym lengths (bytes)
  uint8_t* s_len = reinterpret_cast<uint8_t*>(s_code + nsym);
  __shared__ unsigned long long s_ticket, s_base;
  // Tiles are taken in ticket order, so every tile a look-back waits on is already running.
  if (threadIdx.x == 0) s_ticket = atomicAdd(&st->chunk_counter, 1u);
  __syncthreads();
  const uint64_t t = s_ticket, c = g.chunk_of_tile(t);
  // Field by field: a reference to either parameter struct put both on the stack.
  const bool second = alt.info && src.info[c].skip;
  const uint16_t* __restrict__ sym = second ? alt.sym : src.sym;
  const uint8_t* __restrict__ len = second ? alt.len : src.len;
  const uint32_t* __restrict__ code = second ? alt.code : src.code;
  unsigned long long* tile_desc = second ? alt.tile_desc : src.tile_desc;
  const uint32_t head = second ? alt.head : src.head;
  const typename Chunks::Info ci = (second ? alt.info : src.info)[c];
  if (ci.raw || ci.skip) return;
  const uint32_t count = g.count(c), tile0 = uint32_t(t - g.first_tile(c)) * kTile;
  const uint16_t* sc = sym + g.first_value(c);
  for (uint32_t k = threadIdx.x; k < nsym; k += kThreads) {
    s_code[k] = code[c * nsym + k];
    s_len[k] = len[c * nsym + k];
  }
  for (uint32_t k = threadIdx.x; k < kStageWords; k += kThreads) stage[k] = 0;
  uint16_t items[kPerThread];
  const uint32_t valid = count - tile0 < kTile ? count - tile0 : kTile;
  Load(tmp.load).Load(sc + tile0, items, int(valid), uint16_t(0));
  __syncthreads();  // tmp is reused by the scan; s_len is ready
  const StreamPlace L = Chunks::place(nsym, ci, head);
  uint8_t* chunk = out + ci.offset;
  uint32_t* words = reinterpret_cast<uint32_t*>(chunk + L.bits);
  uint32_t* gapw = reinterpret_cast<uint32_t*>(chunk + L.gaps);
  const uint32_t i0 = tile0 + threadIdx.x * kPerThread;
  uint32_t mine = 0;
  for (int k = 0; k < kPerThread; ++k)
    if (i0 + k < count) mine += s_len[items[k]];
  uint32_t excl, tile_total;
  Scan(tmp.scan).ExclusiveSum(mine, excl, tile_total);
  // The tile's first bit: a decoupled look-back over the tiles of this chunk.
  if (threadIdx.x < 32) {
    const uint64_t t0 = g.first_tile(c);
    const gpu::PackedTileState tiles{tile_desc + t0};
    if (threadIdx.x == 0) tiles.publish_aggregate(t - t0, tile_total);
    const unsigned long long b = tiles.exclusive_prefix(t - t0, tile_total);
    if (threadIdx.x == 0) s_base = b;
  }
  __syncthreads();
  const uint32_t tile_bit0 = uint32_t(s_base);  // chunk-relative
  const uint32_t word0 = tile_bit0 >> 5;
  const uint32_t nsub = huffman::n_subsequences(ci.total_bits);
  uint32_t pos = tile_bit0 + excl;
  const uint32_t n_mine = i0 < count ? min(count - i0, uint32_t(kPerThread)) : 0u;
  // Gap entries and sequence starts: written by the threads whose codewords begin a subsequence, that
  // is whose first start and the start before it (prev_start; none for a chunk's first symbol) lie in
  // different subsequences or whose later starts cross a boundary; about one thread in 1024 / mine.
  if (n_mine) {
    const uint32_t prev_start = i0 > 0 ? pos - s_len[sc[i0 - 1]] : ~0u;
    uint32_t last_len = 0;
#pragma unroll
    for (uint32_t k = 0; k < kPerThread; ++k)
      if (k + 1 == n_mine) last_len = s_len[items[k]];
    const uint32_t last_start = pos + mine - last_len;
    if (prev_start == ~0u || prev_start / huffman::kSubBits != last_start / huffman::kSubBits) {
      uint32_t p = pos, ps = prev_start;
#pragma unroll  // constant indices keep items[] in registers
      for (uint32_t k = 0; k < kPerThread; ++k) {
        if (k >= n_mine) break;
        const uint32_t sub = p / huffman::kSubBits;
        if (ps == ~0u || ps / huffman::kSubBits != sub) {
          atomicOr(gapw + sub / 8, (p - sub * huffman::kSubBits) << (4 * (sub % 8)));
          if (sub % huffman::kSeqSubs == 0) reinterpret_cast<uint32_t*>(chunk + L.seq_first)[sub / huffman::kSeqSubs] = i0 + k;
        }
        ps = p;
        p += s_len[items[k]];
      }
    }
    if (i0 + n_mine == count && last_start / huffman::kSubBits + 1 < nsub)  // the last subsequence has no start of its own
      atomicOr(gapw + (nsub - 1) / 8, huffman::kNoStart << (4 * ((nsub - 1) % 8)));
  }
  {  // the stream from stage bit tile_bit0 % 32
    auto put = [&](uint32_t s) {
      const uint32_t l = s_len[s];
      uint32_t hi, lo;
      huffman::code_bits(s_code[s], l, pos, hi, lo);
      const uint32_t w = (pos >> 5) - word0;
      if (hi) atomicOr(&stage[w], hi);
      if (lo) atomicOr(&stage[w + 1], lo);
      pos += l;
    };
    if (n_mine == kPerThread) {  // all but a chunk's last thread: no count test per symbol
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) put(items[k]);
    } else {
#pragma unroll
      for (uint32_t k = 0; k < kPerThread; ++k)
        if (k < n_mine) put(items[k]);
    }
    __syncthreads();
  }
  // Out: words wholly inside this tile's bit range are stored; the two partial ends are OR-ed.
  const uint32_t end_bit = tile_bit0 + tile_total, last_word = (end_bit + 31) / 32;  // exclusive
  for (uint32_t w = word0 + threadIdx.x; w < last_word; w += kThreads) {
    const uint32_t v = stage[w - word0];
    const bool partial = (w == word0 && (tile_bit0 & 31)) || (w + 1 == last_word && (end_bit & 31));
    if (partial) { if (v) atomicOr(words + w, v); }
    else words[w] = v;
  }
}
template <class Chunks>
static __global__ void __launch_bounds__(Chunks::kBlockThreads, 6)
    encode_kernel(Chunks g, uint32_t nsym, EncodeSource<typename Chunks::Info> src, EncodeSource<typename Chunks::Info> alt,
                  gpu::CompressState* st, uint8_t* out) {
  encode_tile<Chunks>(g, nsym, src, alt, st, out);
}

}  // namespace hpcz::huffman::cuda
