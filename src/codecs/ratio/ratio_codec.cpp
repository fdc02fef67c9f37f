// The ratio codec's CodecOps: the ratio-class chunks (codecs/ratio_class/) with Lorenzo on every chunk;
// the CPU encoder and decoder (ratio_class/chunk.hpp).
#include "codecs/codec.hpp"
#include "codecs/ratio_class/chunk.hpp"
#include "codecs/ratio_class/ops.hpp"
#include "common/dtype.hpp"
#include "quant/bound.hpp"

namespace hpcz::ratio {
namespace {

// Under pw_rel (the log2 transform): each chunk's float64 log field coded by the same chunk coder
// (pw_log_chunk.hpp).
codecs::EncodedChunks encode(const void* in, const format::HeaderFields& h, const codecs::Slab& slab) {
  const quant::Bound b = quant::bound_of(h);
  if (b.transform == quant::Transform::log2)
    return encode_pw_chunks<EncodeScratch<double>>(
        in, h, b, slab.first_chunk, 1, /*placed=*/true,
        [&](const double* y, const predict::ChunkShape& cs, const quant::QuantParams<double>& p, EncodeScratch<double>& s,
            std::vector<uint8_t>& bytes, int threads, double*) {
          encode_chunk(y, cs, p, h.block_param, s, bytes, threads);
          return false;  // its chunks are decoded for the check
        },
        [&](const uint8_t* src, uint32_t size, const predict::ChunkShape& cs, const quant::QuantParams<double>& p, double* y,
            int threads) { return decode_chunk<double>(src, size, cs, p, h.block_param, y, threads); });
  return detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    const quant::QuantParams<T> p = quant::quant_params<T>(b);
    return encode_chunks<EncodeScratch<T>>(
        static_cast<const T*>(in), h, slab.first_chunk, 1,
        [&](const T* chunk_in, const predict::ChunkShape& cs, EncodeScratch<T>& s, std::vector<uint8_t>& out,
            int threads) { encode_chunk(chunk_in, cs, p, h.block_param, s, out, threads); });
  });
}

bool decode(const format::HeaderFields& h, uint64_t c, const uint8_t* src, uint32_t size, void* out, int threads) {
  const predict::ChunkShape cs = predict::chunk_shape(shape_of(h), c);
  const quant::Bound b = quant::bound_of(h);
  if (b.transform == quant::Transform::log2)
    return decode_pw(h, b, cs, src, size, out, threads,
                     [&](const uint8_t* s, uint32_t n, const predict::ChunkShape& shape, const quant::QuantParams<double>& p,
                         double* y, int t) { return decode_chunk<double>(s, n, shape, p, h.block_param, y, t); });
  return detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    return decode_chunk<T>(src, size, cs, quant::quant_params<T>(b), h.block_param, static_cast<T*>(out), threads);
  });
}

bool stages(const ArchiveInfo& info, uint64_t c, const uint8_t* head, uint32_t size, StageSizes& z) {
  return chunk_stages(info, c, head, size, z, false);
}

}  // namespace

extern const codecs::CodecOps kCodec;
#if HPCZ_HAS_CUDA
extern const codecs::DeviceOps kDevice;  // ratio_gpu.cu
#endif
const codecs::CodecOps kCodec = {
    Codec::ratio, "ratio", kCodecParams, plan, check_plan, chunk_bound, chunk_min, archive_bound, encode, decode,
    /*large_chunks=*/true, /*decode_cost=*/1, stages, kStageHeadBytes,
#if HPCZ_HAS_CUDA
    &kDevice,
#else
    nullptr,
#endif
};

}  // namespace hpcz::ratio
