// The interp codec on the GPU: its predictor's stages in the ratio-class engine's sequence
// (ratio_class/predictor.cuh; kernels: interp_*kernels.cuh) and its device entry points.
#include <cuda_runtime.h>

#include <algorithm>

#include "codecs/ratio_class/encode_kernels.cuh"
#include "codecs/interp/interp_decode_kernels.cuh"
#include "codecs/interp/interp_kernels.cuh"
#include "codecs/interp/interp_sample_kernels.cuh"
#include "codecs/ratio_class/engine_gpu.hpp"
#include "codecs/ratio_class/pw_log_gpu.hpp"
#include "codecs/ratio_class/predictor.cuh"
#include "common/cuda_check.hpp"
#include "common/dtype.hpp"

namespace hpcz::interp {
namespace {

using namespace hpcz::ratio;
using namespace hpcz::ratio::cuda;

// The encoder's buffers in its part of the workspace (base nullptr: only their size).
InterpBuffers carve_compress(void* base, const format::HeaderFields& h, const Grid& g, size_t* bytes = nullptr) {
  Carver cv{static_cast<uint8_t*>(base)};
  const uint64_t n = h.n_values, nsym = 2ull * h.block_param, nc = g.n_chunks, nt = g.n_tiles;
  const uint64_t cap = interp_grid_sizes(g).anchor_cap, ns = nc * kSampleSets;
  InterpBuffers ib{};
  ib.anchor_cap = cap;
  ib.ic = cv.take<InterpChunkState>(sizeof(InterpChunkState) * nc);
  ib.aq = cv.take<int32_t>(cap > kAnchorsShared ? 4 * nc * cap : 0);
  ib.axr = cv.take<uint8_t>(8 * nc * cap);
  ib.sym = cv.take<uint16_t>(2 * n);
  ib.cls = cv.take<uint8_t>(n);
  ib.delta = cv.take<uint32_t>(4 * n);
  ib.hist = cv.take<uint32_t>(4 * nc * nsym);
  ib.sample_hist = cv.take<uint32_t>(4 * ns * nsym);
  ib.sample_len = cv.take<uint8_t>(ns * nsym);
  ib.sample_code = cv.take<uint32_t>(4 * ns * nsym);
  ib.sample_info = cv.take<ChunkInfo>(sizeof(ChunkInfo) * ns);
  ib.tile_out = cv.take<uint32_t>(4 * (nt + 1));
  ib.tile_exc = cv.take<uint32_t>(4 * (nt + 1));
  ib.tile_desc = cv.take<unsigned long long>(8 * (nt + 1));
  ib.len = cv.take<uint8_t>(nc * nsym);
  ib.code = cv.take<uint32_t>(4 * nc * nsym);
  ib.info = cv.take<ChunkInfo>(sizeof(ChunkInfo) * nc);
  ib.fin = cv.take<ChunkInfo>(sizeof(ChunkInfo) * nc);
  ib.plans = cv.take<PlanSet>(sizeof(PlanSet) * kPlanSets);
  ib.lorenzo_skip = cv.take<uint32_t>(4 * nc);
  ib.qp = cv.take<uint8_t>(sizeof(quant::QuantParams<double>));
  if (bytes) *bytes = cv.used;
  return ib;
}

InterpBuffers buffers(const CompressRun& r) { return carve_compress(r.ws, *r.h, r.g); }

// A radius below 2 leaves no room for the mask symbol: then every chunk is a Lorenzo chunk.
size_t compress_bytes(const format::HeaderFields& h, const Grid& g) {
  if (h.block_param < 2 || !g.n_chunks) return 0;
  size_t bytes = 0;
  carve_compress(nullptr, h, g, &bytes);
  return bytes;
}

PredictorChunks chunks(const CompressRun& r) {
  const InterpBuffers ib = buffers(r);
  return PredictorChunks{ib.lorenzo_skip, ib.sym, ib.len, ib.code, ib.info, ib.tile_desc,
                         kChunkHeaderBytes + kInterpExtraBytes, ib.fin};
}

void init(const CompressRun& r) {
  const uint32_t nsym = 2 * r.h->block_param;
  const uint64_t nc = r.g.n_chunks, nt = r.g.n_tiles;
  interp_init_kernel<<<blocks_for(std::max<uint64_t>(nc * kSampleSets * nsym, nt + 1), 1024), kThreads, 0, r.s>>>(
      buffers(r), nc, nsym, nt);
}

// The masks need each chunk's first NaN (without a fill value): found in the range pass, or in a pass
// of its own where the range is given.
bool range(const CompressRun& r) {
  const format::HeaderFields& h = *r.h;
  const bool has_fill = h.flags & format::kFlagFill;
  if (has_fill) return false;
  const FirstNaNPerChunk nan_seen{buffers(r).ic, r.g.chunk_values};
  detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    const T* d_in = static_cast<const T*>(r.d_in);
    if (!r.slab->range_given)
      gpu::range_kernel<T><<<r.range_grid, gpu::kPassThreads, 0, r.s>>>(d_in, h.n_values, has_fill, T(h.fill), r.b.st, nan_seen);
    else
      gpu::range_kernel<T><<<r.range_grid, gpu::kPassThreads, 0, r.s>>>(d_in, h.n_values, has_fill, T(h.fill), r.b.st, nan_seen,
                                                                         false);
  });
  return true;
}

