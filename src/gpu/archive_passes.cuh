// GPU passes every codec's archive goes through: the compression state, its init and the range pass
// before the encoder, the seal kernel after it (header and table checksum), and the chunk table check
// before decoding. Kernels are static: this header is included by more than one translation unit.
#pragma once
#include <cub/block/block_reduce.cuh>

#include "format/header.hpp"
#include "gpu/decode_status.hpp"
#include "gpu/dependent_launch.cuh"
#include "quant/bound.hpp"

namespace hpcz::gpu {

using quant::in_range_set;
using quant::narrow_key;
using quant::narrow_value;
using quant::range_key;

constexpr int kPassThreads = 256;

// Workspace layout for compression (all device memory, zeroed or set by init_kernel).
struct CompressState {
  unsigned long long key_min, key_max;  // value range as order-preserving keys
  unsigned long long sample_key;        // the step's sample: max quant::sample_key (sample_kernel)
  unsigned long long total_size;        // archive bytes, written by the last chunk
  unsigned long long table_sum;         // the chunk table's checksum sum, each block adding its entry
  unsigned int chunk_counter;
  unsigned int pad;
  // followed, in the fast codec, by n_chunks look-back descriptors (gpu::PackedTileState)
};

// One array's compression as the kernels see it: its values, its chunk count, its state, look-back
// descriptors (fast codec) and archive. A batch's kernels take an array of them.
template <class T> struct EncodeTarget {
  const T* in;
  unsigned long long n, n_chunks;
  CompressState* st;
  unsigned long long* desc;
  uint8_t* out;
  unsigned long long* size;  // where the archive's size goes
};

// The range keys a compression starts from: an empty range, for the range pass to reduce into, or a
// slab's given range (the whole array's, codecs::Slab::range_given).
// A given range comes with the whole array's step sample (sample_maxabs).
struct RangeKeys {
  unsigned long long min = ~0ull, max = 0, sample = 0;
};
inline RangeKeys start_keys(const format::HeaderFields& h, bool range_given, double sample_maxabs) {
  RangeKeys k;
  if (range_given && (h.flags & format::kFlagRangeValid)) {
    k.min = range_key(h.range_min);
    k.max = range_key(h.range_max);
  }
  if (range_given) k.sample = detail::to_bits(sample_maxabs);
  return k;
}

// A compression's shared state before its first kernel (both codecs' init kernels).
__device__ __forceinline__ void reset_state(CompressState* st, RangeKeys keys) {
  st->key_min = keys.min;
  st->key_max = keys.max;
  st->sample_key = keys.sample;
  st->total_size = format::data_offset(0);
  st->table_sum = 0;
  st->chunk_counter = 0;
}
static __global__ void init_kernel(CompressState* st, RangeKeys keys, unsigned long long* desc,
                                   unsigned long long n_chunks) {
  let_dependents_launch();  // the sample kernel loads its values meanwhile
  unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) reset_state(st, keys);
  for (; i < n_chunks; i += gridDim.x * blockDim.x) desc[i] = 0;
}

// The bound asked for settled from the state: the range so far and the step's sample.
__device__ __forceinline__ quant::Bound settle_state(const quant::Bound& asked, const CompressState* st) {
  return quant::settle(asked, st->key_min, st->key_max, detail::from_bits<double>(st->sample_key));
}
// The quantizer's parameters an encoder kernel of T codes with, from that bound.
template <class T>
__device__ __forceinline__ quant::QuantParams<T> settled_params(const quant::Bound& asked, const CompressState* st) {
  return quant::quant_params<T>(quant::settle_as<T>(asked, st->key_min, st->key_max, detail::from_bits<double>(st->sample_key)));
}

