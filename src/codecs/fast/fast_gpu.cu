// The fast codec on the GPU: workspace layouts and kernel launches (kernels.cuh). Everything runs on
// the caller's stream in the caller's workspace.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>

#include "codecs/codec.hpp"
#include <vector>

#include "codecs/fast/decode_kernels.cuh"
#include "codecs/fast/policy.hpp"
#include "common/cuda_check.hpp"
#include "common/dtype.hpp"
#include "common/error.hpp"
#include "gpu/batch_passes.cuh"
#include "gpu/device.hpp"

namespace hpcz::fast {
namespace {

using gpu::CompressState;
using cuda::kThreads;

size_t state_bytes(uint64_t n_chunks) { return (sizeof(CompressState) + 8 * n_chunks + 255) & ~size_t(255); }

// ---- the encoder's staging by device (policy.hpp) -------------------------------------------------
std::atomic<int> g_forced_staging{int(EncodeStaging::automatic)};

// Whether kernel k, FastPolicy<T>'s encoder with its round buffer (dyn bytes of dynamic shared memory),
// runs on the current device: forced, or FastPolicy's blocks an SM fit (choose_staging). The answer
// is kept per device and kernel (key: 2 x batch + fold).
template <class T, class Kernel>
bool use_round_buffer(Kernel k, uint32_t dyn, int key) {
  const int forced = g_forced_staging.load(std::memory_order_relaxed);
  if (forced != int(EncodeStaging::automatic)) return forced == int(EncodeStaging::round_buffer);
  constexpr int kCached = 64;
  static std::atomic<int> cache[kCached][4];  // 0: not asked yet, else an EncodeStaging
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) dev = -1;
  const bool cached = dev >= 0 && dev < kCached;
  if (cached)
    if (const int c = cache[dev][key].load(std::memory_order_relaxed)) return c == int(EncodeStaging::round_buffer);
  int optin = 0, per_sm = 0, reserved = 0;
  cudaFuncAttributes fa{};
  // Where the device cannot be asked, the round buffer (the launch reports what fails).
  EncodeStaging r = EncodeStaging::round_buffer;
  if (dev >= 0 && cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev) == cudaSuccess &&
      cudaFuncGetAttributes(&fa, k) == cudaSuccess)
    r = choose_staging(uint32_t(fa.sharedSizeBytes) + dyn, FastPolicy<T>::encode_min_blocks,
                       SmemLimits{uint32_t(optin), uint32_t(per_sm), uint32_t(reserved)});
  if (cached) cache[dev][key].store(int(r), std::memory_order_relaxed);
  return r == EncodeStaging::round_buffer;
}

// Launches encoder kernel k with smem bytes of dynamic shared memory, dependent on the kernel before
// it: persistent, as many blocks as fit at once (the kernel takes chunk after chunk); otherwise a
// block a chunk.
template <class... Params, class... Args>
void launch_encoder(void (*k)(Params...), uint32_t smem, bool persistent, uint64_t chunks, int sms, cudaStream_t s,
                    const char* what, Args&&... args) {
  check(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "smem attribute");
  uint64_t grid = chunks;
  if (persistent) {
    int per_sm = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, kThreads, smem), "occupancy");
    grid = std::min<uint64_t>(chunks, uint64_t(sms) * uint64_t(std::max(per_sm, 1)));
  }
  check(gpu::launch_dependent(k, unsigned(grid), kThreads, smem, s, std::forward<Args>(args)...), what);
}

