// Ratio-mode CUDA kernels. Decoding: parse each chunk (layout and decode tables), verify its checksum, place the
// outliers (the Huffman stream, decoded between parse and outliers: huffman/decode_kernels.cuh).
// Kernels are static: this header is included by more than one translation unit.
#pragma once
#include "codecs/ratio_class/kernels_common.cuh"
#include "huffman/length_counts.cuh"

namespace hpcz::ratio::cuda {

using huffman::LenCounts;
using huffman::LenCountsAdd;

// One block per chunk: the table entry, the chunk's structure and its decode tables. The checksum is
// verified apart (verify_kernel, many blocks per chunk); the decoders never read or write outside
// their buffers whatever the bytes, so they need not wait for it.
// (The kernels' bodies are device functions for a batch's kernels, as in quant_kernels.cuh.)
template <class T>
__device__ __forceinline__ void parse_chunk_tables(Grid g, uint32_t nsym, const uint8_t* __restrict__ a,
                                                   unsigned long long archive_size, DecodeChunk* dc,
                                                   huffman::DecodeTables* tables, LongTable* longs, uint32_t* status,
                                                   bool interp) {
  constexpr int kL = huffman::kMaxLen + 1;
  using LenScan = cub::BlockScan<LenCounts, kThreads>;
  __shared__ typename LenScan::TempStorage len_scan;
  __shared__ huffman::DecodeTables s_t;  // built here, then copied out whole
  __shared__ uint32_t s_count[kL];
  __shared__ uint32_t s_bad;
  const uint64_t c = blockIdx.x;
  const uint32_t count = g.shape(c).count();
  const uint8_t* entry = a + format::kHeaderBytes + 16 * c;
  const unsigned long long off = load_u64_le(entry);
  const uint32_t size = load_u32_le(entry + 8);
  const unsigned long long expect_off = c ? load_u64_le(entry - 16) + load_u32_le(entry - 8) : format::data_offset(g.n_chunks);
  const bool last_ok = c + 1 < g.n_chunks || off + size == archive_size;
  DecodeChunk& d = dc[c];
  if (off != expect_off || !last_ok || off > archive_size || size > archive_size - off ||
      size > max_chunk_bytes(count, sizeof(T)) || (size & 3) || (off & 3)) {
    if (threadIdx.x == 0) { d.bad = 1; d.L.size = 0; d.sum = 0; d.offset = 0; atomicOr(status, kBadChunk); }
    return;
  }
  if (threadIdx.x == 0) {
    uint32_t bad = 0;
    d.offset = off;
    d.zeros = 0;
    d.sum = 0;
    d.expect = load_u32_le(entry + 12);
    d.raw = is_raw_chunk(a + off, size, count, sizeof(T));
    d.kind = d.raw ? kKindRaw : kKindCoded;
    d.params = d.masked = 0;
    d.mask_bits = 0;
    if (!d.raw && interp && size >= kChunkHeaderBytes && (load_u32_le(a + off + 12) & 0xff) == kKindInterp) {
      InterpChunkHead ih;
      if (parse_interp_chunk(a + off, size, count, nsym / 2, sizeof(T), ih)) {
        d.L = ih.L;
        d.kind = kKindInterp;
        d.params = ih.params;
        d.masked = ih.masked;
        d.mask_bits = ih.mask_bits;
      } else {
        bad = kBadChunk;
      }
    } else if (!d.raw && !parse_chunk(a + off, size, count, nsym, sizeof(T), d.L)) {
      bad = kBadChunk;
    }
    d.L.size = size;
    s_bad = bad;
  }
  __syncthreads();
  if (!s_bad && !d.raw) {
    // The tables of huffman::build_decode_tables, built in shared memory by all threads (a serial
    // build by one thread was most of this kernel's time): each thread takes kSortPerThread
    // consecutive symbols; a block scan of their per-length counts (as book_kernel's) gives every
    // symbol its place in (length, symbol) order.
    const uint32_t tid = threadIdx.x;
    uint8_t len[kSortPerThread];
    LenCounts mine{};  // n[0] counts lengths over kMaxLen (a corrupt book)
#pragma unroll
    for (int k = 0; k < kSortPerThread; ++k) {
      const uint32_t sy = tid * kSortPerThread + k;
      uint32_t l = sy < nsym ? huffman::get_nibble(a + off + d.L.lengths, sy) : 0;
      if (l > uint32_t(huffman::kMaxLen)) {
        ++mine.n[0];
        l = 0;
      }
      len[k] = uint8_t(l);
      if (l) ++mine.n[l];
    }
    LenCounts before, all;
    LenScan(len_scan).ExclusiveScan(mine, before, LenCounts{}, LenCountsAdd(), all);
    huffman::CanonicalRanges& r = s_t.ranges;
    if (tid == 0) {
      if (all.n[0]) s_bad = kBadChunk;
      s_count[0] = 0;
      for (int l = 1; l < kL; ++l) s_count[l] = all.n[l];
      if (!huffman::first_codes_from_counts(s_count, r.first)) s_bad = kBadChunk;
      uint32_t at = 0;
      for (int l = 0; l < kL; ++l) {
        r.count[l] = s_count[l];
        r.offset[l] = l ? at : 0;
        at += l ? s_count[l] : 0;
      }
    }
    __syncthreads();
    if (!s_bad) {
#pragma unroll
      for (int k = 0; k < kSortPerThread; ++k)
        if (len[k]) s_t.sorted[r.offset[len[k]] + before.n[len[k]]++] = uint16_t(tid * kSortPerThread + k);
      __syncthreads();
      for (uint32_t i = tid; i < (1u << huffman::kFastBits); i += kThreads) s_t.fast[i] = huffman::fast_entry(s_t, i);
      __syncthreads();
      for (uint32_t i = tid; i < (1u << huffman::kFastBits); i += kThreads) s_t.multi[i] = huffman::multi_entry(s_t.fast, i);
      {
        LongTable& lt = longs[c];
        const uint32_t base = huffman::long_base(r), n = huffman::long_windows(r);
        if (tid == 0) {
          lt.base = base;
          lt.n = n;
        }
        for (uint32_t i = tid; i < n; i += kThreads) lt.entry[i] = huffman::long_entry(r, s_t.sorted, base + i);
      }
      __syncthreads();
      static_assert(sizeof(huffman::DecodeTables) % 4 == 0, "copied as words");
      const uint32_t* from = reinterpret_cast<const uint32_t*>(&s_t);
      uint32_t* to = reinterpret_cast<uint32_t*>(&tables[c]);
      for (uint32_t i = tid; i < sizeof(huffman::DecodeTables) / 4; i += kThreads) to[i] = from[i];
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    d.bad = s_bad;
    if (s_bad) atomicOr(status, s_bad);
  }
}
template <class T>
static __global__ void __launch_bounds__(kThreads) parse_kernel(Grid g, uint32_t nsym, const uint8_t* __restrict__ a,
                                                                unsigned long long archive_size, DecodeChunk* dc,
                                                                huffman::DecodeTables* tables, LongTable* longs,
                                                                uint32_t* status, bool interp = false) {
  parse_chunk_tables<T>(g, nsym, a, archive_size, dc, tables, longs, status, interp);
}

// As parse_kernel, the archive's size read from the device (an archive the library wrote there itself:
// pw_log_gpu.cu's logs).
template <class T>
static __global__ void __launch_bounds__(kThreads) parse_sized_kernel(Grid g, uint32_t nsym, const uint8_t* __restrict__ a,
                                                                      const unsigned long long* archive_size, DecodeChunk* dc,
                                                                      huffman::DecodeTables* tables, LongTable* longs,
                                                                      uint32_t* status, bool interp) {
  parse_chunk_tables<T>(g, nsym, a, *archive_size, dc, tables, longs, status, interp);
}

static __global__ void __launch_bounds__(kThreads) verify_kernel(const uint8_t* __restrict__ a, DecodeChunk* dc) {
  const uint64_t c = blockIdx.y;  // L.size is 0 for a chunk whose table entry was rejected
  add_checksum_terms(reinterpret_cast<const uint32_t*>(a + dc[c].offset), dc[c].L.size / 4, &dc[c].sum);
}

__device__ __forceinline__ void verify_done(const DecodeChunk* dc, uint64_t n_chunks, uint32_t* status) {
  for (uint64_t c = blockIdx.x * kThreads + threadIdx.x; c < n_chunks; c += gridDim.x * kThreads)
    if (dc[c].L.size && format::checksum_fold(dc[c].sum) != dc[c].expect) atomicOr(status, kBadChecksum);
}
static __global__ void __launch_bounds__(kThreads) verify_done_kernel(const DecodeChunk* dc, uint64_t n_chunks,
                                                                      uint32_t* status) {
  verify_done(dc, n_chunks, status);
}

// Outlier deltas into place; checks that they are exactly the outlier positions.
__device__ __forceinline__ void place_outliers(Grid g, uint32_t radius, const uint8_t* __restrict__ a, const DecodeChunk* dc,
                                               uint32_t* v, uint32_t* status) {
  const uint64_t c = blockIdx.y;
  const DecodeChunk& d = dc[c];
  if (d.bad || d.raw || d.kind == kKindInterp) return;  // interpolation chunks: interp_list_kernel
  const uint32_t count = g.shape(c).count();
  const uint8_t* chunk = a + d.offset;
  const uint32_t* idx = reinterpret_cast<const uint32_t*>(chunk + d.L.out_idx);
  const uint32_t* del = reinterpret_cast<const uint32_t*>(chunk + d.L.out_delta);
  uint32_t* vc = v + c * g.chunk_values;
  if (blockIdx.x == 0 && threadIdx.x == 0 && d.zeros != d.L.n_out) atomicOr(status, kBadChunk);
  for (uint32_t k = blockIdx.x * kThreads + threadIdx.x; k < d.L.n_out; k += gridDim.x * kThreads) {
    const uint32_t i = idx[k];
    if (i >= count || (k && i <= idx[k - 1]) || vc[i] != predict::symbol_delta(0, radius)) {
      atomicOr(status, kBadChunk);
      continue;
    }
    vc[i] = del[k];
  }
}
static __global__ void __launch_bounds__(kThreads) outlier_kernel(Grid g, uint32_t radius, const uint8_t* __restrict__ a,
                                                           const DecodeChunk* dc, uint32_t* v, uint32_t* status) {
  place_outliers(g, radius, a, dc, v, status);
}

}  // namespace hpcz::ratio::cuda
