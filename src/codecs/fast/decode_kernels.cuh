// Fast-mode CUDA decoding kernels: each thread block loads its chunk into shared memory with 16-byte
// loads, checks its checksum, scans the codes and exception masks, and each thread decodes whole
// blocks. (Kernels that are not templates are static: this header may be included by more than one
// translation unit.)
#pragma once
#include "codecs/fast/kernels.cuh"

namespace hpcz::fast::cuda {

// Shared memory for a chunk's bytes in the first decoding pass. Most chunks are far smaller than the
// worst case (a raw chunk, 64 KiB): sizing the pass for 24 KiB fits 4 blocks per SM instead of 3 (f32:
// registers allow 4); the few larger chunks are listed and decoded by a second pass with the full stage.
constexpr uint32_t kSmallStage = 24 * 1024;
template <class T> constexpr uint32_t decode_stage_bytes() { return chunk_values<T>() * uint32_t(sizeof(T)) + chunk_values<T>() / kB + 64; }

// Stores a decoded group of 8 values (32 bytes for f32, 64 for f64) at dst, where the partner lane
// (lane ^ 1) holds the same group of the neighbouring block, kB values away. The two swap halves of
// each 32-byte sector, so that each 16-byte store instruction of the warp writes 16 whole sectors
// rather than halves of 32: the half-sector writes of one thread a block kept the L2's input
// crossbar 90% busy (ncu, era5, whole-warp stores of the blocks' own groups).
template <class T>
__device__ __forceinline__ void store_group_paired(T* dst, const T* v, uint32_t odd) {
  constexpr int kPieces = 8 * int(sizeof(T)) / 16;  // 16-byte pieces of a group
  uint32_t w[4 * kPieces];                           // the group's words, little-endian
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    if constexpr (std::is_same_v<T, float>) {
      w[i] = __float_as_uint(v[i]);
    } else {
      static_assert(std::is_same_v<T, double>, "the words of a value of this type");
      w[2 * i] = uint32_t(__double_as_longlong(v[i]));
      w[2 * i + 1] = uint32_t(uint64_t(__double_as_longlong(v[i])) >> 32);
    }
  }
  uint4* own = reinterpret_cast<uint4*>(dst);
  uint4* partner = reinterpret_cast<uint4*>(odd ? dst - kB : dst + kB);
#pragma unroll
  for (int sector = 0; sector < kPieces / 2; ++sector) {
    const int lo = 2 * sector, hi = lo + 1;  // the sector's two pieces; the partner needs the other's
    uint4 got;
    got.x = __shfl_xor_sync(~0u, odd ? w[4 * lo] : w[4 * hi], 1);
    got.y = __shfl_xor_sync(~0u, odd ? w[4 * lo + 1] : w[4 * hi + 1], 1);
    got.z = __shfl_xor_sync(~0u, odd ? w[4 * lo + 2] : w[4 * hi + 2], 1);
    got.w = __shfl_xor_sync(~0u, odd ? w[4 * lo + 3] : w[4 * hi + 3], 1);
    const uint4 mine_lo = make_uint4(w[4 * lo], w[4 * lo + 1], w[4 * lo + 2], w[4 * lo + 3]);
    const uint4 mine_hi = make_uint4(w[4 * hi], w[4 * hi + 1], w[4 * hi + 2], w[4 * hi + 3]);
    // First the even lane's block's sector (its low piece, the odd lane's copy of its high piece),
    // then the odd lane's.
    *(odd ? partner + hi : own + lo) = odd ? got : mine_lo;
    *(odd ? own + hi : partner + lo) = odd ? mine_hi : got;
  }
}