template <class T>
void compress_device_t(const T* d_in, const format::HeaderFields& h, const codecs::Slab& slab, uint8_t* d_out,
                       uint64_t* d_size, void* d_ws, cudaStream_t s) {
  auto* st = static_cast<CompressState*>(d_ws);
  auto* desc = reinterpret_cast<unsigned long long*>(st + 1);
  const uint64_t nc = h.n_chunks;
  gpu::init_kernel<<<nc ? (unsigned)std::min<uint64_t>((nc + 255) / 256, 1024) : 1, 256, 0, s>>>(
      st, gpu::start_keys(h, slab.range_given, slab.sample_maxabs), desc, nc);
  check(cudaGetLastError(), "init kernel");
  const bool has_fill = h.flags & format::kFlagFill;
  if (nc) {
    constexpr uint32_t smem = cuda::encode_smem_bytes<T>();
    const int sms = gpu::sm_count();
    // A rel bound (and abs 0) needs the range before coding: a pass of its own. An abs bound takes its
    // step from a sample, and the encoder takes the range as it codes: one read of the input.
    const bool fold = !slab.range_given && quant::step_from_sample(h.mode, h.bound, h.storage);
    if (fold) {
      check(gpu::launch_dependent(gpu::sample_kernel<T>, gpu::step_samples_grid(h.n_values), gpu::kPassThreads, 0, s, d_in,
                                  h.n_values, int(has_fill), T(h.fill), st),
            "sample kernel");
    } else if (!slab.range_given) {
      unsigned grid = (unsigned)std::max<uint64_t>(1, std::min<uint64_t>((h.n_values / 4 + kThreads - 1) / kThreads, uint64_t(sms) * 16));
      gpu::range_kernel<T><<<grid, kThreads, 0, s>>>(d_in, h.n_values, has_fill, T(h.fill), st);
      check(cudaGetLastError(), "range kernel");
    }
    // The sample pass, the encoder and the seal kernel are launched dependent on the kernel before
    // them (gpu/dependent_launch.cuh): each launch overlaps that kernel's tail. (The range pass is an
    // ordinary launch.) FastPolicy's encoder, or where its round buffer does not fit the device,
    // FastPolicyNoRoundBuffer's (the same bytes).
    auto k = fold ? cuda::encode_kernel<T, true> : cuda::encode_kernel<T, false>;
    if constexpr (FastPolicy<T>::staged_rounds) {
      using P = FastPolicyNoRoundBuffer<T>;
      if (!use_round_buffer<T>(k, smem, int(fold))) {
        launch_encoder(fold ? cuda::encode_policy_kernel<T, true, P> : cuda::encode_policy_kernel<T, false, P>,
                       cuda::encode_smem_bytes<T, P>(), P::persistent, nc, sms, s, "encode kernel", d_in, h.n_values, h.n_chunks,
                       quant::bound_of(h), st, desc, d_out);
        k = nullptr;
      }
    }
    if (k) launch_encoder(k, smem, FastPolicy<T>::persistent, nc, sms, s, "encode kernel", d_in, h.n_values, h.n_chunks,
                         quant::bound_of(h), st, desc, d_out);
  }
  check(gpu::launch_dependent(gpu::seal_kernel, 1, 32, 0, s, h, st, d_out, reinterpret_cast<unsigned long long*>(d_size)),
        "seal kernel");
}

// A device batch's workspace: the chunk counter, the arrays' states, then their tables (targets, first
// chunk ids, headers: one copy from the host), then the look-back descriptors of all their chunks.
struct BatchLayout {
  size_t states, targets, firsts, headers, desc, total;
};
BatchLayout batch_layout(size_t n, uint64_t chunks) {
  auto round = [](size_t x) { return (x + 255) & ~size_t(255); };
  BatchLayout l;
  l.states = 256;
  l.targets = l.states + round(n * sizeof(CompressState));
  l.firsts = l.targets + round(n * sizeof(gpu::EncodeTarget<float>));
  l.headers = l.firsts + round((n + 1) * sizeof(unsigned long long));
  l.desc = l.headers + round(n * sizeof(format::HeaderFields));
  l.total = l.desc + round(chunks * sizeof(unsigned long long));
  return l;
}
uint64_t batch_chunks(const codecs::DeviceBatchItem* items, size_t n) {
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) total += items[i].h.n_chunks;
  // Chunk ids are taken from a 32-bit counter, each block taking one past the last.
  if (total > (1ull << 31)) fail(ErrorCode::invalid_argument, "a device batch of more than 2^31 chunks");
  return total;
}

size_t compress_batch_workspace(const codecs::DeviceBatchItem* items, size_t n) {
  return batch_layout(n, batch_chunks(items, n)).total;
}