// The step's sample (quant::step_from_sample): a thread a sampled value, a block's largest key to
// st->sample_key. Launched with step_samples_grid blocks of kPassThreads where the range is not given.
inline unsigned step_samples_grid(uint64_t n) {
  return unsigned((quant::step_sample_count(n) + kPassThreads - 1) / kPassThreads);
}
// block: the block's index among the array's (a batch's kernel runs several arrays' blocks).
template <class T>
__device__ __forceinline__ void sample_block(const T* in, unsigned long long n, int has_fill, T fill, CompressState* st,
                                             unsigned block) {
  let_dependents_launch();
  const unsigned long long k = block * (unsigned long long)kPassThreads + threadIdx.x;
  unsigned long long key = k < quant::step_sample_count(n) ? quant::sample_key(in[quant::step_sample_index(k, n)], has_fill != 0, fill) : 0;
  for (int d = 16; d; d >>= 1) {
    const unsigned long long o = __shfl_xor_sync(~0u, key, d);
    key = o > key ? o : key;
  }
  // One atomic a block, not a warp: 2,048 atomics on one word took longer than the loads.
  __shared__ unsigned long long s_key[kPassThreads / 32];
  if (threadIdx.x % 32 == 0) s_key[threadIdx.x / 32] = key;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kPassThreads / 32; ++w) key = s_key[w] > key ? s_key[w] : key;
  }
  wait_for_prior_grid();  // st reset by init_kernel
  if (threadIdx.x == 0 && key) atomicMax(&st->sample_key, key);
}
template <class T>
static __global__ void __launch_bounds__(kPassThreads) sample_kernel(const T* in, unsigned long long n, int has_fill, T fill,
                                                          CompressState* st) {
  sample_block(in, n, has_fill, fill, st, blockIdx.x);
}

struct MinOp {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a < b ? a : b; }
};
struct MaxOp {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a < b ? b : a; }
};

template <class T>
__device__ __forceinline__ void reduce_range(unsigned long long kmin, unsigned long long kmax, CompressState* st) {
  using R = cub::BlockReduce<unsigned long long, kPassThreads>;
  __shared__ typename R::TempStorage tmp;
  unsigned long long a = R(tmp).Reduce(kmin, MinOp());
  __syncthreads();
  unsigned long long b = R(tmp).Reduce(kmax, MaxOp());
  if (threadIdx.x == 0 && a <= b) {
    atomicMin(&st->key_min, a);
    atomicMax(&st->key_max, b);
  }
}

// The range pass with nothing else to do.
struct NoNaNHook {
  __device__ void operator()(unsigned long long) const {}
};

// The range keys of in; nan_seen(i) for each NaN at index i (a caller that needs where NaNs are reads
// them here rather than in a pass of its own). With range == false only the NaNs are looked for.
// block of n_blocks: this block's share of the array (a batch's kernel runs several arrays' blocks).
template <class T, class NaNSeen>
__device__ __forceinline__ void range_blocks(const T* in, unsigned long long n, int has_fill, T fill, CompressState* st,
                                             NaNSeen& nan_seen, bool range, unsigned block, unsigned n_blocks) {
  using K = typename detail::Bits<T>::type;
  constexpr int kVec = 16 / sizeof(T);  // values per 16-byte load
  K kmin = ~K(0), kmax = 0;
  auto take = [&](T x, unsigned long long i) {
    if (in_range_set(x, has_fill, fill)) {
      K k = narrow_key(x);
      kmin = k < kmin ? k : kmin;
      kmax = k > kmax ? k : kmax;
    }
    if (x != x) nan_seen(i);
  };
  const unsigned long long nvec = n / kVec, stride = (unsigned long long)n_blocks * kPassThreads;
  // From the end of the array back to its start, so that what the encoders read first (they take
  // chunks in order from the start) is the last thing read here, still in L2.
  const unsigned long long t = block * (unsigned long long)kPassThreads + threadIdx.x;
  for (unsigned long long back = t; back < nvec; back += stride) {
    const unsigned long long i = nvec - 1 - back;
    if constexpr (std::is_same_v<T, float>) {
      float4 f = __ldg(reinterpret_cast<const float4*>(in) + i);
      take(f.x, 4 * i); take(f.y, 4 * i + 1); take(f.z, 4 * i + 2); take(f.w, 4 * i + 3);
    } else {
      static_assert(std::is_same_v<T, double>, "a 16-byte vector load for this type");
      double2 f = __ldg(reinterpret_cast<const double2*>(in) + i);
      take(f.x, 2 * i); take(f.y, 2 * i + 1);
    }
  }
  for (unsigned long long i = nvec * kVec + t; i < n; i += stride)
    take(in[i], i);
  if (!range) return;
  unsigned long long a = kmin <= kmax ? range_key(double(narrow_value<T>(kmin))) : ~0ull;
  unsigned long long b = kmin <= kmax ? range_key(double(narrow_value<T>(kmax))) : 0ull;
  reduce_range<T>(a, b, st);
}
template <class T, class NaNSeen = NoNaNHook>
static __global__ void __launch_bounds__(kPassThreads) range_kernel(const T* in, unsigned long long n, int has_fill, T fill,
                                                         CompressState* st, NaNSeen nan_seen = {}, bool range = true) {
  range_blocks(in, n, has_fill, fill, st, nan_seen, range, blockIdx.x, gridDim.x);
}

