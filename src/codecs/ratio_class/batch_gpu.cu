// A device batch of the ratio codec's arrays (Lorenzo on every chunk) in one set of launches
// (batch_kernels.cuh): the one-array sequence of engine_gpu.cu, each stage launched once for all
// arrays. Each array's archive is byte for byte the one-array call's.
//
// The workspace: the arrays' states, the tables (arrays, targets, headers: one copy from the host),
// then the arrays' buffers, each kind back to back across the batch: every array's histograms, code
// lengths, codes and chunk records are one run, so one launch builds every chunk's book.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "codecs/ratio_class/batch_kernels.cuh"
#include "codecs/ratio_class/engine_gpu.hpp"
#include "codecs/ratio_class/predictor.cuh"
#include "common/cuda_check.hpp"
#include "common/dtype.hpp"
#include "gpu/batch_passes.cuh"
#include "gpu/device.hpp"

namespace hpcz::ratio {
namespace {

using namespace hpcz::ratio::cuda;
using detail::div_ceil;

// A batch is coded in slices, each one set of launches in the same workspace, one after another.
struct BatchSlicePolicy {
  static constexpr size_t max_arrays = 65535;         // grid z: an array
  static constexpr uint64_t max_values = 1ull << 26;  // the slice's buffers: about 6 bytes a value
  static constexpr size_t max_decode_bytes = 512ull << 20;  // a decoding slice's buffers (as lanes' budget)
  // Arrays of this many bytes of values or more fill the GPU alone: the one-array kernels (their
  // launch shapes tuned for them), several at once in the pipeline's lanes, beat a batch's there.
  static constexpr uint64_t batched_below = 16ull << 20;
};

bool batch_sized(const format::HeaderFields& h) {
  return h.n_values * dtype_size(h.dtype) < BatchSlicePolicy::batched_below;
}

struct Slice {
  size_t first, count;
};

std::vector<Slice> slices_of(const codecs::DeviceBatchItem* items, size_t n) {
  std::vector<Slice> out;
  size_t i = 0;
  while (i < n) {
    Slice s{i, 0};
    uint64_t values = 0;
    while (i < n && s.count < BatchSlicePolicy::max_arrays &&
           (s.count == 0 || values + items[i].h.n_values <= BatchSlicePolicy::max_values)) {
      values += items[i].h.n_values;
      ++s.count;
      ++i;
    }
    out.push_back(s);
  }
  return out;
}

Grid grid_of(const format::HeaderFields& h) { return make_grid(predict::working_shape(h.dims, h.ndims), 0, h.n_chunks); }

// Where a slice's tables and buffers sit in the workspace (base nullptr: only the size, in total).
// With `arrays` given, each array's entry (its buffers' views) is written there.
struct SliceLayout {
  gpu::CompressState* states;
  BatchArray* arrays;
  uint8_t* targets;  // gpu::EncodeTarget<T>, n of them
  format::HeaderFields* headers;
  unsigned int* counter;  // init_batch_kernel's (unused here)
  uint32_t* zeroed;       // histograms, then tile counts: zeroed by one memset
  size_t zeroed_bytes;
  unsigned long long* desc;
  uint64_t n_desc;
  uint32_t* hist;  // every chunk's, back to back (the books' launch)
  uint8_t* len;
  uint32_t* code;
  ChunkInfo* info;
  uint64_t chunks, tiles;
  size_t tables_bytes;  // arrays, targets, headers: the one copy
  size_t total;
};

SliceLayout slice_layout(const codecs::DeviceBatchItem* items, size_t n, uint8_t* base, BatchArray* arrays) {
  SliceLayout l{};
  Carver cv{base};
  const uint64_t nsym = n ? 2ull * items[0].h.block_param : 0;
  for (size_t i = 0; i < n; ++i) {
    const Grid g = grid_of(items[i].h);
    l.chunks += g.n_chunks;
    l.tiles += g.n_tiles + 1;
  }
  l.states = cv.take<gpu::CompressState>(sizeof(gpu::CompressState) * n);
  l.counter = cv.take<unsigned int>(4);
  // The tables, adjacent: one copy.
  const size_t tables_at = cv.used;
  l.arrays = cv.take<BatchArray>(sizeof(BatchArray) * n);
  l.targets = cv.take<uint8_t>(sizeof(gpu::EncodeTarget<double>) * n);  // the same size for every T
  l.headers = cv.take<format::HeaderFields>(sizeof(format::HeaderFields) * n);
  l.tables_bytes = cv.used - tables_at;
  // Zeroed before the first pass: histograms, then both tile counts of every array.
  l.zeroed_bytes = 4 * (l.chunks * nsym + 2 * l.tiles);
  l.zeroed = cv.take<uint32_t>(l.zeroed_bytes);
  l.hist = l.zeroed;
  uint32_t* tile_out = l.zeroed ? l.zeroed + l.chunks * nsym : nullptr;
  uint32_t* tile_exc = tile_out ? tile_out + l.tiles : nullptr;
  l.desc = cv.take<unsigned long long>(8 * l.tiles);
  l.n_desc = l.tiles;
  l.len = cv.take<uint8_t>(l.chunks * nsym);
  l.code = cv.take<uint32_t>(4 * l.chunks * nsym);
  l.info = cv.take<ChunkInfo>(sizeof(ChunkInfo) * l.chunks);
  // Quantization codes and symbols, an array's 256-byte aligned (prequant_kernel stores 16 bytes at once).
  uint8_t* q_base = base ? base + cv.used : nullptr;  // 256-byte aligned, as every take
  size_t q_used = 0, sym_used = 0;
  for (size_t i = 0; i < n; ++i) q_used += align256(4 * items[i].h.n_values);
  for (size_t i = 0; i < n; ++i) sym_used += align256(2 * items[i].h.n_values);
  cv.used += q_used + sym_used;
  l.total = cv.used;
  if (arrays) {
    uint64_t chunk = 0, tile = 0;
    size_t q_at = 0, sym_at = q_used;
    for (size_t i = 0; i < n; ++i) {
      const format::HeaderFields& h = items[i].h;
      BatchArray& a = arrays[i];
      a.in = items[i].d_in;
      a.n = h.n_values;
      a.g = grid_of(h);
      a.dp = dual_plan(a.g.full, a.g.n_chunks);
      a.b.st = l.states + i;
      a.b.q = reinterpret_cast<uint32_t*>(q_base + q_at);
      a.b.sym = reinterpret_cast<uint16_t*>(q_base + sym_at);
      a.b.hist = l.hist + chunk * nsym;
      a.b.tile_out = tile_out + tile;
      a.b.tile_exc = tile_exc + tile;
      a.b.tile_desc = l.desc + tile;
      a.b.len = l.len + chunk * nsym;
      a.b.code = l.code + chunk * nsym;
      a.b.info = l.info + chunk;
      a.out = items[i].d_out;
      q_at += align256(4 * h.n_values);
      sym_at += align256(2 * h.n_values);
      chunk += a.g.n_chunks;
      tile += a.g.n_tiles + 1;
    }
  }
  return l;
}

template <class T>
void compress_slice(const codecs::DeviceBatchItem* items, size_t n, uint8_t* ws, cudaStream_t s) {
  std::vector<BatchArray> host_arrays(n);
  const SliceLayout l = slice_layout(items, n, ws, host_arrays.data());
  // The tables as they sit in the workspace, written here and copied at once.
  std::vector<uint8_t> tables(l.tables_bytes);
  const size_t at_targets = l.targets - reinterpret_cast<uint8_t*>(l.arrays);
  const size_t at_headers = reinterpret_cast<uint8_t*>(l.headers) - reinterpret_cast<uint8_t*>(l.arrays);
  std::copy(host_arrays.begin(), host_arrays.end(), reinterpret_cast<BatchArray*>(tables.data()));
  auto* h_targets = reinterpret_cast<gpu::EncodeTarget<T>*>(tables.data() + at_targets);
  auto* h_headers = reinterpret_cast<format::HeaderFields*>(tables.data() + at_headers);
  uint64_t largest = 0, max_chunks = 0, max_tiles = 0, max_dual_blocks = 0, max_dual_chunks = 0;
  uint32_t max_ring = 0, max_per_chunk = 1;
  bool any_dual = false, any_two_pass = false;
  for (size_t i = 0; i < n; ++i) {
    const BatchArray& a = host_arrays[i];
    const format::HeaderFields& h = items[i].h;
    h_targets[i] = {static_cast<const T*>(items[i].d_in), h.n_values, h.n_chunks, l.states + i, nullptr, items[i].d_out,
                    reinterpret_cast<unsigned long long*>(items[i].d_size)};
    h_headers[i] = h;
    largest = std::max<uint64_t>(largest, h.n_values);
    if (!a.g.n_chunks) continue;
    max_chunks = std::max<uint64_t>(max_chunks, a.g.n_chunks);
    max_tiles = std::max<uint64_t>(max_tiles, a.g.n_tiles);
    max_per_chunk = std::max<uint32_t>(max_per_chunk, uint32_t(std::min<uint64_t>(64, div_ceil(a.g.full.count(), 16 * 256))));
    if (a.dp.history) {
      any_dual = true;
      max_ring = std::max(max_ring, a.dp.ring);
      max_dual_blocks = std::max<uint64_t>(max_dual_blocks, a.dp.blocks_per_chunk);
      max_dual_chunks = std::max<uint64_t>(max_dual_chunks, a.g.n_chunks);
    } else {
      any_two_pass = true;
    }
  }
  check(cudaMemcpyAsync(l.arrays, tables.data(), tables.size(), cudaMemcpyHostToDevice, s), "batch tables");
  const auto* arrays = static_cast<const BatchArray*>(l.arrays);
  const auto* targets = reinterpret_cast<const gpu::EncodeTarget<T>*>(l.targets);
  const format::HeaderFields& h0 = items[0].h;
  const uint32_t radius = h0.block_param, nsym = 2 * radius;
  const quant::Bound asked = quant::bound_of(h0);  // every array's: the same options and type
  const bool has_fill = h0.flags & format::kFlagFill;
  const unsigned z = unsigned(n), items_y = unsigned(std::min<size_t>(n, 65535));
  const int sms = gpu::sm_count();
  check(cudaMemsetAsync(l.zeroed, 0, l.zeroed_bytes, s), "batch counts");
  gpu::init_batch_kernel<<<(unsigned)std::max<uint64_t>(1, std::min<uint64_t>((std::max<uint64_t>(n, l.n_desc) + 255) / 256, 1024)),
                           256, 0, s>>>(l.states, unsigned(n), gpu::start_keys(h0, false, 0.0), l.desc, l.n_desc, l.counter);
  check(cudaGetLastError(), "batch init");
  if (l.chunks) {
    if (quant::step_from_sample(h0.mode, h0.bound, h0.storage))
      gpu::sample_batch_kernel<T><<<dim3(gpu::step_samples_grid(largest), items_y), gpu::kPassThreads, 0, s>>>(
          targets, unsigned(n), int(has_fill), T(h0.fill));
    // About as many blocks in all as one array's pass would take, at least one an array.
    const uint64_t per_array = std::max<uint64_t>(1, std::min<uint64_t>((largest / 4 + gpu::kPassThreads - 1) / gpu::kPassThreads,
                                                                        uint64_t(sms) * 16 / items_y));
    gpu::range_batch_kernel<T><<<dim3(unsigned(per_array), items_y), gpu::kPassThreads, 0, s>>>(targets, unsigned(n),
                                                                                           int(has_fill), T(h0.fill));
    check(cudaGetLastError(), "batch range");
    if (any_dual) {
      const size_t smem = (size_t(max_ring) + nsym) * 4;
      check(cudaFuncSetAttribute(dual_quant_batch_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)),
            "batch dual smem");
      dual_quant_batch_kernel<T><<<dim3(unsigned(max_dual_blocks), unsigned(max_dual_chunks), z), kThreads, smem, s>>>(
          arrays, radius, asked);
    }
    if (any_two_pass) {
      prequant_batch_kernel<T><<<dim3(blocks_for(largest / 4, uint64_t(sms) * 16), 1, z), kThreads, 0, s>>>(arrays, asked);
      lorenzo_batch_kernel<<<dim3(unsigned(max_tiles), 1, z), kThreads, nsym * 4, s>>>(arrays, radius);
    }
    check(cudaGetLastError(), "batch lorenzo");
    tile_scan_batch_kernel<<<items_y, kThreads, 0, s>>>(arrays, unsigned(n));
    build_books(nsym, unsigned(l.chunks), l.hist, l.len, l.code, l.info, s);
    layout_batch_kernel<T><<<dim3(1, 1, z), kThreads, 0, s>>>(arrays, nsym);
    check(cudaGetLastError(), "batch layout");
    zero_batch_kernel<<<dim3(max_per_chunk, unsigned(max_chunks), z), kThreads, 0, s>>>(arrays);
    encode_batch_kernel<<<dim3(unsigned(max_tiles), 1, z), kThreads, nsym * 5, s>>>(arrays, nsym);
    emit_batch_kernel<T><<<dim3(unsigned(max_tiles), 1, z), kThreads, 0, s>>>(arrays, radius, asked);
    chunk_head_batch_kernel<T><<<dim3(max_per_chunk, unsigned(max_chunks), z), kThreads, 0, s>>>(arrays, nsym);
    checksum_batch_kernel<<<dim3(max_per_chunk, unsigned(max_chunks), z), kThreads, 0, s>>>(arrays);
    table_batch_kernel<<<dim3(blocks_for(max_chunks, 64), 1, z), kThreads, 0, s>>>(arrays);
    check(cudaGetLastError(), "batch encode");
  }
  gpu::seal_batch_kernel<T><<<items_y, 32, 0, s>>>(static_cast<const format::HeaderFields*>(l.headers), targets,
                                                    unsigned(n));
  check(cudaGetLastError(), "batch seal");
}

}  // namespace