// compress_device_t's launches, once for a batch of arrays of type T (the same options: mode, bound
// and fill are the first item's).
template <class T>
void compress_batch_t(const codecs::DeviceBatchItem* items, size_t n, void* d_ws, cudaStream_t s) {
  if (n == 0) return;
  const uint64_t total = batch_chunks(items, n);
  const BatchLayout l = batch_layout(n, total);
  auto* ws = static_cast<uint8_t*>(d_ws);
  auto* counter = reinterpret_cast<unsigned int*>(ws);
  auto* states = reinterpret_cast<CompressState*>(ws + l.states);
  auto* targets = reinterpret_cast<gpu::EncodeTarget<T>*>(ws + l.targets);
  auto* firsts = reinterpret_cast<unsigned long long*>(ws + l.firsts);
  auto* headers = reinterpret_cast<format::HeaderFields*>(ws + l.headers);
  auto* desc = reinterpret_cast<unsigned long long*>(ws + l.desc);
  std::vector<uint8_t> tables(l.desc - l.targets);
  auto* h_targets = reinterpret_cast<gpu::EncodeTarget<T>*>(tables.data());
  auto* h_firsts = reinterpret_cast<unsigned long long*>(tables.data() + (l.firsts - l.targets));
  auto* h_headers = reinterpret_cast<format::HeaderFields*>(tables.data() + (l.headers - l.targets));
  uint64_t first = 0, largest = 0;
  for (size_t i = 0; i < n; ++i) {
    const format::HeaderFields& h = items[i].h;
    h_targets[i] = {static_cast<const T*>(items[i].d_in), h.n_values, h.n_chunks, states + i, desc + first, items[i].d_out,
                    reinterpret_cast<unsigned long long*>(items[i].d_size)};
    h_firsts[i] = first;
    h_headers[i] = h;
    first += h.n_chunks;
    largest = std::max<uint64_t>(largest, h.n_values);
  }
  h_firsts[n] = first;
  check(cudaMemcpyAsync(targets, tables.data(), tables.size(), cudaMemcpyHostToDevice, s), "batch tables");
  const format::HeaderFields& h0 = items[0].h;
  const int sms = gpu::sm_count();
  const unsigned items_y = unsigned(std::min<size_t>(n, 65535));
  gpu::init_batch_kernel<<<(unsigned)std::max<uint64_t>(1, std::min<uint64_t>((std::max<uint64_t>(n, total) + 255) / 256, 1024)),
                           256, 0, s>>>(states, unsigned(n), gpu::start_keys(h0, false, 0.0), desc, total, counter);
  check(cudaGetLastError(), "batch init kernel");
  const bool has_fill = h0.flags & format::kFlagFill;
  const bool fold = quant::step_from_sample(h0.mode, h0.bound, h0.storage);
  const cuda::ArrayBatch<T> batch{targets, firsts, headers, unsigned(n), counter, total};
  if (total) {
    constexpr uint32_t smem = cuda::encode_smem_bytes<T>();
    if (fold) {
      check(gpu::launch_dependent(gpu::sample_batch_kernel<T>, dim3(gpu::step_samples_grid(largest), items_y), gpu::kPassThreads,
                                  0, s, targets, unsigned(n), int(has_fill), T(h0.fill)),
            "batch sample kernel");
    } else {
      // About as many blocks in all as one array's pass would take, at least one an array.
      const uint64_t per_array = std::max<uint64_t>(1, std::min<uint64_t>((largest / 4 + kThreads - 1) / kThreads,
                                                                          uint64_t(sms) * 16 / std::min<uint64_t>(n, 65535)));
      gpu::range_batch_kernel<T><<<dim3(unsigned(per_array), items_y), gpu::kPassThreads, 0, s>>>(targets, unsigned(n),
                                                                                             int(has_fill), T(h0.fill));
      check(cudaGetLastError(), "batch range kernel");
    }
    auto k = fold ? cuda::encode_batch_kernel<T, true> : cuda::encode_batch_kernel<T, false>;
    if constexpr (FastPolicy<T>::staged_rounds) {  // as compress_device_t
      using P = FastPolicyNoRoundBuffer<T>;
      if (!use_round_buffer<T>(k, smem, 2 + int(fold))) {
        launch_encoder(fold ? cuda::encode_policy_batch_kernel<T, true, P> : cuda::encode_policy_batch_kernel<T, false, P>,
                       cuda::encode_smem_bytes<T, P>(), P::persistent, total, sms, s, "batch encode kernel", batch);
        k = nullptr;
      }
    }
    if (k) launch_encoder(k, smem, FastPolicy<T>::persistent, total, sms, s, "batch encode kernel", batch);
  }
  check(gpu::launch_dependent(gpu::seal_batch_kernel<T>, unsigned(std::min<size_t>(n, 65535)), 32, 0, s,
                              static_cast<const format::HeaderFields*>(headers), static_cast<const gpu::EncodeTarget<T>*>(targets),
                              unsigned(n)),
        "batch seal kernel");
}