// Header and table checksum, once every chunk is written. Both codecs' encoders sum the table's
// checksum terms into st->table_sum as they write the entries (a one-block pass over the table here
// cost 24 us, 3% of a 512 MiB fast compression). One warp: one thread assembles the header in shared
// memory, the lanes sum its checksum's 35 terms and write it out in words (one thread doing it all
// took 6 us, about 1% of a 512 MiB compression).
// One warp.
__device__ __forceinline__ void seal_archive(format::HeaderFields h, const CompressState* st, uint8_t* out,
                                             unsigned long long* d_size) {
  __shared__ __align__(16) uint8_t head[format::kHeaderBytes];
  if (threadIdx.x == 0) {
    quant::store(h, settle_state(quant::bound_of(h), st));
    h.archive_size = st->total_size;
    h.table_checksum = format::checksum_fold(st->table_sum);  // summed entry by entry as the table was written
    format::write_header_fields(head, h);
    *d_size = h.archive_size;
  }
  __syncwarp();
  unsigned long long sum = 0;
  for (uint32_t i = threadIdx.x; i < format::kHeaderChecksumWords; i += 32)
    sum += format::checksum_term(i, detail::load_u32_le(head + 4 * i));
  for (int d = 16; d; d >>= 1) sum += __shfl_xor_sync(~0u, sum, d);
  if (threadIdx.x == 0) detail::store_u32_le(head + format::kOffHeaderChecksum, format::checksum_fold(sum));
  __syncwarp();
  // out is 16-byte aligned (the API checks)
  for (uint32_t i = threadIdx.x; i < format::kHeaderBytes / 4; i += 32)
    reinterpret_cast<uint32_t*>(out)[i] = reinterpret_cast<const uint32_t*>(head)[i];
}
static __global__ void seal_kernel(format::HeaderFields h, const CompressState* st, uint8_t* out,
                                   unsigned long long* d_size) {
  wait_for_prior_grid();  // the encoder's state and table
  seal_archive(h, st, out, d_size);
}

// Verifies the chunk table against the header's table checksum.
// (The body a device function: a batch's kernel runs it for an archive.)
__device__ __forceinline__ void check_table(const uint8_t* a, unsigned long long n_chunks, uint32_t expect,
                                            uint32_t* status) {
  using Sum = cub::BlockReduce<unsigned long long, kPassThreads>;
  __shared__ typename Sum::TempStorage tmp;
  const unsigned long long words = n_chunks * format::kChunkEntryBytes / 4;
  unsigned long long s = 0;
  for (unsigned long long i = threadIdx.x; i < words; i += kPassThreads)
    s += format::checksum_term(i, detail::load_u32_le(a + format::kHeaderBytes + 4 * i));
  s = Sum(tmp).Sum(s);
  if (threadIdx.x == 0 && format::checksum_fold(s) != expect) atomicOr(status, kBadTable);
}
static __global__ void __launch_bounds__(kPassThreads) table_check_kernel(const uint8_t* a, unsigned long long n_chunks,
                                                               uint32_t expect, uint32_t* status) {
  check_table(a, n_chunks, expect, status);
}

}  // namespace hpcz::gpu
