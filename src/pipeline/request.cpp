// What every call checks of its request before any work: the compression request, which becomes the
// header template, and a decoding call's limits. Below the calls and the backends, which all use it.
#include <cmath>
#include <string>

#include "common/storage.hpp"
#include "pipeline/internal.hpp"
#include "quant/bound.hpp"

namespace hpcz::pipeline {

format::HeaderFields header_template(DType dtype, const std::vector<uint64_t>& dims, const Options& opt) {
  // The fill value must be a value of the array's type; an unknown dtype is refused by its number.
  const bool fill_exact = detail::dispatch_storage(dtype, [&](auto tr) {
    using Tr = decltype(tr);
    using C = typename Tr::code_type;
    if (!opt.fill || !std::isfinite(*opt.fill)) return true;
    const double f = *opt.fill;
    if constexpr (Tr::is_integer) return Tr::holds(f);
    else return double(C(f)) == f && double(Tr::widen(Tr::narrow(C(f)))) == f;
  });
  if (dims.empty() || dims.size() > 4) fail(ErrorCode::invalid_argument, "rank must be 1 to 4");
  if (!(opt.bound >= 0) || !std::isfinite(opt.bound))
    fail(ErrorCode::invalid_argument, "error bound must be a finite number >= 0");
  if (!quant::mode_known(opt.mode)) fail(ErrorCode::invalid_argument, "unknown bound mode " + std::to_string(int(opt.mode)));
  if (quant::mode_quality(opt.mode))
    fail(ErrorCode::invalid_argument, std::string(bound_mode_name(opt.mode)) +
                                          " targets are met over a whole array: hpcz::compress or compress_stream");
  const bool combined = quant::mode_combined(opt.mode);
  if (opt.mode == BoundMode::pw_rel) {
    if (!(opt.bound > 0 && opt.bound < 1))
      fail(ErrorCode::invalid_argument, "a pointwise-relative bound must be above 0 and below 1");
    if (opt.codec != Codec::fast && opt.bound < quant::kPwLogMinBound)
      fail(ErrorCode::invalid_argument, std::string("pw_rel in the ") + codec_name(opt.codec) +
                                            " mode takes bounds from 1e-06 (its log2 field's quantization range); the fast mode codes any");
  }
  if (combined && (!(opt.abs_bound >= 0) || !std::isfinite(opt.abs_bound)))
    fail(ErrorCode::invalid_argument, "absolute bound must be a finite number >= 0");
  const codecs::CodecOps& codec = codecs::get(opt.codec);
  if (opt.fill && !std::isfinite(*opt.fill)) fail(ErrorCode::invalid_argument, "fill value must be finite");
  if (!fill_exact)
    fail(ErrorCode::invalid_argument, std::string("fill value is not representable as ") + dtype_short_name(dtype));
  format::HeaderFields h{};
  h.dtype = detail::code_dtype(dtype);
  h.storage = dtype;
  h.ndims = uint8_t(dims.size());
  h.mode = opt.mode;
  h.codec = opt.codec;
  h.flags = opt.fill ? format::kFlagFill : 0;
  uint64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != 0 && n > (uint64_t(1) << 60) / dims[i]) fail(ErrorCode::invalid_argument, "array too large");
    n *= dims[i];
    h.dims[i] = dims[i];
  }
  h.n_values = n;
  h.bound = opt.bound;
  h.eb_abs = combined ? opt.abs_bound : 0.0;  // a combined mode's absolute part, until settled (quant::bound_of)
  h.fill = opt.fill ? *opt.fill : 0.0;
  h.codec_params = codec.codec_params;
  codec.plan(h, opt);
  return h;
}

void check_limits(const ArchiveInfo& info, const DecodeLimits& limits) {
  const uint64_t need = info.n_values * dtype_size(info.dtype);
  if (limits.max_output && need > limits.max_output)
    fail(ErrorCode::invalid_argument, "the archive's array is " + std::to_string(need) +
                                          " bytes, above the max_output limit of " + std::to_string(limits.max_output));
}

}  // namespace hpcz::pipeline