void compress_batch(const codecs::DeviceBatchItem* items, size_t n, void* d_ws, void* stream) {
  if (n == 0) return;
  detail::dispatch_dtype(items[0].h.dtype, [&](auto tr) {
    compress_batch_t<typename decltype(tr)::value_type>(items, n, d_ws, static_cast<cudaStream_t>(stream));
  });
}

// The fast mode's decoding workspace: the chunk table's checksum sum (8 bytes, summed by the first
// pass, checked by the second), then the list of chunks too large for the first pass ([0] count).
size_t fast_decode_workspace(uint64_t n_chunks) { return (8 + 4 * (n_chunks + 1) + 15) / 16 * 16; }

template <class T>
void decompress_device_t(const format::HeaderFields& h, const uint8_t* d_a, T* d_out, uint32_t* d_status, void* d_ws,
                         cudaStream_t s) {
  if (h.n_chunks == 0) {
    check(cudaMemsetAsync(d_status, 0, sizeof(uint32_t), s), "status reset");
    return;
  }
  auto* table_sum = static_cast<unsigned long long*>(d_ws);
  auto* d_large = reinterpret_cast<uint32_t*>(table_sum + 1);
  // The status, the table sum and the list's count zeroed; each kernel after it is launched dependent on
  // the one before (gpu/dependent_launch.cuh).
  cuda::decode_reset_kernel<<<1, 32, 0, s>>>(d_status, static_cast<uint32_t*>(d_ws));
  check(cudaGetLastError(), "decode reset kernel");
  // The chunk table's checksum is summed by the first pass (each block adds its own entry) and checked
  // by the second: a separate one-block kernel over the table cost about 2% of the decoding time.
  const auto p = quant::quant_params<T>(quant::bound_of(h));
  // Pass 1: every chunk, a small stage; pass 2: the chunks that did not fit, full stage, fixed grid.
  // The first pass's blocks per SM: FastPolicy's decode_min_blocks.
  // The chunk checksum by the archive's version (format::chunk_sum32).
  const bool sum32 = format::chunk_sum32(h.codec, h.version);
  constexpr int kDecodeBlocks = FastPolicy<T>::decode_min_blocks;
  auto k1 = sum32 ? cuda::decode_kernel<T, true, kDecodeBlocks> : cuda::decode_kernel<T, false, kDecodeBlocks>;
  constexpr uint32_t smem1 = cuda::kSmallStage;
  check(cudaFuncSetAttribute(k1, cudaFuncAttributeMaxDynamicSharedMemorySize, smem1), "smem attribute");
  check(gpu::launch_dependent(k1, unsigned(h.n_chunks), kThreads, smem1, s, d_a, h.archive_size, h.n_values, p, d_out,
                              d_status, d_large, table_sum),
        "decode kernel");
  auto k2 = sum32 ? cuda::decode_large_kernel<T, true> : cuda::decode_large_kernel<T, false>;
  constexpr uint32_t smem2 = cuda::decode_stage_bytes<T>();
  check(cudaFuncSetAttribute(k2, cudaFuncAttributeMaxDynamicSharedMemorySize, smem2), "smem attribute");
  const unsigned grid2 = (unsigned)std::min<uint64_t>(h.n_chunks, uint64_t(gpu::sm_count()) * 3);
  check(gpu::launch_dependent(k2, grid2, kThreads, smem2, s, d_a, h.archive_size, h.n_values, h.n_chunks, p, d_out,
                              d_status, d_large, table_sum, h.table_checksum),
        "decode kernel (large chunks)");
}

