// CPU backend (OpenMP over chunks): the range pass, the codec's chunks, the archive around them. Writes
// the same bytes as the CUDA backend: both settle the bound with quant::settle, the codecs share
// their per-block code with their kernels, and both write the header with format::write_header.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

#include "common/dtype.hpp"
#include "common/parallel.hpp"
#include "pipeline/internal.hpp"
#include "quant/bound.hpp"
#include "quant/range_cpu.hpp"

namespace hpcz::pipeline {

// Chunk c is chunks.sizes[c] bytes at chunks.at(c).
std::vector<uint8_t> assemble(format::HeaderFields& h, const codecs::EncodedChunks& chunks) {
  const uint64_t nc = chunks.sizes.size();
  std::vector<uint64_t> offsets(nc);
  uint64_t total = format::data_offset(nc);
  for (uint64_t c = 0; c < nc; ++c) {
    offsets[c] = total;
    total += chunks.sizes[c];
  }
  std::vector<uint8_t> out(total);
  uint8_t* table = out.data() + format::kHeaderBytes;
  const uint16_t version = format::archive_version(h.codec, h.flags & format::kFlagSecondStage, h.mode);
  for_each_index(int64_t(nc), threads_for(h.n_values * dtype_size(h.dtype)), 4, [&](int64_t c) {
    const uint8_t* src = chunks.at(c);
    std::memcpy(out.data() + offsets[c], src, chunks.sizes[c]);
    format::write_chunk_entry(table + format::kChunkEntryBytes * c, offsets[c], chunks.sizes[c],
                              format::chunk_checksum(h.codec, version, src, chunks.sizes[c]));
  });
  h.archive_size = total;
  h.table_checksum = format::checksum(table, nc * format::kChunkEntryBytes);
  format::write_header(out.data(), h);
  return out;
}

namespace {

// The bound asked for, settled from the range keys of the finite, non-fill values (as the GPU's range
// pass computes them) and the step's sample.
template <class T>
quant::Bound settled_bound(const T* in, const format::HeaderFields& h) {
  const bool has_fill = h.flags & format::kFlagFill;
  const T fill = T(h.fill);
  using K = typename detail::Bits<T>::type;  // keys in the value's own width, widened once (as on the GPU)
  K nmin = ~K(0), nmax = 0;
  constexpr int64_t piece = int64_t(1) << 16;  // values a step: a thread's share stays in order
  const int64_t pieces = (int64_t(h.n_values) + piece - 1) / piece;
  auto fold = [&](int64_t p, K& a, K& b) {  // a, b: the reduction's copies
    const int64_t first = p * piece;
    quant::fold_range_keys(in + first, uint64_t(std::min(piece, int64_t(h.n_values) - first)), has_fill, fill, a, b);
  };
  if (parallel_worth(h.n_values * sizeof(T))) {
#pragma omp parallel for reduction(min : nmin) reduction(max : nmax) schedule(static)
    for (int64_t p = 0; p < pieces; ++p) fold(p, nmin, nmax);
  } else {  // the calling thread, outside OpenMP (as for_each_index)
    for (int64_t p = 0; p < pieces; ++p) fold(p, nmin, nmax);
  }
  uint64_t kmin, kmax;
  quant::widen_keys<T>(nmin, nmax, kmin, kmax);
  // The step's sample only where an abs bound takes its step from it; an array of at most kStepSamples
  // values is all sample, and its range gives it.
  double sample_maxabs = 0.0;
  if (quant::step_from_sample(h.mode, h.bound, h.storage))
    sample_maxabs = detail::from_bits<double>(
        h.n_values <= quant::kStepSamples ? quant::step_samples_from_range<T>(nmin, nmax)
                                          : quant::fold_step_samples(in, 0, h.n_values, h.n_values, has_fill, fill, 0));
  return quant::settle_as<T>(quant::bound_of(h), kmin, kmax, sample_maxabs);
}

}  // namespace

std::vector<uint8_t> compress_cpu(const void* in, format::HeaderFields h) {
  // The bound's value transform (quant::Transform) is the codec's, chunk by chunk (pw_log_chunk.hpp):
  // the range pass and the settling see the values themselves.
  const void* values = in;
  detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    quant::store(h, settled_bound(static_cast<const T*>(values), h));
  });
  return assemble(h, codecs::get(h.codec).encode(values, h, codecs::Slab{}));
}

