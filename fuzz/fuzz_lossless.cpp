// libFuzzer target for the lossless decoders behind hpcz::lossless_decompress. Built three times
// (fuzz/CMakeLists.txt), FUZZ_CODEC selecting the codec: 0 = ORC RLE v1, 1 = ORC RLE v2, 2 = Deflate
// (gzip, zlib or raw). For RLE the first input byte picks the element type (bits 0-1: 1, 2, 4 or 8
// bytes; bit 2: signed) and the rest is the stream; Deflate gets the whole input.
// A damaged stream must end in hpcz::Error; any other exception, a sanitizer report or a crash is a
// finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "hpcz/hpcz.hpp"

#ifndef FUZZ_CODEC
#error "define FUZZ_CODEC: 0 = rle1, 1 = rle2, 2 = deflate"
#endif

namespace {
constexpr size_t kMaxInput = 64 * 1024;  // decoders may expand ~1000x: keep outputs well below the RSS limit
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > kMaxInput) return 0;
  hpcz::LosslessOptions opt;  // default backend: this build has no CUDA, so the CPU
#if FUZZ_CODEC == 0 || FUZZ_CODEC == 1
  opt.codec = FUZZ_CODEC == 0 ? hpcz::LosslessCodec::rle1 : hpcz::LosslessCodec::rle2;
  if (size < 1) return 0;
  opt.elem_bytes = 1 << (data[0] & 3);
  opt.is_signed = (data[0] & 4) != 0;
  ++data;
  --size;
#elif FUZZ_CODEC == 2
  opt.codec = hpcz::LosslessCodec::deflate;
#else
#error "FUZZ_CODEC must be 0, 1 or 2"
#endif
  try {
    const std::vector<uint8_t> out = hpcz::lossless_decompress(data, size, opt);
#if FUZZ_CODEC != 2
    // Whole elements only. An "HZLC" container (docs/FORMAT.md, section 8) names its own element size
    // (byte 7), which wins over opt; a raw ORC stream decodes to opt.elem_bytes elements.
    const bool container = size >= 8 && std::memcmp(data, "HZLC", 4) == 0;
    const int elem = container ? int(data[7]) : opt.elem_bytes;
    if (out.size() % size_t(elem) != 0) {
      std::fprintf(stderr, "RLE output of %zu bytes is not a multiple of %d-byte elements\n", out.size(), elem);
      std::abort();
    }
#endif
  } catch (const hpcz::Error&) {
    // corrupt or truncated input: the expected outcome for most inputs
  }
  return 0;
}