// A device batch's decoding workspace: the large chunks' list ([0] count, then batch chunk ids), then
// the archives' table sums, first chunk ids and targets (the last two one copy from the host).
struct DecodeBatchLayout {
  size_t sums, firsts, targets, total;
};
// The targets' table is sized for the largest type's (a workspace serves every set of a batch).
template <class... Ts> constexpr size_t max_decode_target_bytes(detail::DTypeList<Ts...>) {
  return std::max({sizeof(cuda::DecodeTarget<Ts>)...});
}
DecodeBatchLayout decode_batch_layout(size_t n, uint64_t chunks) {
  auto round = [](size_t x) { return (x + 255) & ~size_t(255); };
  DecodeBatchLayout l;
  l.sums = round(4 * (chunks + 1));
  l.firsts = l.sums + round(8 * n);
  l.targets = l.firsts + round(8 * (n + 1));
  l.total = l.targets + round(n * max_decode_target_bytes(detail::AllDTypes{}));
  return l;
}

// The launch sets of a decoding batch: one per dtype and chunk checksum, [2 x the dtype's index + sum32].
std::vector<std::vector<size_t>> decode_sets(const codecs::DeviceDecodeItem* items, size_t n) {
  std::vector<std::vector<size_t>> sets(2 * detail::kDTypeCount);
  for (size_t i = 0; i < n; ++i)
    sets[2 * detail::dtype_index(items[i].h.dtype) + (format::chunk_sum32(items[i].h.codec, items[i].h.version) ? 1 : 0)].push_back(i);
  return sets;
}

size_t decompress_batch_workspace(const codecs::DeviceDecodeItem* items, size_t n) {
  size_t need = 0;
  for (const auto& set : decode_sets(items, n)) {
    uint64_t chunks = 0;
    for (size_t i : set) chunks += items[i].h.n_chunks;
    if (chunks > (1ull << 31)) fail(ErrorCode::invalid_argument, "a device batch of more than 2^31 chunks");
    if (!set.empty()) need = std::max(need, decode_batch_layout(set.size(), chunks).total);
  }
  return need;
}

