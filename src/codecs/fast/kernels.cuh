// Fast-mode CUDA kernels: a thread block codes a 64 KiB chunk at a time. (Kernels that are not templates
// are static: this header is included by more than one translation unit.)
//
// Compression: each thread quantizes and plans whole 32-value blocks (f32: its row of a round buffer
// that cp.async filled a round ahead; f64: 8 x 16-byte loads), a block-wide scan places their payloads
// and gives the chunk's size, published at once for a decoupled look-back across chunks (chunk ids
// taken in order from an atomic counter, so every chunk we wait on is taken by a running block; f32
// blocks are persistent and take chunk after chunk). The chunk is assembled in
// shared memory (payload growing up from the codes, exception values growing down from the top), the
// look-back gives its offset in the archive, and it is written out with coalesced word stores, its
// checksum summed on the way. One pass over the input, one write of the output: no second kernel, no
// gather.
//
// Decompression: each thread block loads its chunk into shared memory with 16-byte loads, checks its
// checksum, scans the codes and exception masks, and each thread decodes whole blocks.
#pragma once
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "codecs/fast/chunk.hpp"
#include "codecs/fast/policy.hpp"
#include "format/header.hpp"
#include "gpu/archive_passes.cuh"
#include "gpu/async_copy.cuh"
#include "gpu/lookback.cuh"
#include "quant/bound.hpp"

namespace hpcz::fast::cuda {

using namespace gpu;  // the archive passes, the look-back, DecodeStatus

constexpr int kThreads = 256;
// Blocks per SM the encoder is compiled for (a template argument: the register budget is 65536 /
// (256 x blocks), 128 at 2 and 80 at 3; an H100's shared memory fits 2 f32 blocks, a 66 KiB stage and
// a 32 KiB round buffer each, and 3 f64 ones): FastPolicy.
template <class T> constexpr int encode_min_blocks() { return FastPolicy<T>::encode_min_blocks; }

template <class T> constexpr uint32_t stage_bytes() {
  // codes + the worst-case payload/exception region + slack for funnel-shift reads past the end
  return chunk_values<T>() / kB + chunk_values<T>() * sizeof(T) + 48;
}

// Staged (FastPolicy; f32, persistent): a round's input goes through shared memory, copied there by
// cp.async (coalesced, no registers held: the next round's copy is in flight while this one is coded),
// each thread then reading its block's row. Unstaged (f64: one round a chunk, a chunk a block): loads
// into registers.
template <class T> constexpr bool staged_rounds() { return FastPolicy<T>::staged_rounds; }
constexpr uint32_t kRowBytes = kB * 4;  // a block's row: 32 f32 values
template <class T> constexpr uint32_t round_buffer_offset() { return (stage_bytes<T>() + 15) / 16 * 16; }
// The encoder's dynamic shared memory: the stage, then the round buffer (staged rounds only). P: the
// policy the kernel is compiled with (FastPolicy, or FastPolicyNoRoundBuffer where the GPU's shared
// memory does not hold the buffer: policy.hpp).
template <class T, class P = FastPolicy<T>> constexpr uint32_t encode_smem_bytes() {
  return round_buffer_offset<T>() + (P::staged_rounds ? kThreads * kRowBytes : 0);
}

__device__ __forceinline__ uint32_t funnel_word(const uint32_t* w, uint32_t byte_pos) {
  uint32_t i = byte_pos >> 2, sh = (byte_pos & 3) * 8;
  return __funnelshift_r(w[i], w[i + 1], sh);
}

// ---- kernels ------------------------------------------------------------------------------------
// Values [first, first + count) of the input (f32, 16-byte aligned) into buf by cp.async, a row of 32
// values a block: 16-byte pieces, consecutive threads taking consecutive pieces (whole lines a warp),
// piece j of row b at slot j ^ (b % 8) of the row, so that 8 threads reading the same piece of 8
// consecutive rows with 16-byte loads meet no bank conflict. Past count: zeros (load_block's too).
__device__ __forceinline__ void copy_round_async(const float* in, unsigned long long first, uint32_t count, uint8_t* buf) {
  constexpr uint32_t kPieces = kThreads * kRowBytes / 16, kRowPieces = kRowBytes / 16;
  auto dst = [&](uint32_t p) { return buf + (p / kRowPieces) * kRowBytes + 16 * ((p % kRowPieces) ^ (p / kRowPieces % 8)); };
  if (count == kPieces * 4) {  // a whole round (all but the input's last chunk)
#pragma unroll
    for (uint32_t k = 0; k < kPieces / kThreads; ++k) {
      const uint32_t p = k * kThreads + threadIdx.x;
      copy_async16(dst(p), in + first + 4 * p);
    }
    return;
  }
  // The input's end: its last piece a word at a time (a 16-byte copy would read past the end), zeros
  // after it.
  for (uint32_t p = threadIdx.x; p < kPieces; p += kThreads) {
    uint8_t* d = dst(p);
    const float* src = in + first + 4 * p;
    if (4 * p + 4 <= count) {
      copy_async16(d, src);
    } else {
      for (uint32_t w = 0; w < 4; ++w) {
        if (4 * p + w < count) copy_async4(d + 4 * w, src + w);
        else reinterpret_cast<uint32_t*>(d)[w] = 0;
      }
    }
  }
}
// This thread's row of the round buffer (see copy_round_async).
__device__ __forceinline__ void read_row(const uint8_t* buf, float* v) {
  const uint8_t* row = buf + threadIdx.x * kRowBytes;
#pragma unroll
  for (uint32_t k = 0; k < kRowBytes / 16; ++k) {
    const float4 f = *reinterpret_cast<const float4*>(row + 16 * (k ^ (threadIdx.x % 8)));
    v[4 * k] = f.x; v[4 * k + 1] = f.y; v[4 * k + 2] = f.z; v[4 * k + 3] = f.w;
  }
}

template <class T>
__device__ __forceinline__ void load_block(const T* in, unsigned long long first, unsigned long long n, T* v, int& count) {
  if (first + kB <= n) {
    count = kB;
    if constexpr (std::is_same_v<T, float>) {
      const float4* p = reinterpret_cast<const float4*>(in + first);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        float4 f = __ldg(p + k);
        v[4 * k] = f.x; v[4 * k + 1] = f.y; v[4 * k + 2] = f.z; v[4 * k + 3] = f.w;
      }
    } else {
      static_assert(std::is_same_v<T, double>, "a 16-byte vector load for this type");
      const double2* p = reinterpret_cast<const double2*>(in + first);
#pragma unroll
      for (int k = 0; k < 16; ++k) {
        double2 f = __ldg(p + k);
        v[2 * k] = f.x; v[2 * k + 1] = f.y;
      }
    }
  } else {
    count = first < n ? int(n - first) : 0;
#pragma unroll
    for (int i = 0; i < kB; ++i) v[i] = i < count ? in[first + i] : T(0);
  }
}

