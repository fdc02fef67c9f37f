// libFuzzer target for the archive reader: hpcz::inspect, hpcz::stage_sizes (what `hpcz info`
// prints) and hpcz::decompress on the CPU, over arbitrary bytes. The fuzz build accepts any stored
// checksum (format/checksum.hpp, FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION), so mutations reach the
// header and table validation, both codecs' chunk decoders and the second stage.
// A damaged archive must end in hpcz::Error; any other exception, a sanitizer report, a crash, a
// timeout or an allocation beyond the RSS or malloc limit (fuzz/run.sh: 512 MB) is a finding.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hpcz/hpcz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)hpcz::inspect(data, size);
    (void)hpcz::stage_sizes(data, size);
  } catch (const hpcz::Error&) {
  }
  try {  // a genuine archive of a constant field may expand 65,000 times: capped, as untrusted input should be
    std::vector<uint8_t> out;
    hpcz::DecodeLimits limits;
    limits.max_output = uint64_t(64) << 20;
    (void)hpcz::decompress(data, size, out, hpcz::Backend::cpu, limits);
  } catch (const hpcz::Error&) {
  }
  return 0;
}