// Before the Lorenzo stages: the anchors, the parameters in two sampled stages (interp_params_kernel;
// each: sampled tiles, books, choice), Lorenzo on stage 2's samples (its book with stage 2's), and
// which predictors run on each chunk (ib.lorenzo_skip tells the Lorenzo stages).
template <class T>
void sample_t(const CompressRun& r) {
  const format::HeaderFields& h = *r.h;
  const Grid& g = r.g;
  const T* d_in = static_cast<const T*>(r.d_in);
  const InterpBuffers ib = buffers(r);
  const InterpGridSizes is = interp_grid_sizes(g);
  const cudaStream_t s = r.s;
  const uint32_t radius = h.block_param, nsym = 2 * radius;
  const uint64_t nc = g.n_chunks;
  interp_plan_kernel<<<(kPlanSets + 63) / 64, 64, 0, s>>>(g, ib.plans);
  check(cudaMemsetAsync(ib.cls, 0, h.n_values, s), "interp classes");
  interp_anchor_kernel<T><<<(unsigned)nc, kThreads, 0, s>>>(g, radius, quant::bound_of(h), r.b.st, d_in, ib);
  const size_t smem = kBoxMax * sizeof(T) + 4 * size_t(nsym);
  check(cudaFuncSetAttribute(interp_tile_kernel<T, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)), "tile smem");
  check(cudaFuncSetAttribute(interp_tile_kernel<T, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)), "tile smem");
  check(cudaFuncSetAttribute(interp_tile_kernel<T, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)), "tile smem");
  const unsigned samples1 = (unsigned)is.max_order_samples, samples = (unsigned)is.max_samples;
  const unsigned grid_c = blocks_for(nc, 1024);
  auto books = [&](uint64_t first, uint64_t count) {
    build_books(nsym, (unsigned)count, ib.sample_hist + first * nsym, ib.sample_len + first * nsym,
                ib.sample_code + first * nsym, ib.sample_info + first, s);
  };
  const size_t osmem = 6 * 4 * size_t(nsym) + kBoxMax * sizeof(T);
  check(cudaFuncSetAttribute(interp_order_sample_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(osmem)),
        "order sample smem");
  interp_order_sample_kernel<T><<<dim3(samples1, (unsigned)nc), kThreads, osmem, s>>>(g, radius, d_in, ib);
  interp_tile_kernel<T, 1><<<dim3(samples1, (unsigned)nc, kStage1Sets), kTileThreads<T>, smem, s>>>(g, radius, d_in, ib);
  const size_t lsmem = 4 * (size_t(kLorenzoBoxMax) + nsym);
  check(cudaFuncSetAttribute(interp_lorenzo_sample_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(lsmem)),
        "lorenzo sample smem");
  interp_lorenzo_sample_kernel<T><<<dim3(samples, (unsigned)nc), kThreads, lsmem, s>>>(g, radius, d_in, ib);
  books(0, nc * kStage1Sets);
  interp_params_kernel<1><<<grid_c, kThreads, 0, s>>>(g, nsym, ib);
  interp_tile_kernel<T, 2><<<dim3(samples, (unsigned)nc, kStage2Sets), kTileThreads<T>, smem, s>>>(g, radius, d_in, ib);
  books(nc * kStage1Sets, nc * (kStage2Sets + 1));  // stage 2's and Lorenzo's, adjacent
  interp_params_kernel<2><<<grid_c, kThreads, 0, s>>>(g, nsym, ib);
  interp_predictors_kernel<<<grid_c, kThreads, 0, s>>>(g, nsym, ib, r.b.hist);
  check(cudaGetLastError(), "interp sampling");
}

