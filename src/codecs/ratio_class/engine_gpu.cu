// The ratio-class engine on the GPU: workspace layout and kernel sequence (kernels: the *_kernels.cuh
// by stage), Lorenzo on every chunk and a second predictor's stages where a codec gives one
// (predictor.cuh). Everything runs on the caller's stream in the caller's workspace; every grid size
// follows from the dims, so nothing is read back.
#include <cuda_runtime.h>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <string>

#include "codecs/ratio_class/quant_kernels.cuh"
#include "codecs/ratio_class/huffman_chunks.cuh"
#include "codecs/ratio_class/encode_kernels.cuh"
#include "codecs/ratio_class/decode_kernels.cuh"
#include "codecs/ratio_class/recon_kernels.cuh"
#include "codecs/ratio_class/engine_gpu.hpp"
#include "codecs/ratio_class/predictor.cuh"
#include "common/cuda_check.hpp"
#include "common/dtype.hpp"
#include "gpu/device.hpp"

namespace hpcz::ratio {
namespace {

using namespace hpcz::ratio::cuda;
using detail::div_ceil;

// h: a slab header (the array's dims, the slab's chunks).
Grid grid_of(const format::HeaderFields& h, const codecs::Slab& slab) {
  return make_grid(predict::working_shape(h.dims, h.ndims), slab.first_chunk, h.n_chunks);
}

size_t scan_temp_bytes(uint64_t items) {
  size_t a = 0, b = 0;
  check(cub::DeviceScan::ExclusiveSum(nullptr, a, (uint32_t*)nullptr, (uint32_t*)nullptr, int(items)), "scan size");
  check(cub::DeviceScan::ExclusiveSum(nullptr, b, (unsigned long long*)nullptr, (unsigned long long*)nullptr, int(items)),
        "scan size");
  return a > b ? a : b;
}

struct CompressLayout {
  CompressBuffers b;
  const Predictor* extra;  // the second predictor, where it runs on this header (else nullptr)
  void* extra_ws;
  void* scan_temp;
  size_t scan_bytes;
  size_t total;
};

CompressLayout carve_compress(void* ws, const format::HeaderFields& h, const Grid& g, const Predictor* extra) {
  Carver cv{static_cast<uint8_t*>(ws)};
  CompressLayout L;
  const uint64_t n = h.n_values, nsym = 2ull * h.block_param, nc = g.n_chunks, nt = g.n_tiles;
  L.b.st = cv.take<gpu::CompressState>(sizeof(gpu::CompressState));
  L.b.q = cv.take<uint32_t>(4 * n);
  L.b.sym = cv.take<uint16_t>(2 * n);
  L.b.hist = cv.take<uint32_t>(4 * nc * nsym);
  L.b.tile_out = cv.take<uint32_t>(4 * (nt + 1));
  L.b.tile_exc = cv.take<uint32_t>(4 * (nt + 1));
  L.b.tile_desc = cv.take<unsigned long long>(8 * (nt + 1));
  L.b.len = cv.take<uint8_t>(nc * nsym);
  L.b.code = cv.take<uint32_t>(4 * nc * nsym);
  L.b.info = cv.take<ChunkInfo>(sizeof(ChunkInfo) * nc);
  const size_t extra_bytes = extra ? extra->compress_bytes(h, g) : 0;
  L.extra = extra_bytes ? extra : nullptr;
  L.extra_ws = cv.base ? cv.base + cv.used : nullptr;
  cv.used += extra_bytes;  // whole 256-byte pieces
  L.scan_bytes = scan_temp_bytes(nt + 1);
  L.scan_temp = cv.take<uint8_t>(L.scan_bytes);
  L.total = cv.used;
  return L;
}

__global__ void ratio_init_kernel(gpu::CompressState* st, gpu::RangeKeys keys, uint32_t* hist, unsigned long long n_hist,
                                  uint32_t* tile_out, uint32_t* tile_exc, unsigned long long* tile_desc,
                                  unsigned long long nt) {
  const unsigned long long i0 = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x,
                           stride = (unsigned long long)gridDim.x * blockDim.x;
  if (i0 == 0) {
    gpu::reset_state(st, keys);
    tile_out[nt] = 0;
    tile_exc[nt] = 0;
  }
  for (unsigned long long i = i0; i < n_hist; i += stride) hist[i] = 0;
  for (unsigned long long i = i0; i < nt; i += stride) {
    tile_exc[i] = 0;   // counted with atomics
    tile_out[i] = 0;   // counted with atomics by dual_quant_kernel (lorenzo_kernel sets it)
    tile_desc[i] = 0;  // look-back: nothing published yet
  }
}

template <class T>
void compress_t(const T* d_in, const format::HeaderFields& h, const codecs::Slab& slab, uint8_t* d_out,
                uint64_t* d_size, void* ws, cudaStream_t s, const Predictor* extra_asked) {
  const Grid g = grid_of(h, slab);
  const CompressLayout L = carve_compress(ws, h, g, extra_asked);
  const CompressBuffers& b = L.b;
  const Predictor* extra = L.extra;
  const uint32_t nsym = 2 * h.block_param;
  const uint64_t n = h.n_values, nc = g.n_chunks, nt = g.n_tiles;
  const quant::Bound asked = quant::bound_of(h);  // settled on the device, from the range pass
  const int sms = nc ? gpu::sm_count() : 0;
  const DualPlan dp = nc ? dual_plan(g.full, g.n_chunks) : DualPlan{};
  const CompressRun run{d_in, &h, &slab, g, b, dp.history != 0,
                        (unsigned)std::max<uint64_t>(1, std::min<uint64_t>((n / 4 + 255) / 256, uint64_t(sms) * 16)),
                        L.scan_temp, L.scan_bytes, L.extra_ws, d_out, s};
  ratio_init_kernel<<<blocks_for(std::max<uint64_t>(nc * nsym, nt), 1024), 256, 0, s>>>(
      b.st, gpu::start_keys(h, slab.range_given, slab.sample_maxabs), b.hist, nc * nsym, b.tile_out, b.tile_exc, b.tile_desc, nt);
  if (extra) extra->init(run);
  check(cudaGetLastError(), "ratio init");
  if (nc) {
    const bool has_fill = h.flags & format::kFlagFill;
    if (!slab.range_given && quant::step_from_sample(h.mode, h.bound, h.storage))
      gpu::sample_kernel<T><<<gpu::step_samples_grid(n), gpu::kPassThreads, 0, s>>>(d_in, n, has_fill, T(h.fill), b.st);
    if (!(extra && extra->range(run)) && !slab.range_given)
      gpu::range_kernel<T><<<run.range_grid, gpu::kPassThreads, 0, s>>>(d_in, n, has_fill, T(h.fill), b.st);
    PredictorChunks pc{};
    if (extra) {
      pc = extra->chunks(run);
      extra->sample(run);
    }
    if (dp.history) {
      const size_t smem = (size_t(dp.ring) + nsym) * 4;
      check(cudaFuncSetAttribute(dual_quant_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)), "dual smem");
      dual_quant_kernel<T><<<dim3(dp.blocks_per_chunk, (unsigned)nc), kThreads, smem, s>>>(
          d_in, g, dp, h.block_param, asked, b.st, b.q, b.sym, b.hist, b.tile_out, b.tile_exc, pc.lorenzo_skip);
    } else {
      prequant_kernel<T><<<blocks_for(n / 4, uint64_t(sms) * 16), kThreads, 0, s>>>(d_in, n, g, asked, b.st, b.q, b.tile_exc);
      lorenzo_kernel<<<(unsigned)nt, kThreads, nsym * 4, s>>>(g, h.block_param, b.q, b.sym, b.hist, b.tile_out, pc.lorenzo_skip);
    }
    check(cudaGetLastError(), "lorenzo");
    size_chunks(run, b.tile_out, b.tile_exc, b.hist, b.len, b.code, b.info, kChunkHeaderBytes);
    if (extra) extra->sizes(run);
    const unsigned per_chunk = (unsigned)std::min<uint64_t>(64, div_ceil(g.full.count(), 16 * 256));
    // The writers: each chunk by the predictor chosen (with a second predictor: one launch of each kind
    // for both predictors' chunks, the other's skipped).
    zero_kernel<<<dim3(per_chunk, (unsigned)nc), kThreads, 0, s>>>(b.info, pc.info, d_out);
    const EncodeSource lorenzo_src{b.sym, b.len, b.code, b.info, b.tile_desc, kChunkHeaderBytes};
    const EncodeSource extra_src{pc.sym, pc.len, pc.code, pc.info, pc.tile_desc, pc.head};
    encode_kernel<<<(unsigned)nt, kThreads, nsym * 5, s>>>(HuffmanChunks{g}, nsym, lorenzo_src, extra_src, b.st, d_out);
    if (extra) extra->emit(run);
    else emit_kernel<T><<<(unsigned)nt, kThreads, 0, s>>>(g, LorenzoEmit<T>{h.block_param, asked, b.st, d_in, b.q, b.sym,
                                                                            b.tile_out, b.tile_exc, b.info, dp.history != 0},
                                                      d_out);
    chunk_head_kernel<T><<<dim3(per_chunk, (unsigned)nc), kThreads, 0, s>>>(g, nsym, d_in, b.len, b.info, d_out);
    if (extra) extra->head(run);
    ChunkInfo* chosen = extra ? pc.chosen : b.info;
    checksum_kernel<<<dim3(per_chunk, (unsigned)nc), kThreads, 0, s>>>(chosen, d_out);
    table_kernel<<<blocks_for(nc, 64), kThreads, 0, s>>>(chosen, nc, b.st, d_out);
    check(cudaGetLastError(), "ratio encode");
  }
  gpu::seal_kernel<<<1, 32, 0, s>>>(h, b.st, d_out, reinterpret_cast<unsigned long long*>(d_size));
  check(cudaGetLastError(), "seal");
}

struct DecompressLayout {
  uint32_t* v;
  const Predictor* extra;  // the second predictor, where it runs on this header (else nullptr)
  void* extra_ws;
  DecodeChunk* dc;
  huffman::DecodeTables* tables;
  LongTable* longs;
  Seg* tile_agg;
  Seg* tile_carry;
  ratio::ReconPlan rp;    // the fused reconstruction's with look-back (rp.planes != 0), else
  ratio::StripePlan sp;   // the stripes' (sp.seg_planes != 0), else the multi-pass kernels
  uint32_t* stripe_sums;  // stripes: each stripe's column sums, then the sums entering it
  uint32_t* seg;  // multi-pass: segment sums of the column prefix sums
  uint64_t seg_per_chunk;
  uint32_t* recon_flags;  // fused: ticket and segment states, segment aggregates and inclusive sums
  uint32_t* recon_agg;
  uint32_t* recon_incl;
  void* scan_temp;
  size_t scan_bytes;
  size_t total;
};

size_t carry_scan_bytes(uint64_t n_tiles) {
  size_t b = 0;
  check(cub::DeviceScan::ExclusiveScan(nullptr, b, (Seg*)nullptr, (Seg*)nullptr, SegOp(), Seg{1, 0}, int(n_tiles)),
        "scan size");
  return b;
}

DecompressLayout carve_decompress(void* ws, const format::HeaderFields& h, const Grid& g, const Predictor* extra) {
  Carver cv{static_cast<uint8_t*>(ws)};
  DecompressLayout L;
  L.v = cv.take<uint32_t>(4 * h.n_values);
  const size_t extra_bytes = extra ? extra->decompress_bytes(h, g) : 0;
  L.extra = extra_bytes ? extra : nullptr;
  L.extra_ws = cv.base ? cv.base + cv.used : nullptr;
  cv.used += extra_bytes;  // whole 256-byte pieces
  L.dc = cv.take<DecodeChunk>(sizeof(DecodeChunk) * g.n_chunks);
  L.tables = cv.take<huffman::DecodeTables>(sizeof(huffman::DecodeTables) * g.n_chunks);
  L.longs = cv.take<LongTable>(sizeof(LongTable) * g.n_chunks);
  L.tile_agg = cv.take<Seg>(sizeof(Seg) * g.n_tiles);
  L.tile_carry = cv.take<Seg>(sizeof(Seg) * g.n_tiles);
  const predict::Shape shape = predict::working_shape(h.dims, h.ndims);
  // The first reconstruction the shape can take: fused with look-back, stripes, multi-pass.
  L.rp = recon_plan(shape.rank, g.full, g.last, g.n_chunks, kReconMinPlanes, kReconValues);
  L.sp = StripePlan{};
  if (!L.rp.planes) L.sp = stripe_plan(shape.rank, g.full, g.last, g.n_chunks, kReconValues, kStripeValues);
  L.seg_per_chunk = 0;
  L.seg = L.recon_flags = L.recon_agg = L.recon_incl = L.stripe_sums = nullptr;
  if (L.rp.planes) {
    L.recon_flags = cv.take<uint32_t>(4 * (L.rp.n_segments + 1));
    L.recon_agg = cv.take<uint32_t>(4 * L.rp.n_segments * L.rp.plane());
    L.recon_incl = cv.take<uint32_t>(4 * L.rp.n_segments * L.rp.plane());
  } else if (L.sp.seg_planes) {
    L.stripe_sums = cv.take<uint32_t>(4 * L.sp.n_stripes * L.sp.plane());
  } else {
    // Segments of a chunk: at most chunk_values / kSegLen + lanes (z: plane, y: cz * cx; both <= count).
    L.seg_per_chunk = g.n_chunks ? g.full.count() / kSegLen + g.full.count() : 0;
    L.seg = cv.take<uint32_t>(4 * L.seg_per_chunk * g.n_chunks);
  }
  L.scan_bytes = carry_scan_bytes(g.n_tiles);
  L.scan_temp = cv.take<uint8_t>(L.scan_bytes);
  L.total = cv.used;
  return L;
}

// d_size: null for an archive from outside (its table and chunk checksums verified, its size h's), else
// the device's copy of the size of an archive this library wrote on the device in the same call (its
// checksums not computed: pw_log_gpu.cu's logs).
template <class T>
void decompress_t(const format::HeaderFields& h, const codecs::Slab& slab, const uint8_t* d_a, T* d_out,
                  uint32_t* d_status, void* ws, cudaStream_t s, const Predictor* extra_asked,
                  const unsigned long long* d_size = nullptr) {
  const Grid g = grid_of(h, slab);
  const DecompressLayout L = carve_decompress(ws, h, g, extra_asked);
  const Predictor* extra = L.extra;
  const uint32_t nsym = 2 * h.block_param, nc = uint32_t(g.n_chunks);
  const uint64_t nt = g.n_tiles;
  const ChunkShape& f = g.full;
  const unsigned per_chunk = (unsigned)std::min<uint64_t>(64, div_ceil(f.count(), 16 * 256));
  if (d_size) {
    parse_sized_kernel<T><<<nc, kThreads, 0, s>>>(g, nsym, d_a, d_size, L.dc, L.tables, L.longs, d_status, extra != nullptr);
  } else {
    gpu::table_check_kernel<<<1, gpu::kPassThreads, 0, s>>>(d_a, h.n_chunks, h.table_checksum, d_status);
    parse_kernel<T><<<nc, kThreads, 0, s>>>(g, nsym, d_a, h.archive_size, L.dc, L.tables, L.longs, d_status, extra != nullptr);
    verify_kernel<<<dim3(per_chunk, nc), kThreads, 0, s>>>(d_a, L.dc);
    verify_done_kernel<<<blocks_for(nc, 64), kThreads, 0, s>>>(L.dc, nc, d_status);
  }
  // Sequences a chunk can have at most (every code kMaxLen bits).
  const uint64_t max_bits = uint64_t(g.full.count()) * huffman::kMaxLen;
  const unsigned max_seq = unsigned(div_ceil(div_ceil(max_bits, huffman::kSubBits), huffman::kSeqSubs));
  decode_kernel<<<dim3(max_seq, nc), huffman::kSeqSubs, 0, s>>>(HuffmanChunks{g}, h.block_param, d_a, L.dc, L.tables, L.longs, L.v, d_status);
  outlier_kernel<<<dim3(16, nc), kThreads, 0, s>>>(g, h.block_param, d_a, L.dc, L.v, d_status);
  check(cudaGetLastError(), "ratio decode");
  // A second predictor's chunks: before Lorenzo's reconstruction (some of its passes sum in v in place;
  // it skips those chunks and raw chunks) and after it; then the exceptions and raw chunks.
  const DecompressRun run{&h, g, d_a, L.dc, L.v, d_out, d_status, L.extra_ws, s};
  if (extra) extra->scatter(run);
  auto finish = [&]() {
    if (extra) extra->reconstruct(run);
    exception_kernel<T><<<dim3(per_chunk, nc), kThreads, 0, s>>>(g, d_a, L.dc, d_out, d_status);
    check(cudaGetLastError(), "ratio reconstruct");
  };
  if (L.rp.planes) {  // all three axes and the dequantization in one pass (recon_plan.hpp)
    const ratio::ReconPlan& rp = L.rp;
    check(cudaMemsetAsync(L.recon_flags, 0, 4 * (rp.n_segments + 1), s), "recon flags");
    const size_t smem = 4 * (size_t(rp.planes) * rp.plane() + 8);  // + the alignment padding
    check(cudaFuncSetAttribute(recon_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)), "recon smem");
    recon_kernel<T><<<unsigned(rp.n_segments), kThreads, smem, s>>>(g, rp, L.dc, L.v, L.recon_flags, L.recon_agg,
                                                                    L.recon_incl, T(h.step), d_out);
    finish();
    return;
  }
  if (L.sp.seg_planes) {  // stripes (recon_plan.hpp): their sums, the carries, then one pass
    const ratio::StripePlan& sp = L.sp;
    const uint32_t P = sp.plane();
    stripe_sum_kernel<<<unsigned(div_ceil(sp.n_stripes * P, kThreads)), kThreads, 0, s>>>(g, sp, L.dc, L.v, L.stripe_sums);
    stripe_scan_kernel<<<dim3(unsigned(div_ceil(P, kThreads)), nc), kThreads, 0, s>>>(sp, L.dc, L.stripe_sums);
    const size_t smem = 4 * (size_t(sp.seg_planes) * P + 8);  // + the alignment padding
    check(cudaFuncSetAttribute(stripe_recon_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)),
          "stripe smem");
    stripe_recon_kernel<T><<<unsigned(sp.n_stripes), kThreads, smem, s>>>(g, sp, L.dc, L.v, L.stripe_sums,
                                                                           T(h.step), d_out);
    finish();
    return;
  }
  // Along z, then along y: segment sums, carries, scans (see column_kernel). When a plane fits in
  // shared memory, plane_kernel does y, x and the dequantization in one pass after z; when a row fits
  // a thread block's columns, band_kernel does, if there are planes enough to fill the GPU (a block a
  // plane).
  const bool by_plane = uint64_t(f.cy) * f.cx <= kPlaneMax;
  const uint64_t all_planes = uint64_t(nc - 1) * f.cz + g.last.cz;
  const bool by_band = !by_plane && f.cy > 1 && f.cx <= ratio::kStripeCols * kThreads && f.cx <= ratio::kReconValues &&
                       all_planes >= 2 * uint64_t(kThreads);
  for (int axis = 0; axis < (by_plane || by_band ? 1 : 2); ++axis) {
    const bool z = axis == 0;
    if (z ? (f.cz <= 1 && g.last.cz <= 1) : f.cy <= 1) continue;
    const uint64_t lanes = z ? uint64_t(f.cy) * f.cx : uint64_t(f.cz) * f.cx;
    const uint64_t n_along = z ? f.cz : f.cy;
    const unsigned gx = (unsigned)div_ceil(lanes * div_ceil(n_along, kSegLen), kThreads);
    const unsigned gl = (unsigned)div_ceil(lanes, kThreads);
    if (lanes * nc >= 131072) {  // enough columns to fill the GPU: one pass
      if (z) column_single_kernel<true><<<dim3(gl, nc), kThreads, 0, s>>>(g, L.dc, L.v);
      else column_single_kernel<false><<<dim3(gl, nc), kThreads, 0, s>>>(g, L.dc, L.v);
    } else if (z) {
      column_kernel<true, false><<<dim3(gx, nc), kThreads, 0, s>>>(g, L.dc, L.v, L.seg, L.seg_per_chunk);
      column_carry_kernel<true><<<dim3(gl, nc), kThreads, 0, s>>>(g, L.dc, L.seg, L.seg_per_chunk);
      column_kernel<true, true><<<dim3(gx, nc), kThreads, 0, s>>>(g, L.dc, L.v, L.seg, L.seg_per_chunk);
    } else {
      column_kernel<false, false><<<dim3(gx, nc), kThreads, 0, s>>>(g, L.dc, L.v, L.seg, L.seg_per_chunk);
      column_carry_kernel<false><<<dim3(gl, nc), kThreads, 0, s>>>(g, L.dc, L.seg, L.seg_per_chunk);
      column_kernel<false, true><<<dim3(gx, nc), kThreads, 0, s>>>(g, L.dc, L.v, L.seg, L.seg_per_chunk);
    }
  }
  if (by_plane) {
    const size_t smem = size_t(f.cy) * f.cx * 4;
    check(cudaFuncSetAttribute(plane_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kPlaneMax * 4)),
          "plane smem");
    plane_kernel<T><<<dim3(std::max(f.cz, g.last.cz), nc), kThreads, smem, s>>>(g, L.dc, L.v, T(h.step), d_out);
  } else if (by_band) {
    const uint32_t band = std::min(f.cy, ratio::kReconValues / f.cx);
    const size_t smem = 4 * (size_t(band) * f.cx + 8);  // + the alignment padding
    check(cudaFuncSetAttribute(band_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)), "band smem");
    band_kernel<T><<<dim3(std::max(f.cz, g.last.cz), nc), kThreads, smem, s>>>(g, L.dc, L.v, band, T(h.step), d_out);
  } else {
    row_aggregate_kernel<<<(unsigned)nt, kThreads, 0, s>>>(g, L.v, L.tile_agg);
    size_t sb = L.scan_bytes;
    check(cub::DeviceScan::ExclusiveScan(L.scan_temp, sb, L.tile_agg, L.tile_carry, SegOp(), Seg{1, 0}, int(nt), s),
          "carry scan");
    row_scan_kernel<T><<<(unsigned)nt, kThreads, 0, s>>>(g, L.dc, L.v, L.tile_carry, T(h.step), d_out);
  }
  finish();
}

}  // namespace