// The range keys (quant::narrow_key) of a whole block, folded into [lo, hi]; every value must be in the
// range set (the caller checks). Hopper's three-way integer min and max take two values an instruction.
template <class T>
__device__ __forceinline__ void fold_block_keys(const T* v, typename detail::Bits<T>::type& lo,
                                                typename detail::Bits<T>::type& hi) {
#pragma unroll
  for (int i = 0; i < kB; i += 2) {
    const auto a = narrow_key(v[i]), b = narrow_key(v[i + 1]);
    if constexpr (std::is_same_v<typename detail::Bits<T>::type, uint32_t>) {
      lo = __vimin3_u32(lo, a, b);
      hi = __vimax3_u32(hi, a, b);
    } else {
      lo = min(lo, min(a, b));
      hi = max(hi, max(a, b));
    }
  }
}

// A block of threads' range keys into st: a warp's, then the block's (shared memory, one barrier), two
// atomics where they lower the minimum or raise the maximum. Called once a block, at its end.
template <class T>
__device__ __forceinline__ void publish_range(typename detail::Bits<T>::type lo, typename detail::Bits<T>::type hi,
                                              CompressState* st) {
  using K = typename detail::Bits<T>::type;
  __shared__ K s_lo[kThreads / 32], s_hi[kThreads / 32];
  for (int d = 16; d; d >>= 1) {
    lo = min(lo, K(__shfl_xor_sync(~0u, lo, d)));
    hi = max(hi, K(__shfl_xor_sync(~0u, hi, d)));
  }
  if (threadIdx.x % 32 == 0) {
    s_lo[threadIdx.x / 32] = lo;
    s_hi[threadIdx.x / 32] = hi;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kThreads / 32; ++w) {
      lo = min(lo, s_lo[w]);
      hi = max(hi, s_hi[w]);
    }
    if (lo <= hi) {
      const unsigned long long a = range_key(double(narrow_value<T>(lo))), b = range_key(double(narrow_value<T>(hi)));
      // The state only ever narrows toward the answer, so a stale read can only let an atomic through.
      if (a < *(volatile unsigned long long*)&st->key_min) atomicMin(&st->key_min, a);
      if (b > *(volatile unsigned long long*)&st->key_max) atomicMax(&st->key_max, b);
    }
  }
}