// After the Lorenzo stages (b.info): the interpolation chunks' sizes on the chunks that run it, and the
// choice of each chunk's form.
template <class T>
void sizes_t(const CompressRun& r) {
  const Grid& g = r.g;
  const InterpBuffers ib = buffers(r);
  const uint32_t radius = r.h->block_param, nsym = 2 * radius;
  const size_t smem = kBoxMax * sizeof(T) + 4 * size_t(nsym);
  interp_tile_kernel<T, 0><<<dim3((unsigned)interp_grid_sizes(g).max_tiles, (unsigned)g.n_chunks), kTileThreads<T>, smem, r.s>>>(
      g, radius, static_cast<const T*>(r.d_in), ib);
  check(cudaGetLastError(), "interp tiles");
  size_chunks(r, ib.tile_out, ib.tile_exc, ib.hist, ib.len, ib.code, ib.info, kChunkHeaderBytes + kInterpExtraBytes);
  interp_choose_kernel<<<1, kThreads, 0, r.s>>>(g, ib.ic, r.b.info, ib.info, ib.fin, r.b.st);
  check(cudaGetLastError(), "interp choice");
}

// Outliers and exceptions of both predictors' chunks, in one launch.
template <class T>
void emit_t(const CompressRun& r) {
  const format::HeaderFields& h = *r.h;
  const CompressBuffers& b = r.b;
  const T* d_in = static_cast<const T*>(r.d_in);
  const LorenzoEmit<T> lorenzo_emit{h.block_param, quant::bound_of(h), b.st, d_in, b.q, b.sym,
                                    b.tile_out, b.tile_exc, b.info, r.q_is_delta};
  interp_emit_kernel<T><<<(unsigned)r.g.n_tiles, kThreads, 0, r.s>>>(r.g, h.block_param, d_in, buffers(r), lorenzo_emit, r.d_out);
}

void head(const CompressRun& r) {
  interp_head_kernel<<<(unsigned)r.g.n_chunks, kThreads, 0, r.s>>>(2 * r.h->block_param, buffers(r), r.d_out);
}

// The stages templated on the value type, called with the header's.
void sample(const CompressRun& r) {
  detail::dispatch_dtype(r.h->dtype, [&](auto tr) { sample_t<typename decltype(tr)::value_type>(r); });
}
void sizes(const CompressRun& r) {
  detail::dispatch_dtype(r.h->dtype, [&](auto tr) { sizes_t<typename decltype(tr)::value_type>(r); });
}
void emit(const CompressRun& r) {
  detail::dispatch_dtype(r.h->dtype, [&](auto tr) { emit_t<typename decltype(tr)::value_type>(r); });
}

// The decoder's buffers in its part of the workspace.
InterpDecodeBuffers carve_decompress(void* base, const format::HeaderFields& h, const Grid& g, size_t* bytes = nullptr) {
  Carver cv{static_cast<uint8_t*>(base)};
  const uint64_t cap = interp_grid_sizes(g).anchor_cap;
  InterpDecodeBuffers ib{};
  ib.anchor_cap = cap;
  ib.vm = cv.take<uint32_t>(4 * h.n_values);
  ib.cls = cv.take<uint8_t>(h.n_values);
  ib.aq = cv.take<int32_t>(cap > kAnchorsShared ? 4 * g.n_chunks * cap : 0);
  ib.axr = cv.take<uint8_t>(8 * g.n_chunks * cap);
  ib.plans = cv.take<PlanSet>(sizeof(PlanSet) * kPlanSets);
  if (bytes) *bytes = cv.used;
  return ib;
}