void build_books(uint32_t nsym, unsigned n, const uint32_t* hist, uint8_t* len, uint32_t* code, ChunkInfo* info,
                 cudaStream_t s) {
  launch_books(nsym, n, hist, len, code, info, s);
}

void size_chunks(const CompressRun& r, uint32_t* tile_out, uint32_t* tile_exc, const uint32_t* hist, uint8_t* len,
                 uint32_t* code, ChunkInfo* info, uint32_t head) {
  const uint32_t nsym = 2 * r.h->block_param;
  const uint64_t nt = r.g.n_tiles;
  size_t tb = r.scan_bytes;
  check(cub::DeviceScan::ExclusiveSum(r.scan_temp, tb, tile_out, tile_out, int(nt + 1), r.s), "scan");
  check(cub::DeviceScan::ExclusiveSum(r.scan_temp, tb, tile_exc, tile_exc, int(nt + 1), r.s), "scan");
  launch_books(nsym, (unsigned)r.g.n_chunks, hist, len, code, info, r.s);
  check(cudaGetLastError(), "book");
  detail::dispatch_dtype(r.h->dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    layout_kernel<T><<<1, kThreads, 0, r.s>>>(r.g, nsym, tile_out, tile_exc, info, r.b.st, head);
  });
}

size_t compress_workspace(const format::HeaderFields& h, const codecs::Slab& slab, const Predictor* extra) {
  return carve_compress(nullptr, h, grid_of(h, slab), extra).total;
}

