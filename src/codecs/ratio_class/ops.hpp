// The CodecOps operations the ratio-class codecs (ratio, interp) share (ratio_class.cpp): chunks of
// whole slabs (predict::working_shape), the radius, the chunk bounds and stage sizes; and the CPU
// encoders' loop over a slab's chunks. Each codec adds its own chunk encoder and decoder.
#pragma once
#include <cstdint>
#include <vector>

#include "codecs/codec.hpp"
#include "codecs/ratio_class/chunk.hpp"
#include "common/parallel.hpp"

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
// threads) codes a chunk into out with scratch s. Chunks are large (about 4 Mi values): with
// fewer chunks than threads, each is encoded by all threads in turn (the same bytes) instead of one
// thread each. A small array: the calling thread. cost: the encoder's one-core time a byte against
// the fast encoder's (parallel_worth).
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
    Scratch s;
    for (int64_t c = 0; c < int64_t(h.n_chunks); ++c) chunk(c, s, threads);
  } else {
    for_each_index(int64_t(h.n_chunks), threads, 1, [] { return Scratch(); }, [&](int64_t c, Scratch& s) { chunk(c, s, 1); });
  }
  out.sizes.resize(h.n_chunks);
  for (uint64_t c = 0; c < h.n_chunks; ++c) out.sizes[c] = uint32_t(out.separate[c].size());
  return out;
}

}  // namespace hpcz::ratio
