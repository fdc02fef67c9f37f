// pw_rel's log2 transform in the ratio-class codecs on the GPU: the chunks of pw_log_chunk.hpp, the same
// bytes as the CPU's. The engine codes the float64 logs as an archive of its own in the workspace (an
// abs bound on y whose step is the transform's, quant::pw_log_step); the encoder decodes that archive as
// the decoder will, checks every value, and writes each log chunk around its inner chunk. The side
// sections (pw_log_sides.hpp) are walked in spans, a thread each; a chunk of regular values of one sign,
// with no patch, has none to walk. The decoder copies the inner chunks into an archive of the logs,
// decodes it with the engine and applies the side sections, span by span.
#include <cuda_runtime.h>
#include <cub/block/block_reduce.cuh>

#include <algorithm>

#include "codecs/ratio_class/decode_kernels.cuh"
#include "codecs/ratio_class/engine_gpu.hpp"
#include "codecs/ratio_class/pw_log_gpu.hpp"
#include "codecs/ratio_class/predictor.cuh"
#include "codecs/ratio_class/pw_log_sides.hpp"
#include "common/cuda_check.hpp"
#include "common/dtype.hpp"
#include "gpu/archive_passes.cuh"
#include "gpu/decode_status.hpp"
#include "gpu/device.hpp"
#include "quant/bound.hpp"
#include "quant/logmap.hpp"
#include "quant/quantizer.hpp"

