// hpcz_bench_internal: the benchmarks that reach into the library's internals, kept out of the shipped
// hpcz (built with the sources, never installed). --mode lossless: the lossless codecs' decoders and the
// second stage (lossless::encode_chunk, pipeline::second_stage_pieces); --mode codebook: the ratio
// codec's codebook builder, GPU against CPU. The other options are those `hpcz bench` took for them.
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "cli_util.hpp"

namespace hpcz::cli {
int bench_lossless_main(const std::vector<std::string>& args);
int bench_codebook_main(const std::vector<std::string>& args);
}  // namespace hpcz::cli

int main(int argc, char** argv) {
  using namespace hpcz::cli;
  const std::vector<std::string> args(argv + 1, argv + argc);
  std::string mode;
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--mode") mode = args[i + 1];
  try {
    if (mode == "lossless") return bench_lossless_main(args);
    if (mode == "codebook") return bench_codebook_main(args);
    std::fprintf(stderr, "usage: hpcz_bench_internal --mode lossless|codebook [hpcz bench's options]\n");
    return kUsage;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "hpcz_bench_internal: %s\n", e.what());
    return kUsage;
  } catch (const InputError& e) {
    std::fprintf(stderr, "hpcz_bench_internal: %s\n", e.what());
    return kBadInput;
  } catch (const hpcz::Error& e) {
    std::fprintf(stderr, "hpcz_bench_internal: %s\n", e.what());
    return e.code() == hpcz::ErrorCode::invalid_argument ? kUsage : kRuntime;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hpcz_bench_internal: %s\n", e.what());
    return kRuntime;
  }
}
