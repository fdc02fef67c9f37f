// The interp codec's CodecOps: the ratio-class chunks (codecs/ratio_class/: plan, bounds, stage sizes)
// with the predictor chosen per chunk, Lorenzo or interpolation; the CPU encoder and decoder
// (interp_chunk.hpp).
#include "codecs/codec.hpp"
#include "codecs/interp/interp_chunk.hpp"
#include "codecs/ratio_class/ops.hpp"
#include "common/dtype.hpp"
#include "quant/bound.hpp"

namespace hpcz::interp {
namespace {

using namespace hpcz::ratio;

// The encoder's one-core time a byte against the fast encoder's (parallel_worth's cost; 16 KiB f32:
// 400 us to encode, 73 to decode, against 32): its encoder takes threads from 21 KiB, its decoder from
// 128 KiB.
constexpr uint64_t kEncodeCost = 12;
constexpr uint32_t kDecodeCost = 2;

// Under pw_rel (the log2 transform): each chunk's float64 log field coded by the same chunk coder
// (pw_log_chunk.hpp).
codecs::EncodedChunks encode(const void* in, const format::HeaderFields& h, const codecs::Slab& slab) {
  const quant::Bound b = quant::bound_of(h);
  if (b.transform == quant::Transform::log2) {
    struct Scratch {
      EncodeScratch<double> e;
      InterpScratch<double> i;
    };
    return encode_pw_chunks<Scratch>(
        in, h, b, slab.first_chunk, kEncodeCost, /*placed=*/false,
        [&](const double* y, const predict::ChunkShape& cs, const quant::QuantParams<double>& p, Scratch& s,
            std::vector<uint8_t>& bytes, int threads, double* yr) {
          s.i.keep_recon = true;
          encode_best_chunk(y, cs, p, h.block_param, s.i, s.e, bytes, threads);
          return interp_reconstruction(y, cs.count(), bytes, s.i, yr, threads);
        },
        [&](const uint8_t* src, uint32_t size, const predict::ChunkShape& cs, const quant::QuantParams<double>& p, double* y,
            int threads) { return decode_best_chunk<double>(src, size, cs, p, h.block_param, y, threads); });
  }
  return detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    struct Scratch {
      EncodeScratch<T> e;
      InterpScratch<T> i;
    };
    const quant::QuantParams<T> p = quant::quant_params<T>(b);
    return encode_chunks<Scratch>(
        static_cast<const T*>(in), h, slab.first_chunk, kEncodeCost,
        [&](const T* chunk_in, const predict::ChunkShape& cs, Scratch& s, std::vector<uint8_t>& out, int threads) {
          encode_best_chunk(chunk_in, cs, p, h.block_param, s.i, s.e, out, threads);
        });
  });
}

bool decode(const format::HeaderFields& h, uint64_t c, const uint8_t* src, uint32_t size, void* out, int threads) {
  const predict::ChunkShape cs = predict::chunk_shape(shape_of(h), c);
  const quant::Bound b = quant::bound_of(h);
  if (b.transform == quant::Transform::log2)
    return decode_pw(h, b, cs, src, size, out, threads,
                     [&](const uint8_t* s, uint32_t n, const predict::ChunkShape& shape, const quant::QuantParams<double>& p,
                         double* y, int t) { return decode_best_chunk<double>(s, n, shape, p, h.block_param, y, t); });
  return detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    return decode_best_chunk<T>(src, size, cs, quant::quant_params<T>(b), h.block_param, static_cast<T*>(out), threads);
  });
}

bool stages(const ArchiveInfo& info, uint64_t c, const uint8_t* head, uint32_t size, StageSizes& z) {
  return chunk_stages(info, c, head, size, z, true);
}

}  // namespace

extern const codecs::CodecOps kCodec;
#if HPCZ_HAS_CUDA
extern const codecs::DeviceOps kDevice;  // interp_gpu.cu
#endif
const codecs::CodecOps kCodec = {
    Codec::interp, "interp", kInterpCodecParams, plan, check_plan, chunk_bound, chunk_min, archive_bound, encode, decode,
    /*large_chunks=*/true, /*decode_cost=*/kDecodeCost, stages, kStageHeadBytes,
#if HPCZ_HAS_CUDA
    &kDevice,
#else
    nullptr,
#endif
};

}  // namespace hpcz::interp
