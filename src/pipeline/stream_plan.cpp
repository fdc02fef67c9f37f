// Slab planning for the streaming path.
#include "pipeline/stream_plan.hpp"

#include <algorithm>
#include <string>

#include "pipeline/internal.hpp"

namespace hpcz::pipeline {
namespace {
// The slab size when the budgets allow it: about 1 ms of PCIe copy, so a lane's fixed costs (launches,
// two synchronizations) stay small, and 3 lanes x 2 buffers of it stay well under the host budget.
constexpr uint64_t kDefaultSlabBytes = uint64_t(128) << 20;
}  // namespace

Plan plan_stream(const format::HeaderFields& h, Backend backend, const StreamOptions& so, bool compress) {
  Plan p;
  const uint64_t vb = dtype_size(h.dtype), chunk_bytes = uint64_t(h.chunk_values) * vb;
  std::vector<int> devices;
  if (backend == Backend::gpu) {
    const int count = gpu_count();
    if (so.devices.empty())
      for (int d = 0; d < count; ++d) devices.push_back(d);
    for (int d : so.devices) {
      if (d < 0 || d >= count)
        fail(ErrorCode::invalid_argument, "no GPU " + std::to_string(d) + " (" + std::to_string(count) + " visible)");
      if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
    }
    if (devices.empty()) fail_no_gpu();
  }
  int per_device = devices.empty() ? 2 : std::max(1, so.lanes_per_device);
  const uint64_t n_lanes = devices.empty() ? 2 : devices.size() * per_device;
  uint64_t target = so.slab_bytes ? so.slab_bytes : std::min<uint64_t>(kDefaultSlabBytes, so.host_memory / (2 * n_lanes));
  p.slab_chunks = std::max<uint64_t>(1, std::min<uint64_t>(target / chunk_bytes, h.n_chunks));
  auto sizes = [&](uint64_t chunks) {
    const format::HeaderFields sh = codecs::slab_header(h, 0, std::min(chunks, h.n_chunks));
    const size_t values = sh.n_values * vb, archive = max_compressed_size(sh.n_values, h.dtype);
    p.in_bytes = compress ? values : archive;
    p.out_bytes = compress ? archive : values;
    p.ws_bytes = devices.empty() ? 0 : gpu_slab_workspace(sh, compress);
    return p.in_bytes + p.out_bytes + p.ws_bytes;
  };
  if (!devices.empty()) {  // within the device budget: smaller slabs, then fewer lanes
    while (p.slab_chunks > 1 && per_device * sizes(p.slab_chunks) > so.device_memory) p.slab_chunks /= 2;
    const size_t need = sizes(p.slab_chunks);
    if (need > so.device_memory)
      fail(ErrorCode::invalid_argument, "a GPU memory budget of " + std::to_string(so.device_memory) +
                                            " bytes is below one slab's " + std::to_string(need));
    per_device = int(std::min<size_t>(per_device, so.device_memory / need));
  }
  sizes(p.slab_chunks);
  p.n_slabs = h.n_chunks ? (h.n_chunks + p.slab_chunks - 1) / p.slab_chunks : 0;
  // Device by device in turn, so that a call of few slabs (lanes beyond the slabs would only hold
  // memory) still spreads them over every GPU.
  if (devices.empty()) p.lanes.assign(2, -1);
  for (int k = 0; k < per_device; ++k)
    for (int d : devices) p.lanes.push_back(d);
  if (p.lanes.size() > p.n_slabs) p.lanes.resize(p.n_slabs);
  return p;
}

}  // namespace hpcz::pipeline
