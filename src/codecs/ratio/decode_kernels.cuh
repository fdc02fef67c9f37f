// Ratio-mode CUDA kernels. Decoding: parse each chunk (layout and decode tables), verify its checksum, decode the Huffman
// stream a subsequence per thread, place the outliers.
// Kernels are static: this header is included by more than one translation unit.
#pragma once
#include "codecs/ratio/kernels_common.cuh"
#include "huffman/length_counts.cuh"

namespace hpcz::ratio::cuda {

using huffman::LenCounts;
using huffman::LenCountsAdd;

// One block per chunk: the table entry, the chunk's structure and its decode tables. The checksum is
// verified apart (verify_kernel, many blocks per chunk); the decoders never read or write outside
// their buffers whatever the bytes, so they need not wait for it.
template <class T>
static __global__ void __launch_bounds__(kThreads) parse_kernel(Grid g, uint32_t nsym, const uint8_t* __restrict__ a,
                                                                unsigned long long archive_size, DecodeChunk* dc,
                                                                huffman::DecodeTables* tables, LongTable* longs,
                                                                uint32_t* status, bool interp = false) {
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

static __global__ void __launch_bounds__(kThreads) verify_kernel(const uint8_t* __restrict__ a, DecodeChunk* dc) {
  const uint64_t c = blockIdx.y;  // L.size is 0 for a chunk whose table entry was rejected
  add_checksum_terms(reinterpret_cast<const uint32_t*>(a + dc[c].offset), dc[c].L.size / 4, &dc[c].sum);
}

static __global__ void __launch_bounds__(kThreads) verify_done_kernel(const DecodeChunk* dc, uint64_t n_chunks,
                                                                      uint32_t* status) {
  for (uint64_t c = blockIdx.x * kThreads + threadIdx.x; c < n_chunks; c += gridDim.x * kThreads)
    if (dc[c].L.size && format::checksum_fold(dc[c].sum) != dc[c].expect) atomicOr(status, kBadChecksum);
}

// One block per sequence (kSeqSubs subsequences, one per thread): count, scan, decode into v. The
// sequence's words (plus the two after it, where its last codeword may end) and the first-level table
// are staged in shared memory: each symbol is then three shared-memory loads (a long code: the long
// table, huffman::long_entry). Each subsequence's 32 words are followed by one pad word, so the threads
// of a warp (1024 bits apart) read different banks. The write-back rows hold 16-bit symbols (mapped to
// deltas on the way out), not 32-bit deltas: 5 blocks of 128 threads per SM instead of 4 (4% faster
// decompression on an H200; reading the first-level table through L1 instead of staging it, 7 blocks,
// measured slower: docs/EXPERIMENTS.md). With the 2 KiB long table a block takes 40.5 KB and still 5
// blocks fit.
constexpr uint32_t kSeqWords = huffman::kSeqSubs * huffman::kSubBits / 32;
__device__ __forceinline__ uint32_t padded(uint32_t r) { return r + (r >> 5); }
// Every subsequence starts where the gap array says (Rivera et al.'s self-synchronizing decoder, which
// finds the starts by decoding from guesses, was slower: docs/EXPERIMENTS.md).
static __global__ void __launch_bounds__(huffman::kSeqSubs) decode_kernel(Grid g, uint32_t radius, const uint8_t* __restrict__ a,
                                                                          DecodeChunk* dc, const huffman::DecodeTables* tables,
                                                                          const LongTable* longs, uint32_t* __restrict__ v,
                                                                          uint32_t* status) {
  using Scan = cub::BlockScan<uint32_t, huffman::kSeqSubs>;
  using Reduce = cub::BlockReduce<uint32_t, huffman::kSeqSubs>;
  __shared__ union { typename Scan::TempStorage scan; typename Reduce::TempStorage reduce; } tmp;
  __shared__ uint32_t s_words[kSeqWords + kSeqWords / 32 + 3];
  __shared__ uint32_t s_fast[1u << huffman::kFastBits];
  __shared__ huffman::CanonicalRanges s_ranges;
  __shared__ uint16_t s_multi[1u << huffman::kFastBits];
  __shared__ uint16_t s_long[huffman::kLongCap];
  __shared__ uint16_t s_rows[huffman::kSeqSubs * 33];  // symbols < kMaxSymbols
  __shared__ uint32_t s_bad;
  const uint64_t c = blockIdx.y;
  const uint32_t j = blockIdx.x;
  const DecodeChunk& d = dc[c];
  if (d.bad || d.raw) return;
  const ChunkLayout L = d.L;
  const uint32_t nsub = huffman::n_subsequences(L.total_bits), nseq = huffman::n_sequences(L.total_bits);
  if (j >= nseq) return;
  const uint32_t count = g.shape(c).count();
  const uint8_t* chunk = a + d.offset;
  const uint32_t* w = reinterpret_cast<const uint32_t*>(chunk + L.bits);
  const uint32_t nw = huffman::n_words(L.total_bits), w0 = j * kSeqWords;
  const uint8_t* gaps = chunk + L.gaps;
  const huffman::DecodeTables& tab = tables[c];
  for (uint32_t k = threadIdx.x; k < kSeqWords + 2; k += huffman::kSeqSubs) s_words[padded(k)] = w0 + k < nw ? w[w0 + k] : 0;
  for (uint32_t k = threadIdx.x; k < (1u << huffman::kFastBits); k += huffman::kSeqSubs) {
    s_fast[k] = tab.fast[k];
    s_multi[k] = tab.multi[k];
  }
  const uint32_t long_base = longs[c].base, long_n = longs[c].n;
  for (uint32_t k = threadIdx.x; k < long_n; k += huffman::kSeqSubs) s_long[k] = longs[c].entry[k];
  if (threadIdx.x == 0) s_ranges = tab.ranges;
  if (threadIdx.x == 0) s_bad = 0;
  __syncthreads();
  // Every lookup in shared memory: the first-level table, then the long codes' table (the walk, with
  // its global load, only past kLongCap long windows).
  auto lookup = [&](uint32_t window) {
    return huffman::decode_entry_long(s_fast, s_long, long_base, long_n, s_ranges, tab.sorted, window);
  };
  // A run starts inside this sequence and stops within kMaxLen bits of its end, so k - w0 <= kSeqWords.
  auto word = [&](uint32_t k) { return s_words[padded(k - w0)]; };
  const uint32_t sub = j * huffman::kSeqSubs + threadIdx.x;
  uint32_t from = L.total_bits, limit = L.total_bits, n_here = 0;
  if (sub < nsub) {
    const uint64_t lim = uint64_t(sub + 1) * huffman::kSubBits;
    limit = lim < L.total_bits ? uint32_t(lim) : L.total_bits;
  }
  if (sub < nsub) {
    from = huffman::subsequence_start(gaps, sub, L.total_bits);
    const uint32_t end = huffman::count_run_by(word, L.total_bits, s_multi, lookup, from, limit, n_here);
    const uint32_t next = sub + 1 < nsub ? huffman::subsequence_start(gaps, sub + 1, L.total_bits) : L.total_bits;
    if (end != next || (sub == 0 && from != 0)) s_bad = 1;
  }
  uint32_t excl, total;
  Scan(tmp.scan).ExclusiveSum(n_here, excl, total);
  __syncthreads();
  // The same rule as the CPU decoder: a sequence in which no codeword starts begins at count.
  const uint32_t base = huffman::sequence_first(chunk + L.seq_first, gaps, j, L.total_bits, count);
  const uint32_t next_base = huffman::sequence_first(chunk + L.seq_first, gaps, j + 1, L.total_bits, count);
  if (s_bad || base > count || next_base > count || uint64_t(base) + total != next_base) {
    if (threadIdx.x == 0) { atomicOr(status, kBadChunk); }
    return;
  }
  // Pass 2: each thread's run is contiguous in the output but the runs of a warp are far apart, so
  // symbols go to a per-thread row of 32 in shared memory first, and the warp writes each row out
  // with 32 lanes (a whole 128-byte line) instead of 32 scattered 4-byte stores per instruction.
  const uint32_t lane = threadIdx.x & 31;
  uint32_t* const v_lane = v + c * g.chunk_values + lane;
  uint16_t* rows = s_rows + (threadIdx.x - lane) * 33;  // this warp's 32 rows, padded
  uint32_t at = base + excl, zeros = 0, pos = from;
  bool more = sub < nsub && pos < limit;
  while (__any_sync(0xffffffffu, more)) {
    uint32_t cnt = 0;
    while (more && cnt < 32) {  // pass 1 checked this path: every codeword here is valid
      const uint32_t e = lookup(huffman::peek_bits(word, pos));
      const uint32_t sy = huffman::entry_symbol(e);
      rows[lane * 33 + cnt++] = uint16_t(sy);
      zeros += sy == 0;
      pos += huffman::entry_length(e);
      more = pos < limit && e;  // e == 0 cannot follow a clean first pass; never spin on it
      // The entry's second codeword, as decode_run takes it (one lookup for two symbols).
      if (more && huffman::entry_length2(e) && cnt < 32) {
        const uint32_t sy2 = huffman::entry_symbol2(e);
        rows[lane * 33 + cnt++] = uint16_t(sy2);
        zeros += sy2 == 0;
        pos += huffman::entry_length2(e);
        more = pos < limit;
      }
    }
    __syncwarp();
    // Per row: two shuffles, a shared load (made whatever the row's length: it stays inside the
    // rows), the delta and one predicated store from a lane pointer held across rows. Written with
    // the load under the test and vc + at_r + lane, the compiler branched around each row and
    // rebuilt the 64-bit address: 18 instructions a row, 20% of the kernel (ncu).
    for (uint32_t r = 0; r < 32; ++r) {
      const uint32_t n_r = __shfl_sync(0xffffffffu, cnt, r), at_r = __shfl_sync(0xffffffffu, at, r);
      const uint32_t sy = rows[r * 33 + lane];
      if (lane < n_r) v_lane[at_r] = predict::symbol_delta(sy, radius);
    }
    at += cnt;
    __syncwarp();
  }
  zeros = Reduce(tmp.reduce).Sum(zeros);
  if (threadIdx.x == 0 && zeros) atomicAdd(&dc[c].zeros, zeros);
}

// Outlier deltas into place; checks that they are exactly the outlier positions.
static __global__ void __launch_bounds__(kThreads) outlier_kernel(Grid g, uint32_t radius, const uint8_t* __restrict__ a,
                                                           const DecodeChunk* dc, uint32_t* v, uint32_t* status) {
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

}  // namespace hpcz::ratio::cuda