// Decodes chunk c with its bytes staged in `stage` (stage_cap bytes). A chunk that does not fit is
// appended to `large` ([0] count, then ids: list_id for this one) for the second pass instead, when
// large is given. kSum32: the chunk checksums are HPCZ-SUM32 (version 5 on), else HPCZ-SUM.
template <class T, bool kSum32>
__device__ void decode_chunk(unsigned long long c, unsigned long long n_chunks, const uint8_t* __restrict__ a,
                             unsigned long long archive_size, unsigned long long n, const QuantParams<T>& p,
                             T* __restrict__ out, uint32_t* status, uint8_t* stage, uint32_t stage_cap, uint32_t* large,
                             uint32_t list_id) {
  constexpr uint32_t kCV = chunk_values<T>(), kNB = kCV / kB, kRounds = (kNB + kThreads - 1) / kThreads;
  using Scan32 = cub::BlockScan<uint32_t, kThreads>;
  using Scan = cub::BlockScan<unsigned long long, kThreads>;
  using Sum = cub::BlockReduce<unsigned long long, kThreads>;
  using Sum32 = cub::BlockReduce<uint32_t, kThreads>;
  __shared__ typename Scan32::TempStorage scan_tmp32;
  __shared__ typename Scan::TempStorage scan_tmp;
  __shared__ union {
    typename Sum::TempStorage wide;
    typename Sum32::TempStorage narrow;
  } sum_tmp;
  // s_exc_off: a block's first exception value; for a lane block (no exceptions), its descriptor's rank.
  __shared__ uint32_t s_pay_off[kNB], s_exc_off[kNB];
  __shared__ uint8_t s_codes[kNB];  // one a block, from the code bytes or the sparse form (chunk_codes)
  __shared__ int s_bad;

  const unsigned long long first_value = c * kCV;
  const uint32_t count = uint32_t(min((unsigned long long)kCV, n - first_value));
  const uint32_t nb = (count + kB - 1) / kB;
  const uint8_t* entry = a + format::kHeaderBytes + 16 * c;
  const unsigned long long off = load_u64_le(entry);
  const uint32_t size = load_u32_le(entry + 8), expect = load_u32_le(entry + 12);
  // The same table rules as the host parser: chunks in order, back to back, filling the archive.
  const unsigned long long expect_off = c ? load_u64_le(entry - 16) + load_u32_le(entry - 8) : format::data_offset(n_chunks);
  const bool last_ok = c + 1 < n_chunks || off + size == archive_size;
  if (off != expect_off || !last_ok || off > archive_size || size > archive_size - off ||
      size > max_chunk_bytes(count, sizeof(T)) || size == 0) {
    if (threadIdx.x == 0) atomicOr(status, kBadChunk);
    return;
  }
  // Chunk byte p lands at stage[shift + p]; 16-byte loads for the aligned middle.
  const uint32_t shift = uint32_t(off & 15);
  if (uint64_t(shift) + size + 8 > stage_cap) {  // too large for this pass (the same on every thread)
    if (threadIdx.x == 0) large[1 + atomicAdd(large, 1u)] = list_id;
    return;
  }
  {
    const unsigned long long v0 = (off + 15) / 16, v1 = (off + size) / 16;
    if (v0 < v1) {
      const uint4* src = reinterpret_cast<const uint4*>(a);
      uint4* dst = reinterpret_cast<uint4*>(stage);
      for (unsigned long long v = v0 + threadIdx.x; v < v1; v += kThreads) dst[v - off / 16] = __ldg(src + v);
      uint32_t head = uint32_t(v0 * 16 - off), tail = uint32_t(off + size - v1 * 16);
      if (threadIdx.x < head) stage[shift + threadIdx.x] = a[off + threadIdx.x];
      if (threadIdx.x < tail) stage[shift + (v1 * 16 - off) + threadIdx.x] = a[v1 * 16 + threadIdx.x];
    } else {
      for (uint32_t i = threadIdx.x; i < size; i += kThreads) stage[shift + i] = a[off + i];
    }
    if (threadIdx.x < 8) stage[shift + size + threadIdx.x] = 0;  // zero tail for the last checksum word
  }
  if (threadIdx.x == 0) s_bad = 0;
  __syncthreads();
  const uint8_t* chunk = stage + shift;
  const uint32_t* stage32 = reinterpret_cast<const uint32_t*>(stage);
  // The 8 zero bytes staged after the chunk make its last partial word come out zero-padded.
  if constexpr (kSum32) {
    uint32_t sum = 0;
    for (uint32_t i = threadIdx.x; i * 4 < size; i += kThreads) sum += format::sum32_term(i, funnel_word(stage32, shift + 4 * i));
    sum = Sum32(sum_tmp.narrow).Sum(sum);
    if (threadIdx.x == 0 && sum != expect) s_bad = kBadChecksum;
  } else {
    unsigned long long sum = 0;
    for (uint32_t i = threadIdx.x; i * 4 < size; i += kThreads) sum += format::checksum_term(i, funnel_word(stage32, shift + 4 * i));
    sum = Sum(sum_tmp.wide).Sum(sum);
    if (threadIdx.x == 0 && format::checksum_fold(sum) != expect) s_bad = kBadChecksum;
  }
  __syncthreads();
  if (s_bad) {
    if (threadIdx.x == 0) atomicOr(status, s_bad);
    return;
  }
  // The codes, as chunk_codes: the code bytes, or the sparse form's bitmap and listed codes (a scan
  // over the bitmap places each listed code).
  uint32_t head = nb;
  bool lanes_seen = false;  // whether this thread's blocks hold a lane block
  if (chunk[0] == kSparseChunk) {
    const uint32_t bm = sparse_bitmap_bytes(nb);
    const bool ok = sparse_bitmap_ok(chunk, size, nb);
    uint32_t listed = 0;
    for (uint32_t r = 0; r < kRounds; ++r) {
      const uint32_t b = r * kThreads + threadIdx.x;
      const uint32_t on = ok && b < nb && sparse_listed(chunk, b);
      uint32_t before, total;
      Scan32(scan_tmp32).ExclusiveSum(on, before, total);
      if (b < nb) {
        const uint32_t at = 1 + bm + listed + before;
        if (on && at >= size) s_bad = kBadChunk;
        s_codes[b] = on && at < size ? chunk[at] : uint8_t(0);
        lanes_seen |= s_codes[b] == kCodeLanes;
      }
      listed += total;
      __syncthreads();
    }
    head = 1 + bm + listed;
    if (threadIdx.x == 0 && (!ok || head > size)) s_bad = kBadChunk;
  } else {
    if (threadIdx.x == 0 && size < nb) s_bad = kBadChunk;
    for (uint32_t b = threadIdx.x; b < nb && b < size; b += kThreads) {
      s_codes[b] = chunk[b];
      lanes_seen |= chunk[b] == kCodeLanes;
    }
  }
  const bool has_lanes = __syncthreads_or(lanes_seen);
  if (s_bad) {
    if (threadIdx.x == 0) atomicOr(status, s_bad);
    return;
  }
  // The lane blocks' descriptors end the chunk: each one's rank (only in chunks that have them).
  uint32_t nlanes = 0;
  if (has_lanes) {
    for (uint32_t r = 0; r < kRounds; ++r) {
      const uint32_t b = r * kThreads + threadIdx.x;
      const uint32_t on = b < nb && s_codes[b] == kCodeLanes;
      uint32_t before, total;
      Scan32(scan_tmp32).ExclusiveSum(on, before, total);
      if (on) s_exc_off[b] = nlanes + before;
      nlanes += total;
      __syncthreads();
    }
    if (head + kLanesDescBytes * nlanes > size) {
      if (threadIdx.x == 0) atomicOr(status, kBadChunk);
      return;
    }
  }
  const uint8_t* lanes_desc = chunk + size - kLanesDescBytes * nlanes;
  auto desc_of = [&](uint32_t b) { return lanes_desc + kLanesDescBytes * s_exc_off[b]; };  // lane blocks only
  // Payload offsets from the codes, then exception offsets from the masks.
  uint32_t pay = head;
  for (uint32_t r = 0; r < kRounds; ++r) {
    const uint32_t b = r * kThreads + threadIdx.x;
    int ps = 0;
    if (b < nb) ps = s_codes[b] == kCodeLanes ? block_payload_bytes(kCodeLanes, desc_of(b), sizeof(T))
                                              : payload_size(s_codes[b], sizeof(T));
    if (ps < 0) { s_bad = kBadChunk; ps = 0; }
    uint32_t before, total;
    Scan32(scan_tmp32).ExclusiveSum(uint32_t(ps), before, total);
    if (b < nb) s_pay_off[b] = pay + before;
    pay += total;
    __syncthreads();
  }
  if (s_bad || pay > size) {
    if (threadIdx.x == 0) atomicOr(status, kBadChunk);
    return;
  }
  uint32_t nexc = 0;
  for (uint32_t r = 0; r < kRounds; ++r) {
    const uint32_t b = r * kThreads + threadIdx.x;
    uint32_t e = (b < nb && has_exceptions(s_codes[b])) ? popcount32(load_u32_le(chunk + s_pay_off[b])) : 0;
    uint32_t before, total;
    Scan32(scan_tmp32).ExclusiveSum(e, before, total);
    if (b < nb && s_codes[b] != kCodeLanes) s_exc_off[b] = nexc + before;
    nexc += total;
    __syncthreads();
  }
  if ((unsigned long long)pay + (unsigned long long)nexc * sizeof(T) + kLanesDescBytes * nlanes != size) {
    if (threadIdx.x == 0) atomicOr(status, kBadChunk);
    return;
  }
  // The chain: the q each block starts from is a scan over what the blocks before it end on.
  int32_t carry = 0;
  for (uint32_t r = 0; r < kRounds; ++r) {
    const uint32_t b = r * kThreads + threadIdx.x;
    const int cnt = b < nb ? int(min(uint32_t(kB), count - b * kB)) : 0;
    unsigned long long mine = 0, before, agg;
    if (b < nb) {
      const uint8_t code = s_codes[b];
      if (holds_values(code)) {
        int32_t t;
        if (stored_block_tail(code, chunk + s_pay_off[b], cnt, p, t)) mine = 1ull << 32 | uint32_t(t);
      } else {
        Chain ch = block_chain(code, chunk + s_pay_off[b], code == kCodeLanes ? desc_of(b) : nullptr);
        mine = (unsigned long long)ch.absolute << 32 | ch.value;
      }
    }
    Scan(scan_tmp).ExclusiveScan(mine, before, 1ull << 32 | uint32_t(carry), ChainOp(), agg);
    carry = int32_t(uint32_t(ChainOp()(1ull << 32 | uint32_t(carry), agg)));
    __syncthreads();
    // Every thread runs the group loop, those past nb with a block of no planes that reads and stores
    // nothing, so that the warp's lanes can exchange values before storing them.
    const bool active = b < nb;
    const int32_t prev = int32_t(uint32_t(before));
    const uint8_t code = active ? s_codes[b] : uint8_t(0);
    const uint8_t* exc = chunk + pay + (active ? s_exc_off[b] : 0u) * sizeof(T);
    const unsigned long long at = first_value + b * kB;
    const bool paired = __all_sync(~0u, active && at + kB <= n);
    GroupDecoder<T> dec(code, chunk + (active ? s_pay_off[b] : 0u), code == kCodeLanes ? desc_of(b) : nullptr, prev);
    auto source = [&](int j) { return load_value_le<T>(exc + j * sizeof(T)); };
    for (int g = 0; g < kB; g += GroupDecoder<T>::kG) {
      T v[GroupDecoder<T>::kG];
      dec.group(g, p, source, v);
      if (paired) {
        store_group_paired(out + at + g, v, threadIdx.x & 1);
      } else if (active) {
        for (int i = 0; i < GroupDecoder<T>::kG; ++i)
          if (at + g + i < n) out[at + g + i] = v[i];
      }
    }
  }
}

