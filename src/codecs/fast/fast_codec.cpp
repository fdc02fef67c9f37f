// The fast codec's CodecOps: its chunk plan and bounds, and the CPU encoder and decoder (chunk.hpp)
// over 64 KiB chunks of 32-value blocks.
#include <algorithm>
#include <memory>

#include "codecs/codec.hpp"
#include "codecs/fast/chunk.hpp"
#include "common/dtype.hpp"
#include "common/error.hpp"
#include "common/parallel.hpp"
#include "quant/bound.hpp"

namespace hpcz::fast {
namespace {

uint32_t value_bytes(const format::HeaderFields& h) { return uint32_t(dtype_size(h.dtype)); }

void plan(format::HeaderFields& h, const Options&) {
  h.chunk_values = kChunkBytes / value_bytes(h);
  h.block_param = kB;
  h.n_chunks = div_ceil(h.n_values, h.chunk_values);
}

const char* check_plan(const format::HeaderFields& h) {
  if (h.chunk_values != kChunkBytes / value_bytes(h)) return "chunk size";
  if (h.block_param != uint32_t(kB)) return "block size";
  if (h.n_chunks != div_ceil(h.n_values, h.chunk_values)) return "chunk count";
  return nullptr;
}

uint32_t chunk_count(const format::HeaderFields& h, uint64_t c) {
  return uint32_t(std::min<uint64_t>(h.chunk_values, h.n_values - c * h.chunk_values));
}

uint64_t chunk_bound(const format::HeaderFields& h, uint64_t c) {
  return max_chunk_bytes(chunk_count(h, c), value_bytes(h));
}

uint64_t chunk_min(const format::HeaderFields& h, uint64_t c) { return min_chunk_bytes(chunk_count(h, c)); }

uint64_t archive_bound(uint64_t n, DType dtype) {
  const uint32_t vb = uint32_t(dtype_size(dtype));
  const uint64_t cv = kChunkBytes / vb, nc = div_ceil(n, cv), full = n / cv, rest = n % cv;
  // (+ 1 byte per chunk: the second stage's tag on a chunk it stores as is)
  return format::data_offset(nc) + full * max_chunk_bytes(cv, vb) + max_chunk_bytes(rest, vb) + nc;
}

template <class T>
codecs::EncodedChunks encode_t(const T* in, const format::HeaderFields& h) {
  const quant::QuantParams<T> p = quant::quant_params<T>(quant::bound_of(h));
  const uint64_t cv = chunk_values<T>(), nc = h.n_chunks;
  codecs::EncodedChunks out;
  out.slot = max_chunk_bytes(cv, sizeof(T));
  // Uninitialized: a chunk touches only the bytes it writes (a zeroed buffer the size of the input
  // costs a memset and a page fault per page).
  out.slab.reset(new uint8_t[nc * out.slot]);
  out.sizes.resize(nc);
  for_each_index(
      int64_t(nc), threads_for(h.n_values * sizeof(T)), 1,
      [&] { return std::unique_ptr<uint8_t[]>(new uint8_t[std::min<uint64_t>(cv, h.n_values) * sizeof(T)]); },
      [&](int64_t c, std::unique_ptr<uint8_t[]>& exc) {  // exc: uninitialized too
        out.sizes[c] = encode_chunk(in + c * cv, chunk_count(h, c), p, out.slab.get() + c * out.slot, exc.get());
      });
  return out;
}

// Chunks do not depend on where they sit in the array: a slab is coded as an array of its values.
codecs::EncodedChunks encode(const void* in, const format::HeaderFields& h, const codecs::Slab&) {
  return detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    return encode_t(static_cast<const T*>(in), h);
  });
}

bool decode(const format::HeaderFields& h, uint64_t c, const uint8_t* src, uint32_t size, void* out, int) {
  return detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    return decode_chunk<T>(src, size, chunk_count(h, c), quant::quant_params<T>(quant::bound_of(h)), static_cast<T*>(out));
  });
}

}  // namespace

extern const codecs::CodecOps kCodec;
#if HPCZ_HAS_CUDA
extern const codecs::DeviceOps kDevice;  // fast_gpu.cu
#endif
const codecs::CodecOps kCodec = {
    Codec::fast, "fast", /*codec_params=*/0, plan, check_plan, chunk_bound, chunk_min, archive_bound, encode, decode,
    /*large_chunks=*/false, /*decode_cost=*/1, /*chunk_stages=*/nullptr, /*stage_head_bytes=*/0,
#if HPCZ_HAS_CUDA
    &kDevice,
#else
    nullptr,
#endif
};

}  // namespace hpcz::fast
