#include <cstring>
#include "common.hpp"
using testutil::Field;
TEST(dbg_interp_api) {
  for (const Field& f : testutil::real_fields()) {
    for (double b : {1e-3}) {
      hpcz::Options o; o.bound = b; o.codec = hpcz::Codec::interp; o.backend = hpcz::Backend::cpu;
      auto ac = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
      o.backend = hpcz::Backend::gpu;
      std::vector<uint8_t> ag;
      try { ag = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o); } catch (const std::exception& e) { std::fprintf(stderr, "gpu compress: %s\n", e.what()); }
      size_t d = 0; while (d < ac.size() && d < ag.size() && ac[d] == ag[d]) ++d;
      std::fprintf(stderr, "%s %g sizes %zu %zu first diff %zu\n", f.name.c_str(), b, ac.size(), ag.size(), d);
      std::vector<uint8_t> x;
      try { hpcz::decompress(ac.data(), ac.size(), x, hpcz::Backend::gpu); std::fprintf(stderr, "  cpu arch on gpu ok\n"); } catch (const std::exception& e) { std::fprintf(stderr, "  cpu arch on gpu: %s\n", e.what()); }
      try { hpcz::decompress(ag.data(), ag.size(), x, hpcz::Backend::cpu); std::fprintf(stderr, "  gpu arch on cpu ok\n"); } catch (const std::exception& e) { std::fprintf(stderr, "  gpu arch on cpu: %s\n", e.what()); }
      try { hpcz::decompress(ag.data(), ag.size(), x, hpcz::Backend::gpu); std::fprintf(stderr, "  gpu arch on gpu ok\n"); } catch (const std::exception& e) { std::fprintf(stderr, "  gpu arch on gpu: %s\n", e.what()); }
    }
  }
}