// A thread's rank among the chunk's blocks with some property, from the ballots of that property
// kept a word per (round, warp) in `words`: the set bits of the words before its own, and of its
// own below its lane.
__device__ __forceinline__ uint32_t ballot_rank(const uint32_t* words, uint32_t word, uint32_t bits, uint32_t lane) {
  uint32_t rank = __popc(bits & ((1u << lane) - 1));
  for (uint32_t k = 0; k < word; ++k) rank += __popc(words[k]);
  return rank;
}

// The encoder's chain across a round: the last quantized q of the blocks before this thread's (its
// block's prev), or carry, the q that ended the previous round, where none of them has one; carry
// becomes this round's last. mine: this block's last q, kNoQ for a block with no quantized lane. A
// warp scan, one word a warp in shared memory and one barrier (a block-wide scan took three); the walk
// over earlier warps is almost always one step. s_warp_last must not be read by a round still running
// (the encoder's later barriers in the round see to that).
__device__ __forceinline__ int32_t chain_prev(int32_t mine, int32_t& carry, int32_t* s_warp_last) {
  constexpr int kWarps = kThreads / 32;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int32_t last = mine;  // the last q of lanes <= this one
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int32_t o = __shfl_up_sync(~0u, last, d);
    if (lane >= d && last == kNoQ) last = o;
  }
  int32_t prev = __shfl_up_sync(~0u, last, 1);
  if (lane == 0) prev = kNoQ;
  if (lane == 31) s_warp_last[warp] = last;
  __syncthreads();
  for (int w = warp - 1; prev == kNoQ && w >= 0; --w) prev = s_warp_last[w];
  if (prev == kNoQ) prev = carry;
  int32_t end = kNoQ;
  for (int w = kWarps - 1; end == kNoQ && w >= 0; --w) end = s_warp_last[w];
  if (end != kNoQ) carry = end;
  return prev;
}

// The decoder's chain scan operator.
struct ChainOp {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const {
    Chain c = combine(Chain{uint32_t(a >> 32), uint32_t(a)}, Chain{uint32_t(b >> 32), uint32_t(b)});
    return (unsigned long long)c.absolute << 32 | c.value;
  }
};

// The array of the chunk a block holds (set by the block's thread 0 in shared memory, batch only).
template <class T> struct HeldArray {
  EncodeTarget<T> t;
  unsigned long long first;  // its chunk 0's id in the batch
  unsigned item;
};

// Where the encoder's chunks come from. One array: the kernel's parameters, chunk ids its own.
template <class T> struct OneArray {
  EncodeTarget<T> t;
  quant::Bound asked;
  __device__ unsigned int* counter() const { return &t.st->chunk_counter; }
  __device__ unsigned long long total() const { return t.n_chunks; }
  __device__ void locate(unsigned long long, HeldArray<T>&) const {}
  __device__ const EncodeTarget<T>& target(const HeldArray<T>&) const { return t; }
  __device__ unsigned long long first(const HeldArray<T>&) const { return 0; }
  __device__ bool same_array(const HeldArray<T>&, const HeldArray<T>&) const { return true; }
  __device__ quant::Bound bound(const HeldArray<T>&) const { return asked; }
};
// A batch: items in device memory, chunk ids counted across them (item i's chunks are ids
// [firsts[i], firsts[i + 1])), taken from one counter. A block finds a chunk's item by a binary search.
template <class T> struct ArrayBatch {
  const EncodeTarget<T>* targets;
  const unsigned long long* firsts;  // n_items + 1
  const format::HeaderFields* headers;
  unsigned n_items;
  unsigned int* counter_;
  unsigned long long total_;
  __device__ unsigned int* counter() const { return counter_; }
  __device__ unsigned long long total() const { return total_; }
  __device__ void locate(unsigned long long c, HeldArray<T>& held) const {
    if (c >= total_) return;
    unsigned lo = 0, hi = n_items;  // the last item whose first chunk is at or before c
    while (hi - lo > 1) {
      const unsigned mid = (lo + hi) / 2;
      if (firsts[mid] <= c) lo = mid; else hi = mid;
    }
    held.t = targets[lo];
    held.first = firsts[lo];
    held.item = lo;
  }
  __device__ const EncodeTarget<T>& target(const HeldArray<T>& held) const { return held.t; }
  __device__ unsigned long long first(const HeldArray<T>& held) const { return held.first; }
  __device__ bool same_array(const HeldArray<T>& a, const HeldArray<T>& b) const { return a.item == b.item; }
  __device__ quant::Bound bound(const HeldArray<T>& held) const { return quant::bound_of(headers[held.item]); }
};