void compress_device(const void* d_in, const format::HeaderFields& h, const codecs::Slab& slab, uint8_t* d_out,
                     uint64_t* d_size, void* ws, void* stream, const Predictor* extra) {
  auto s = static_cast<cudaStream_t>(stream);
  detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    compress_t(static_cast<const T*>(d_in), h, slab, d_out, d_size, ws, s, extra);
  });
}

size_t decompress_workspace(const format::HeaderFields& h, const codecs::Slab& slab, const Predictor* extra) {
  return carve_decompress(nullptr, h, grid_of(h, slab), extra).total;
}

void decompress_device(const format::HeaderFields& h, const codecs::Slab& slab, const uint8_t* d_archive, void* d_out,
                       uint32_t* d_status, void* ws, void* stream, const Predictor* extra) {
  auto s = static_cast<cudaStream_t>(stream);
  check(cudaMemsetAsync(d_status, 0, sizeof(uint32_t), s), "status reset");
  if (!h.n_chunks) return;
  detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    decompress_t(h, slab, d_archive, static_cast<T*>(d_out), d_status, ws, s, extra);
  });
}

void decompress_written(const format::HeaderFields& h, const codecs::Slab& slab, const uint8_t* d_archive,
                        const unsigned long long* d_archive_size, void* d_out, uint32_t* d_status, void* ws, void* stream,
                        const Predictor* extra) {
  if (!h.n_chunks) return;
  detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    decompress_t(h, slab, d_archive, static_cast<T*>(d_out), d_status, ws, static_cast<cudaStream_t>(stream), extra,
                 d_archive_size);
  });
}

