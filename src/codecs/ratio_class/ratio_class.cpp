// The CodecOps operations the ratio-class codecs share (ops.hpp).
#include <algorithm>
#include <string>

#include "codecs/ratio_class/engine_gpu.hpp"
#include "codecs/ratio_class/ops.hpp"
#include "codecs/ratio_class/pw_log_chunk.hpp"
#include "common/dtype.hpp"
#include "common/error.hpp"

namespace hpcz::ratio {

void plan(format::HeaderFields& h, const Options& opt) {
  if (opt.radius < 1 || opt.radius > kMaxRadius)
    fail(ErrorCode::invalid_argument, "radius must be 1 to " + std::to_string(kMaxRadius));
  const predict::Shape s = shape_of(h);
  h.chunk_values = uint32_t(s.chunk_values());
  // pw_rel's log field spreads wider residuals than a field's values do: the widest radius unless asked.
  h.block_param = opt.mode == BoundMode::pw_rel && opt.radius == kDefaultRadius ? kPwRelRadius : opt.radius;
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

bool chunk_stages(const ArchiveInfo& info, uint64_t c, const uint8_t* head, uint32_t size, StageSizes& z,
                  bool interp_kinds) {
  const predict::Shape shape = predict::working_shape(info.dims.data(), int(info.dims.size()));
  uint32_t vb = uint32_t(dtype_size(info.dtype));
  const uint32_t nsym = 2 * info.block_values;
  const uint32_t count = predict::chunk_shape(shape, c).count();
  if (is_raw_chunk(head, size, count, vb)) {
    z.raw_chunks += size;
    return true;
  }
  if (info.mode == BoundMode::pw_rel) {  // a log chunk (pw_log_chunk.hpp): its side sections as exceptions
    uint32_t inner, specials, signs;
    bool placed;
    if (!parse_pw_head(head, size, inner, specials, signs, placed)) return false;
    z.exceptions += size - inner;
    head += kChunkHeaderBytes, size = inner, vb = sizeof(double);
  }
  ChunkLayout L;
  InterpChunkHead ih;
  const bool interp = interp_kinds && size >= kChunkHeaderBytes && (load_u32_le(head + 12) & 0xff) == kKindInterp;
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

#if !HPCZ_HAS_CUDA
std::vector<uint8_t> gpu_build_books(const std::vector<uint32_t>&, uint32_t, double*, int) {
  fail(ErrorCode::backend_unavailable, "this hpcz was built without CUDA");
}
#endif

}  // namespace hpcz::ratio