// Once a chunk's bytes are assembled in `stage` (head and payloads in [start, body_end): start is 0,
// or where a sparse head was written below the payloads; exception values growing down from kTop;
// the lane blocks' descriptors in lanes_desc):
// learn its offset by the look-back over earlier chunks (warp 0, while the other warps sum its
// checksum), write its table entry, and copy it to the archive. Every thread of the block calls this.
// A persistent block (next != nullptr) takes its next chunk id from `counter` once the look-back is
// done, into *next, and thread 0 calls on_taken(id); after_offset() runs on every thread once that id
// and the offset are known, before the copy-out. c is the chunk's index in its array.
template <class T, class OnTaken, class AfterOffset>
__device__ __forceinline__ void place_chunk(const uint8_t* stage, uint32_t start, uint32_t body_end, uint32_t nexc,
                                            const uint8_t* lanes_desc, uint32_t nlanes, unsigned long long c,
                                            unsigned long long n_chunks, CompressState* st, unsigned int* counter,
                                            unsigned long long* desc, uint8_t* __restrict__ out,
                                            unsigned long long* next, OnTaken&& on_taken, AfterOffset&& after_offset) {
  constexpr uint32_t kCV = chunk_values<T>(), kNB = kCV / kB, kTop = kNB + kCV * sizeof(T);
  using Sum = cub::BlockReduce<uint32_t, kThreads>;
  __shared__ typename Sum::TempStorage sum_tmp;
  __shared__ unsigned long long s_base;
  const uint32_t body = body_end - start;
  const uint32_t exc_end = body + nexc * uint32_t(sizeof(T));
  const uint32_t size = exc_end + kLanesDescBytes * nlanes;
  const uint32_t* stage32 = reinterpret_cast<const uint32_t*>(stage);
  auto byte_at = [&](uint32_t pos) -> uint32_t {
    if (pos < body) return stage[start + pos];
    if (pos >= size) return 0;
    if (pos >= exc_end) return lanes_desc[pos - exc_end];
    uint32_t e = pos - body, j = e / sizeof(T), r = e % sizeof(T);
    return stage[kTop - (j + 1) * sizeof(T) + r];
  };
  auto word_at = [&](uint32_t pos) -> uint32_t {  // 4 chunk bytes from pos, zero past the end
    if (pos + 4 <= body) return funnel_word(stage32, start + pos);
    return byte_at(pos) | byte_at(pos + 1) << 8 | byte_at(pos + 2) << 16 | byte_at(pos + 3) << 24;
  };

  // The size was published as soon as it was known; warp 0 learns the offset while the others checksum.
  // (Looking back before warp 0 writes its last round's blocks measured slower: docs/EXPERIMENTS.md.)
  // The next id is taken only now: taken earlier, the time from an id to its chunk's size included
  // this look-back's wait, and chunks published after later ones, whose look-backs then waited in turn.
  unsigned int taken = 0;
  if (threadIdx.x < 32) {
    unsigned long long excl = PackedTileState{desc}.exclusive_prefix(c, size);
    if (threadIdx.x == 0) {
      s_base = format::data_offset(n_chunks) + excl;
      if (next) taken = atomicAdd(counter, 1u);  // stored after the checksum (its latency hidden)
    }
  }
  // The chunk's HPCZ-SUM32 (archive version 5). A chunk that starts on a stage word (always but the
  // sparse form) has its body words in a loop of their own, unrolled, with no funnel shift (one loop
  // with a branch a word to word_at cost 18 instructions a word, 9% of the kernel's: ncu, era5); the
  // rest of its words, and every word of a chunk that does not, go through word_at.
  uint32_t sum = 0;
  const uint32_t body_words = body / 4, n_words = (size + 3) / 4;
  uint32_t i = threadIdx.x;
  if (start % 4 == 0) {
    const uint32_t* chunk32 = stage32 + start / 4;
#pragma unroll 4
    for (; i < body_words; i += kThreads) sum += format::sum32_term(i, chunk32[i]);
  }
  for (; i < n_words; i += kThreads) sum += format::sum32_term(i, word_at(4 * i));
  if (next && threadIdx.x == 0) {
    *next = taken;
    on_taken(taken);
  }
  sum = Sum(sum_tmp).Sum(sum);
  __syncthreads();
  after_offset();
  const unsigned long long base = s_base;
  if (threadIdx.x == 0) {
    const uint32_t chunk_sum = sum;
    format::write_chunk_entry(out + format::kHeaderBytes + 16 * c, base, size, chunk_sum);
    // The table's checksum sum, entry by entry, for the seal kernel: a one-block pass over the table
    // there cost 24 us, 3% of a 512 MiB compression. (Sealing in the block that finishes last instead
    // needs a fence in every block, which costs as much.)
    atomicAdd(&st->table_sum, format::chunk_entry_terms(c, base, size, chunk_sum));
    if (c + 1 == n_chunks) st->total_size = base + size;
  }
  // Chunk bytes to out[base, base + size): 16-byte stores where we can, bytes at the two ends.
  const unsigned long long end = base + size, w0 = (base + 3) / 4, w1 = end / 4;
  uint32_t* out32 = reinterpret_cast<uint32_t*>(out);
  if (w0 < w1) {
    // Output word w0 + k starts at chunk byte 4k + d. While its four bytes lie in the body it is a
    // funnel shift of stage words k and k + 1; from the first 16-byte aligned output word on, four
    // such words make one 16-byte store. The rest (at most 3 words before, the last body words and
    // the exceptions after the body) take word_at. (word_at for every word costs 30 instructions a
    // word, 9% of the kernel's: ncu, era5.)
    const uint32_t d = uint32_t(w0 * 4 - base), sh = 8 * ((start + d) % 4), q = (start + d) / 4, n_words = uint32_t(w1 - w0);
    const uint32_t n_body = body >= d + 4 ? min(n_words, (body - d) / 4) : 0;
    const uint32_t k0 = min(n_body, uint32_t((4 - (w0 & 3)) & 3));  // out is 16-byte aligned (the API checks)
    const uint32_t n_groups = (n_body - k0) / 4, k_rest = k0 + 4 * n_groups;
    auto body_word = [&](uint32_t k) { return __funnelshift_r(stage32[q + k], stage32[q + k + 1], sh); };
    uint4* out128 = reinterpret_cast<uint4*>(out32 + w0 + k0);
    for (uint32_t j = threadIdx.x; j < n_groups; j += kThreads) {
      const uint32_t k = k0 + 4 * j;
      out128[j] = make_uint4(body_word(k), body_word(k + 1), body_word(k + 2), body_word(k + 3));
    }
    if (threadIdx.x < k0) out32[w0 + threadIdx.x] = body_word(threadIdx.x);
    for (uint32_t k = k_rest + threadIdx.x; k < n_words; k += kThreads) out32[w0 + k] = word_at(4 * k + d);
    if (threadIdx.x < w0 * 4 - base) out[base + threadIdx.x] = uint8_t(byte_at(threadIdx.x));
    if (threadIdx.x < end - w1 * 4) out[w1 * 4 + threadIdx.x] = uint8_t(byte_at(uint32_t(w1 * 4 - base + threadIdx.x)));
  } else {
    for (uint32_t i = threadIdx.x; i < size; i += kThreads) out[base + i] = uint8_t(byte_at(i));
  }
}

