// Host batches by item size, the library alone (no Python): a field tiled to SIZE MiB and cut into
// items of 1, 4, 16 and 64 MiB along its slowest axis, coded by hpcz::compress_batch and
// decompress_batch on the GPU, with the archives placed in buffers allocated and touched before the
// timing ("kept", as a caller reusing its buffers) or in new vectors each call ("new", as a caller
// that allocates: first-touch page faults included), and by one hpcz::compress call per item. GB/s of
// the array, median of REPS after a warm-up. Where the Python rows slow down with the item size, this
// says whether the library does.
//
// usage: hpcz_batch_sizes FIELD_F32 [SIZE_MIB=1024] [REPS=5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "hpcz/hpcz.hpp"

namespace {

template <class F> double median_seconds(int reps, const F& f) {
  f();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: hpcz_batch_sizes FIELD_F32 [SIZE_MIB=1024] [REPS=5]\n");
    return 1;
  }
  const size_t size = size_t(argc > 2 ? std::atoi(argv[2]) : 1024) << 20;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 5;
  std::ifstream f(argv[1], std::ios::binary);
  std::vector<char> field((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (field.empty()) {
    std::fprintf(stderr, "hpcz_batch_sizes: cannot read %s\n", argv[1]);
    return 1;
  }
  std::vector<float> a(size / 4);
  for (size_t at = 0; at < size; at += field.size())
    std::memcpy(reinterpret_cast<char*>(a.data()) + at, field.data(), std::min(field.size(), size - at));
  hpcz::Options o;
  o.mode = hpcz::BoundMode::rel;
  o.bound = 1e-3;
  o.backend = hpcz::Backend::gpu;
  const double gb = double(size) / 1e9;
  std::printf("# %s tiled to %zu MiB, fast rel 1e-3, GPU %s, median of %d\n", argv[1], size >> 20,
              hpcz::gpu_name().c_str(), reps);
  for (size_t mib : {1, 4, 16, 64}) {
    const uint64_t per = (mib << 20) / 4;
    std::vector<hpcz::ArrayRef> items;
    for (uint64_t at = 0; at < a.size(); at += per) items.push_back({a.data() + at, hpcz::DType::f32, {std::min(per, a.size() - at)}});
    std::vector<std::vector<uint8_t>> kept(items.size());
    for (size_t i = 0; i < items.size(); ++i) kept[i].assign(hpcz::max_compressed_size(items[i].dims[0], hpcz::DType::f32), 1);
    std::vector<std::vector<uint8_t>> archives;
    const double t_kept = median_seconds(reps, [&] {
      hpcz::compress_batch(items, o, [&](size_t i, size_t) { return kept[i].data(); });
    });
    const double t_new = median_seconds(reps, [&] { hpcz::compress_batch(items, o, archives); });
    const double t_one = median_seconds(reps, [&] {
      for (const auto& it : items) hpcz::compress(it.data, it.dtype, it.dims, o);
    });
    std::vector<hpcz::ArchiveRef> in;
    for (const auto& ar : archives) in.push_back({ar.data(), ar.size()});
    std::vector<std::vector<float>> outs(items.size());
    std::vector<hpcz::OutputRef> out_refs;
    for (size_t i = 0; i < items.size(); ++i) {
      outs[i].assign(items[i].dims[0], 1.0f);
      out_refs.push_back({outs[i].data(), outs[i].size() * 4});
    }
    const double t_dec = median_seconds(reps, [&] { hpcz::decompress_batch(in, out_refs, hpcz::Backend::gpu); });
    std::printf("%3zu MiB items (%4zu): compress_batch kept %7.2f  new %7.2f  a call each %7.2f  |  decompress_batch %7.2f GB/s\n",
                mib, items.size(), gb / t_kept, gb / t_new, gb / t_one, gb / t_dec);
  }
  return 0;
}
