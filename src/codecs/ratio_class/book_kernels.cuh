// Ratio-mode CUDA kernels. The codebook: one block per chunk builds the same canonical Huffman book as the CPU (chunk.hpp).
// Kernels are static: this header is included by more than one translation unit.
#pragma once
#include "codecs/ratio_class/kernels_common.cuh"
#include "common/cuda_check.hpp"
#include "huffman/length_counts.cuh"

namespace hpcz::ratio::cuda {

using huffman::LenCounts;
using huffman::LenCountsAdd;

// One block per chunk: the codebook and the chunk's total bits. The same book as build_book on the CPU,
// built in parallel (Tian et al.'s two phases, after Ostadzadeh et al.):
//  1. code lengths: the two-queue Huffman construction done a round at a time. With t the sum of the
//     two lightest nodes, every node lighter than t is paired with its neighbour in weight order (leaf
//     before internal node on equal weights, the sequential algorithm's rule), all pairs at once; a
//     merge path gives each thread its pair. The rounds create exactly the nodes the sequential
//     construction creates, so the depths are its depths. Depths by pointer jumping, then the same
//     length limit and hand-out as the CPU (limit_depths, length_of_rank).
//  2. codewords: canonical; a symbol's code is the first code of its length plus its rank among the
//     symbols of that length (a block scan of per-length counts).
// A book of up to cap symbols (kKeys * kThreads): its shared memory (keys, node weights, two buffers
// each of ancestors and depths, lengths). Sized to the alphabet, not the largest one: at the default
// radius (1,024 symbols) a quarter, so that several blocks share an SM (the sampling's many books).
constexpr size_t book_smem(uint32_t cap) { return size_t(cap) * 8 + 2 * size_t(cap) * (4 + 2 * 2 + 2 * 2) + cap; }

// The small book is held to 128 registers a thread, 2 blocks an SM (unbounded, it took 160: one block).
template <int kKeys>
static __global__ void __launch_bounds__(kThreads, kKeys <= 4 ? 2 : 1) book_kernel(uint32_t nsym, const uint32_t* __restrict__ hist, uint8_t* len,
                                                               uint32_t* code, ChunkInfo* info) {
  constexpr uint32_t kCap = uint32_t(kKeys) * kThreads, kNodes = 2 * kCap;
  using Sort = cub::BlockRadixSort<unsigned long long, kThreads, kKeys>;
  using Scan = cub::BlockScan<uint32_t, kThreads>;
  using LenScan = cub::BlockScan<LenCounts, kThreads>;
  using Reduce = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ union {
    typename Sort::TempStorage sort;
    typename Scan::TempStorage scan;
    typename LenScan::TempStorage len_scan;
    typename Reduce::TempStorage reduce;
  } tmp;
  extern __shared__ uint64_t s_dyn[];
  uint64_t* s_keys = s_dyn;                                     // sorted keys
  uint32_t* w = reinterpret_cast<uint32_t*>(s_keys + kCap);  // node weights
  uint16_t* anc = reinterpret_cast<uint16_t*>(w + kNodes);      // parent, then ancestors (2 buffers)
  uint16_t* dep = anc + 2 * kNodes;                             // depth to that ancestor (2 buffers)
  uint8_t* s_len = reinterpret_cast<uint8_t*>(dep + 2 * kNodes);
  __shared__ uint32_t s_c, s_h, s_e, s_a, s_b, s_pairs, s_done;
  __shared__ uint32_t s_bits[huffman::kDepthCap + 1];
  __shared__ uint32_t s_first[huffman::kMaxLen + 2];
  const uint64_t c = blockIdx.x;
  const uint32_t* h = hist + c * nsym;
  // Blocked arrangement: thread j holds symbols j*kKeys .. j*kKeys+kKeys-1; unused symbols sort last.
  unsigned long long keys[kKeys];
  uint32_t used = 0;
  for (int k = 0; k < kKeys; ++k) {
    const uint32_t s = threadIdx.x * kKeys + k;
    const uint32_t cnt = s < nsym ? h[s] : 0;
    keys[k] = cnt ? huffman::order_key(cnt, s) : ~0ull;
    used += cnt != 0;
  }
  for (uint32_t s = threadIdx.x; s < kCap; s += kThreads) s_len[s] = 0;
  for (uint32_t l = threadIdx.x; l <= huffman::kDepthCap; l += kThreads) s_bits[l] = 0;
  uint32_t total_used;
  Scan(tmp.scan).ExclusiveSum(used, used, total_used);
  __syncthreads();
  if (total_used <= 1) {  // what the tree below gives, without the sort: the books of a predictor left out
    for (int k = 0; k < kKeys; ++k) {
      const uint32_t s = threadIdx.x * kKeys + k;
      if (s >= nsym) break;
      len[c * nsym + s] = uint8_t(h[s] != 0);
      code[c * nsym + s] = 0;
      if (h[s]) info[c].total_bits = h[s];
    }
    if (total_used == 0 && threadIdx.x == 0) info[c].total_bits = 0;
    return;
  }
  Sort(tmp.sort).Sort(keys, 0, 38);  // counts < 2^26 and 12 symbol bits; unused (~0) keys stay last
  for (int k = 0; k < kKeys; ++k) s_keys[threadIdx.x * kKeys + k] = keys[k];
  __syncthreads();
  const uint32_t m = total_used;
  for (uint32_t i = threadIdx.x; i < m; i += kThreads) w[i] = huffman::key_count(s_keys[i]);
  if (threadIdx.x == 0) { s_c = 0; s_h = m; s_e = m; s_done = m < 2; }
  __syncthreads();
  // Phase 1a: the tree, a round at a time. Leaves are nodes [0, m) in weight order; internal nodes
  // are appended from m on, in creation (and weight) order; [c, m) and [h, e) are the queues.
  while (!s_done) {
    if (threadIdx.x == 0) {
      uint32_t cc = s_c, hh = s_h;
      const uint32_t e = s_e;
      auto pick = [&]() {  // the lighter head, leaf first on equal weights
        if (hh >= e || (cc < m && w[cc] <= w[hh])) return w[cc++];
        return w[hh++];
      };
      const uint32_t t = pick() + pick();
      auto below = [&](uint32_t lo, uint32_t hi) {  // nodes in [lo, hi) lighter than t: a prefix
        while (lo < hi) {
          const uint32_t mid = (lo + hi) / 2;
          if (w[mid] < t) lo = mid + 1; else hi = mid;
        }
        return lo;
      };
      uint32_t a = below(s_c, m) - s_c, b = below(s_h, e) - s_h;
      if ((a + b) & 1) {  // odd: the heaviest selected node waits for the next round
        const bool internal_last = a == 0 || (b > 0 && w[s_h + b - 1] >= w[s_c + a - 1]);
        if (internal_last) --b; else --a;
      }
      s_a = a; s_b = b; s_pairs = (a + b) / 2;
      if (!s_pairs) s_done = 2;  // cannot happen on a sorted histogram; never loop forever
    }
    __syncthreads();
    if (s_done) break;
    const uint32_t a = s_a, b = s_b, c0 = s_c, h0 = s_h, e0 = s_e;
    // The node at position k of the merge of leaves [c0, c0+a) and internal nodes [h0, h0+b).
    auto merged = [&](uint32_t k) -> uint32_t {
      uint32_t lo = k > b ? k - b : 0, hi = k < a ? k : a;
      while (lo < hi) {  // leaves among the first k: the leaf at lo precedes internal k-lo-1?
        const uint32_t mid = (lo + hi) / 2;
        if (w[c0 + mid] <= w[h0 + k - mid - 1]) lo = mid + 1; else hi = mid;
      }
      const uint32_t i = lo, j = k - lo;
      return (i < a && (j >= b || w[c0 + i] <= w[h0 + j])) ? c0 + i : h0 + j;
    };
    for (uint32_t p = threadIdx.x; p < s_pairs; p += kThreads) {
      const uint32_t x = merged(2 * p), y = merged(2 * p + 1), node = e0 + p;
      w[node] = w[x] + w[y];
      anc[x] = anc[y] = uint16_t(node);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      s_c = c0 + a; s_h = h0 + b; s_e = e0 + s_pairs;
      s_done = (m - s_c) + (s_e - s_h) <= 1;
    }
    __syncthreads();
  }
  // Phase 1b: depths by pointer jumping (the root is the last node created).
  const uint32_t n_nodes = m >= 2 ? 2 * m - 1 : m, root = n_nodes - 1;
  for (uint32_t i = threadIdx.x; i < n_nodes; i += kThreads) {
    if (i == root) anc[i] = uint16_t(root);
    dep[i] = i == root ? 0 : 1;
  }
  __syncthreads();
  uint16_t *a0 = anc, *a1 = anc + kNodes, *d0 = dep, *d1 = dep + kNodes;
  for (uint32_t span = 1; span < n_nodes; span *= 2) {
    for (uint32_t i = threadIdx.x; i < n_nodes; i += kThreads) {
      d1[i] = uint16_t(d0[i] + d0[a0[i]]);
      a1[i] = a0[a0[i]];
    }
    __syncthreads();
    uint16_t* t = a0; a0 = a1; a1 = t;
    t = d0; d0 = d1; d1 = t;
  }
  if (m == 1) {
    if (threadIdx.x == 0) s_bits[1] = 1;
  } else {
    for (uint32_t i = threadIdx.x; i < m; i += kThreads)
      atomicAdd(&s_bits[d0[i] < huffman::kDepthCap ? d0[i] : huffman::kDepthCap], 1u);
  }
  __syncthreads();
  if (threadIdx.x == 0) huffman::limit_depths(s_bits);
  __syncthreads();
  for (uint32_t r = threadIdx.x; r < m; r += kThreads)
    s_len[huffman::key_symbol(s_keys[m - 1 - r])] = uint8_t(huffman::length_of_rank(s_bits, r));
  if (threadIdx.x == 0) {  // first code of each length (RFC 1951); s_bits[l] counts the lengths now
    uint32_t cw = 0;
    for (int l = 1; l <= huffman::kMaxLen; ++l) {
      cw = (cw + (l > 1 ? s_bits[l - 1] : 0)) << 1;
      s_first[l] = cw;
    }
  }
  __syncthreads();
  // Phase 2: codes. Thread j's symbols j*kKeys ..; its rank within each length from a scan.
  LenCounts mine{};
  for (int k = 0; k < kKeys; ++k) {
    const uint32_t s = threadIdx.x * kKeys + k;
    if (s < nsym && s_len[s]) ++mine.n[s_len[s]];
  }
  LenCounts before;
  LenScan(tmp.len_scan).ExclusiveScan(mine, before, LenCounts{}, LenCountsAdd());
  unsigned long long bits = 0;
  for (int k = 0; k < kKeys; ++k) {
    const uint32_t s = threadIdx.x * kKeys + k;
    if (s >= nsym) break;
    const uint32_t l = s_len[s];
    len[c * nsym + s] = uint8_t(l);
    code[c * nsym + s] = l ? s_first[l] + before.n[l]++ : 0;
    bits += (unsigned long long)h[s] * l;
  }
  __syncthreads();
  bits = Reduce(tmp.reduce).Sum(bits);
  if (threadIdx.x == 0) info[c].total_bits = uint32_t(bits);
}

// count books of nsym symbols (hist, len, code: nsym entries a book; info: one a book) on stream s, the
// kernel sized to the alphabet.
template <int kKeys>
void launch_books_sized(uint32_t nsym, unsigned count, const uint32_t* hist, uint8_t* len, uint32_t* code, ChunkInfo* info,
                        cudaStream_t s) {
  const size_t smem = book_smem(uint32_t(kKeys) * kThreads);
  check(cudaFuncSetAttribute(book_kernel<kKeys>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)), "book smem");
  book_kernel<kKeys><<<count, kThreads, smem, s>>>(nsym, hist, len, code, info);
}
inline void launch_books(uint32_t nsym, unsigned count, const uint32_t* hist, uint8_t* len, uint32_t* code, ChunkInfo* info,
                         cudaStream_t s) {
  if (!count) return;
  static_assert(kSortPerThread == 16, "the largest book: 16 keys a thread");
  if (nsym <= 4 * kThreads) launch_books_sized<4>(nsym, count, hist, len, code, info, s);
  else launch_books_sized<kSortPerThread>(nsym, count, hist, len, code, info, s);
}

}  // namespace hpcz::ratio::cuda