// The encoder: a thread codes whole 32-value blocks (codecs/fast/block.hpp's functions as the CPU runs
// them), 256 threads, 2 blocks of threads per SM (128 registers). Two threads a block (twice the warps,
// 39% more instructions) and 3 blocks an SM (80 registers, spilling) both measured slower:
// docs/EXPERIMENTS.md. kFoldRange: no range pass ran (quant::step_from_sample), so the encoder takes
// the range as it reads.
// Source: OneArray or ArrayBatch (a block's chunks may come from several of a batch's arrays; it
// settles eb and the step again, and publishes the range it folded, where the array changes).
// P: the policy (FastPolicy<T>, or FastPolicyNoRoundBuffer<T>: the same bytes, staged differently).
template <class T, bool kFoldRange, class P = FastPolicy<T>, class Source>
__device__ __forceinline__ void encode_chunks(const Source& src) {
  constexpr uint32_t kCV = chunk_values<T>(), kNB = kCV / kB, kRounds = (kNB + kThreads - 1) / kThreads;
  constexpr uint32_t kTop = kNB + kCV * sizeof(T);
  extern __shared__ __align__(16) uint8_t stage[];
  // The size scan, 32-bit (half the shuffles and registers of a 64-bit one): a round's payload bytes
  // (<= 256 blocks x 256 bytes = 2^16) above 14 bits of exception count (<= 256 x 32 = 2^13). A raking
  // scan (a warp-scan one measured the same). The chain: chain_prev.
  using Scan = cub::BlockScan<uint32_t, kThreads>;
  constexpr int kExcBits = 14;
  __shared__ typename Scan::TempStorage scan_tmp;
  __shared__ unsigned long long s_chunk, s_next;
  __shared__ QuantParams<T> s_params;
  __shared__ int32_t s_warp_last[kThreads / 32];  // chain_prev
  // Per round and warp: which of its 32 blocks have a code other than 0 (the sparse form's bitmap
  // word) and how many.
  constexpr uint32_t kWarps = kThreads / 32;
  static_assert(kRounds * kWarps <= 32, "warp 0 sums s_listed a lane an entry");
  __shared__ uint32_t s_listed[kRounds * kWarps];
  __shared__ uint32_t s_listed_total;
  // The same for lane blocks (their descriptors' ranks), and the descriptors in chunk order.
  __shared__ uint32_t s_lanes[kRounds * kWarps];
  __shared__ uint32_t s_lanes_total;
  __shared__ uint8_t s_lanes_desc[kLanesDescBytes * kNB];

  // f32 is persistent: each block of threads codes chunk after chunk, taking ids in order from the
  // counter. The next chunk's id is taken once the current chunk's look-back is done and its first
  // round's input is loaded during the copy-out, so that no chunk but a block's first starts on a DRAM
  // wait, and the range is settled once per block. (ncu: the first round's loads and the range keys'
  // were 15% of the stall samples with one chunk a block.)
  // Waiting on an earlier chunk cannot deadlock: ids are taken in order by running blocks, and from
  // taking an id to publishing its chunk's size (the copy-out before it, its rounds) a block waits on
  // no other block, so every size is published and every look-back ends (chunk 0's is inclusive).
  // f64 keeps one chunk a block: held across chunks its registers spill (3-6% slower).
  constexpr bool kPersistent = P::persistent;
  constexpr bool kStaged = P::staged_rounds;
  static_assert(!kStaged || kPersistent, "the round buffer's copies are waited for where a persistent block's are");
  constexpr uint32_t kRoundValues = kThreads * kB;
  uint8_t* round_buf = stage + round_buffer_offset<T>();
  // Launched dependent on the kernel before it (the sample pass, the range pass or init:
  // gpu/dependent_launch.cuh); the seal kernel may be scheduled as soon as every block runs.
  wait_for_prior_grid();
  let_dependents_launch();
  __shared__ HeldArray<T> s_held[2];  // batch: the current chunk's array, and the next chunk's
  uint32_t cur = 0;
  if (threadIdx.x == 0) {
    s_chunk = atomicAdd(src.counter(), 1u);
    src.locate(s_chunk, s_held[0]);
  }
  __syncthreads();
  unsigned long long c = s_chunk;  // the chunk's id (in a batch, across its arrays)
  if (c >= src.total()) return;
  // Starts a chunk's first round: its copy into the round buffer, or its loads into v. (An L2 prefetch
  // of the later rounds, which helped the loads into registers, cost 2% with the round buffer, whose
  // next copy goes out a round ahead.)
  T v[kB];
  int cnt = 0;
  auto start_chunk = [&](const HeldArray<T>& held, unsigned long long chunk) {
    const EncodeTarget<T>& t = src.target(held);
    const unsigned long long first = (chunk - src.first(held)) * kCV;
    const uint32_t values = uint32_t(min((unsigned long long)kCV, t.n - first));
    if constexpr (kStaged) {
      copy_round_async(t.in, first, min(values, kRoundValues), round_buf);
    } else {
      cnt = 0;
      if (threadIdx.x * kB < values) load_block(t.in, first + threadIdx.x * kB, first + values, v, cnt);
    }
  };
  start_chunk(s_held[0], c);
  // eb and the step of an array (every block derives the same ones).
  auto settle_params = [&](const HeldArray<T>& held) {
    const CompressState* st = src.target(held).st;
    // While folding, the other blocks are still reducing the range; eb and the step do not depend on it.
    return quant::quant_params<T>(quant::settle_as<T>(src.bound(held), kFoldRange ? ~0ull : st->key_min,
                                                kFoldRange ? 0ull : st->key_max, detail::from_bits<double>(st->sample_key)));
  };
  // The first round's loads go out before quant::settle's double-precision chain, so that the two
  // latencies overlap instead of adding up. Every block derives the same eb and step; a persistent
  // block reads them from shared memory each chunk (fewer registers held across the placing).
  QuantParams<T> params{};
  if (!kPersistent || threadIdx.x == 0) {
    params = settle_params(s_held[0]);
    if (kPersistent) s_params = params;
  }
  if (kStaged) copy_async_wait_all();
  if (kPersistent) __syncthreads();
  using K = typename detail::Bits<T>::type;
  K range_lo = ~K(0), range_hi = 0;  // this thread's range keys so far (kFoldRange)

  for (;;) {
    const QuantParams<T> p = kPersistent ? s_params : params;
    const EncodeTarget<T>& t = src.target(s_held[cur]);
    const T* __restrict__ in = t.in;
    const unsigned long long lc = c - src.first(s_held[cur]);  // the chunk's index in its array
    const unsigned long long first_value = lc * kCV;
    const uint32_t count = uint32_t(min((unsigned long long)kCV, t.n - first_value));
    const uint32_t nb = (count + kB - 1) / kB;
    uint32_t pay = 0, nexc = 0;  // running totals over earlier rounds
    int32_t carry = 0;           // q that ended the previous round
    for (uint32_t r = 0; r < kRounds; ++r) {
      const uint32_t b = r * kThreads + threadIdx.x;
      if constexpr (kStaged) {
        read_row(round_buf, v);
        cnt = b < nb ? int(min(uint32_t(kB), count - b * kB)) : 0;
      } else if (r > 0) {
        cnt = 0;
        if (b < nb) load_block(in, first_value + b * kB, first_value + count, v, cnt);
      }
      // The chain: each block's first delta is against the last q of the blocks before it.
      int32_t q[kB], tail = 0;
      bool has = false;
      // v is not needed past the quantizer's quick loop: the rare paths re-read the input.
      const T* src = in + first_value + b * kB;
      auto reread = [&](int i) { return __ldg(src + i); };
      const bool uniform = uniform_bits(v, cnt);
      K lo = ~K(0), hi = 0;
      if (kFoldRange) fold_block_keys(v, lo, hi);
      const uint32_t invalid = quantize_lanes(v, reread, cnt, p, q, tail, has);
      if (kFoldRange) {
        // Every lane quantized: all finite and not the fill value. Otherwise (rare) lane by lane.
        if (invalid) {
          lo = ~K(0);
          hi = 0;
          for (int i = 0; i < cnt; ++i) {
            const T x = reread(i);
            if (in_range_set(x, p.has_fill != 0, p.fill)) {
              const K k = narrow_key(x);
              lo = min(lo, k);
              hi = max(hi, k);
            }
          }
        }
        range_lo = min(range_lo, lo);
        range_hi = max(range_hi, hi);
      }
      const int32_t prev = chain_prev(has ? tail : kNoQ, carry, s_warp_last);
      // chain_prev's barrier: every row of the round buffer has been read; the next round's copy goes out.
      if constexpr (kStaged) {
        if (r + 1 < kRounds && (r + 1) * kRoundValues < count)
          copy_round_async(in, first_value + (r + 1) * kRoundValues, min(count - (r + 1) * kRoundValues, kRoundValues), round_buf);
      }
      chain_fill(q, invalid, prev);
      const BlockDeltas bd = block_deltas(q, prev);
      BlockPlan bp{0, 0, 0, 0};
      if (b < nb) bp = plan_block(bd, invalid & lanes_below(cnt), sizeof(T), uniform);
      const uint32_t listed_bits = __ballot_sync(~0u, b < nb && bp.code != 0);
      const uint32_t lanes_bits = __ballot_sync(~0u, b < nb && bp.code == kCodeLanes);
      if (threadIdx.x % 32 == 0) {
        s_listed[r * kWarps + threadIdx.x / 32] = listed_bits;
        s_lanes[r * kWarps + threadIdx.x / 32] = lanes_bits;
      }
      uint32_t before, total;
      Scan(scan_tmp).ExclusiveSum(bp.payload << kExcBits | bp.nexc, before, total);
      // The chunk's size is known now: publishing it before the blocks are written (rather than when
      // the look-back starts) lets later chunks' look-backs finish sooner (6% faster compression). The
      // scan's barriers have made every round's s_listed visible.
      if (r + 1 == kRounds && threadIdx.x < 32) {
        const uint32_t lane = threadIdx.x;
        const uint32_t listed = __reduce_add_sync(~0u, lane < kRounds * kWarps ? uint32_t(__popc(s_listed[lane])) : 0u);
        const uint32_t nlanes = __reduce_add_sync(~0u, lane < kRounds * kWarps ? uint32_t(__popc(s_lanes[lane])) : 0u);
        if (lane == 0) {
          const uint32_t all_pay = pay + (total >> kExcBits), all_exc = nexc + (total & ((1u << kExcBits) - 1));
          const uint32_t head = sparse_is_smaller(nb, listed) ? sparse_head_bytes(nb, listed) : nb;
          PackedTileState{t.desc}.publish_aggregate(
              lc, head + all_pay + all_exc * uint32_t(sizeof(T)) + kLanesDescBytes * nlanes);
          s_listed_total = listed;
          s_lanes_total = nlanes;
        }
      }
      if (b < nb) {
        stage[b] = bp.code;
        uint32_t at = nb + pay + (before >> kExcBits);
        uint32_t x0 = nexc + (before & ((1u << kExcBits) - 1));
        write_block<T>(bp, reread, cnt, q, bd, stage + at, [&](int j, T x) {
          store_value_le<T>(stage + kTop - (x0 + j + 1) * sizeof(T), x);
        });
        if (bp.code == kCodeLanes) {  // at its rank among the chunk's lane blocks (the scan made s_lanes visible)
          const uint32_t rank = ballot_rank(s_lanes, r * kWarps + threadIdx.x / 32, lanes_bits, threadIdx.x % 32);
          write_lanes_desc(bd, s_lanes_desc + kLanesDescBytes * rank);
        }
      }
      pay += total >> kExcBits;
      nexc += total & ((1u << kExcBits) - 1);
      if (kStaged && r + 1 < kRounds) copy_async_wait_all();  // the next round's rows, for every thread after the barrier
      __syncthreads();  // scan_tmp reuse
    }
    // The sparse form where it is smaller (chunk_codes): its head written just below the payloads, from
    // the codes in stage[0, nb) (read into registers first: the head overlaps them).
    const uint32_t listed = s_listed_total;  // written before the last round's barrier
    uint32_t start = 0;
    if (sparse_is_smaller(nb, listed)) {
      const uint32_t head = sparse_head_bytes(nb, listed), bm = sparse_bitmap_bytes(nb), warp = threadIdx.x / 32, lane = threadIdx.x % 32;
      start = nb - head;
      uint8_t code[kRounds];
#pragma unroll
      for (uint32_t r = 0; r < kRounds; ++r) {
        const uint32_t b = r * kThreads + threadIdx.x;
        code[r] = b < nb ? stage[b] : uint8_t(0);
      }
      __syncthreads();
      uint8_t* sparse = stage + start;
      if (threadIdx.x == 0) sparse[0] = kSparseChunk;
#pragma unroll
      for (uint32_t r = 0; r < kRounds; ++r) {
        const uint32_t word = r * kWarps + warp, bits = s_listed[word];
        if (lane < 4 && 4 * word + lane < bm) sparse[1 + 4 * word + lane] = uint8_t(bits >> (8 * lane));
        if (code[r]) sparse[1 + bm + ballot_rank(s_listed, word, bits, lane)] = code[r];
      }
      __syncthreads();
    }
    unsigned long long next = src.total();
    place_chunk<T>(stage, start, nb + pay, nexc, s_lanes_desc, s_lanes_total, lc, t.n_chunks, t.st, src.counter(),
                   t.desc, t.out, kPersistent ? &s_next : nullptr,
                   [&](unsigned long long id) { src.locate(id, s_held[cur ^ 1]); },
                   [&] {
                     if (kPersistent) next = s_next;
                     // its loads in flight during the copy-out
                     if (next < src.total()) start_chunk(s_held[cur ^ 1], next);
                   });
    if (next >= src.total()) {
      if (kFoldRange) publish_range<T>(range_lo, range_hi, t.st);
      return;
    }
    if (!src.same_array(s_held[cur], s_held[cur ^ 1])) {  // a batch's next array: its range and params
      if (kFoldRange) {
        publish_range<T>(range_lo, range_hi, t.st);
        range_lo = ~K(0);
        range_hi = 0;
      }
      if (threadIdx.x == 0) s_params = settle_params(s_held[cur ^ 1]);
    }
    cur ^= 1;
    c = next;
    if (kStaged) copy_async_wait_all();  // its first round's rows
    __syncthreads();  // the stage and the shared arrays are the next chunk's
  }
}

