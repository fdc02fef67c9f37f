// Ratio-mode CUDA kernels. Encoding: chunk layout and raw fallback, outliers and exceptions, chunk headers, checksums
// and the chunk table (the codewords, gaps and sequence starts: huffman/encode_kernels.cuh).
// Kernels are static: this header is included by more than one translation unit.
#pragma once
#include "codecs/ratio_class/kernels_common.cuh"
#include "codecs/ratio_class/quant_kernels.cuh"  // lorenzo_yz

namespace hpcz::ratio::cuda {

// Chunk sizes and offsets (one block, rounds of kThreads chunks); the raw fallback decided here.
// head: the chunk header's bytes (more in an interpolation chunk).
// (The kernels' bodies are device functions for the batch's kernels, as in quant_kernels.cuh.)
template <class T>
__device__ __forceinline__ void layout_chunks(Grid g, uint32_t nsym, const uint32_t* tile_out, const uint32_t* tile_exc,
                                              ChunkInfo* info, gpu::CompressState* st, uint32_t head) {
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
template <class T>
static __global__ void __launch_bounds__(kThreads) layout_kernel(Grid g, uint32_t nsym, const uint32_t* tile_out,
                                                          const uint32_t* tile_exc, ChunkInfo* info,
                                                          gpu::CompressState* st, uint32_t head = kChunkHeaderBytes) {
  layout_chunks<T>(g, nsym, tile_out, tile_exc, info, st, head);
}

// Zeroes each coded chunk's bytes (codewords and nibbles are OR-ed in). alt (or null): a second
// predictor's chunks, written where info's is skipped (one launch for both).
__device__ __forceinline__ void zero_chunk(const ChunkInfo* info, const ChunkInfo* alt, uint8_t* out) {
  const ChunkInfo ci = alt && info[blockIdx.y].skip ? alt[blockIdx.y] : info[blockIdx.y];
  if (ci.raw || ci.skip) return;
  uint32_t* w = reinterpret_cast<uint32_t*>(out + ci.offset);
  for (uint32_t k = blockIdx.x * kThreads + threadIdx.x; k < ci.size / 4; k += gridDim.x * kThreads) w[k] = 0;
}
static __global__ void __launch_bounds__(kThreads) zero_kernel(const ChunkInfo* info, const ChunkInfo* alt, uint8_t* out) {
  zero_chunk(info, alt, out);
}

// Outliers and exceptions of one tile, in index order, at their places in the chunk. q holds the row
// differences (prequant_kernel) or, with q_is_delta, each outlier's full delta (dual_quant_kernel).
template <class T>
struct LorenzoEmit {
  uint32_t radius;
  quant::Bound asked;
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
  const quant::QuantParams<T> p = gpu::settled_params<T>(e.asked, e.st);
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
__device__ __forceinline__ void chunk_head(Grid g, uint32_t nsym, const T* __restrict__ in, const uint8_t* __restrict__ len,
                                           const ChunkInfo* info, uint8_t* out) {
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
template <class T>
static __global__ void __launch_bounds__(kThreads) chunk_head_kernel(Grid g, uint32_t nsym, const T* __restrict__ in,
                                                              const uint8_t* __restrict__ len, const ChunkInfo* info,
                                                              uint8_t* out) {
  chunk_head<T>(g, nsym, in, len, info, out);
}

// Each chunk's checksum (add_checksum_terms, kernels_common.cuh), then the chunk table.
static __global__ void __launch_bounds__(kThreads) checksum_kernel(ChunkInfo* info, const uint8_t* out) {
  const uint64_t c = blockIdx.y;
  add_checksum_terms(reinterpret_cast<const uint32_t*>(out + info[c].offset), info[c].size / 4, &info[c].sum);
}

// The chunk table; each entry's checksum terms go into st->table_sum for seal_kernel.
__device__ __forceinline__ void table_entries(const ChunkInfo* info, uint64_t n_chunks, gpu::CompressState* st,
                                              uint8_t* out) {
  for (uint64_t c = blockIdx.x * kThreads + threadIdx.x; c < n_chunks; c += gridDim.x * kThreads) {
    const uint32_t sum = format::checksum_fold(info[c].sum);
    format::write_chunk_entry(out + format::kHeaderBytes + 16 * c, info[c].offset, info[c].size, sum);
    atomicAdd(&st->table_sum, format::chunk_entry_terms(c, info[c].offset, info[c].size, sum));
  }
}
static __global__ void __launch_bounds__(kThreads) table_kernel(const ChunkInfo* info, uint64_t n_chunks,
                                                                gpu::CompressState* st, uint8_t* out) {
  table_entries(info, n_chunks, st, out);
}

}  // namespace hpcz::ratio::cuda
