// Batches (hpcz.hpp): every item checked on its own, then coded together: on the GPU in rounds on
// lanes (host_lanes.cu), on the CPU one item a thread when there are enough items (else one item at a
// time with every thread, as compress() codes it). Each item gets the bytes its one-item call writes.
#include "common/threads.hpp"

#include <cstring>
#include <mutex>
#include <string>

#include "common/storage.hpp"
#include "common/parallel.hpp"  // its fork handlers: this file has OpenMP regions
#include "pipeline/internal.hpp"

namespace hpcz {
namespace {

void set_status(ItemStatus& s, const Error& e) {
  s.code = int(e.code());
  s.message = e.what();
}

// Runs f(k) for k in [0, n): one item a thread when there are at least as many items as threads, else
// the items at once, each on a team of its share of the threads (for_each_share), whose passes take
// that share (the item's max_threads()). f catches its own errors.
template <class F>
void for_each_item(size_t n, const F& f) {
  const int threads = max_threads();
  if (n >= size_t(threads) && n > 1) {
#pragma omp parallel for schedule(dynamic, 1)
    for (long long k = 0; k < (long long)n; ++k) f(size_t(k));
    return;
  }
  for_each_share(int64_t(n), threads, [] { return 0; }, [&](int64_t k, int share, int) {
    const int saved = max_threads();
    set_max_threads(share);
    f(size_t(k));
    set_max_threads(saved);
  });
}

}  // namespace

std::vector<ItemStatus> compress_batch(const std::vector<ArrayRef>& arrays, const Options& opt, const PlaceArchive& place) {
  std::vector<ItemStatus> status(arrays.size());
  std::vector<pipeline::BatchCompressItem> items;
  items.reserve(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    try {
      const format::HeaderFields h = pipeline::header_template(arrays[i].dtype, arrays[i].dims, opt);
      if (h.n_values && !arrays[i].data) fail(ErrorCode::invalid_argument, "null input");
      if (format::has_storage_type(h)) pipeline::check_widens_exactly(arrays[i].data, arrays[i].dtype, h.n_values);
      items.push_back({i, arrays[i].data, h});
    } catch (const Error& e) {
      set_status(status[i], e);
    }
  }
  if (items.empty()) return status;
  Backend backend;
  try {
    backend = resolve_backend(opt.backend, opt.codec);
  } catch (const Error& e) {
    for (auto& it : items) set_status(status[it.index], e);
    return status;
  }
  // Storage types on the CPU: widened and coded by compress(), one at a time (delivered below, once
  // place_checked is known). The GPU widens them itself.
  std::vector<pipeline::BatchCompressItem> storage_items;
  for (auto it = items.begin(); it != items.end();) {
    if (format::has_storage_type(it->h) && backend != Backend::gpu) {
      storage_items.push_back(*it);
      it = items.erase(it);
    } else {
      ++it;
    }
  }
  std::mutex placing;
  // Checks an archive, stages it when asked, and returns where its bytes go (nullptr: the item failed,
  // or its staged form was copied here). The copy itself runs outside the lock.
  auto place_checked = [&](const pipeline::BatchCompressItem& it, const uint8_t* bytes, size_t size) -> uint8_t* {
    try {
      pipeline::check_reads_back(bytes, size);
      std::vector<uint8_t> staged;
      if (opt.second_stage) {
        staged = pipeline::add_second_stage(std::vector<uint8_t>(bytes, bytes + size));
        pipeline::check_reads_back(staged.data(), staged.size());
      }
      const size_t out_size = opt.second_stage ? staged.size() : size;
      uint8_t* dst;
      {
        std::lock_guard<std::mutex> g(placing);
        dst = place(it.index, out_size);
      }
      if (!dst) fail(ErrorCode::invalid_argument, "place() gave no buffer");
      if (!opt.second_stage) return dst;
      std::memcpy(dst, staged.data(), staged.size());
    } catch (const Error& e) {
      set_status(status[it.index], e);
    }
    return nullptr;
  };
  auto deliver = [&](const pipeline::BatchCompressItem& it, const uint8_t* bytes, size_t size) {
    if (uint8_t* dst = place_checked(it, bytes, size)) std::memcpy(dst, bytes, size);
  };
  {
    Options plain = opt;  // deliver() adds the second stage
    plain.second_stage = false;
    for (const auto& it : storage_items) {
      try {
        const std::vector<uint8_t> a = compress(it.data, arrays[it.index].dtype, arrays[it.index].dims, plain);
        deliver(it, a.data(), a.size());
      } catch (const Error& e) {
        set_status(status[it.index], e);
      }
    }
  }
  if (items.empty()) return status;
  if (backend == Backend::gpu) {
    std::vector<pipeline::BatchCompressItem> on_lanes;
    try {
      const pipeline::GpuRoom room = pipeline::current_gpu_room();
      Options plain = opt;  // deliver() adds the second stage
      plain.second_stage = false;
      for (const auto& it : items) {
        if (pipeline::gpu_one_shot_bytes(it.h, true) <= room.bytes / 2) {
          on_lanes.push_back(it);
          continue;
        }
        try {  // beyond the GPU's free memory: compress()'s streaming path, on its own
          const std::vector<uint8_t> a = compress(it.data, arrays[it.index].dtype, arrays[it.index].dims, plain);
          deliver(it, a.data(), a.size());
        } catch (const Error& e) {
          set_status(status[it.index], e);
        }
      }
    } catch (const Error& e) {
      for (auto& it : items)
        if (status[it.index].ok()) set_status(status[it.index], e);
      return status;
    }
    pipeline::compress_batch_gpu(
        on_lanes, [&](size_t k, const uint8_t* bytes, size_t size) { return place_checked(on_lanes[k], bytes, size); },
        status);
    return status;
  }
  for_each_item(items.size(), [&](size_t k) {
    try {
      const std::vector<uint8_t> a = pipeline::compress_cpu(items[k].data, items[k].h);
      deliver(items[k], a.data(), a.size());
    } catch (const Error& e) {
      set_status(status[items[k].index], e);
    }
  });
  return status;
}

std::vector<ItemStatus> compress_batch(const std::vector<ArrayRef>& arrays, const Options& opt,
                                       std::vector<std::vector<uint8_t>>& archives) {
  archives.assign(arrays.size(), {});
  return compress_batch(arrays, opt, [&](size_t i, size_t size) {
    archives[i].resize(size);
    return archives[i].data();
  });
}

std::vector<ItemStatus> decompress_batch(const std::vector<ArchiveRef>& archives, const std::vector<OutputRef>& outputs,
                                         Backend backend, std::vector<ArchiveInfo>* infos, const DecodeLimits& limits) {
  if (outputs.size() != archives.size())
    fail(ErrorCode::invalid_argument, "decompress_batch: " + std::to_string(archives.size()) + " archives and " +
                                          std::to_string(outputs.size()) + " outputs");
  std::vector<ItemStatus> status(archives.size());
  if (infos) infos->assign(archives.size(), ArchiveInfo{});
  std::vector<pipeline::BatchDecodeItem> gpu_items, cpu_items, staged_items;
  for (size_t i = 0; i < archives.size(); ++i) {
    try {
      if (!archives[i].data && archives[i].size) fail(ErrorCode::invalid_argument, "null archive");
      ArchiveInfo info = inspect(archives[i].data, archives[i].size);
      pipeline::check_limits(info, limits);
      const uint64_t need = info.n_values * dtype_size(info.dtype);
      if (need > outputs[i].capacity || (need && !outputs[i].data))
        fail(ErrorCode::invalid_argument, "output buffer of " + std::to_string(outputs[i].capacity) +
                                              " bytes; the array needs " + std::to_string(need));
      if (infos) (*infos)[i] = info;
      if (info.n_values == 0) continue;
      const Backend b = resolve_backend(backend, info.codec);
      pipeline::BatchDecodeItem it{i, archives[i].data, std::move(info), outputs[i].data};
      // Staged archives, and storage types on the CPU: decompress() of the item (the stage off, or narrowed).
      const bool whole = it.info.second_stage || (b != Backend::gpu && detail::is_storage_type(it.info.dtype));
      (whole ? staged_items : b == Backend::gpu ? gpu_items : cpu_items).push_back(std::move(it));
    } catch (const Error& e) {
      set_status(status[i], e);
    }
  }
  // The lossless stage comes off on the host first, and storage types are narrowed on the CPU: decompress() of the item.
  for (const auto& it : staged_items) {
    try {
      decompress(it.archive, archives[it.index].size, it.out, outputs[it.index].capacity, backend);
    } catch (const Error& e) {
      set_status(status[it.index], e);
    }
  }
  for_each_item(cpu_items.size(), [&](size_t k) {
    try {
      pipeline::decompress_cpu(cpu_items[k].archive, cpu_items[k].info, cpu_items[k].out);
    } catch (const Error& e) {
      set_status(status[cpu_items[k].index], e);
    }
  });
  if (!gpu_items.empty()) {
    std::vector<pipeline::BatchDecodeItem> on_lanes;
    try {
      const pipeline::GpuRoom room = pipeline::current_gpu_room();
      for (auto& it : gpu_items) {
        if (pipeline::gpu_one_shot_bytes(pipeline::header_of(it.info), false) <= room.bytes / 2) {
          on_lanes.push_back(it);
          continue;
        }
        try {  // beyond the GPU's free memory: decompress()'s streaming path
          decompress(it.archive, archives[it.index].size, it.out, outputs[it.index].capacity, Backend::gpu);
        } catch (const Error& e) {
          set_status(status[it.index], e);
        }
      }
    } catch (const Error& e) {
      for (const auto& it : gpu_items)
        if (status[it.index].ok()) set_status(status[it.index], e);
      return status;
    }
    pipeline::decompress_batch_gpu(on_lanes, status);
  }
  return status;
}

void release_cached_buffers() {
  if (gpu_available()) pipeline::release_gpu_buffers();
}

}  // namespace hpcz