namespace hpcz::ratio {
namespace {

using namespace hpcz::ratio::cuda;
using detail::div_ceil;

// A chunk's state across the kernels (encoder and decoder).
struct PwChunk {
  unsigned long long special, negative, patched;  // counted by the map and check passes (decoder: NaN logs)
  unsigned long long offset, sum;                 // the chunk's place, its checksum's sum
  unsigned long long log_offset;                  // decoder: its inner chunk's place in the logs' archive
  uint32_t size, inner, raw, bad;
  uint32_t specials_size, sign_kind, placed;
  uint32_t parallel_signs;  // decoder: every value regular, the signs bits or one: pw_signs_kernel's
  uint32_t spans;           // decoder: the specials and signs by span (pw_place_kernel)
  uint32_t rest;            // decoder: the patches' offset in the chunk
  PwSideSizes z;
};

// The logs' header: an abs bound whose settling gives the transform's bound and step (the range given
// as +-kLogMax, its sample kLogMax: quant::pw_log_step), no fill, the chunks of h.
format::HeaderFields log_header(const format::HeaderFields& h) {
  format::HeaderFields y = h;
  y.dtype = DType::f64;
  y.storage = DType::f64;
  y.mode = BoundMode::abs;
  y.bound = y.eb_abs = quant::pw_eb_abs(quant::Transform::log2, h.dtype, h.storage, h.bound);
  y.step = quant::pw_log_step(y.bound);
  y.flags = uint8_t((h.flags & ~(format::kFlagFill | format::kFlagSecondStage)) | format::kFlagRangeValid);
  y.fill = 0.0;
  y.range_min = -quant::kLogMax;
  y.range_max = quant::kLogMax;
  return y;
}
codecs::Slab log_slab(const codecs::Slab& slab) { return codecs::Slab{slab.first_chunk, true, quant::kLogMax}; }

Grid grid_of(const format::HeaderFields& h, const codecs::Slab& slab) {
  return make_grid(predict::working_shape(h.dims, h.ndims), slab.first_chunk, h.n_chunks);
}
// The logs' archive: every chunk at most raw (the engine's bound), each at a multiple of 4.
uint64_t log_archive_bytes(const format::HeaderFields& h) {
  return format::data_offset(h.n_chunks) + h.n_chunks * (kChunkHeaderBytes + 3) + 8 * h.n_values;
}
unsigned blocks_per_chunk(const Grid& g) { return (unsigned)std::min<uint64_t>(64, div_ceil(g.full.count(), 16 * 256)); }

// A 4-byte word of the chunk at p of size bytes, zero past its end (the checksums' word walk).
__device__ __forceinline__ uint32_t chunk_word(const uint8_t* p, uint64_t k, uint32_t size) {
  uint32_t w = 0;
  for (int b = 0; b < 4; ++b) {
    const uint64_t at = 4 * k + b;
    if (at < size) w |= uint32_t(p[at]) << (8 * b);
  }
  return w;
}
// The chunk's checksum terms, the grid's x blocks over its words, into *sum.
__device__ __forceinline__ void chunk_checksum_terms(const uint8_t* p, uint32_t size, unsigned long long* sum) {
  using Sum = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ typename Sum::TempStorage tmp;
  unsigned long long s = 0;
  const uint64_t words = div_ceil(size, 4);
  for (uint64_t k = uint64_t(blockIdx.x) * kThreads + threadIdx.x; k < words; k += uint64_t(gridDim.x) * kThreads)
    s += format::checksum_term(k, chunk_word(p, k, size));
  s = Sum(tmp).Sum(s);
  if (threadIdx.x == 0 && s) atomicAdd(sum, s);
}

// A block's counts into the chunk's.
__device__ __forceinline__ void add_counts(unsigned long long a, unsigned long long b, unsigned long long* to_a,
                                           unsigned long long* to_b) {
  using Sum = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ typename Sum::TempStorage tmp;
  a = Sum(tmp).Sum(a);
  __syncthreads();
  b = Sum(tmp).Sum(b);
  if (threadIdx.x == 0) {
    if (a) atomicAdd(to_a, a);
    if (b && to_b) atomicAdd(to_b, b);
  }
}

__device__ __forceinline__ bool pw_plain(const PwChunk& c, uint32_t count) {
  return c.special == 0 && (c.negative == 0 || c.negative == count);
}

// ---- encoder -------------------------------------------------------------------------------------------

__global__ void pw_init_kernel(gpu::CompressState* st, gpu::RangeKeys keys, PwChunk* pc, unsigned long long nc) {
  const unsigned long long i0 = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i0 == 0) gpu::reset_state(st, keys);
  for (unsigned long long c = i0; c < nc; c += (unsigned long long)gridDim.x * blockDim.x) pc[c] = PwChunk{};
}

// y = log2 |x| of the regular values (quant::log2_abs_run's scalar form), NaN for the specials; flags 1
// and 0; the chunk's specials and negative values counted. Blocks: (blocks_per_chunk, chunks).
template <class T>
__global__ void __launch_bounds__(kThreads) pw_map_kernel(const T* __restrict__ in, Grid g, PwParams w, double* y,
                                                          uint8_t* flags, PwChunk* pc) {
  const uint64_t c = blockIdx.y, first = c * g.chunk_values, count = g.shape(c).count();
  const double special_y = from_bits<double>(kPwSpecialBits);
  unsigned long long special = 0, negative = 0;
  for (uint64_t k = uint64_t(blockIdx.x) * kThreads + threadIdx.x; k < count; k += uint64_t(gridDim.x) * kThreads) {
    const T x = in[first + k];
    const bool regular = pw_regular(x, w);
    flags[first + k] = regular;
    y[first + k] = regular ? quant::log2_det(double(x < T(0) ? -x : x)) : special_y;
    special += !regular;
    negative += regular && x < T(0);
  }
  add_counts(special, negative, &pc[c].special, &pc[c].negative);
}

// The check of each regular value's reconstruction from the decoded logs yr (quant::pw_log_check_run's
// scalar form): flag 2 where it would land beyond r |x|, counted.
template <class T>
__global__ void __launch_bounds__(kThreads) pw_check_kernel(const T* __restrict__ in, Grid g, double r, const double* yr,
                                                            uint8_t* flags, PwChunk* pc) {
  const uint64_t c = blockIdx.y, first = c * g.chunk_values, count = g.shape(c).count();
  unsigned long long patched = 0;
  for (uint64_t k = uint64_t(blockIdx.x) * kThreads + threadIdx.x; k < count; k += uint64_t(gridDim.x) * kThreads) {
    const uint64_t i = first + k;
    if (!flags[i]) continue;
    const T x = in[i], mag = T(quant::exp2_det(yr[i])), xr = x < T(0) ? -mag : mag;
    const bool ok = quant::pw_rel_within(double(x), double(xr), r);
    flags[i] = ok ? 1 : 2;
    patched += !ok;
  }
  add_counts(patched, 0, &pc[c].patched, nullptr);
}

// A chunk's side sections are walked in spans of kSpanValues, a thread each, from the state pw_carry finds
// for each (pw_log_sides.hpp): a span's facts, then the states in order (a thread a chunk), then each
// span's entries counted and, once the chunk's place is known, written. A chunk of regular values of one
// sign without a patch (pw_trivial) has no entries.
constexpr uint32_t kSpanValues = kPwSpanValues;
uint32_t spans_per_chunk(const Grid& g) { return uint32_t(div_ceil(g.full.count(), kSpanValues)); }

template <class T> struct PwSpan {
  PwWalkState<T> st;  // the state before the span (the chunk's last record: after its last span)
  PwSpanFacts<T> facts;
  PwSideSizes z;      // its entries (the last record: the finish's)
  uint64_t runs_at, signs_at, patches_at, regular_at;  // where they go in their lists; regular values before it
};

__device__ __forceinline__ bool pw_trivial(const PwChunk& p, uint32_t count) { return pw_plain(p, count) && p.patched == 0; }

// Span k of chunk c for thread t of a grid over chunks x (spans + extra) records.
struct SpanOf {
  uint64_t c;
  uint32_t k, first, end, count;
};
__device__ __forceinline__ bool span_of(const Grid& g, uint32_t per, uint32_t extra, SpanOf& s) {
  const uint64_t t = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  s.c = t / (per + extra);
  s.k = uint32_t(t % (per + extra));
  if (s.c >= g.n_chunks) return false;
  s.count = g.shape(s.c).count();
  s.first = min(s.k * kSpanValues, s.count);
  s.end = min(s.first + kSpanValues, s.count);
  return true;
}

// Placed specials' stand-ins (the ratio codec) in spans, for a chunk with specials or both signs: each
// span's first and last regular value, the y each span starts from (a thread a chunk), the spans.
struct PwStandIn {
  int32_t first_reg, last_reg;  // in the chunk; -1: none in the span
  double from;                  // the y before the span's first value
};
__global__ void pw_stand_in_scan_kernel(Grid g, const uint8_t* flags, const PwChunk* pc, PwStandIn* si, uint32_t per) {
  SpanOf s;
  if (!span_of(g, per, 0, s) || pw_plain(pc[s.c], s.count)) return;
  const uint8_t* f = flags + s.c * g.chunk_values;
  int32_t first = -1, last = -1;
  for (uint32_t i = s.first; i < s.end; ++i)
    if (f[i]) {
      if (first < 0) first = int32_t(i);
      last = int32_t(i);
    }
  si[s.c * per + s.k].first_reg = first, si[s.c * per + s.k].last_reg = last;
}
__global__ void pw_stand_in_from_kernel(Grid g, const double* y, const PwChunk* pc, PwStandIn* si, uint32_t per) {
  const uint64_t c = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (c >= g.n_chunks) return;
  const uint32_t count = g.shape(c).count();
  if (pw_plain(pc[c], count)) return;
  const double* yc = y + c * g.chunk_values;
  PwStandIn* sp = si + c * per;
  const uint32_t n_spans = uint32_t(div_ceil(count, kSpanValues));
  double from = 0.0;
  for (uint32_t k = 0; k < n_spans; ++k)
    if (sp[k].first_reg >= 0) {
      from = yc[sp[k].first_reg];
      break;
    }
  for (uint32_t k = 0; k < n_spans; ++k) {
    sp[k].from = from;
    if (sp[k].last_reg >= 0) from = yc[sp[k].last_reg];
  }
}
__global__ void pw_stand_in_kernel(Grid g, const uint8_t* flags, const PwChunk* pc, const PwStandIn* si, double* y,
                                   uint32_t per) {
  SpanOf s;
  if (!span_of(g, per, 0, s) || pw_plain(pc[s.c], s.count)) return;
  const uint64_t at = s.c * g.chunk_values;
  pw_stand_in_span(flags + at, y + at, s.first, s.end, si[s.c * per + s.k].from);
}

template <class T>
__global__ void pw_facts_kernel(const T* __restrict__ in, Grid g, const uint8_t* flags, const PwChunk* pc, PwSpan<T>* spans,
                                uint32_t per) {
  SpanOf s;
  if (!span_of(g, per, 0, s) || pw_trivial(pc[s.c], s.count)) return;
  const uint64_t at = s.c * g.chunk_values;
  spans[s.c * (per + 1) + s.k].facts = pw_span_facts(in + at, flags + at, s.first, s.end);
}

// The state before each span, a thread a chunk.
template <class T> __global__ void pw_carry_kernel(Grid g, const PwChunk* pc, PwSpan<T>* spans, uint32_t per, bool placed) {
  const uint64_t c = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (c >= g.n_chunks || pw_trivial(pc[c], g.shape(c).count())) return;
  PwSpan<T>* sp = spans + c * (per + 1);
  PwWalkState<T> st;
  for (uint32_t k = 0; k < per; ++k) {
    sp[k].st = st;
    st = pw_carry(st, sp[k].facts, placed);
  }
  sp[per].st = st;
}

// Each span's entries counted; the chunk's last record: the finish's.
template <class T>
__global__ void pw_count_kernel(const T* __restrict__ in, Grid g, const uint8_t* flags, const PwChunk* pc, PwSpan<T>* spans,
                                uint32_t per, bool placed) {
  SpanOf s;
  if (!span_of(g, per, 1, s) || pw_trivial(pc[s.c], s.count)) return;
  PwSpan<T>& sp = spans[s.c * (per + 1) + s.k];
  PwWalk<T> w;
  w.st = sp.st;
  const uint64_t at = s.c * g.chunk_values;
  if (s.k == per) w.finish(placed);
  else w.span(in + at, flags + at, s.first, s.end, placed);
  w.tally();
  sp.z = w.z;
}

// Each chunk's side sections (the spans' entries summed, each span's place in its lists) and size: its
// inner chunk's (the logs' table), or raw where that is not smaller. A thread a chunk.
template <class T>
__global__ void pw_size_kernel(Grid g, const uint8_t* logs, PwChunk* pc, PwSpan<T>* spans, uint32_t per) {
  const uint64_t c = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (c >= g.n_chunks) return;
  PwChunk& p = pc[c];
  const uint32_t count = g.shape(c).count();
  p.inner = load_u32_le(logs + format::kHeaderBytes + format::kChunkEntryBytes * c + 8);
  PwSideSizes z;
  if (pw_trivial(p, count)) {
    z.regular = count, z.negatives = p.negative;
  } else {
    PwSpan<T>* sp = spans + c * (per + 1);
    for (uint32_t k = 0; k <= per; ++k) {
      sp[k].runs_at = z.runs_bytes, sp[k].signs_at = z.sign_bytes, sp[k].patches_at = z.patch_bytes;
      sp[k].regular_at = z.regular;
      z.add(sp[k].z);
    }
  }
  pw_settle_signs(z);
  p.z = z;
  const uint64_t size = kChunkHeaderBytes + uint64_t(p.inner) + z.total(), raw = raw_chunk_bytes(count, sizeof(T));
  p.raw = size >= raw;
  p.size = uint32_t(p.raw ? raw : size);
}

// The chunks' offsets in order, the archive's size into the state. One thread (a slab's chunks: at
// most a few thousand).
__global__ void pw_layout_kernel(PwChunk* pc, unsigned long long nc, gpu::CompressState* st) {
  unsigned long long at = format::data_offset(nc);
  for (unsigned long long c = 0; c < nc; ++c) {
    pc[c].offset = at;
    at += pc[c].size;
  }
  st->total_size = at;
}

// The chunks' headers and inner chunks, or their raw values. Blocks: (blocks_per_chunk, chunks).
template <class T>
__global__ void __launch_bounds__(kThreads) pw_write_kernel(const T* __restrict__ in, Grid g, const uint8_t* logs,
                                                            bool placed, const PwChunk* pc, uint8_t* out) {
  const uint64_t c = blockIdx.y, count = g.shape(c).count();
  const PwChunk& p = pc[c];
  uint8_t* d = out + p.offset;
  const uint64_t t0 = uint64_t(blockIdx.x) * kThreads + threadIdx.x, stride = uint64_t(gridDim.x) * kThreads;
  if (p.raw) {
    if (t0 == 0) {
      store_u32_le(d, 0), store_u32_le(d + 4, 0), store_u32_le(d + 8, 0), store_u32_le(d + 12, kKindRaw);
    }
    for (uint64_t k = t0; k < count; k += stride)
      store_value_le<T>(d + kChunkHeaderBytes + sizeof(T) * k, in[c * g.chunk_values + k]);
    return;
  }
  if (t0 == 0) {
    store_u32_le(d, p.inner);
    store_u32_le(d + 4, uint32_t(p.z.runs_section()));
    store_u32_le(d + 8, p.z.sign_kind | (placed ? kPwPlaced : 0));
    store_u32_le(d + 12, kKindPwLog);
  }
  if (p.z.sign_kind == kSignsBits) {  // zeroed for pw_bits_kernel
    uint8_t* bits = d + kChunkHeaderBytes + p.inner + pw_side_starts(p.z).signs;
    for (uint64_t k = t0; k < p.z.signs_section(); k += stride) bits[k] = 0;
  }
  const uint64_t log_off = load_u64_le(logs + format::kHeaderBytes + format::kChunkEntryBytes * c);
  const uint8_t* src = logs + log_off;  // 4-byte aligned, as the engine writes its chunks
  for (uint64_t k = t0; k < p.inner / 4; k += stride) {
    const uint32_t w = reinterpret_cast<const uint32_t*>(src)[k];
    uint8_t* o = d + kChunkHeaderBytes + 4 * k;
    o[0] = uint8_t(w), o[1] = uint8_t(w >> 8), o[2] = uint8_t(w >> 16), o[3] = uint8_t(w >> 24);
  }
}

// The side sections: each span's entries where pw_size_kernel placed them; the chunk's last record
// writes the lists' counts and the finish's entries. A thread a span.
template <class T>
__global__ void pw_sides_kernel(const T* __restrict__ in, Grid g, const uint8_t* flags, bool placed, const PwChunk* pc,
                                const PwSpan<T>* spans, uint32_t per, uint8_t* out) {
  SpanOf s;
  if (!span_of(g, per, 1, s)) return;
  const PwChunk& p = pc[s.c];
  if (p.raw) return;
  uint8_t* d = out + p.offset + kChunkHeaderBytes + p.inner;
  if (s.k == per) pw_write_counts(p.z, d);
  if (pw_trivial(p, s.count)) return;
  const PwSpan<T>& sp = spans[s.c * (per + 1) + s.k];
  const PwSideStarts at = pw_side_starts(p.z);
  PwWalk<T> w;
  w.st = sp.st;
  w.r.p = d + at.runs + sp.runs_at;
  w.s.p = p.z.sign_kind == kSignsRuns ? d + at.signs + sp.signs_at : nullptr;
  w.p.p = d + at.patches + sp.patches_at;
  const uint64_t first = s.c * g.chunk_values;
  if (s.k == per) w.finish(placed);
  else w.span(in + first, flags + first, s.first, s.end, placed);
}

// The sign bits where stored so, a thread a span: each bit ORed into its byte's aligned word (the
// neighbouring bytes, written before, get zeros).
template <class T>
__global__ void pw_bits_kernel(const T* __restrict__ in, Grid g, const uint8_t* flags, const PwChunk* pc,
                               const PwSpan<T>* spans, uint32_t per, uint8_t* out) {
  SpanOf s;
  if (!span_of(g, per, 0, s)) return;
  const PwChunk& p = pc[s.c];
  if (p.raw || p.z.sign_kind != kSignsBits) return;
  uint8_t* bits = out + p.offset + kChunkHeaderBytes + p.inner + pw_side_starts(p.z).signs;
  const uint64_t first = s.c * g.chunk_values;
  pw_sign_bits(in + first, flags + first, s.first, s.end, spans[s.c * (per + 1) + s.k].regular_at,
               [&](uint64_t byte, uint8_t bit) {
                 const uintptr_t a = reinterpret_cast<uintptr_t>(bits + byte);
                 atomicOr(reinterpret_cast<unsigned*>(a & ~uintptr_t(3)), unsigned(bit) << (8 * (a & 3)));
               });
}

// Blocks: (blocks_per_chunk, chunks).
__global__ void __launch_bounds__(kThreads) pw_checksum_kernel(const uint8_t* a, PwChunk* pc) {
  const uint64_t c = blockIdx.y;
  chunk_checksum_terms(a + pc[c].offset, pc[c].size, &pc[c].sum);
}

// The chunk table, its checksum's terms into the state. A thread a chunk.
__global__ void pw_table_kernel(const PwChunk* pc, unsigned long long nc, gpu::CompressState* st, uint8_t* out) {
  const uint64_t c = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (c >= nc) return;
  const uint32_t sum = format::checksum_fold(pc[c].sum);
  format::write_chunk_entry(out + format::kHeaderBytes + format::kChunkEntryBytes * c, pc[c].offset, pc[c].size, sum);
  atomicAdd(&st->table_sum, (unsigned long long)format::chunk_entry_terms(c, pc[c].offset, pc[c].size, sum));
}

struct PwCompressLayout {
  gpu::CompressState* st;
  PwChunk* pc;
  double *y, *yr;
  uint8_t* flags;
  uint8_t* logs;
  unsigned long long* log_size;
  uint32_t* status;
  void* spans;      // PwSpan<T>: chunks x (spans + 1)
  void* stand_ins;  // PwStandIn: chunks x spans
  void* engine;
  size_t total;
};

PwCompressLayout carve_pw_compress(void* ws, const format::HeaderFields& h, const codecs::Slab& slab, const Predictor* extra) {
  Carver cv{static_cast<uint8_t*>(ws)};
  PwCompressLayout L;
  const format::HeaderFields y = log_header(h);
  L.st = cv.take<gpu::CompressState>(sizeof(gpu::CompressState));
  L.pc = cv.take<PwChunk>(sizeof(PwChunk) * h.n_chunks);
  L.y = cv.take<double>(8 * h.n_values);
  L.yr = cv.take<double>(8 * h.n_values);
  L.flags = cv.take<uint8_t>(h.n_values);
  L.logs = cv.take<uint8_t>(log_archive_bytes(h));
  L.log_size = cv.take<unsigned long long>(8);
  L.status = cv.take<uint32_t>(4);
  L.spans = cv.take<uint8_t>(sizeof(PwSpan<double>) * h.n_chunks * (spans_per_chunk(grid_of(h, slab)) + 1));
  L.stand_ins = cv.take<uint8_t>(sizeof(PwStandIn) * h.n_chunks * spans_per_chunk(grid_of(h, slab)));
  const size_t engine = std::max(compress_workspace(y, log_slab(slab), extra), decompress_workspace(y, log_slab(slab), extra));
  L.engine = cv.take<uint8_t>(engine);
  L.total = cv.used;
  return L;
}

template <class T>
void pw_compress_t(const T* d_in, const format::HeaderFields& h, const codecs::Slab& slab, uint8_t* d_out, uint64_t* d_size,
                   void* ws, cudaStream_t s, const Predictor* extra) {
  const Grid g = grid_of(h, slab);
  const PwCompressLayout L = carve_pw_compress(ws, h, slab, extra);
  const uint64_t n = h.n_values, nc = g.n_chunks;
  const bool has_fill = h.flags & format::kFlagFill;
  const bool placed = h.codec == Codec::ratio;  // Lorenzo chunks keep a NaN as an exception: stand-ins
  const PwParams w{quant::pw_code_factor(h.storage, h.bound), has_fill, h.fill};
  pw_init_kernel<<<blocks_for(nc, 64), kThreads, 0, s>>>(L.st, gpu::start_keys(h, slab.range_given, slab.sample_maxabs),
                                                         L.pc, nc);
  check(cudaGetLastError(), "pw init");
  if (nc) {
    if (!slab.range_given) {  // the header's range: the values' own (the logs' is given)
      const unsigned grid = (unsigned)std::max<uint64_t>(1, std::min<uint64_t>((n / 4 + 255) / 256, uint64_t(gpu::sm_count()) * 16));
      gpu::range_kernel<T><<<grid, gpu::kPassThreads, 0, s>>>(d_in, n, has_fill, T(h.fill), L.st);
    }
    const dim3 per(blocks_per_chunk(g), unsigned(nc));
    pw_map_kernel<T><<<per, kThreads, 0, s>>>(d_in, g, w, L.y, L.flags, L.pc);
    const uint32_t spc = spans_per_chunk(g);
    const unsigned span_blocks = unsigned(div_ceil(nc * (spc + 1), kThreads));
    if (placed) {
      PwStandIn* si = static_cast<PwStandIn*>(L.stand_ins);
      pw_stand_in_scan_kernel<<<span_blocks, kThreads, 0, s>>>(g, L.flags, L.pc, si, spc);
      pw_stand_in_from_kernel<<<blocks_for(nc, 4096), kThreads, 0, s>>>(g, L.y, L.pc, si, spc);
      pw_stand_in_kernel<<<span_blocks, kThreads, 0, s>>>(g, L.flags, L.pc, si, L.y, spc);
    }
    check(cudaGetLastError(), "pw map");
    const format::HeaderFields y = log_header(h);
    compress_device(L.y, y, log_slab(slab), L.logs, reinterpret_cast<uint64_t*>(L.log_size), L.engine, s, extra);
    check(cudaMemsetAsync(L.status, 0, 4, s), "pw status");
    decompress_written(y, log_slab(slab), L.logs, L.log_size, L.yr, L.status, L.engine, s, extra);
    pw_check_kernel<T><<<per, kThreads, 0, s>>>(d_in, g, w.r, L.yr, L.flags, L.pc);
    PwSpan<T>* spans = static_cast<PwSpan<T>*>(L.spans);
    pw_facts_kernel<T><<<span_blocks, kThreads, 0, s>>>(d_in, g, L.flags, L.pc, spans, spc);
    pw_carry_kernel<T><<<blocks_for(nc, 4096), kThreads, 0, s>>>(g, L.pc, spans, spc, placed);
    pw_count_kernel<T><<<span_blocks, kThreads, 0, s>>>(d_in, g, L.flags, L.pc, spans, spc, placed);
    pw_size_kernel<T><<<blocks_for(nc, 4096), kThreads, 0, s>>>(g, L.logs, L.pc, spans, spc);
    pw_layout_kernel<<<1, 1, 0, s>>>(L.pc, nc, L.st);
    pw_write_kernel<T><<<per, kThreads, 0, s>>>(d_in, g, L.logs, placed, L.pc, d_out);
    pw_sides_kernel<T><<<span_blocks, kThreads, 0, s>>>(d_in, g, L.flags, placed, L.pc, spans, spc, d_out);
    pw_bits_kernel<T><<<span_blocks, kThreads, 0, s>>>(d_in, g, L.flags, L.pc, spans, spc, d_out);
    pw_checksum_kernel<<<per, kThreads, 0, s>>>(d_out, L.pc);
    pw_table_kernel<<<blocks_for(nc, 4096), kThreads, 0, s>>>(L.pc, nc, L.st, d_out);
    check(cudaGetLastError(), "pw encode");
  }
  gpu::seal_kernel<<<1, 32, 0, s>>>(h, L.st, d_out, reinterpret_cast<unsigned long long*>(d_size));
  check(cudaGetLastError(), "pw seal");
}

// ---- decoder -------------------------------------------------------------------------------------------

// Each chunk's table entry and header: its place, raw or log, its inner chunk's size in the logs'
// archive (a raw chunk, or a bad one, gets a raw chunk of logs there). A thread a chunk.
template <class T>
__global__ void pw_parse_kernel(Grid g, const uint8_t* a, unsigned long long archive_size, PwChunk* pc, uint32_t* status) {
  const uint64_t c = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (c >= g.n_chunks) return;
  PwChunk& p = pc[c];
  p = PwChunk{};
  const uint32_t count = g.shape(c).count();
  const uint8_t* entry = a + format::kHeaderBytes + format::kChunkEntryBytes * c;
  const unsigned long long off = load_u64_le(entry);
  const uint32_t size = load_u32_le(entry + 8);
  const unsigned long long expect = c ? load_u64_le(entry - 16) + load_u32_le(entry - 8) : format::data_offset(g.n_chunks);
  const bool last_ok = c + 1 < g.n_chunks || off + size == archive_size;
  p.offset = off;
  p.size = size;
  p.inner = uint32_t(raw_chunk_bytes(count, 8));  // a raw chunk of logs unless a log chunk's below
  if (off != expect || !last_ok || off > archive_size || size > archive_size - off || size > raw_chunk_bytes(count, sizeof(T))) {
    p.bad = 1, p.size = 0;
  } else if (is_raw_chunk(a + off, size, count, sizeof(T))) {
    p.raw = 1;
  } else {
    uint32_t inner, specials, kind;
    bool placed;
    if (parse_pw_head(a + off, size, inner, specials, kind, placed)) {
      p.inner = inner, p.specials_size = specials, p.sign_kind = kind, p.placed = placed;
    } else {
      p.bad = 1;
    }
  }
  if (p.bad) atomicOr(status, gpu::kBadChunk);
}

// The inner chunks' places in the logs' archive, its size. One thread. Each at a multiple of 4 (an
// inner size that is not one is the engine's to refuse).
__global__ void pw_log_layout_kernel(PwChunk* pc, unsigned long long nc, unsigned long long* log_size) {
  unsigned long long at = format::data_offset(nc);
  for (unsigned long long c = 0; c < nc; ++c) {
    pc[c].log_offset = at;
    at += align4(pc[c].inner);
  }
  *log_size = at;
}

// The logs' archive (its table and chunks; the engine reads no header), and each chunk's checksum.
// Blocks: (blocks_per_chunk, chunks).
__global__ void __launch_bounds__(kThreads) pw_logs_kernel(Grid g, const uint8_t* a, PwChunk* pc, uint8_t* logs) {
  const uint64_t c = blockIdx.y;
  PwChunk& p = pc[c];
  const uint64_t t0 = uint64_t(blockIdx.x) * kThreads + threadIdx.x, stride = uint64_t(gridDim.x) * kThreads;
  uint8_t* d = logs + p.log_offset;
  if (t0 == 0) format::write_chunk_entry(logs + format::kHeaderBytes + format::kChunkEntryBytes * c, p.log_offset, p.inner, 0);
  if (p.raw || p.bad) {  // a raw chunk of zeros: decoded by the engine, its values unused
    for (uint64_t k = t0; k < p.inner / 4; k += stride)
      reinterpret_cast<uint32_t*>(d)[k] = k == 3 ? kKindRaw : 0;
  } else {
    const uint8_t* src = a + p.offset + kChunkHeaderBytes;
    for (uint64_t k = t0; k < div_ceil(p.inner, 4); k += stride)
      reinterpret_cast<uint32_t*>(d)[k] = chunk_word(src, k, p.inner);
  }
  if (!p.bad) chunk_checksum_terms(a + p.offset, p.size, &p.sum);
}

__global__ void pw_verify_kernel(const uint8_t* a, const PwChunk* pc, unsigned long long nc, uint32_t* status) {
  const uint64_t c = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (c >= nc || pc[c].bad) return;
  const uint32_t expect = load_u32_le(a + format::kHeaderBytes + format::kChunkEntryBytes * c + 12);
  if (format::checksum_fold(pc[c].sum) != expect) atomicOr(status, gpu::kBadChecksum);
}

// Magnitudes 2^y' rounded to T (quant::exp2_run's scalar form), NaN logs counted; a raw chunk's values.
// Blocks: (blocks_per_chunk, chunks).
template <class T>
__global__ void __launch_bounds__(kThreads) pw_exp2_kernel(Grid g, const uint8_t* a, const double* y, PwChunk* pc, T* out) {
  const uint64_t c = blockIdx.y, first = c * g.chunk_values, count = g.shape(c).count();
  const PwChunk& p = pc[c];
  if (p.bad) return;
  unsigned long long nan = 0;
  for (uint64_t k = uint64_t(blockIdx.x) * kThreads + threadIdx.x; k < count; k += uint64_t(gridDim.x) * kThreads) {
    if (p.raw) {
      out[first + k] = load_value_le<T>(a + p.offset + kChunkHeaderBytes + sizeof(T) * k);
    } else {
      const double v = y[first + k];
      nan += v != v;
      out[first + k] = T(quant::exp2_det(v));
    }
  }
  add_counts(nan, 0, &pc[c].special, nullptr);
}

// The NaN magnitudes of each span of a chunk whose specials are not placed. A thread a span.
template <class T>
__global__ void pw_span_nan_kernel(Grid g, const PwChunk* pc, const T* out, uint32_t* span_nan, uint32_t per) {
  SpanOf s;
  if (!span_of(g, per, 0, s)) return;
  const PwChunk& p = pc[s.c];
  if (p.bad || p.raw || p.placed) return;
  const T* o = out + s.c * g.chunk_values;
  uint32_t nan = 0;
  for (uint32_t i = s.first; i < s.end; ++i) nan += o[i] != o[i];
  span_nan[s.c * per + s.k] = nan;
}

// A log chunk's lists (decode_pw_chunk's checks): a chunk of regular values whose signs are bits or one
// is left to pw_signs_kernel; the others get each span's start in the lists (pw_plan_spans) for
// pw_place_kernel. Then pw_patch_kernel. A thread a chunk.
template <class T>
__global__ void pw_plan_kernel(Grid g, const uint8_t* a, PwChunk* pc, const uint32_t* span_nan, PwPlaceState<T>* states,
                               uint32_t per, uint32_t* status) {
  const uint64_t c = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (c >= g.n_chunks) return;
  PwChunk& p = pc[c];
  if (p.bad || p.raw) return;
  const uint32_t n = g.shape(c).count();
  const uint8_t* chunk = a + p.offset;
  const uint8_t* side = chunk + kChunkHeaderBytes + p.inner;
  const uint8_t* rest = side + p.specials_size;
  const uint32_t rest_size = uint32_t(chunk + p.size - rest);
  bool ok;
  if (!p.placed && p.special == 0 && p.sign_kind != kSignsRuns) {
    SideReader runs{side, side + p.specials_size}, r{rest, chunk + p.size};
    uint32_t n_runs;
    SignReader signs;
    ok = runs.varint(n_runs) && n_runs == 0 && runs.p == runs.end && signs.open(p.sign_kind, r, n);
    p.parallel_signs = 1;
    p.rest = uint32_t(r.p - chunk);  // the patches; the sign bits just before them
  } else {
    uint32_t patches_at = 0;
    ok = pw_plan_spans<T>(side, p.specials_size, rest, rest_size, p.sign_kind, p.placed, n, kSpanValues,
                          span_nan + c * per, states + c * (per + 1), patches_at);
    p.spans = 1;
    p.rest = uint32_t(rest - chunk) + patches_at;
  }
  if (!ok) {
    p.bad = 1;
    atomicOr(status, gpu::kBadChunk);
  }
}

// Each span's specials and signs, from its start. A thread a span.
template <class T>
__global__ void pw_place_kernel(Grid g, const uint8_t* a, const PwChunk* pc, const PwPlaceState<T>* states, uint32_t per,
                                T* out) {
  SpanOf s;
  if (!span_of(g, per, 0, s)) return;
  const PwChunk& p = pc[s.c];
  if (p.bad || p.raw || !p.spans || s.first == s.end) return;
  const uint8_t* side = a + p.offset + kChunkHeaderBytes + p.inner;
  const uint8_t* rest = side + p.specials_size;
  const uint32_t rest_size = uint32_t(a + p.offset + p.size - rest);
  pw_place_span<T>(side, p.specials_size, rest, rest_size, rest, p.sign_kind, p.placed, states[s.c * (per + 1) + s.k],
                   s.first, s.end, out + s.c * g.chunk_values);
}

// The signs of pw_plan_kernel's chunks of regular values. Blocks: (blocks_per_chunk, chunks).
template <class T>
__global__ void __launch_bounds__(kThreads) pw_signs_kernel(Grid g, const uint8_t* a, const PwChunk* pc, T* out) {
  const uint64_t c = blockIdx.y, count = g.shape(c).count();
  const PwChunk& p = pc[c];
  if (p.bad || p.raw || !p.parallel_signs || p.sign_kind == kSignsPositive) return;
  const uint8_t* bits = a + p.offset + p.rest - (count + 7) / 8;
  T* o = out + c * g.chunk_values;
  for (uint64_t k = uint64_t(blockIdx.x) * kThreads + threadIdx.x; k < count; k += uint64_t(gridDim.x) * kThreads)
    if (p.sign_kind == kSignsNegative || (bits[k >> 3] >> (k & 7) & 1)) o[k] = -o[k];
}

template <class T>
__global__ void pw_patch_kernel(Grid g, const uint8_t* a, PwChunk* pc, T* out, uint32_t* status) {
  const uint64_t c = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (c >= g.n_chunks) return;
  const PwChunk& p = pc[c];
  if (p.bad || p.raw) return;
  SideReader rest{a + p.offset + p.rest, a + p.offset + p.size};
  if (!apply_pw_patches(rest, g.shape(c).count(), out + c * g.chunk_values)) atomicOr(status, gpu::kBadChunk);
}

struct PwDecompressLayout {
  PwChunk* pc;
  void* states;  // PwPlaceState<T>: chunks x (spans + 1)
  uint32_t* span_nan;
  double* y;
  uint8_t* logs;
  unsigned long long* log_size;
  void* engine;
  size_t total;
};

PwDecompressLayout carve_pw_decompress(void* ws, const format::HeaderFields& h, const codecs::Slab& slab,
                                       const Predictor* extra) {
  Carver cv{static_cast<uint8_t*>(ws)};
  PwDecompressLayout L;
  L.pc = cv.take<PwChunk>(sizeof(PwChunk) * h.n_chunks);
  const uint64_t spc = spans_per_chunk(grid_of(h, slab));
  L.states = cv.take<uint8_t>(sizeof(PwPlaceState<double>) * h.n_chunks * (spc + 1));
  L.span_nan = cv.take<uint32_t>(4 * h.n_chunks * spc);
  L.y = cv.take<double>(8 * h.n_values);
  L.logs = cv.take<uint8_t>(log_archive_bytes(h));
  L.log_size = cv.take<unsigned long long>(8);
  L.engine = cv.take<uint8_t>(decompress_workspace(log_header(h), log_slab(slab), extra));
  L.total = cv.used;
  return L;
}

template <class T>
void pw_decompress_t(const format::HeaderFields& h, const codecs::Slab& slab, const uint8_t* d_a, T* d_out,
                     uint32_t* d_status, void* ws, cudaStream_t s, const Predictor* extra) {
  const Grid g = grid_of(h, slab);
  const PwDecompressLayout L = carve_pw_decompress(ws, h, slab, extra);
  const uint64_t nc = g.n_chunks;
  const dim3 per(blocks_per_chunk(g), unsigned(nc));
  const unsigned threads_per_chunk = blocks_for(nc, 4096);
  gpu::table_check_kernel<<<1, gpu::kPassThreads, 0, s>>>(d_a, nc, h.table_checksum, d_status);
  pw_parse_kernel<T><<<threads_per_chunk, kThreads, 0, s>>>(g, d_a, h.archive_size, L.pc, d_status);
  pw_log_layout_kernel<<<1, 1, 0, s>>>(L.pc, nc, L.log_size);
  pw_logs_kernel<<<per, kThreads, 0, s>>>(g, d_a, L.pc, L.logs);
  pw_verify_kernel<<<threads_per_chunk, kThreads, 0, s>>>(d_a, L.pc, nc, d_status);
  check(cudaGetLastError(), "pw parse");
  decompress_written(log_header(h), log_slab(slab), L.logs, L.log_size, L.y, d_status, L.engine, s, extra);
  pw_exp2_kernel<T><<<per, kThreads, 0, s>>>(g, d_a, L.y, L.pc, d_out);
  const uint32_t spc = spans_per_chunk(g);
  PwPlaceState<T>* states = static_cast<PwPlaceState<T>*>(L.states);
  const unsigned span_blocks = unsigned(div_ceil(nc * spc, kThreads));
  pw_span_nan_kernel<T><<<span_blocks, kThreads, 0, s>>>(g, L.pc, d_out, L.span_nan, spc);
  pw_plan_kernel<T><<<threads_per_chunk, kThreads, 0, s>>>(g, d_a, L.pc, L.span_nan, states, spc, d_status);
  pw_place_kernel<T><<<span_blocks, kThreads, 0, s>>>(g, d_a, L.pc, states, spc, d_out);
  pw_signs_kernel<T><<<per, kThreads, 0, s>>>(g, d_a, L.pc, d_out);
  pw_patch_kernel<T><<<threads_per_chunk, kThreads, 0, s>>>(g, d_a, L.pc, d_out, d_status);
  check(cudaGetLastError(), "pw decode");
}

bool log_transform(const format::HeaderFields& h) { return quant::transform_of(h.mode, h.codec) == quant::Transform::log2; }

}  // namespace

