// CPU backend (OpenMP over chunks). Writes the same bytes as the CUDA backend: both call the shared
// per-block functions and the same header writer.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>

#include <omp.h>

#include "codecs/fast/chunk.hpp"
#include "quant/range.hpp"
#include "codecs/ratio/chunk.hpp"
#include "pipeline/internal.hpp"

namespace hpcz::pipeline {
namespace {

// Lays out header, table and chunks (both codecs): chunk c is sizes[c] bytes at bytes(c).
template <class Bytes>
std::vector<uint8_t> assemble(format::HeaderFields& h, const std::vector<uint32_t>& sizes, Bytes&& bytes) {
  const uint64_t nc = sizes.size();
  std::vector<uint64_t> offsets(nc);
  uint64_t total = format::data_offset(nc);
  for (uint64_t c = 0; c < nc; ++c) {
    offsets[c] = total;
    total += sizes[c];
  }
  std::vector<uint8_t> out(total);
  uint8_t* table = out.data() + format::kHeaderBytes;
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t c = 0; c < int64_t(nc); ++c) {
    const uint8_t* src = bytes(c);
    std::memcpy(out.data() + offsets[c], src, sizes[c]);
    format::write_chunk_entry(table + 16 * c, offsets[c], sizes[c], format::checksum(src, sizes[c]));
  }
  h.archive_size = total;
  h.table_checksum = format::checksum(table, nc * format::kChunkEntryBytes);
  format::write_header(out.data(), h);
  return out;
}

template <class T>
std::vector<uint8_t> compress_ratio_cpu(const T* in, format::HeaderFields& h, const quant::QuantParams<T>& p) {
  const predict::Shape shape = predict::working_shape(h.dims, h.ndims);
  std::vector<std::vector<uint8_t>> chunks(h.n_chunks);
  // Chunks are large (about 4 Mi values): with fewer chunks than threads, each is encoded by all
  // threads in turn (the same bytes) instead of one thread each.
  const int threads = omp_get_max_threads();
  if (h.n_chunks < uint64_t(threads)) {
    ratio::EncodeScratch<T> scratch;
    for (int64_t c = 0; c < int64_t(h.n_chunks); ++c)
      ratio::encode_chunk(in + uint64_t(c) * h.chunk_values, predict::chunk_shape(shape, c), p, h.block_values,
                          scratch, chunks[c], threads);
  } else {
#pragma omp parallel
    {
      ratio::EncodeScratch<T> scratch;
#pragma omp for schedule(dynamic, 1)
      for (int64_t c = 0; c < int64_t(h.n_chunks); ++c)
        ratio::encode_chunk(in + uint64_t(c) * h.chunk_values, predict::chunk_shape(shape, c), p, h.block_values,
                            scratch, chunks[c]);
    }
  }
  std::vector<uint32_t> sizes(h.n_chunks);
  for (uint64_t c = 0; c < h.n_chunks; ++c) sizes[c] = uint32_t(chunks[c].size());
  return assemble(h, sizes, [&](int64_t c) { return chunks[c].data(); });
}

template <class T>
std::vector<uint8_t> compress_cpu_t(const T* in, format::HeaderFields h) {
  const uint64_t n = h.n_values;
  const bool has_fill = h.flags & format::kFlagFill;
  const T fill = T(h.fill);
  using K = typename detail::Bits<T>::type;  // keys in the value's own width, widened once (as on the GPU)
  K nmin = ~K(0), nmax = 0;
#pragma omp parallel for reduction(min : nmin) reduction(max : nmax) schedule(static)
  for (int64_t i = 0; i < int64_t(n); ++i) {
    if (quant::in_range_set(in[i], has_fill, fill)) {
      const K k = quant::narrow_key(in[i]);
      nmin = std::min(nmin, k);
      nmax = std::max(nmax, k);
    }
  }
  const bool any = nmin <= nmax;
  const uint64_t kmin = any ? quant::range_key(double(quant::narrow_value<T>(nmin))) : ~uint64_t(0);
  const uint64_t kmax = any ? quant::range_key(double(quant::narrow_value<T>(nmax))) : 0;
  quant::settle_range(h, kmin, kmax);
  const quant::QuantParams<T> p = quant::encoder_params<T>(h);
  if (h.codec == uint8_t(Codec::ratio)) return compress_ratio_cpu(in, h, p);

  const uint64_t cv = fast::chunk_values<T>(), nc = h.n_chunks;
  const uint64_t slot = fast::max_chunk_bytes(cv, sizeof(T));
  // Uninitialized: a chunk touches only the bytes it writes (a zeroed vector the size of the input
  // cost a memset and a page fault per page).
  std::unique_ptr<uint8_t[]> scratch(new uint8_t[nc * slot]);
  std::vector<uint32_t> sizes(nc);
#pragma omp parallel
  {
    std::vector<uint8_t> exc;
#pragma omp for schedule(dynamic, 4)
    for (int64_t c = 0; c < int64_t(nc); ++c) {
      uint32_t count = uint32_t(std::min<uint64_t>(cv, n - c * cv));
      sizes[c] = fast::encode_chunk(in + c * cv, count, p, scratch.get() + c * slot, exc);
    }
  }
  return assemble(h, sizes, [&](int64_t c) { return scratch.get() + c * slot; });
}

template <class T>
void decompress_cpu_t(const uint8_t* a, const ArchiveInfo& info, T* out) {
  const quant::QuantParams<T> p = quant::make_params<T>(info.eb_abs, info.step, info.fill.has_value(),
                                                     info.fill.value_or(0.0));
  const uint64_t cv = info.chunk_values, nc = info.n_chunks;
  const predict::Shape shape = predict::working_shape(info.dims.data(), int(info.dims.size()));
  std::atomic<int64_t> bad_chunk{-1};
  std::atomic<int> bad_kind{0};
  auto decode = [&](int64_t c, int threads) {
    const ChunkEntry& e = info.chunks[c];
    uint32_t count = uint32_t(std::min<uint64_t>(cv, info.n_values - c * cv));
    int kind = 0;
    if (!format::checksum_matches(format::checksum(a + e.offset, e.size), e.checksum)) kind = 1;
    else if (info.codec == Codec::ratio) {
      if (!ratio::decode_chunk<T>(a + e.offset, e.size, predict::chunk_shape(shape, c), p, info.block_values,
                                  out + c * cv, threads))
        kind = 2;
    } else if (!fast::decode_chunk<T>(a + e.offset, e.size, count, p, out + c * cv)) kind = 2;
    if (kind) {
      int64_t expected = -1;
      if (bad_chunk.compare_exchange_strong(expected, c)) bad_kind = kind;
    }
  };
  // Ratio-mode chunks are large (about 4 Mi values): with fewer chunks than threads, each chunk is
  // decoded by all threads in turn instead of one thread each.
  const int threads = omp_get_max_threads();
  if (info.codec == Codec::ratio && nc < uint64_t(threads)) {
    for (int64_t c = 0; c < int64_t(nc); ++c) decode(c, threads);
  } else {
#pragma omp parallel for schedule(dynamic, 4)
    for (int64_t c = 0; c < int64_t(nc); ++c) decode(c, 1);
  }
  if (bad_chunk >= 0)
    fail(ErrorCode::corrupt_archive, "corrupt archive: chunk " + std::to_string(bad_chunk.load()) +
                                         (bad_kind == 1 ? ": checksum mismatch" : ": malformed block data"));
}

}  // namespace

std::vector<uint8_t> compress_cpu(const void* in, format::HeaderFields h) {
  if (h.dtype == 2) return compress_cpu_t(static_cast<const double*>(in), h);
  return compress_cpu_t(static_cast<const float*>(in), h);
}

void decompress_cpu(const uint8_t* archive, const ArchiveInfo& info, void* out) {
  if (info.dtype == DType::f64) decompress_cpu_t(archive, info, static_cast<double*>(out));
  else decompress_cpu_t(archive, info, static_cast<float*>(out));
}

}  // namespace hpcz::pipeline