// decompress_device_t's launches, once for the archives `set` of a batch (of type T and checksum kind).
template <class T, bool kSum32>
void decompress_batch_t(const codecs::DeviceDecodeItem* items, const std::vector<size_t>& set, void* d_ws,
                        cudaStream_t s) {
  const size_t n = set.size();
  uint64_t total = 0;
  for (size_t i : set) total += items[i].h.n_chunks;
  const DecodeBatchLayout l = decode_batch_layout(n, total);
  auto* ws = static_cast<uint8_t*>(d_ws);
  auto* sums = reinterpret_cast<unsigned long long*>(ws + l.sums);
  auto* firsts = reinterpret_cast<unsigned long long*>(ws + l.firsts);
  auto* targets = reinterpret_cast<cuda::DecodeTarget<T>*>(ws + l.targets);
  std::vector<uint8_t> tables(l.targets - l.firsts + n * sizeof(cuda::DecodeTarget<T>));
  auto* h_firsts = reinterpret_cast<unsigned long long*>(tables.data());
  auto* h_targets = reinterpret_cast<cuda::DecodeTarget<T>*>(tables.data() + (l.targets - l.firsts));
  uint64_t first = 0;
  for (size_t k = 0; k < n; ++k) {
    const codecs::DeviceDecodeItem& it = items[set[k]];
    const format::HeaderFields& h = it.h;
    h_firsts[k] = first;
    h_targets[k] = {it.d_archive, h.archive_size, h.n_values, h.n_chunks, quant::quant_params<T>(quant::bound_of(h)),
                    static_cast<T*>(it.d_out), it.d_status, sums + k, h.table_checksum};
    first += h.n_chunks;
  }
  h_firsts[n] = first;
  check(cudaMemcpyAsync(firsts, tables.data(), tables.size(), cudaMemcpyHostToDevice, s), "batch tables");
  const cuda::ArchiveBatch<T> b{targets, firsts, unsigned(n), reinterpret_cast<uint32_t*>(ws)};
  // Each kernel after the reset is launched dependent on the one before (gpu/dependent_launch.cuh).
  cuda::decode_batch_reset_kernel<T><<<unsigned((n + 255) / 256), 256, 0, s>>>(b);
  check(cudaGetLastError(), "batch decode reset kernel");
  if (total == 0) return;
  // As decompress_device_t: pass 1 every chunk with a small stage, pass 2 the large ones.
  auto k1 = cuda::decode_batch_kernel<T, kSum32, FastPolicy<T>::decode_min_blocks>;
  check(cudaFuncSetAttribute(k1, cudaFuncAttributeMaxDynamicSharedMemorySize, cuda::kSmallStage), "smem attribute");
  check(gpu::launch_dependent(k1, unsigned(total), kThreads, cuda::kSmallStage, s, b), "batch decode kernel");
  auto k2 = cuda::decode_large_batch_kernel<T, kSum32>;
  constexpr uint32_t smem2 = cuda::decode_stage_bytes<T>();
  check(cudaFuncSetAttribute(k2, cudaFuncAttributeMaxDynamicSharedMemorySize, smem2), "smem attribute");
  const unsigned grid2 = (unsigned)std::min<uint64_t>(total, uint64_t(gpu::sm_count()) * 3);
  check(gpu::launch_dependent(k2, grid2, kThreads, smem2, s, b), "batch decode kernel (large chunks)");
}

void decompress_batch(const codecs::DeviceDecodeItem* items, size_t n, void* d_ws, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  const auto sets = decode_sets(items, n);
  // Sets run one after another in the same workspace (the stream orders them).
  detail::for_each_dtype([&](auto tr) {
    using T = typename decltype(tr)::value_type;
    const auto& unsummed = sets[2 * detail::kDTypeIndex<T>], &summed = sets[2 * detail::kDTypeIndex<T> + 1];
    if (!unsummed.empty()) decompress_batch_t<T, false>(items, unsummed, d_ws, s);
    if (!summed.empty()) decompress_batch_t<T, true>(items, summed, d_ws, s);
  });
}

// Chunks do not depend on where they sit in the array: a slab is coded as an array of its values.
size_t compress_workspace(const format::HeaderFields& h, const codecs::Slab&) { return state_bytes(h.n_chunks); }

void compress_device(const void* d_in, const format::HeaderFields& h, const codecs::Slab& slab, uint8_t* d_out,
                     uint64_t* d_size, void* d_ws, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    compress_device_t(static_cast<const T*>(d_in), h, slab, d_out, d_size, d_ws, s);
  });
}

size_t decompress_workspace(const format::HeaderFields& h, const codecs::Slab&) {
  return fast_decode_workspace(h.n_chunks);
}

void decompress_device(const format::HeaderFields& h, const codecs::Slab&, const uint8_t* d_archive, void* d_out,
                       uint32_t* d_status, void* d_ws, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  detail::dispatch_dtype(h.dtype, [&](auto tr) {
    using T = typename decltype(tr)::value_type;
    decompress_device_t(h, d_archive, static_cast<T*>(d_out), d_status, d_ws, s);
  });
}

}  // namespace

void force_encode_staging(EncodeStaging s) { g_forced_staging.store(int(s), std::memory_order_relaxed); }

extern const codecs::DeviceOps kDevice;
const codecs::DeviceOps kDevice = {compress_workspace,       compress_device, decompress_workspace,
                                   decompress_device,        compress_batch_workspace, compress_batch,
                                   decompress_batch_workspace, decompress_batch};

}  // namespace hpcz::fast
