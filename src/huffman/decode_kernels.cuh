// The GPU Huffman stream's decoder, shared by the ratio-class codecs: a subsequence per thread, a
// sequence per block. What it needs of the codec (CUB-style: a policy type and records by their
// members; the ratio codec's is codecs/ratio_class/huffman_chunks.cuh):
//   Chunks, passed by value: Decode, its per-chunk record (parsed from the archive); count(c) (values)
//     and first_value(c) (index of its first value in v); static place(decode), where the chunk's
//     stream sits (a StreamPlace: stream.hpp); static delta(symbol, radius), the word stored for a symbol.
//   Decode: uint32_t bad, raw (chunks left alone), zeros (the symbol 0s seen are added to it), and the
//     chunk's offset in the archive.
// Kernels are static: this header is included by more than one translation unit.
#pragma once
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "gpu/decode_status.hpp"
#include "huffman/codebook.hpp"
#include "huffman/stream.hpp"

namespace hpcz::huffman::cuda {

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
// The body is a device function, so that a codec's batch kernel runs it with an archive's parameters.
template <class Chunks>
__device__ __forceinline__ void decode_sequence(Chunks g, uint32_t radius, const uint8_t* __restrict__ a,
                                                typename Chunks::Decode* dc, const huffman::DecodeTables* tables,
                                                const LongTable* longs, uint32_t* __restrict__ v, uint32_t* status) {
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
  const typename Chunks::Decode& d = dc[c];
  if (d.bad || d.raw) return;
  const StreamPlace L = Chunks::place(d);
  const uint32_t nsub = huffman::n_subsequences(L.total_bits), nseq = huffman::n_sequences(L.total_bits);
  if (j >= nseq) return;
  const uint32_t count = g.count(c);
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
    if (threadIdx.x == 0) { atomicOr(status, gpu::kBadChunk); }
    return;
  }
  // Pass 2: each thread's run is contiguous in the output but the runs of a warp are far apart, so
  // symbols go to a per-thread row of 32 in shared memory first, and the warp writes each row out
  // with 32 lanes (a whole 128-byte line) instead of 32 scattered 4-byte stores per instruction.
  const uint32_t lane = threadIdx.x & 31;
  uint32_t* const v_lane = v + g.first_value(c) + lane;
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
      if (lane < n_r) v_lane[at_r] = Chunks::delta(sy, radius);
    }
    at += cnt;
    __syncwarp();
  }
  zeros = Reduce(tmp.reduce).Sum(zeros);
  if (threadIdx.x == 0 && zeros) atomicAdd(&dc[c].zeros, zeros);
}
template <class Chunks>
static __global__ void __launch_bounds__(huffman::kSeqSubs)
    decode_kernel(Chunks g, uint32_t radius, const uint8_t* __restrict__ a, typename Chunks::Decode* dc,
                  const huffman::DecodeTables* tables, const LongTable* longs, uint32_t* __restrict__ v, uint32_t* status) {
  decode_sequence<Chunks>(g, radius, a, dc, tables, longs, v, status);
}

}  // namespace hpcz::huffman::cuda