void decode_chunks_cpu(const uint8_t* a, const format::HeaderFields& h, const std::vector<ChunkEntry>& entries,
                       uint64_t first_chunk, void* out) {
  const codecs::CodecOps& codec = codecs::get(h.codec);
  const uint64_t chunk_bytes = uint64_t(h.chunk_values) * dtype_size(h.dtype), nc = entries.size();
  std::atomic<int64_t> bad_chunk{-1};
  std::atomic<int> bad_kind{0};
  auto decode = [&](int64_t c, int threads) {
    const ChunkEntry& e = entries[c];
    int kind = 0;
    if (!format::checksum_matches(format::chunk_checksum(h.codec, h.version, a + e.offset, e.size), e.checksum)) kind = 1;
    else if (!codec.decode_chunk(h, first_chunk + c, a + e.offset, e.size, static_cast<uint8_t*>(out) + c * chunk_bytes,
                                 threads))
      kind = 2;
    if (kind) {
      int64_t expected = -1;
      if (bad_chunk.compare_exchange_strong(expected, c)) bad_kind = kind;
    }
  };
  // Large chunks (millions of values): with fewer chunks than threads, the chunks are decoded at once,
  // each by its share of the threads, instead of one thread each. A small array: the calling thread alone.
  const int threads = threads_for(std::min(nc * h.chunk_values, h.n_values) * dtype_size(h.dtype), codec.decode_cost);
  if (codec.large_chunks && nc < uint64_t(threads)) {
    for_each_share(int64_t(nc), threads, [] { return 0; }, [&](int64_t c, int share, int) { decode(c, share); });
  } else {
    for_each_index(int64_t(nc), threads, 1, [&](int64_t c) { decode(c, 1); });
  }
  if (bad_chunk >= 0)
    fail(ErrorCode::corrupt_archive, "corrupt archive: chunk " + std::to_string(first_chunk + bad_chunk.load()) +
                                         (bad_kind == 1 ? ": checksum mismatch" : ": malformed block data"));
}

void decompress_cpu(const uint8_t* a, const ArchiveInfo& info, void* out) {
  decode_chunks_cpu(a, header_of(info), info.chunks, 0, out);
}

namespace {

// A CPU lane of the streaming path: the codec's CPU encoder and decoder over a slab. Its buffers are
// allocated when first used: a lane that fails on its first slab (an archive whose chunks are damaged)
// never takes the memory of the values its header declares.
class CpuCoder : public SlabCoder {
 public:
  CpuCoder(const format::HeaderFields& h, size_t in_bytes, size_t out_bytes)
      : h_(h), in_bytes_(in_bytes ? in_bytes : 1), out_bytes_(out_bytes ? out_bytes : 1) {}
  uint8_t* input() override {
    if (!in_) in_.reset(new uint8_t[in_bytes_]);
    return in_.get();
  }
  const uint8_t* compress(const format::HeaderFields& sh, const codecs::Slab& slab, uint64_t& size) override {
    format::HeaderFields s = sh;
    archive_ = assemble(s, codecs::get(sh.codec).encode(input(), sh, slab));
    size = archive_.size();
    return archive_.data();
  }
  const uint8_t* decompress(const format::HeaderFields& sh, const codecs::Slab& slab) override {
    std::vector<ChunkEntry> entries(sh.n_chunks);
    if (!out_) out_.reset(new uint8_t[out_bytes_]);
    for (uint64_t c = 0; c < sh.n_chunks; ++c) {
      const uint8_t* e = input() + format::kHeaderBytes + format::kChunkEntryBytes * c;
      entries[c] = {detail::load_u64_le(e), detail::load_u32_le(e + 8), detail::load_u32_le(e + 12)};
    }
    // The array's header, but the slab's version: a slab taken off the second stage is resealed at
    // today's version, with that version's chunk checksums.
    format::HeaderFields h = h_;
    h.version = sh.version;
    decode_chunks_cpu(in_.get(), h, entries, slab.first_chunk, out_.get());
    return out_.get();
  }

 private:
  format::HeaderFields h_;
  size_t in_bytes_, out_bytes_;
  std::unique_ptr<uint8_t[]> in_, out_;
  std::vector<uint8_t> archive_;
};

}  // namespace

std::unique_ptr<SlabCoder> make_cpu_coder(const format::HeaderFields& h, size_t in_bytes, size_t out_bytes) {
  return std::make_unique<CpuCoder>(h, in_bytes, out_bytes);
}

}  // namespace hpcz::pipeline