size_t decompress_bytes(const format::HeaderFields& h, const Grid& g) {
  if (!g.n_chunks) return 0;
  size_t bytes = 0;
  carve_decompress(nullptr, h, g, &bytes);
  return bytes;
}

// Interpolation chunks: their symbols to memory order, and the lists' marks, before Lorenzo's
// reconstruction.
void scatter(const DecompressRun& r) {
  const Grid& g = r.g;
  const uint32_t radius = r.h->block_param;
  const unsigned nc = unsigned(g.n_chunks);
  const InterpDecodeBuffers ib = carve_decompress(r.ws, *r.h, g);
  interp_plan_kernel<<<(kPlanSets + 63) / 64, 64, 0, r.s>>>(g, ib.plans);
  check(cudaMemsetAsync(ib.cls, 0, r.h->n_values, r.s), "interp marks");
  interp_scatter_kernel<<<dim3((unsigned)interp_grid_sizes(g).max_tiles, nc), kThreads, 0, r.s>>>(g, radius, r.dc, r.v, ib,
                                                                                                  r.d_status);
  interp_list_kernel<false><<<dim3(16, nc), kThreads, 0, r.s>>>(g, radius, r.d_archive, r.dc, ib, r.d_status);
  interp_list_kernel<true><<<dim3(16, nc), kThreads, 0, r.s>>>(g, radius, r.d_archive, r.dc, ib, r.d_status);
  check(cudaGetLastError(), "interp decode");
}

// Then the interpolation chunks' values: the anchors, the tiles.
template <class T>
void reconstruct_t(const DecompressRun& r) {
  const Grid& g = r.g;
  const uint32_t radius = r.h->block_param;
  const unsigned nc = unsigned(g.n_chunks);
  const InterpDecodeBuffers ib = carve_decompress(r.ws, *r.h, g);
  T* d_out = static_cast<T*>(r.d_out);
  interp_anchor_decode_kernel<T><<<nc, kThreads, 0, r.s>>>(g, radius, r.dc, T(r.h->step), ib, d_out);
  const size_t smem = kBoxMax * (sizeof(T) + 1);
  check(cudaFuncSetAttribute(interp_tile_decode_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)),
        "tile smem");
  interp_tile_decode_kernel<T><<<dim3((unsigned)interp_grid_sizes(g).max_tiles, nc), kTileThreads<T>, smem, r.s>>>(
      g, radius, r.dc, T(r.h->step), ib, d_out);
  check(cudaGetLastError(), "interp reconstruct");
}
void reconstruct(const DecompressRun& r) {
  detail::dispatch_dtype(r.h->dtype, [&](auto tr) { reconstruct_t<typename decltype(tr)::value_type>(r); });
}

// Interpolation, chosen per chunk against Lorenzo.
const Predictor kInterp = {compress_bytes, decompress_bytes, chunks, init, range, sample, sizes, emit, head,
                           scatter, reconstruct};

size_t compress_ws(const format::HeaderFields& h, const codecs::Slab& slab) {
  return ratio::class_compress_workspace(h, slab, &kInterp);
}
void compress(const void* d_in, const format::HeaderFields& h, const codecs::Slab& slab, uint8_t* d_out, uint64_t* d_size,
              void* ws, void* stream) {
  ratio::class_compress(d_in, h, slab, d_out, d_size, ws, stream, &kInterp);
}
size_t decompress_ws(const format::HeaderFields& h, const codecs::Slab& slab) {
  return ratio::class_decompress_workspace(h, slab, &kInterp);
}
void decompress(const format::HeaderFields& h, const codecs::Slab& slab, const uint8_t* d_archive, void* d_out,
                uint32_t* d_status, void* ws, void* stream) {
  ratio::class_decompress(h, slab, d_archive, d_out, d_status, ws, stream, &kInterp);
}

}  // namespace

extern const codecs::DeviceOps kDevice;
const codecs::DeviceOps kDevice = {compress_ws, compress, decompress_ws, decompress,
                                   nullptr, nullptr, nullptr, nullptr};

}  // namespace hpcz::interp