// The decoder's status word, and its workspace's table sum and list count (the first 12 bytes), zeroed:
// one small kernel rather than two memset operations, so that decode_kernel can launch dependent on it.
static __global__ void decode_reset_kernel(uint32_t* status, uint32_t* ws) {
  let_dependents_launch();
  if (threadIdx.x < 3) ws[threadIdx.x] = 0;
  if (threadIdx.x == 3) *status = 0;
}

// First pass: one block per chunk, a small stage; large chunks are listed for the second pass.
template <class T, bool kSum32, int kMinBlocks = 1>
static __global__ void __launch_bounds__(kThreads, kMinBlocks) decode_kernel(const uint8_t* __restrict__ a, unsigned long long archive_size,
                                                          unsigned long long n, QuantParams<T> p, T* __restrict__ out,
                                                          uint32_t* status, uint32_t* large,
                                                          unsigned long long* table_sum) {
  extern __shared__ __align__(16) uint8_t stage[];
  wait_for_prior_grid();  // launched dependent on decode_reset_kernel
  let_dependents_launch();
  if (threadIdx.x == 0) {  // this chunk's table entry (4 words) into the table's checksum sum
    const uint8_t* e = a + format::kHeaderBytes + 16ull * blockIdx.x;
    atomicAdd(table_sum, format::chunk_entry_terms(blockIdx.x, load_u64_le(e), load_u32_le(e + 8), load_u32_le(e + 12)));
  }
  decode_chunk<T, kSum32>(blockIdx.x, gridDim.x, a, archive_size, n, p, out, status, stage, kSmallStage, large, blockIdx.x);
}

