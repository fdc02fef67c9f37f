// The CodecOps operations the ratio-class codecs (ratio, interp) share (ratio_class.cpp): chunks of
// whole slabs (predict::working_shape), the radius, the chunk bounds and stage sizes; and the CPU
// encoders' loop over a slab's chunks. Each codec adds its own chunk encoder and decoder.
#pragma once
#include <cstdint>
#include <vector>

#include "codecs/codec.hpp"
#include "codecs/ratio_class/chunk.hpp"
#include "codecs/ratio_class/pw_log_chunk.hpp"
#include "common/dtype.hpp"
#include "common/parallel.hpp"
#include "quant/bound.hpp"

namespace hpcz::ratio {

inline predict::Shape shape_of(const format::HeaderFields& h) { return predict::working_shape(h.dims, h.ndims); }

void plan(format::HeaderFields& h, const Options& opt);
const char* check_plan(const format::HeaderFields& h);
uint64_t chunk_bound(const format::HeaderFields& h, uint64_t c);
uint64_t chunk_min(const format::HeaderFields& h, uint64_t c);
uint64_t archive_bound(uint64_t n, DType dtype);

// A chunk's sections from its header words alone (the first 16 bytes, 24 for an interpolation chunk,
// which only a codec that writes them accepts: interp_kinds; 16 more under pw_rel's log chunks, whose
// side sections count as exceptions).
bool chunk_stages(const ArchiveInfo& info, uint64_t c, const uint8_t* head, uint32_t size, StageSizes& z,
                  bool interp_kinds);
constexpr uint32_t kStageHeadBytes = 2 * kChunkHeaderBytes + kInterpExtraBytes;

// Encodes every chunk of a slab (h its slab header, in its first value): one(chunk_in, shape, s, out,
// threads) codes a chunk into out with scratch s. Chunks are large (about 4 Mi values): with fewer
// chunks than threads, the chunks are encoded at once, each by its share of the threads
// (for_each_share; the same bytes), instead of one thread each. A small array: the calling thread.
// cost: the encoder's one-core time a byte against the fast encoder's (parallel_worth).
template <class Scratch, class T, class One>
codecs::EncodedChunks encode_chunks(const T* in, const format::HeaderFields& h, uint64_t first_chunk, uint64_t cost,
                                    One&& one) {
  const predict::Shape shape = shape_of(h);
  codecs::EncodedChunks out;
  out.separate.resize(h.n_chunks);
  auto chunk = [&](int64_t c, Scratch& s, int threads) {
    one(in + uint64_t(c) * h.chunk_values, predict::chunk_shape(shape, first_chunk + c), s, out.separate[c], threads);
  };
  const int threads = threads_for(h.n_values * sizeof(T), cost);
  if (h.n_chunks < uint64_t(threads)) {
    for_each_share(int64_t(h.n_chunks), threads, [] { return Scratch(); },
                   [&](int64_t c, int share, Scratch& s) { chunk(c, s, share); });
  } else {
    for_each_index(int64_t(h.n_chunks), threads, 1, [] { return Scratch(); }, [&](int64_t c, Scratch& s) { chunk(c, s, 1); });
  }
  out.sizes.resize(h.n_chunks);
  for (uint64_t c = 0; c < h.n_chunks; ++c) out.sizes[c] = uint32_t(out.separate[c].size());
  return out;
}

// Under pw_rel's log2 transform (b.transform, pw_log_chunk.hpp): every chunk of a slab as a log chunk
// around the codec's own chunk coder on the float64 logs: inner_encode(y, shape, p, scratch, bytes,
// threads) and inner_decode(src, size, shape, p, y, threads), with Scratch its float64 scratch.
template <class Scratch, class InnerEncode, class InnerDecode>
codecs::EncodedChunks encode_pw_chunks(const void* in, const format::HeaderFields& h, const quant::Bound& b,
                                       uint64_t first_chunk, uint64_t cost, bool placed, InnerEncode&& inner_encode,
                                       InnerDecode&& inner_decode) {
  const quant::QuantParams<double> p = quant::quant_params<double>(b);
  const PwParams w{quant::pw_code_factor(h.storage, h.bound), b.has_fill, h.fill};
  struct Both {
    Scratch inner;
    PwScratch pw;
  };
  return detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    return encode_chunks<Both>(
        static_cast<const T*>(in), h, first_chunk, cost,
        [&](const T* chunk_in, const predict::ChunkShape& cs, Both& s, std::vector<uint8_t>& out, int threads) {
          encode_pw_chunk(
              chunk_in, cs.count(), w, placed, s.pw, out, threads,
              [&](const double* y, std::vector<uint8_t>& bytes, double* yr) {
                return inner_encode(y, cs, p, s.inner, bytes, threads, yr);
              },
              [&](const uint8_t* src, uint32_t size, double* y) { return inner_decode(src, size, cs, p, y, threads); });
        });
  });
}

// Chunk c of a log-transform archive (pw_log_chunk.hpp) into out, with the codec's chunk decoder.
template <class InnerDecode>
bool decode_pw(const format::HeaderFields& h, const quant::Bound& b, const predict::ChunkShape& cs, const uint8_t* src,
               uint32_t size, void* out, int threads, InnerDecode&& inner_decode) {
  const quant::QuantParams<double> p = quant::quant_params<double>(b);
  return detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    return decode_pw_chunk<T>(src, size, cs.count(), static_cast<T*>(out), threads,
                              [&](const uint8_t* s, uint32_t n, double* y) { return inner_decode(s, n, cs, p, y, threads); });
  });
}

}  // namespace hpcz::ratio
