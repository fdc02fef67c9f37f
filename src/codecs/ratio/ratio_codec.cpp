// The ratio codec's CodecOps and the interpolation codec's (the same chunking and radius; its chunks
// choose their predictor: interp_chunk.hpp): chunks of whole slabs (predict::working_shape), the
// radius, and the CPU encoders and decoders (chunk.hpp).
#include <algorithm>
#include <string>

#include "codecs/codec.hpp"
#include "codecs/ratio/chunk.hpp"
#include "codecs/interp/interp_chunk.hpp"
#include "codecs/ratio/ratio_gpu.hpp"
#include "common/dtype.hpp"
#include "common/error.hpp"
#include "common/parallel.hpp"
#include "quant/bound.hpp"

namespace hpcz::ratio {
namespace {

predict::Shape shape_of(const format::HeaderFields& h) { return predict::working_shape(h.dims, h.ndims); }

void plan(format::HeaderFields& h, const Options& opt) {
  if (opt.radius < 1 || opt.radius > kMaxRadius)
    fail(ErrorCode::invalid_argument, "radius must be 1 to " + std::to_string(kMaxRadius));
  const predict::Shape s = shape_of(h);
  h.chunk_values = uint32_t(s.chunk_values());
  h.block_param = opt.radius;
  h.n_chunks = div_ceil(s.slabs, s.chunk_slabs);
}

const char* check_plan(const format::HeaderFields& h) {
  const predict::Shape s = shape_of(h);
  if (h.chunk_values != s.chunk_values()) return "chunk size";
  if (h.block_param < 1 || h.block_param > kMaxRadius) return "radius";
  if (h.n_chunks != div_ceil(s.slabs, s.chunk_slabs)) return "chunk count";
  return nullptr;
}

uint64_t chunk_bound(const format::HeaderFields& h, uint64_t c) {
  const uint64_t count = std::min<uint64_t>(h.chunk_values, h.n_values - c * h.chunk_values);
  return max_chunk_bytes(count, uint32_t(dtype_size(h.dtype)));
}

uint64_t chunk_min(const format::HeaderFields& h, uint64_t c) {
  const uint64_t count = std::min<uint64_t>(h.chunk_values, h.n_values - c * h.chunk_values);
  return min_chunk_bytes(count, 2 * h.block_param, uint32_t(dtype_size(h.dtype)));
}

uint64_t archive_bound(uint64_t n, DType dtype) {
  // Every chunk but the last holds more than kTargetChunkValues / 2 values (whole slabs of at most
  // kTargetChunkValues, or one larger slab), and no chunk exceeds its raw form (+ 1 byte: the second
  // stage's tag on a chunk it stores as is).
  const uint64_t nc = n / (predict::kTargetChunkValues / 2) + 1;
  return format::data_offset(nc) + nc * (kChunkHeaderBytes + 1) + n * dtype_size(dtype);
}

// The interpolation codec's one-core time a byte against the fast encoder's (parallel_worth's cost;
// 16 KiB f32: 400 us to encode, 73 to decode, against 32): its encoder takes threads from 21 KiB, its
// decoder from 128 KiB. The ratio codec's cost is the fast encoder's (1).
constexpr uint64_t kInterpEncodeCost = 12;
constexpr uint32_t kInterpDecodeCost = 2;

// Encodes every chunk of a slab: Lorenzo alone (the ratio codec) or the better predictor per chunk.
template <class T, bool kBest>
codecs::EncodedChunks encode_t(const T* in, const format::HeaderFields& h, uint64_t first_chunk) {
  const quant::QuantParams<T> p = quant::quant_params<T>(quant::bound_of(h));
  const predict::Shape shape = shape_of(h);
  codecs::EncodedChunks out;
  out.separate.resize(h.n_chunks);
  struct Scratch {
    EncodeScratch<T> e;
    InterpScratch<T> i;
  };
  auto one = [&](int64_t c, Scratch& s, int threads) {
    const T* chunk_in = in + uint64_t(c) * h.chunk_values;
    const predict::ChunkShape cs = predict::chunk_shape(shape, first_chunk + c);
    if (kBest) encode_best_chunk(chunk_in, cs, p, h.block_param, s.i, s.e, out.separate[c], threads);
    else encode_chunk(chunk_in, cs, p, h.block_param, s.e, out.separate[c], threads);
  };
  // Chunks are large (about 4 Mi values): with fewer chunks than threads, each is encoded by all
  // threads in turn (the same bytes) instead of one thread each. A small array: the calling thread.
  const int threads = threads_for(h.n_values * sizeof(T), kBest ? kInterpEncodeCost : 1);
  if (h.n_chunks < uint64_t(threads)) {
    Scratch s;
    for (int64_t c = 0; c < int64_t(h.n_chunks); ++c) one(c, s, threads);
  } else {
    for_each_index(int64_t(h.n_chunks), threads, 1, [] { return Scratch(); }, [&](int64_t c, Scratch& s) { one(c, s, 1); });
  }
  out.sizes.resize(h.n_chunks);
  for (uint64_t c = 0; c < h.n_chunks; ++c) out.sizes[c] = uint32_t(out.separate[c].size());
  return out;
}

codecs::EncodedChunks encode(const void* in, const format::HeaderFields& h, const codecs::Slab& slab) {
  return detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    return encode_t<T, false>(static_cast<const T*>(in), h, slab.first_chunk);
  });
}