// Second pass: a fixed grid walks the list of large chunks with the full stage.
template <class T, bool kSum32>
static __global__ void __launch_bounds__(kThreads) decode_large_kernel(const uint8_t* __restrict__ a,
                                                                unsigned long long archive_size, unsigned long long n,
                                                                unsigned long long n_chunks, QuantParams<T> p,
                                                                T* __restrict__ out, uint32_t* status,
                                                                const uint32_t* large,
                                                                const unsigned long long* table_sum,
                                                                uint32_t table_checksum) {
  extern __shared__ __align__(16) uint8_t stage[];
  wait_for_prior_grid();  // launched dependent on decode_kernel: its list and table sum
  if (blockIdx.x == 0 && threadIdx.x == 0 && format::checksum_fold(*table_sum) != table_checksum)
    atomicOr(status, kBadTable);
  const uint32_t count = *(volatile const uint32_t*)large;
  for (uint32_t i = blockIdx.x; i < count; i += gridDim.x) {
    decode_chunk<T, kSum32>(large[1 + i], n_chunks, a, archive_size, n, p, out, status, stage, decode_stage_bytes<T>(), nullptr, 0);
    __syncthreads();  // the stage and the shared arrays are reused by the next chunk
  }
}

// A batch of archives decoded in one set of launches: chunk ids run across the batch (an archive's
// first chunk id in `firsts`), and the list of large chunks holds those ids.
template <class T> struct DecodeTarget {
  const uint8_t* a;
  unsigned long long archive_size, n, n_chunks;
  QuantParams<T> p;
  T* out;
  uint32_t* status;
  unsigned long long* table_sum;
  uint32_t table_checksum;
};
template <class T> struct ArchiveBatch {
  const DecodeTarget<T>* targets;
  const unsigned long long* firsts;  // n_items + 1
  unsigned n_items;
  uint32_t* large;                   // [0] count, then chunk ids
  // The archive that batch chunk `id` belongs to (the last one whose first chunk is <= id: archives
  // without chunks are passed over).
  __device__ unsigned item_of(unsigned long long id) const {
    unsigned lo = 0, hi = n_items - 1;
    while (lo < hi) {
      const unsigned mid = (lo + hi + 1) / 2;
      if (firsts[mid] <= id) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
};

// Every archive's status word and table sum, and the list's count, zeroed.
template <class T>
static __global__ void decode_batch_reset_kernel(ArchiveBatch<T> b) {
  let_dependents_launch();
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) *b.large = 0;
  if (i < b.n_items) {
    *b.targets[i].status = 0;
    *b.targets[i].table_sum = 0;
  }
}

// decode_kernel over a batch: a block a chunk of any archive. The archive's target is held in shared
// memory (decode_chunk reads its parameters throughout).
template <class T, bool kSum32, int kMinBlocks = 1>
static __global__ void __launch_bounds__(kThreads, kMinBlocks) decode_batch_kernel(ArchiveBatch<T> b) {
  extern __shared__ __align__(16) uint8_t stage[];
  __shared__ DecodeTarget<T> t;
  __shared__ unsigned long long c;
  wait_for_prior_grid();  // launched dependent on decode_batch_reset_kernel
  let_dependents_launch();
  if (threadIdx.x == 0) {  // the archive, and this chunk's table entry (4 words) into its table sum
    const unsigned i = b.item_of(blockIdx.x);
    t = b.targets[i];
    c = blockIdx.x - b.firsts[i];
    const uint8_t* e = t.a + format::kHeaderBytes + 16ull * c;
    atomicAdd(t.table_sum, format::chunk_entry_terms(c, load_u64_le(e), load_u32_le(e + 8), load_u32_le(e + 12)));
  }
  __syncthreads();
  decode_chunk<T, kSum32>(c, t.n_chunks, t.a, t.archive_size, t.n, t.p, t.out, t.status, stage, kSmallStage, b.large,
                          blockIdx.x);
}

// decode_large_kernel over a batch; its first block checks every archive's table sum.
template <class T, bool kSum32>
static __global__ void __launch_bounds__(kThreads) decode_large_batch_kernel(ArchiveBatch<T> b) {
  extern __shared__ __align__(16) uint8_t stage[];
  __shared__ DecodeTarget<T> t;
  __shared__ unsigned long long c;
  wait_for_prior_grid();  // launched dependent on decode_batch_kernel: its list and table sums
  if (blockIdx.x == 0)
    for (unsigned i = threadIdx.x; i < b.n_items; i += blockDim.x) {
      const DecodeTarget<T>& a = b.targets[i];
      if (a.n_chunks && format::checksum_fold(*a.table_sum) != a.table_checksum) atomicOr(a.status, kBadTable);
    }
  const uint32_t count = *(volatile const uint32_t*)b.large;
  for (uint32_t k = blockIdx.x; k < count; k += gridDim.x) {
    if (threadIdx.x == 0) {
      const unsigned long long id = b.large[1 + k];
      const unsigned i = b.item_of(id);
      t = b.targets[i];
      c = id - b.firsts[i];
    }
    __syncthreads();
    decode_chunk<T, kSum32>(c, t.n_chunks, t.a, t.archive_size, t.n, t.p, t.out, t.status, stage,
                            decode_stage_bytes<T>(), nullptr, 0);
    __syncthreads();  // the stage, the target and the shared arrays are reused by the next chunk
  }
}

}  // namespace hpcz::fast::cuda
