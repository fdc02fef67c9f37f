// A device batch of ratio-codec arrays (Lorenzo on every chunk) in one set of launches, and of their
// archives whose reconstruction is the fused one (recon_plan.hpp): each kernel
// takes the batch's table of arrays (BatchArray, in the workspace) with blockIdx.z an array, and runs
// the one-array kernel's body (quant_kernels.cuh, encode_kernels.cuh, huffman/encode_kernels.cuh) with
// that array's parameters, so that both write the same bytes. Grids are the largest array's: a block
// past its array's chunks or tiles returns before it touches anything (the encoder's tickets are taken
// by exactly the array's tiles). The range, step sample, state reset and seal are the batch passes of
// gpu/batch_passes.cuh.
// Kernels are static: this header is included by more than one translation unit.
#pragma once
#include "codecs/ratio_class/decode_kernels.cuh"
#include "codecs/ratio_class/encode_kernels.cuh"
#include "codecs/ratio_class/huffman_chunks.cuh"
#include "codecs/ratio_class/quant_kernels.cuh"
#include "codecs/ratio_class/recon_kernels.cuh"

namespace hpcz::ratio::cuda {

// One array of a batch: its values, grid, fused-pass plan and buffers (views of the batch's), archive.
struct BatchArray {
  const void* in;
  unsigned long long n;
  Grid g;
  DualPlan dp;  // history 0: prequant_kernel and lorenzo_kernel code it, else dual_quant_kernel
  CompressBuffers b;
  uint8_t* out;
};

template <class T>
static __global__ void __launch_bounds__(kThreads) dual_quant_batch_kernel(const BatchArray* arrays, uint32_t radius,
                                                                           quant::Bound asked) {
  const BatchArray& a = arrays[blockIdx.z];
  if (!a.dp.history || blockIdx.y >= a.g.n_chunks || blockIdx.x >= a.dp.blocks_per_chunk) return;
  dual_quant_range<T>(static_cast<const T*>(a.in), a.g, a.dp, radius, asked, a.b.st, a.b.q, a.b.sym, a.b.hist,
                      a.b.tile_out, a.b.tile_exc, nullptr);
}

template <class T>
static __global__ void __launch_bounds__(kThreads) prequant_batch_kernel(const BatchArray* arrays, quant::Bound asked) {
  const BatchArray& a = arrays[blockIdx.z];
  if (a.dp.history || !a.g.n_chunks) return;
  prequant_values<T>(static_cast<const T*>(a.in), a.n, a.g, asked, a.b.st, a.b.q, a.b.tile_exc);
}

static __global__ void __launch_bounds__(kThreads) lorenzo_batch_kernel(const BatchArray* arrays, uint32_t radius) {
  const BatchArray& a = arrays[blockIdx.z];
  if (a.dp.history || blockIdx.x >= a.g.n_tiles) return;
  lorenzo_tile(a.g, radius, a.b.q, a.b.sym, a.b.hist, a.b.tile_out, nullptr);
}

// Each array's tile counts (outliers, exceptions: n_tiles + 1 each, the last 0) to exclusive prefixes
// in place, as the one-array path's cub::DeviceScan::ExclusiveSum: a block an array, in rounds.
static __global__ void __launch_bounds__(kThreads) tile_scan_batch_kernel(const BatchArray* arrays, unsigned n_arrays) {
  constexpr int kItems = 4;
  using Scan = cub::BlockScan<uint32_t, kThreads>;
  __shared__ typename Scan::TempStorage tmp;
  for (unsigned i = blockIdx.x; i < n_arrays; i += gridDim.x) {
    const BatchArray& a = arrays[i];
    if (!a.g.n_chunks) continue;
    const uint64_t count = a.g.n_tiles + 1;
    for (int which = 0; which < 2; ++which) {
      uint32_t* v = which ? a.b.tile_exc : a.b.tile_out;
      uint32_t carry = 0;
      for (uint64_t base = 0; base < count; base += uint64_t(kThreads) * kItems) {
        const uint64_t first = base + uint64_t(threadIdx.x) * kItems;
        uint32_t x[kItems];
#pragma unroll
        for (int k = 0; k < kItems; ++k) x[k] = first + k < count ? v[first + k] : 0u;
        uint32_t total;
        Scan(tmp).ExclusiveSum(x, x, total);
#pragma unroll
        for (int k = 0; k < kItems; ++k)
          if (first + k < count) v[first + k] = carry + x[k];
        carry += total;
        __syncthreads();  // tmp is the next round's
      }
    }
  }
}

template <class T>
static __global__ void __launch_bounds__(kThreads) layout_batch_kernel(const BatchArray* arrays, uint32_t nsym) {
  const BatchArray& a = arrays[blockIdx.z];
  if (!a.g.n_chunks) return;
  layout_chunks<T>(a.g, nsym, a.b.tile_out, a.b.tile_exc, a.b.info, a.b.st, kChunkHeaderBytes);
}

static __global__ void __launch_bounds__(kThreads) zero_batch_kernel(const BatchArray* arrays) {
  const BatchArray& a = arrays[blockIdx.z];
  if (blockIdx.y >= a.g.n_chunks) return;
  zero_chunk(a.b.info, nullptr, a.out);
}

static __global__ void __launch_bounds__(kThreads, 6) encode_batch_kernel(const BatchArray* arrays, uint32_t nsym) {
  const BatchArray& a = arrays[blockIdx.z];
  if (blockIdx.x >= a.g.n_tiles) return;
  const EncodeSource src{a.b.sym, a.b.len, a.b.code, a.b.info, a.b.tile_desc, kChunkHeaderBytes};
  huffman::cuda::encode_tile(HuffmanChunks{a.g}, nsym, src, EncodeSource{}, a.b.st, a.out);
}

template <class T>
static __global__ void __launch_bounds__(kThreads) emit_batch_kernel(const BatchArray* arrays, uint32_t radius,
                                                                     quant::Bound asked) {
  __shared__ typename EmitScan::TempStorage scan;
  const BatchArray& a = arrays[blockIdx.z];
  if (blockIdx.x >= a.g.n_tiles) return;
  const LorenzoEmit<T> e{radius, asked, a.b.st, static_cast<const T*>(a.in), a.b.q, a.b.sym, a.b.tile_out,
                         a.b.tile_exc, a.b.info, a.dp.history != 0};
  emit_tile<T>(a.g, e, blockIdx.x, a.out, scan);
}

template <class T>
static __global__ void __launch_bounds__(kThreads) chunk_head_batch_kernel(const BatchArray* arrays, uint32_t nsym) {
  const BatchArray& a = arrays[blockIdx.z];
  if (blockIdx.y >= a.g.n_chunks) return;
  chunk_head<T>(a.g, nsym, static_cast<const T*>(a.in), a.b.len, a.b.info, a.out);
}

static __global__ void __launch_bounds__(kThreads) checksum_batch_kernel(const BatchArray* arrays) {
  const BatchArray& a = arrays[blockIdx.z];
  if (blockIdx.y >= a.g.n_chunks) return;
  ChunkInfo* ci = a.b.info + blockIdx.y;
  add_checksum_terms(reinterpret_cast<const uint32_t*>(a.out + ci->offset), ci->size / 4, &ci->sum);
}

static __global__ void __launch_bounds__(kThreads) table_batch_kernel(const BatchArray* arrays) {
  const BatchArray& a = arrays[blockIdx.z];
  table_entries(a.b.info, a.g.n_chunks, a.b.st, a.out);
}

// ---- decoding ---------------------------------------------------------------------------------

// One archive of a decoding batch: its bytes, grid, reconstruction plan, buffers (in the workspace),
// values and status word.
struct BatchArchive {
  const uint8_t* a;
  unsigned long long archive_size;
  uint32_t table_checksum;
  uint32_t radius;  // its own (a batch may hold archives of several radii)
  Grid g;
  ReconPlan rp;
  double step;  // a value of the array's type (the header's)
  DecodeChunk* dc;
  huffman::DecodeTables* tables;
  LongTable* longs;
  uint32_t* v;
  uint32_t* flags;  // the reconstruction's ticket and segment states (rp.n_segments + 1 words)
  uint32_t* agg;
  uint32_t* incl;
  void* out;
  uint32_t* status;
};

// Every archive's status word and reconstruction states zeroed.
static __global__ void decode_reset_batch_kernel(const BatchArchive* archives, unsigned n_archives) {
  for (unsigned i = blockIdx.x; i < n_archives; i += gridDim.x) {
    const BatchArchive& a = archives[i];
    if (threadIdx.x == 0) *a.status = 0;
    for (uint64_t k = threadIdx.x; k <= a.rp.n_segments; k += blockDim.x) a.flags[k] = 0;
  }
}

static __global__ void __launch_bounds__(gpu::kPassThreads) table_check_batch_kernel(const BatchArchive* archives) {
  const BatchArchive& a = archives[blockIdx.z];
  gpu::check_table(a.a, a.g.n_chunks, a.table_checksum, a.status);
}

template <class T>
static __global__ void __launch_bounds__(kThreads) parse_batch_kernel(const BatchArchive* archives) {
  const BatchArchive& a = archives[blockIdx.z];
  if (blockIdx.x >= a.g.n_chunks) return;
  parse_chunk_tables<T>(a.g, 2 * a.radius, a.a, a.archive_size, a.dc, a.tables, a.longs, a.status, false);
}

static __global__ void __launch_bounds__(kThreads) verify_batch_kernel(const BatchArchive* archives) {
  const BatchArchive& a = archives[blockIdx.z];
  if (blockIdx.y >= a.g.n_chunks) return;  // every x block: they stride by gridDim.x
  DecodeChunk* d = a.dc + blockIdx.y;  // L.size is 0 for a chunk whose table entry was rejected
  add_checksum_terms(reinterpret_cast<const uint32_t*>(a.a + d->offset), d->L.size / 4, &d->sum);
}

static __global__ void __launch_bounds__(kThreads) verify_done_batch_kernel(const BatchArchive* archives) {
  const BatchArchive& a = archives[blockIdx.z];
  verify_done(a.dc, a.g.n_chunks, a.status);
}

static __global__ void __launch_bounds__(huffman::kSeqSubs) decode_batch_kernel(const BatchArchive* archives) {
  const BatchArchive& a = archives[blockIdx.z];
  if (blockIdx.y >= a.g.n_chunks) return;
  huffman::cuda::decode_sequence(HuffmanChunks{a.g}, a.radius, a.a, a.dc, a.tables, a.longs, a.v, a.status);
}

static __global__ void __launch_bounds__(kThreads) outlier_batch_kernel(const BatchArchive* archives) {
  const BatchArchive& a = archives[blockIdx.z];
  if (blockIdx.y >= a.g.n_chunks) return;
  place_outliers(a.g, a.radius, a.a, a.dc, a.v, a.status);
}

// The fused reconstruction: exactly the archive's rp.n_segments blocks take its tickets.
template <class T>
static __global__ void __launch_bounds__(kThreads, 2) recon_batch_kernel(const BatchArchive* archives) {
  const BatchArchive& a = archives[blockIdx.z];
  if (blockIdx.x >= a.rp.n_segments) return;
  recon_segment_of_ticket<T>(a.g, a.rp, a.dc, a.v, a.flags, a.agg, a.incl, T(a.step), static_cast<T*>(a.out));
}

template <class T>
static __global__ void __launch_bounds__(kThreads) exception_batch_kernel(const BatchArchive* archives) {
  const BatchArchive& a = archives[blockIdx.z];
  if (blockIdx.y >= a.g.n_chunks) return;  // every x block: they stride by gridDim.x
  place_exceptions<T>(a.g, a.a, a.dc, static_cast<T*>(a.out), a.status);
}

}  // namespace hpcz::ratio::cuda
