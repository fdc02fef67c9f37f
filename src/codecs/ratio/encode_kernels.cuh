// Ratio-mode CUDA kernels. Encoding: chunk layout and raw fallback, codewords with gaps and sequence starts, outliers and
// exceptions, chunk headers, checksums and the chunk table.
// Kernels are static: this header is included by more than one translation unit.
#pragma once
#include "codecs/ratio/kernels_common.cuh"
#include "codecs/ratio/quant_kernels.cuh"  // lorenzo_yz

namespace hpcz::ratio::cuda {

// Chunk sizes and offsets (one block, rounds of kThreads chunks); the raw fallback decided here.
// head: the chunk header's bytes (more in an interpolation chunk).
template <class T>
static __global__ void __launch_bounds__(kThreads) layout_kernel(Grid g, uint32_t nsym, const uint32_t* tile_out,
                                                          const uint32_t* tile_exc, ChunkInfo* info,
                                                          gpu::CompressState* st, uint32_t head = kChunkHeaderBytes) {
  using Scan = cub::BlockScan<unsigned long long, kThreads>;
  __shared__ typename Scan::TempStorage scan;
  unsigned long long base = format::data_offset(g.n_chunks);
  for (uint64_t r = 0; r < g.n_chunks; r += kThreads) {
    const uint64_t c = r + threadIdx.x;
    unsigned long long size = 0;
    if (c < g.n_chunks) {
      ChunkInfo& ci = info[c];
      const uint64_t t0 = g.first_tile(c), t1 = c + 1 < g.n_chunks ? g.first_tile(c + 1) : g.n_tiles;
      // tile_out / tile_exc hold exclusive prefixes over all tiles, plus the last tile's count kept
      // in the scan's extra slot (index n_tiles).
      ci.out_base = tile_out[t0];
      ci.exc_base = tile_exc[t0];
      ci.n_out = tile_out[t1] - tile_out[t0];
      ci.n_exc = tile_exc[t1] - tile_exc[t0];
      const uint32_t count = g.shape(c).count();
      const ChunkLayout L = chunk_layout(nsym, ci.total_bits, ci.n_out, ci.n_exc, sizeof(T), head);
      ci.skip = 0;
      ci.raw = L.size64 >= raw_chunk_bytes(count, sizeof(T));
      size = ci.raw ? raw_chunk_bytes(count, sizeof(T)) : L.size64;
      ci.size = uint32_t(size);
      ci.sum = 0;
    }
    unsigned long long excl, total;
    Scan(scan).ExclusiveSum(size, excl, total);
    if (c < g.n_chunks) info[c].offset = base + excl;
    base += total;
    __syncthreads();
  }
  if (threadIdx.x == 0) st->total_size = base;
}

// Zeroes each coded chunk's bytes (codewords and nibbles are OR-ed in). alt (or null): a second
// predictor's chunks, written where info's is skipped (one launch for both).
static __global__ void __launch_bounds__(kThreads) zero_kernel(const ChunkInfo* info, const ChunkInfo* alt, uint8_t* out) {
  const ChunkInfo ci = alt && info[blockIdx.y].skip ? alt[blockIdx.y] : info[blockIdx.y];
  if (ci.raw || ci.skip) return;
  uint32_t* w = reinterpret_cast<uint32_t*>(out + ci.offset);
  for (uint32_t k = blockIdx.x * kThreads + threadIdx.x; k < ci.size / 4; k += gridDim.x * kThreads) w[k] = 0;
}

// One predictor's coded chunks for encode_kernel: symbols, codebooks, chunk infos, the look-back's tile
// states, and the chunk header's bytes (more in an interpolation chunk).
struct EncodeSource {
  const uint16_t* sym;
  const uint8_t* len;
  const uint32_t* code;
  const ChunkInfo* info;
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
static __global__ void __launch_bounds__(kThreads, 6) encode_kernel(Grid g, uint32_t nsym, EncodeSource src, EncodeSource alt,
                                                          gpu::CompressState* st, uint8_t* out) {
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
  const ChunkInfo ci = (second ? alt.info : src.info)[c];
  if (ci.raw || ci.skip) return;
  const uint32_t count = g.shape(c).count(), tile0 = uint32_t(t - g.first_tile(c)) * kTile;
  const uint16_t* sc = sym + c * g.chunk_values;
  for (uint32_t k = threadIdx.x; k < nsym; k += kThreads) {
    s_code[k] = code[c * nsym + k];
    s_len[k] = len[c * nsym + k];
  }
  for (uint32_t k = threadIdx.x; k < kStageWords; k += kThreads) stage[k] = 0;
  uint16_t items[kPerThread];
  const uint32_t valid = count - tile0 < kTile ? count - tile0 : kTile;
  Load(tmp.load).Load(sc + tile0, items, int(valid), uint16_t(0));
  __syncthreads();  // tmp is reused by the scan; s_len is ready
  const ChunkLayout L = chunk_layout(nsym, ci.total_bits, ci.n_out, ci.n_exc, 0, head);
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

// Outliers and exceptions of one tile, in index order, at their places in the chunk. q holds the row
// differences (prequant_kernel) or, with q_is_delta, each outlier's full delta (dual_quant_kernel).
template <class T>
struct LorenzoEmit {
  uint32_t radius;
  format::HeaderFields h;
  const gpu::CompressState* st;
  const T* in;
  const uint32_t* q;
  const uint16_t* sym;
  const uint32_t* tile_out;
  const uint32_t* tile_exc;
  const ChunkInfo* info;
  bool q_is_delta;
};
using EmitScan = cub::BlockScan<uint32_t, kThreads>;
template <class T>
__device__ void emit_tile(Grid g, const LorenzoEmit<T>& e, uint64_t t, uint8_t* out, typename EmitScan::TempStorage& scan) {
  const uint64_t c = g.chunk_of_tile(t);
  const ChunkInfo ci = e.info[c];
  const uint32_t radius = e.radius;
  const uint32_t* tile_out = e.tile_out;
  const uint32_t* tile_exc = e.tile_exc;
  const bool q_is_delta = e.q_is_delta;
  // Each test runs only where the tile's counts say it finds something. Exceptions are rare, but
  // outliers are in most tiles at tight bounds or with a land mask: re-quantizing every value of each
  // such tile would make this kernel 353 us of levitus' 1.75 ms.
  const bool any_out = tile_out[t + 1] != tile_out[t], any_exc = tile_exc[t + 1] != tile_exc[t];
  if (ci.raw || ci.skip || !(any_out || any_exc)) return;
  format::HeaderFields h = e.h;
  gpu::settle_state(h, e.st);
  const quant::QuantParams<T> p = quant::encoder_params<T>(h);
  const ChunkShape cs = g.shape(c);
  const uint32_t count = cs.count(), i0 = uint32_t(t - g.first_tile(c)) * kTile + threadIdx.x * kPerThread;
  const uint32_t* qc = e.q + c * g.chunk_values;
  const uint16_t* sc = e.sym + c * g.chunk_values;
  const T* xc = e.in + c * g.chunk_values;
  // Exceptions are the values quantize() rejects, as in prequant_kernel (rare: no need to keep a mark).
  uint32_t out_mask = 0, exc_mask = 0;
  if (any_out) {
    static_assert(kPerThread == 16, "a thread's symbols are two 16-byte loads");
    if (i0 + kPerThread <= count && (reinterpret_cast<uintptr_t>(sc + i0) & 15) == 0) {
      const uint4* s4 = reinterpret_cast<const uint4*>(sc + i0);
      const uint4 a = s4[0], b = s4[1];
      const uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
      for (int k = 0; k < 8; ++k) out_mask |= uint32_t((w[k] & 0xffffu) == 0) << (2 * k) | uint32_t(w[k] >> 16 == 0) << (2 * k + 1);
    } else {
      for (int k = 0; k < kPerThread && i0 + k < count; ++k) out_mask |= uint32_t(sc[i0 + k] == 0) << k;
    }
  }
  if (any_exc) {
    for (int k = 0; k < kPerThread && i0 + k < count; ++k) {
      int32_t v;
      if (!quant::quantize(xc[i0 + k], p, v)) exc_mask |= 1u << k;
    }
  }
  uint32_t eo, ee;
  EmitScan(scan).ExclusiveSum(uint32_t(__popc(out_mask)), eo);
  __syncthreads();
  EmitScan(scan).ExclusiveSum(uint32_t(__popc(exc_mask)), ee);
  const ChunkLayout L = chunk_layout(2 * radius, ci.total_bits, ci.n_out, ci.n_exc, sizeof(T));
  uint8_t* chunk = out + ci.offset;
  uint32_t jo = tile_out[t] - ci.out_base + eo, je = tile_exc[t] - ci.exc_base + ee;
  for (int k = 0; k < kPerThread; ++k) {
    const uint32_t i = i0 + k;
    if (out_mask >> k & 1) {
      uint32_t z, y, x;
      local_xyz(cs, i, z, y, x);
      store_u32_le(chunk + L.out_idx + 4 * jo, i);
      store_u32_le(chunk + L.out_delta + 4 * jo, q_is_delta ? qc[i] : lorenzo_yz(qc, cs, i, z, y));
      ++jo;
    }
    if (exc_mask >> k & 1) {
      store_u32_le(chunk + L.exc_idx + 4 * je, i);
      store_value_le<T>(chunk + L.exc_val + sizeof(T) * je, xc[i]);
      ++je;
    }
  }
}

template <class T>
static __global__ void __launch_bounds__(kThreads) emit_kernel(Grid g, LorenzoEmit<T> e, uint8_t* out) {
  __shared__ typename EmitScan::TempStorage scan;
  emit_tile<T>(g, e, blockIdx.x, out, scan);
}

// Chunk headers and code lengths (coded chunks); headers and values (raw chunks).
template <class T>
static __global__ void __launch_bounds__(kThreads) chunk_head_kernel(Grid g, uint32_t nsym, const T* __restrict__ in,
                                                              const uint8_t* __restrict__ len, const ChunkInfo* info,
                                                              uint8_t* out) {
  const uint64_t c = blockIdx.y;
  const ChunkInfo ci = info[c];
  if (ci.skip) return;
  uint8_t* chunk = out + ci.offset;
  const bool lead = blockIdx.x == 0 && threadIdx.x == 0;
  if (ci.raw) {
    if (lead) {
      store_u32_le(chunk, 0); store_u32_le(chunk + 4, 0); store_u32_le(chunk + 8, 0);
      store_u32_le(chunk + 12, kKindRaw);
    }
    const uint32_t count = g.shape(c).count();
    const T* xc = in + c * g.chunk_values;
    for (uint32_t i = blockIdx.x * kThreads + threadIdx.x; i < count; i += gridDim.x * kThreads)
      store_value_le<T>(chunk + kChunkHeaderBytes + sizeof(T) * i, xc[i]);
    return;
  }
  if (blockIdx.x) return;
  if (lead) {
    store_u32_le(chunk, ci.total_bits); store_u32_le(chunk + 4, ci.n_out); store_u32_le(chunk + 8, ci.n_exc);
    store_u32_le(chunk + 12, kKindCoded);
  }
  const uint8_t* Lc = len + c * nsym;
  for (uint32_t k = threadIdx.x; k < nsym / 2; k += kThreads)
    chunk[kChunkHeaderBytes + k] = uint8_t(Lc[2 * k] | Lc[2 * k + 1] << 4);
}

// Each chunk's checksum (add_checksum_terms, kernels_common.cuh), then the chunk table.
static __global__ void __launch_bounds__(kThreads) checksum_kernel(ChunkInfo* info, const uint8_t* out) {
  const uint64_t c = blockIdx.y;
  add_checksum_terms(reinterpret_cast<const uint32_t*>(out + info[c].offset), info[c].size / 4, &info[c].sum);
}

// The chunk table; each entry's checksum terms go into st->table_sum for seal_kernel.
static __global__ void __launch_bounds__(kThreads) table_kernel(const ChunkInfo* info, uint64_t n_chunks,
                                                                gpu::CompressState* st, uint8_t* out) {
  for (uint64_t c = blockIdx.x * kThreads + threadIdx.x; c < n_chunks; c += gridDim.x * kThreads) {
    const uint32_t sum = format::checksum_fold(info[c].sum);
    format::write_chunk_entry(out + format::kHeaderBytes + 16 * c, info[c].offset, info[c].size, sum);
    atomicAdd(&st->table_sum, format::chunk_entry_terms(c, info[c].offset, info[c].size, sum));
  }
}

}  // namespace hpcz::ratio::cuda