size_t class_compress_workspace(const format::HeaderFields& h, const codecs::Slab& slab, const Predictor* extra) {
  return log_transform(h) ? carve_pw_compress(nullptr, h, slab, extra).total : compress_workspace(h, slab, extra);
}

void class_compress(const void* d_in, const format::HeaderFields& h, const codecs::Slab& slab, uint8_t* d_out,
                    uint64_t* d_size, void* ws, void* stream, const Predictor* extra) {
  if (!log_transform(h)) return compress_device(d_in, h, slab, d_out, d_size, ws, stream, extra);
  detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    pw_compress_t(static_cast<const T*>(d_in), h, slab, d_out, d_size, ws, static_cast<cudaStream_t>(stream), extra);
  });
}

size_t class_decompress_workspace(const format::HeaderFields& h, const codecs::Slab& slab, const Predictor* extra) {
  return log_transform(h) ? carve_pw_decompress(nullptr, h, slab, extra).total : decompress_workspace(h, slab, extra);
}

void class_decompress(const format::HeaderFields& h, const codecs::Slab& slab, const uint8_t* d_archive, void* d_out,
                      uint32_t* d_status, void* ws, void* stream, const Predictor* extra) {
  if (!log_transform(h)) return decompress_device(h, slab, d_archive, d_out, d_status, ws, stream, extra);
  auto s = static_cast<cudaStream_t>(stream);
  check(cudaMemsetAsync(d_status, 0, sizeof(uint32_t), s), "status reset");
  if (!h.n_chunks) return;
  detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    pw_decompress_t(h, slab, d_archive, static_cast<T*>(d_out), d_status, ws, s, extra);
  });
}

}  // namespace hpcz::ratio