std::vector<uint8_t> gpu_build_books(const std::vector<uint32_t>& hists, uint32_t nsym, double* ms, int reps) {
  const size_t n_books = hists.size() / nsym;
  uint32_t* d_hist = nullptr;
  uint8_t* d_len = nullptr;
  uint32_t* d_code = nullptr;
  ChunkInfo* d_info = nullptr;
  cudaEvent_t e0, e1;
  check(cudaMalloc(&d_hist, 4 * hists.size()), "malloc");
  check(cudaMalloc(&d_len, hists.size()), "malloc");
  check(cudaMalloc(&d_code, 4 * hists.size()), "malloc");
  check(cudaMalloc(&d_info, sizeof(ChunkInfo) * n_books), "malloc");
  check(cudaMemcpy(d_hist, hists.data(), 4 * hists.size(), cudaMemcpyHostToDevice), "h2d");
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  launch_books(nsym, (unsigned)n_books, d_hist, d_len, d_code, d_info, nullptr);  // warm-up
  std::vector<float> times;
  for (int r = 0; r < std::max(reps, 1); ++r) {
    cudaEventRecord(e0);
    launch_books(nsym, (unsigned)n_books, d_hist, d_len, d_code, d_info, nullptr);
    cudaEventRecord(e1);
    check(cudaEventSynchronize(e1), "book kernel");
    float t = 0;
    cudaEventElapsedTime(&t, e0, e1);
    times.push_back(t);
  }
  std::sort(times.begin(), times.end());
  if (ms) *ms = times[times.size() / 2];
  std::vector<uint8_t> len(hists.size());
  check(cudaMemcpy(len.data(), d_len, len.size(), cudaMemcpyDeviceToHost), "d2h");
  cudaFree(d_hist); cudaFree(d_len); cudaFree(d_code); cudaFree(d_info);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return len;
}

}  // namespace hpcz::ratio