// pw_rel's log transform (pw_log_gpu.cu) codes its arrays one call each.
bool compress_batch_takes(const format::HeaderFields& h) {
  return batch_sized(h) && quant::transform_of(h.mode, h.codec) == quant::Transform::identity;
}

size_t compress_batch_workspace(const codecs::DeviceBatchItem* items, size_t n) {
  size_t need = 1;
  for (const Slice& sl : slices_of(items, n))
    need = std::max(need, slice_layout(items + sl.first, sl.count, nullptr, nullptr).total);
  return need;
}

void compress_batch(const codecs::DeviceBatchItem* items, size_t n, void* ws, void* stream) {
  if (n == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  detail::dispatch_dtype(items[0].h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    for (const Slice& sl : slices_of(items, n)) compress_slice<T>(items + sl.first, sl.count, static_cast<uint8_t*>(ws), s);
  });
}

}  // namespace hpcz::ratio

// ---- decoding ----------------------------------------------------------------------------------
// Archives whose reconstruction is the fused one (recon_plan.hpp; the pipeline decodes the others in
// lanes, and any handed here take the one-archive path, one after another in the same workspace),
// each dtype's in slices of one set of launches.
namespace hpcz::ratio {
namespace {

struct DecodeShape {
  Grid g;
  ReconPlan rp;
};

DecodeShape decode_shape(const format::HeaderFields& h) {
  const predict::Shape shape = predict::working_shape(h.dims, h.ndims);
  const Grid g = grid_of(h);
  return {g, recon_plan(shape.rank, g.full, g.last, g.n_chunks, kReconMinPlanes, kReconValues)};
}

}  // namespace

bool decompress_batch_takes(const format::HeaderFields& h) {
  return batch_sized(h) && h.n_chunks && decode_shape(h).rp.planes &&
         quant::transform_of(h.mode, h.codec) == quant::Transform::identity;
}

namespace {

bool batched(const codecs::DeviceDecodeItem& item) { return decompress_batch_takes(item.h); }

// An archive's part of a decoding slice's workspace (as decode_slice_layout carves it).
size_t decode_archive_bytes(const format::HeaderFields& h) {
  const DecodeShape ds = decode_shape(h);
  const uint64_t nc = ds.g.n_chunks, seg = ds.rp.n_segments * ds.rp.plane();
  return align256(4 * h.n_values) + align256(sizeof(DecodeChunk) * nc) + align256(sizeof(huffman::DecodeTables) * nc) +
         align256(sizeof(LongTable) * nc) + align256(4 * (ds.rp.n_segments + 1)) + 2 * align256(4 * seg);
}

// The batched archives of one dtype, in slices (indices into items). Every chunk carries about 24 KB
// of decode tables whatever its size, so a slice is cut by its workspace too.
std::vector<std::vector<size_t>> decode_slices(const codecs::DeviceDecodeItem* items, size_t n, DType dtype) {
  std::vector<std::vector<size_t>> out;
  uint64_t values = 0;
  size_t bytes = 0;
  for (size_t i = 0; i < n; ++i) {
    if (items[i].h.dtype != dtype || !batched(items[i])) continue;
    const size_t b = decode_archive_bytes(items[i].h);
    if (out.empty() || out.back().size() == BatchSlicePolicy::max_arrays ||
        values + items[i].h.n_values > BatchSlicePolicy::max_values ||
        bytes + b > BatchSlicePolicy::max_decode_bytes) {
      out.emplace_back();
      values = 0;
      bytes = 0;
    }
    out.back().push_back(i);
    values += items[i].h.n_values;
    bytes += b;
  }
  return out;
}

// A decoding slice's workspace: the table, then each archive's buffers (as carve_decompress's for the
// fused reconstruction). With `archives` given, each archive's entry is written there.
size_t decode_slice_layout(const codecs::DeviceDecodeItem* items, const std::vector<size_t>& members, uint8_t* base,
                           BatchArchive* archives, BatchArchive** d_table) {
  Carver cv{base};
  BatchArchive* table = cv.take<BatchArchive>(sizeof(BatchArchive) * members.size());
  if (d_table) *d_table = table;
  for (size_t k = 0; k < members.size(); ++k) {
    const codecs::DeviceDecodeItem& item = items[members[k]];
    const format::HeaderFields& h = item.h;
    const DecodeShape ds = decode_shape(h);
    const uint64_t nc = ds.g.n_chunks;
    uint32_t* v = cv.take<uint32_t>(4 * h.n_values);
    DecodeChunk* dc = cv.take<DecodeChunk>(sizeof(DecodeChunk) * nc);
    huffman::DecodeTables* tables = cv.take<huffman::DecodeTables>(sizeof(huffman::DecodeTables) * nc);
    LongTable* longs = cv.take<LongTable>(sizeof(LongTable) * nc);
    uint32_t* flags = cv.take<uint32_t>(4 * (ds.rp.n_segments + 1));
    uint32_t* agg = cv.take<uint32_t>(4 * ds.rp.n_segments * ds.rp.plane());
    uint32_t* incl = cv.take<uint32_t>(4 * ds.rp.n_segments * ds.rp.plane());
    if (archives)
      archives[k] = {item.d_archive, h.archive_size, h.table_checksum, h.block_param, ds.g, ds.rp, h.step, dc, tables,
                     longs, v, flags, agg, incl, item.d_out, item.d_status};
  }
  return cv.used;
}

template <class T>
void decompress_slice(const codecs::DeviceDecodeItem* items, const std::vector<size_t>& members, uint8_t* ws,
                      cudaStream_t s) {
  const size_t n = members.size();
  std::vector<BatchArchive> host(n);
  BatchArchive* table = nullptr;
  decode_slice_layout(items, members, ws, host.data(), &table);
  uint64_t max_chunks = 0, max_seq = 0, max_segments = 0;
  uint32_t max_per_chunk = 1;
  size_t recon_smem = 0;
  for (const BatchArchive& a : host) {
    max_chunks = std::max<uint64_t>(max_chunks, a.g.n_chunks);
    max_per_chunk = std::max<uint32_t>(max_per_chunk, uint32_t(std::min<uint64_t>(64, div_ceil(a.g.full.count(), 16 * 256))));
    const uint64_t max_bits = uint64_t(a.g.full.count()) * huffman::kMaxLen;
    max_seq = std::max<uint64_t>(max_seq, div_ceil(div_ceil(max_bits, huffman::kSubBits), huffman::kSeqSubs));
    max_segments = std::max<uint64_t>(max_segments, a.rp.n_segments);
    recon_smem = std::max<size_t>(recon_smem, 4 * (size_t(a.rp.planes) * a.rp.plane() + 8));  // + the alignment padding
  }
  check(cudaMemcpyAsync(table, host.data(), sizeof(BatchArchive) * n, cudaMemcpyHostToDevice, s), "batch tables");
  const BatchArchive* archives = table;
  const unsigned z = unsigned(n), nc = unsigned(max_chunks);
  decode_reset_batch_kernel<<<unsigned(std::min<size_t>(n, 4096)), kThreads, 0, s>>>(archives, unsigned(n));
  table_check_batch_kernel<<<dim3(1, 1, z), gpu::kPassThreads, 0, s>>>(archives);
  parse_batch_kernel<T><<<dim3(nc, 1, z), kThreads, 0, s>>>(archives);
  verify_batch_kernel<<<dim3(max_per_chunk, nc, z), kThreads, 0, s>>>(archives);
  verify_done_batch_kernel<<<dim3(blocks_for(max_chunks, 64), 1, z), kThreads, 0, s>>>(archives);
  decode_batch_kernel<<<dim3(unsigned(max_seq), nc, z), huffman::kSeqSubs, 0, s>>>(archives);
  outlier_batch_kernel<<<dim3(16, nc, z), kThreads, 0, s>>>(archives);
  check(cudaGetLastError(), "batch decode");
  check(cudaFuncSetAttribute(recon_batch_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(recon_smem)),
        "batch recon smem");
  recon_batch_kernel<T><<<dim3(unsigned(max_segments), 1, z), kThreads, recon_smem, s>>>(archives);
  exception_batch_kernel<T><<<dim3(max_per_chunk, nc, z), kThreads, 0, s>>>(archives);
  check(cudaGetLastError(), "batch reconstruct");
}

}  // namespace

size_t decompress_batch_workspace(const codecs::DeviceDecodeItem* items, size_t n) {
  size_t need = 1;
  detail::for_each_dtype([&](auto tr) {
    for (const auto& members : decode_slices(items, n, tr.dtype))
      need = std::max(need, decode_slice_layout(items, members, nullptr, nullptr, nullptr));
  });
  for (size_t i = 0; i < n; ++i)
    if (!batched(items[i])) need = std::max(need, decompress_workspace(items[i].h, codecs::Slab{}, nullptr));
  return need;
}

void decompress_batch(const codecs::DeviceDecodeItem* items, size_t n, void* ws, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  detail::for_each_dtype([&](auto tr) {
    using T = typename decltype(tr)::value_type;
    for (const auto& members : decode_slices(items, n, tr.dtype))
      decompress_slice<T>(items, members, static_cast<uint8_t*>(ws), s);
  });
  for (size_t i = 0; i < n; ++i)
    if (!batched(items[i]))
      decompress_device(items[i].h, codecs::Slab{}, items[i].d_archive, items[i].d_out, items[i].d_status, ws, stream,
                        nullptr);
}

}  // namespace hpcz::ratio