codecs::EncodedChunks encode_best(const void* in, const format::HeaderFields& h, const codecs::Slab& slab) {
  return detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    return encode_t<T, true>(static_cast<const T*>(in), h, slab.first_chunk);
  });
}

bool decode(const format::HeaderFields& h, uint64_t c, const uint8_t* src, uint32_t size, void* out, int threads) {
  const predict::ChunkShape cs = predict::chunk_shape(shape_of(h), c);
  return detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    return decode_chunk<T>(src, size, cs, quant::quant_params<T>(quant::bound_of(h)), h.block_param, static_cast<T*>(out), threads);
  });
}

bool decode_best(const format::HeaderFields& h, uint64_t c, const uint8_t* src, uint32_t size, void* out, int threads) {
  const predict::ChunkShape cs = predict::chunk_shape(shape_of(h), c);
  return detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    return decode_best_chunk<T>(src, size, cs, quant::quant_params<T>(quant::bound_of(h)), h.block_param, static_cast<T*>(out),
                                threads);
  });
}

// A chunk's sections from its header words alone (the first 16 bytes, 24 for an interpolation chunk).
bool chunk_stages(const ArchiveInfo& info, uint64_t c, const uint8_t* head, uint32_t size, StageSizes& z) {
  const predict::Shape shape = predict::working_shape(info.dims.data(), int(info.dims.size()));
  const uint32_t vb = uint32_t(dtype_size(info.dtype)), nsym = 2 * info.block_values;
  const uint32_t count = predict::chunk_shape(shape, c).count();
  if (is_raw_chunk(head, size, count, vb)) {
    z.raw_chunks += size;
    return true;
  }
  ChunkLayout L;
  InterpChunkHead ih;
  const bool interp = info.codec == Codec::interp && size >= kChunkHeaderBytes &&
                      (load_u32_le(head + 12) & 0xff) == kKindInterp;
  if (!(interp ? parse_interp_chunk(head, size, count, info.block_values, vb, ih)
               : parse_chunk(head, size, count, nsym, vb, L)))
    return false;
  if (interp) L = ih.L;
  z.codebook += L.seq_first;
  z.gap_metadata += L.bits - L.seq_first;
  z.codes += L.out_idx - L.bits;
  z.outliers += L.exc_idx - L.out_idx;
  z.exceptions += L.size - L.exc_idx;
  return true;
}
constexpr uint32_t kStageHeadBytes = kChunkHeaderBytes + kInterpExtraBytes;

}  // namespace

#if !HPCZ_HAS_CUDA
std::vector<uint8_t> gpu_build_books(const std::vector<uint32_t>&, uint32_t, double*, int) {
  fail(ErrorCode::backend_unavailable, "this hpcz was built without CUDA");
}
#endif

extern const codecs::CodecOps kCodec;
#if HPCZ_HAS_CUDA
extern const codecs::DeviceOps kDevice;  // ratio_gpu.cu
#endif
const codecs::CodecOps kCodec = {
    Codec::ratio, "ratio", kCodecParams, plan, check_plan, chunk_bound, chunk_min, archive_bound, encode, decode,
    /*large_chunks=*/true, /*decode_cost=*/1, chunk_stages, kStageHeadBytes,
#if HPCZ_HAS_CUDA
    &kDevice,
#else
    nullptr,
#endif
};

// The interpolation codec: the same device entry points (they read the codec from the header).
extern const codecs::CodecOps kInterpCodec;
const codecs::CodecOps kInterpCodec = {
    Codec::interp, "interp", kInterpCodecParams, plan, check_plan, chunk_bound, chunk_min, archive_bound, encode_best, decode_best,
    /*large_chunks=*/true, /*decode_cost=*/kInterpDecodeCost, chunk_stages, kStageHeadBytes,
#if HPCZ_HAS_CUDA
    &kDevice,
#else
    nullptr,
#endif
};

}  // namespace hpcz::ratio