template <class T, bool kFoldRange, int kMinBlocks = encode_min_blocks<T>()>
static __global__ void __launch_bounds__(kThreads, kMinBlocks) encode_kernel(const T* __restrict__ in, unsigned long long n,
                                                          unsigned long long n_chunks, quant::Bound asked,
                                                          CompressState* st, unsigned long long* desc,
                                                          uint8_t* __restrict__ out) {
  encode_chunks<T, kFoldRange>(OneArray<T>{EncodeTarget<T>{in, n, n_chunks, st, desc, out, nullptr}, asked});
}
// A batch's chunks, all arrays at once (an f32 block persistent across them).
template <class T, bool kFoldRange, int kMinBlocks = encode_min_blocks<T>()>
static __global__ void __launch_bounds__(kThreads, kMinBlocks) encode_batch_kernel(ArrayBatch<T> batch) {
  encode_chunks<T, kFoldRange>(batch);
}

// The same two kernels compiled with another policy P (FastPolicyNoRoundBuffer: GPUs whose shared
// memory does not hold the f32 round buffer, policy.hpp). Kernels of their own, so that the default
// ones above stay as they were.
template <class T, bool kFoldRange, class P>
static __global__ void __launch_bounds__(kThreads, P::encode_min_blocks) encode_policy_kernel(
    const T* __restrict__ in, unsigned long long n, unsigned long long n_chunks, quant::Bound asked, CompressState* st,
    unsigned long long* desc, uint8_t* __restrict__ out) {
  encode_chunks<T, kFoldRange, P>(OneArray<T>{EncodeTarget<T>{in, n, n_chunks, st, desc, out, nullptr}, asked});
}
template <class T, bool kFoldRange, class P>
static __global__ void __launch_bounds__(kThreads, P::encode_min_blocks) encode_policy_batch_kernel(ArrayBatch<T> batch) {
  encode_chunks<T, kFoldRange, P>(batch);
}

}  // namespace hpcz::fast::cuda
