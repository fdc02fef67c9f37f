// The header fields the fast codec derives from the data's range, in one place: the CPU backend, the
// encode kernel and the seal kernel all call settle_range, so they cannot drift apart.
#pragma once
#include "codecs/fast/block.hpp"
#include "format/header.hpp"

namespace hpcz::fast {

// From the range keys (key_min > key_max: no finite, non-fill value): the range-valid flag, the range,
// the absolute bound and the quantization step.
HPCZ_HD void settle_range(format::HeaderFields& h, uint64_t key_min, uint64_t key_max) {
  const bool valid = key_min <= key_max;
  if (valid) h.flags |= format::kFlagRangeValid;
  h.range_min = valid ? range_value(key_min) : 0.0;
  h.range_max = valid ? range_value(key_max) : 0.0;
  h.eb_abs = absolute_bound(h.mode, h.bound, valid, h.range_min, h.range_max);
  h.step = h.dtype == 1 ? choose_step<float>(h.eb_abs, valid, h.range_min, h.range_max)
                        : choose_step<double>(h.eb_abs, valid, h.range_min, h.range_max);
}

template <class T> HPCZ_HD QuantParams<T> encoder_params(const format::HeaderFields& h) {
  return make_params<T>(h.eb_abs, h.step, h.flags & format::kFlagFill, h.fill);
}

}  // namespace hpcz::fast
