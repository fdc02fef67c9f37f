// CUDA backend: the device API (caller's stream and workspace, no allocation, no synchronization) and
// the host convenience path built on it.
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/dtype.hpp"
#include "gpu/decode_status.hpp"
#include "gpu/device.hpp"
#include "gpu/storage_passes.cuh"
#include "pipeline/internal.hpp"
#include "quant/bound.hpp"

namespace hpcz {
namespace {

// The codec's device entry points for arrays or archives like h (every registered codec has them in a
// CUDA build).
const codecs::DeviceOps& device_of(const format::HeaderFields& h) {
  const codecs::CodecOps& codec = codecs::get(h.codec);
  if (!codec.device) fail(ErrorCode::unsupported, std::string("no GPU implementation of the ") + codec.name + " codec");
  return *codec.device;
}

template <class F> struct Defer { F f; ~Defer() { f(); } };
template <class F> Defer<F> defer(F f) { return {f}; }

// A device batch of a codec without a batched entry point codes its arrays one call each. Each call is
// a dozen or more launches of small grids, so one array after another leaves the GPU idle between
// them; lanes (streams of the library's, forked from the caller's stream and joined back to it, each
// with its own part of the workspace) let several arrays' kernels run at once.
struct BatchLanePolicy {
  static constexpr size_t max_lanes = 8;               // past 8 the host's launches are the bound
  static constexpr size_t workspace_budget = 512ull << 20;  // lanes past one only while this holds
};

struct Lanes {
  size_t count = 1;  // 1: on the caller's stream alone
  size_t each = 0;   // an array's workspace, rounded to 256 bytes
  size_t workspace() const { return count * each; }
};

Lanes lanes_for(size_t items, size_t each) {
  each = (std::max<size_t>(each, 1) + 255) & ~size_t(255);
  size_t n = std::min(items, BatchLanePolicy::max_lanes);
  while (n > 1 && n * each > BatchLanePolicy::workspace_budget) --n;
  return {std::max<size_t>(n, 1), each};
}

// The lane streams of the current device, made on first use and kept for the process (as the
// runtime's own streams are). Calls from several threads may share them: their order on each stream
// is kept, and each call joins on its own events.
cudaStream_t lane_stream(size_t lane) {
  static std::mutex m;
  static std::vector<std::array<cudaStream_t, BatchLanePolicy::max_lanes>> by_device;
  int dev = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  std::lock_guard<std::mutex> lock(m);
  if (by_device.size() <= size_t(dev)) by_device.resize(size_t(dev) + 1, {});
  cudaStream_t& s = by_device[size_t(dev)][lane];
  if (!s) check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "lane stream");
  return s;
}

// code(i, workspace, stream) for every item: item i on lane i % count, after all the caller's stream
// held when called, and all of it before anything the caller's stream gets later.
template <class F>
void run_in_lanes(const Lanes& lanes, void* d_ws, void* stream, size_t n, F code) {
  auto caller = static_cast<cudaStream_t>(stream);
  auto* ws = static_cast<uint8_t*>(d_ws);
  if (lanes.count <= 1) {
    for (size_t i = 0; i < n; ++i) code(i, d_ws, caller);
    return;
  }
  std::vector<cudaEvent_t> events(lanes.count + 1, nullptr);
  auto release = defer([&] {
    for (cudaEvent_t e : events)
      if (e) cudaEventDestroy(e);
  });
  std::array<cudaStream_t, BatchLanePolicy::max_lanes> s{};
  for (size_t l = 0; l < lanes.count; ++l) s[l] = lane_stream(l);
  for (auto& e : events) check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "lane event");
  check(cudaEventRecord(events[0], caller), "lane fork");
  for (size_t l = 0; l < lanes.count; ++l) check(cudaStreamWaitEvent(s[l], events[0], 0), "lane fork");
  for (size_t i = 0; i < n; ++i) code(i, ws + (i % lanes.count) * lanes.each, s[i % lanes.count]);
  for (size_t l = 0; l < lanes.count; ++l) {
    check(cudaEventRecord(events[l + 1], s[l]), "lane join");
    check(cudaStreamWaitEvent(caller, events[l + 1], 0), "lane join");
  }
}

}  // namespace

namespace {
// CUDA cannot be used in a child forked after CUDA was started (every call fails with
// cudaErrorInitializationError): the process that started it here, and the first call's error.
std::atomic<pid_t> cuda_pid{0};
std::atomic<int> first_error{cudaSuccess};
bool forked_after_cuda() {
  const pid_t p = cuda_pid.load();
  return p != 0 && p != getpid();
}
}  // namespace

bool gpu_available() {
  // The first call also creates the device's context (cudaFree(0)), the few hundred ms of a GPU's
  // start-up, so that a caller can pay it early or on another thread (the CLI does, while it reads).
  static const bool ok = [] {
    cuda_pid = getpid();
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaSuccess && n > 0) e = cudaFree(nullptr);
    first_error = e;
    return e == cudaSuccess && n > 0;
  }();
  // In a forked child the parent's context, streams and buffers are unusable: none of them is touched
  // (not even freed), and the automatic backend is the CPU.
  return ok && !forked_after_cuda();
}

namespace pipeline {
std::string gpu_unavailable_reason() {
  // As PyTorch says it: the cause, and the start method that works.
  if (forked_after_cuda())
    return "cannot use CUDA in a forked subprocess: CUDA was initialized in the parent process before fork(). "
           "To use the GPU with multiprocessing, use the 'spawn' (or 'forkserver') start method; "
           "device 'auto' runs on the CPU here";
  if (first_error == cudaErrorInitializationError)  // CUDA started by another library before a fork, most often
    return "CUDA initialization error (as in a subprocess forked after CUDA was initialized in its parent: to use "
           "the GPU with multiprocessing, use the 'spawn' or 'forkserver' start method)";
  return "no usable CUDA GPU";
}
void fail_no_gpu() { fail(ErrorCode::backend_unavailable, gpu_unavailable_reason()); }
}  // namespace pipeline

int gpu_count() {
  int n = 0;
  return gpu_available() && cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

std::string gpu_name() {
  if (!gpu_available()) return "";
  cudaDeviceProp p;
  int dev = 0;
  cudaGetDevice(&dev);
  if (cudaGetDeviceProperties(&p, dev) != cudaSuccess) return "";
  return p.name;
}

size_t compress_device_workspace_size(uint64_t n_values, DType dtype) {
  return compress_device_workspace_size(dtype, {n_values}, Options{});  // the fast codec's, any shape
}

size_t compress_device_workspace_size(DType dtype, const std::vector<uint64_t>& dims, const Options& opt) {
  return pipeline::device_compress_workspace(pipeline::header_template(dtype, dims, opt));
}

namespace pipeline {

// A device call's workspace: the codec's, then for a storage type's array its code values (widened
// there before coding, or decoded there and narrowed into the caller's array).
namespace {
size_t code_values_at(size_t codec_ws) { return (codec_ws + 255) & ~size_t(255); }
size_t with_code_values(const format::HeaderFields& h, size_t codec_ws) {
  return format::has_storage_type(h) ? code_values_at(codec_ws) + h.n_values * dtype_size(h.dtype) : codec_ws;
}
}  // namespace
size_t device_compress_workspace(const format::HeaderFields& h) {
  return with_code_values(h, device_of(h).compress_workspace(h, codecs::Slab{}));
}
size_t device_decompress_workspace(const format::HeaderFields& h) {
  return with_code_values(h, device_of(h).decompress_workspace(h, codecs::Slab{}));
}

namespace {
// The codec's compression of d_in (values of h's array type) on stream s: a storage type's widened
// into the workspace first.
void compress_in_workspace(const void* d_in, const format::HeaderFields& h, uint8_t* d_out, uint64_t* d_size, void* d_ws,
                           cudaStream_t s) {
  const codecs::DeviceOps& device = device_of(h);
  if (format::has_storage_type(h)) {
    void* code = static_cast<uint8_t*>(d_ws) + code_values_at(device.compress_workspace(h, codecs::Slab{}));
    gpu::widen_on_device(d_in, h.storage, h.n_values, code, gpu::sm_count(), s);
    d_in = code;
  }
  device.compress(d_in, h, codecs::Slab{}, d_out, d_size, d_ws, s);
}
// The codec's decoding into d_out (values of h's array type) on stream s: a storage type's into the
// workspace first, then narrowed.
void decompress_in_workspace(const format::HeaderFields& h, const uint8_t* d_archive, void* d_out, uint32_t* d_status,
                             void* d_ws, cudaStream_t s) {
  const codecs::DeviceOps& device = device_of(h);
  if (!format::has_storage_type(h)) return device.decompress(h, codecs::Slab{}, d_archive, d_out, d_status, d_ws, s);
  void* code = static_cast<uint8_t*>(d_ws) + code_values_at(device.decompress_workspace(h, codecs::Slab{}));
  device.decompress(h, codecs::Slab{}, d_archive, code, d_status, d_ws, s);
  gpu::narrow_on_device(code, h.storage, h.n_values, d_out, gpu::sm_count(), s);
}
}  // namespace

// int64 and uint64 values are checked (check_widens_exactly) before they are coded, which the device
// calls cannot do without a wait.
void refuse_unchecked_values(const format::HeaderFields& h) {
  if (format::is_wide_integer(h.storage))
    fail(ErrorCode::invalid_argument, std::string(dtype_name(h.storage)) +
                                          " device arrays: compress them through the host API (compress), which "
                                          "checks that float64 holds their values");
}

// The device call for a header template: argument checks, then the codec's kernels.
void compress_device_with(const void* d_in, const format::HeaderFields& h, void* d_out, size_t out_capacity,
                          uint64_t* d_size, void* d_ws, size_t ws_size, void* stream) {
  if (!gpu_available()) pipeline::fail_no_gpu();
  if (out_capacity < max_compressed_size(h.n_values, h.dtype))
    fail(ErrorCode::invalid_argument, "output capacity below max_compressed_size()");
  const size_t need = device_compress_workspace(h);
  if (ws_size < need || (need && !d_ws)) fail(ErrorCode::invalid_argument, "workspace below compress_device_workspace_size()");
  if ((reinterpret_cast<uintptr_t>(d_in) | reinterpret_cast<uintptr_t>(d_out) | reinterpret_cast<uintptr_t>(d_ws)) & 15)
    fail(ErrorCode::invalid_argument, "device buffers must be 16-byte aligned");
  compress_in_workspace(d_in, h, static_cast<uint8_t*>(d_out), d_size, d_ws, static_cast<cudaStream_t>(stream));
}

}  // namespace pipeline

void compress_device(const void* d_in, DType dtype, const std::vector<uint64_t>& dims, const Options& opt,
                     void* d_out, size_t out_capacity, uint64_t* d_size, void* d_ws, size_t ws_size, void* stream) {
  if (!gpu_available()) pipeline::fail_no_gpu();
  if (opt.second_stage)
    fail(ErrorCode::invalid_argument, "the lossless second stage runs through the host API (compress)");
  const format::HeaderFields h = pipeline::header_template(dtype, dims, opt);
  pipeline::refuse_unchecked_values(h);
  pipeline::compress_device_with(d_in, h, d_out, out_capacity, d_size, d_ws, ws_size, stream);
}

namespace {

// A device batch's arrays by dtype: in each group, those the codec's batched kernels take (one set of
// launches) and the others, coded array by array in lanes; with the header templates.
struct BatchGroup {
  std::vector<codecs::DeviceBatchItem> batched, one_by_one;
  Lanes lanes;  // the one_by_one arrays' lanes
};
struct DeviceBatchPlan {
  BatchGroup groups[detail::kDTypeCount];  // by detail::dtype_index
  size_t workspace = 0;
};
DeviceBatchPlan plan_device_batch(const std::vector<ArrayRef>& arrays, const Options& opt, void* const* d_outs,
                                  uint64_t* d_sizes) {
  if (opt.second_stage)
    fail(ErrorCode::invalid_argument, "the lossless second stage runs through the host API (compress)");
  DeviceBatchPlan plan;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const format::HeaderFields h = pipeline::header_template(arrays[i].dtype, arrays[i].dims, opt);
    pipeline::refuse_unchecked_values(h);
    BatchGroup& g = plan.groups[detail::dtype_index(h.dtype)];
    const codecs::DeviceOps& device = device_of(h);
    // A storage type's array is widened into its own workspace first: one by one.
    const bool takes = device.compress_batch && !format::has_storage_type(h) &&
                       (!device.compress_batch_takes || device.compress_batch_takes(h));
    (takes ? g.batched : g.one_by_one)
        .push_back({arrays[i].data, h, d_outs ? static_cast<uint8_t*>(d_outs[i]) : nullptr,
                    d_sizes ? d_sizes + i : nullptr});
  }
  // The groups run one after another on the stream, in the same workspace.
  for (BatchGroup& g : plan.groups) {
    if (!g.batched.empty()) {
      const codecs::DeviceOps& device = device_of(g.batched[0].h);
      plan.workspace = std::max(plan.workspace, device.compress_batch_workspace(g.batched.data(), g.batched.size()));
    }
    if (!g.one_by_one.empty()) {
      size_t each = 0;
      for (const auto& item : g.one_by_one) each = std::max(each, pipeline::device_compress_workspace(item.h));
      g.lanes = lanes_for(g.one_by_one.size(), each);
      plan.workspace = std::max(plan.workspace, g.lanes.workspace());
    }
  }
  return plan;
}

}  // namespace

size_t compress_device_batch_workspace_size(const std::vector<ArrayRef>& arrays, const Options& opt) {
  return std::max<size_t>(plan_device_batch(arrays, opt, nullptr, nullptr).workspace, 1);
}

void compress_device_batch(const std::vector<ArrayRef>& arrays, const Options& opt, void* const* d_outs,
                           const size_t* out_capacities, uint64_t* d_sizes, void* d_ws, size_t ws_size, void* stream) {
  if (!gpu_available()) pipeline::fail_no_gpu();
  if (arrays.empty()) return;
  const DeviceBatchPlan plan = plan_device_batch(arrays, opt, d_outs, d_sizes);
  if (ws_size < plan.workspace || !d_ws)
    fail(ErrorCode::invalid_argument, "workspace below compress_device_batch_workspace_size()");
  for (size_t i = 0; i < arrays.size(); ++i) {
    uint64_t n_values = 1;  // dims checked by plan_device_batch
    for (uint64_t d : arrays[i].dims) n_values *= d;
    if (out_capacities[i] < max_compressed_size(n_values, arrays[i].dtype))
      fail(ErrorCode::invalid_argument, "output capacity of array " + std::to_string(i) + " below max_compressed_size()");
    if ((reinterpret_cast<uintptr_t>(arrays[i].data) | reinterpret_cast<uintptr_t>(d_outs[i])) & 15)
      fail(ErrorCode::invalid_argument, "device buffers must be 16-byte aligned (array " + std::to_string(i) + ")");
  }
  for (const BatchGroup& g : plan.groups) {
    if (!g.batched.empty())
      device_of(g.batched[0].h).compress_batch(g.batched.data(), g.batched.size(), d_ws, stream);
    if (g.one_by_one.empty()) continue;
    const auto& rest = g.one_by_one;
    run_in_lanes(g.lanes, d_ws, stream, rest.size(), [&](size_t i, void* ws, cudaStream_t s) {
      pipeline::compress_in_workspace(rest[i].d_in, rest[i].h, rest[i].d_out, rest[i].d_size, ws, s);
    });
  }
}

size_t decompress_device_workspace_size(const ArchiveInfo& info) {
  return pipeline::device_decompress_workspace(pipeline::header_of(info));
}

void decompress_device(const ArchiveInfo& info, const void* d_archive, void* d_out, uint32_t* d_status, void* d_ws,
                       size_t ws_size, void* stream) {
  if (!gpu_available()) pipeline::fail_no_gpu();
  if (info.second_stage)
    fail(ErrorCode::unsupported, "archives with the lossless second stage decode through the host API (decompress)");
  if ((reinterpret_cast<uintptr_t>(d_archive) | reinterpret_cast<uintptr_t>(d_out)) & 15)
    fail(ErrorCode::invalid_argument, "device buffers must be 16-byte aligned");
  const format::HeaderFields h = pipeline::header_of(info);
  const size_t need = pipeline::device_decompress_workspace(h);
  if (ws_size < need || (!d_ws && (h.n_chunks || format::has_storage_type(h))) || (reinterpret_cast<uintptr_t>(d_ws) & 15))
    fail(ErrorCode::invalid_argument, "workspace below decompress_device_workspace_size()");
  pipeline::decompress_in_workspace(h, static_cast<const uint8_t*>(d_archive), d_out, d_status, d_ws,
                                    static_cast<cudaStream_t>(stream));
}

namespace {
// A warp an archive: its first kHeaderSize bytes (zeros past its end) into headers.
__global__ void gather_headers_kernel(const unsigned long long* table, size_t n, uint8_t* headers) {
  for (size_t i = blockIdx.x; i < n; i += gridDim.x) {
    const uint8_t* a = reinterpret_cast<const uint8_t*>(table[2 * i]);
    const unsigned long long size = table[2 * i + 1];
    for (unsigned b = threadIdx.x; b < kHeaderSize; b += blockDim.x) headers[i * kHeaderSize + b] = b < size ? a[b] : 0;
  }
}
size_t headers_table_bytes(size_t n) { return (16 * n + 255) & ~size_t(255); }
}  // namespace

size_t read_device_headers_workspace_size(size_t n) { return std::max<size_t>(1, headers_table_bytes(n) + n * kHeaderSize); }

void read_device_headers(const void* const* d_archives, const size_t* sizes, size_t n, uint8_t* h_headers, void* d_ws,
                         size_t ws_size, void* stream) {
  if (!gpu_available()) pipeline::fail_no_gpu();
  if (n == 0) return;
  if (!d_ws || ws_size < read_device_headers_workspace_size(n))
    fail(ErrorCode::invalid_argument, "workspace below read_device_headers_workspace_size()");
  auto s = static_cast<cudaStream_t>(stream);
  std::vector<unsigned long long> table(2 * n);
  for (size_t i = 0; i < n; ++i) {
    table[2 * i] = reinterpret_cast<uintptr_t>(d_archives[i]);
    table[2 * i + 1] = sizes[i];
  }
  auto* d_table = static_cast<unsigned long long*>(d_ws);
  auto* d_headers = static_cast<uint8_t*>(d_ws) + headers_table_bytes(n);
  check(cudaMemcpyAsync(d_table, table.data(), 16 * n, cudaMemcpyHostToDevice, s), "header table");
  gather_headers_kernel<<<unsigned(std::min<size_t>(n, 65535)), 32, 0, s>>>(d_table, n, d_headers);
  check(cudaGetLastError(), "header gather kernel");
  check(cudaMemcpyAsync(h_headers, d_headers, n * kHeaderSize, cudaMemcpyDeviceToHost, s), "headers to host");
  check(cudaStreamSynchronize(s), "headers to host");
}

// A codec with a batched decoder takes all its archives at once; others decode one after another. All
// run on the stream in one workspace, in turn.
namespace {
std::vector<std::vector<codecs::DeviceDecodeItem>> decode_groups(const std::vector<ArchiveInfo>& infos,
                                                                 const void* const* d_archives, void* const* d_outs,
                                                                 uint32_t* d_status) {
  std::vector<std::vector<codecs::DeviceDecodeItem>> groups;
  std::vector<Codec> codecs_of;
  for (size_t i = 0; i < infos.size(); ++i) {
    const ArchiveInfo& info = infos[i];
    if (info.second_stage)
      fail(ErrorCode::unsupported, "archive " + std::to_string(i) +
                                       ": archives with the lossless second stage decode through the host API (decompress)");
    const void* a = d_archives ? d_archives[i] : nullptr;
    void* o = d_outs ? d_outs[i] : nullptr;
    if ((reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(o)) & 15)
      fail(ErrorCode::invalid_argument, "device buffers must be 16-byte aligned (archive " + std::to_string(i) + ")");
    size_t g = 0;
    while (g < codecs_of.size() && codecs_of[g] != info.codec) ++g;
    if (g == codecs_of.size()) {
      codecs_of.push_back(info.codec);
      groups.emplace_back();
    }
    groups[g].push_back({pipeline::header_of(info), static_cast<const uint8_t*>(a), o, d_status ? d_status + i : nullptr});
    device_of(groups[g].back().h);  // refuses an archive no device decoder takes
  }
  return groups;
}

// A codec's archives of a batch: those its batched decoder takes, and the others (decoded in lanes).
struct DecodeSplit {
  std::vector<codecs::DeviceDecodeItem> batched, one_by_one;
  Lanes lanes;  // the one_by_one archives' lanes
};
DecodeSplit split_decode(const codecs::DeviceOps& device, const std::vector<codecs::DeviceDecodeItem>& g) {
  DecodeSplit d;
  for (const auto& item : g) {
    // A storage type's archive is decoded into its own workspace, then narrowed: one by one.
    const bool takes = device.decompress_batch && !format::has_storage_type(item.h) &&
                       (!device.decompress_batch_takes || device.decompress_batch_takes(item.h));
    (takes ? d.batched : d.one_by_one).push_back(item);
  }
  size_t each = 0;
  for (const auto& item : d.one_by_one) each = std::max(each, pipeline::device_decompress_workspace(item.h));
  d.lanes = lanes_for(d.one_by_one.size(), each);
  return d;
}

// A decoding batch's groups, split, with their workspace: one pass over the archives for both the size
// check and the run.
struct DecodePlan {
  std::vector<DecodeSplit> groups;
  size_t workspace = 1;
};
DecodePlan plan_decode(const std::vector<ArchiveInfo>& infos, const void* const* d_archives, void* const* d_outs,
                       uint32_t* d_status) {
  DecodePlan plan;
  for (const auto& g : decode_groups(infos, d_archives, d_outs, d_status)) {
    const codecs::DeviceOps& device = device_of(g[0].h);
    DecodeSplit d = split_decode(device, g);
    if (!d.batched.empty())
      plan.workspace = std::max(plan.workspace, device.decompress_batch_workspace(d.batched.data(), d.batched.size()));
    if (!d.one_by_one.empty()) plan.workspace = std::max(plan.workspace, d.lanes.workspace());
    plan.groups.push_back(std::move(d));
  }
  return plan;
}
}  // namespace

size_t decompress_device_batch_workspace_size(const std::vector<ArchiveInfo>& infos) {
  return plan_decode(infos, nullptr, nullptr, nullptr).workspace;
}

void decompress_device_batch(const std::vector<ArchiveInfo>& infos, const void* const* d_archives, void* const* d_outs,
                             uint32_t* d_status, void* d_ws, size_t ws_size, void* stream) {
  if (!gpu_available()) pipeline::fail_no_gpu();
  if (infos.empty()) return;
  const DecodePlan plan = plan_decode(infos, d_archives, d_outs, d_status);
  if (ws_size < plan.workspace || !d_ws)
    fail(ErrorCode::invalid_argument, "workspace below decompress_device_batch_workspace_size()");
  for (size_t k = 0; k < plan.groups.size(); ++k) {
    const DecodeSplit& d = plan.groups[k];
    const codecs::DeviceOps& device = device_of((d.batched.empty() ? d.one_by_one : d.batched)[0].h);
    if (!d.batched.empty()) device.decompress_batch(d.batched.data(), d.batched.size(), d_ws, stream);
    const auto& rest = d.one_by_one;
    run_in_lanes(d.lanes, d_ws, stream, rest.size(), [&](size_t i, void* ws, cudaStream_t s) {
      pipeline::decompress_in_workspace(rest[i].h, rest[i].d_archive, rest[i].d_out, rest[i].d_status, ws, s);
    });
  }
}

namespace pipeline {

// What a decoder's status word says.
std::string status_message(uint32_t status) {
  return std::string("corrupt archive:") + (status & gpu::kBadChecksum ? " chunk checksum mismatch;" : "") +
         (status & gpu::kBadChunk ? " malformed chunk or chunk table entry;" : "") +
         (status & gpu::kBadTable ? " chunk table checksum mismatch;" : "");
}
[[noreturn]] static void fail_status(uint32_t status) { fail(ErrorCode::corrupt_archive, status_message(status)); }

size_t gpu_one_shot_bytes(const format::HeaderFields& h, bool compress) {
  const size_t values = h.n_values * dtype_size(format::array_dtype(h)), archive = max_compressed_size(h.n_values, h.dtype);
  return values + archive + (compress ? device_compress_workspace(h) : device_decompress_workspace(h));
}

size_t gpu_slab_workspace(const format::HeaderFields& sh, bool compress) {
  const codecs::DeviceOps& ops = device_of(sh);
  return compress ? ops.compress_workspace(sh, codecs::Slab{0, true}) : ops.decompress_workspace(sh, codecs::Slab{});
}

namespace {

// A GPU lane of the streaming path: its own stream on one device, pinned buffers for a slab's input
// and output, and device buffers, all allocated once. Lanes on the same device overlap one another's
// copies (both copy engines) and kernels.
class GpuCoder : public SlabCoder {
 public:
  GpuCoder(int device, size_t in_bytes, size_t out_bytes, size_t ws_bytes)
      : device_(device), out_bytes_(out_bytes), ws_bytes_(ws_bytes) {
    try {
      allocate(in_bytes, out_bytes, ws_bytes);
    } catch (...) {
      release();  // the destructor does not run for a constructor that throws
      throw;
    }
  }
  ~GpuCoder() override { release(); }
  uint8_t* input() override { return h_in_; }

  const uint8_t* compress(const format::HeaderFields& sh, const codecs::Slab& slab, uint64_t& size) override {
    const codecs::DeviceOps& ops = device_of(sh);
    if (ops.compress_workspace(sh, slab) > ws_bytes_) fail(ErrorCode::internal, "internal error: slab workspace");
    check(cudaSetDevice(device_), "cudaSetDevice");
    const size_t in = sh.n_values * dtype_size(sh.dtype);
    check(cudaMemcpyAsync(d_in_, h_in_, in, cudaMemcpyHostToDevice, stream_), "slab to device");
    ops.compress(d_in_, sh, slab, static_cast<uint8_t*>(d_out_), static_cast<uint64_t*>(d_word_), d_ws_, stream_);
    check(cudaMemcpyAsync(h_word_, d_word_, 8, cudaMemcpyDeviceToHost, stream_), "slab size");
    check(cudaStreamSynchronize(stream_), "slab compress");
    size = *reinterpret_cast<const uint64_t*>(h_word_);
    // A size the kernels report is checked before it sizes a copy into the pinned buffer.
    if (size > out_bytes_) fail(ErrorCode::internal, "internal error: a slab archive beyond its bound");
    check(cudaMemcpyAsync(h_out_, d_out_, size, cudaMemcpyDeviceToHost, stream_), "slab to host");
    check(cudaStreamSynchronize(stream_), "slab to host");
    return h_out_;
  }

  const uint8_t* decompress(const format::HeaderFields& sh, const codecs::Slab& slab) override {
    const codecs::DeviceOps& ops = device_of(sh);
    if (ops.decompress_workspace(sh, slab) > ws_bytes_) fail(ErrorCode::internal, "internal error: slab workspace");
    check(cudaSetDevice(device_), "cudaSetDevice");
    check(cudaMemcpyAsync(d_in_, h_in_, sh.archive_size, cudaMemcpyHostToDevice, stream_), "slab to device");
    auto* status = static_cast<uint32_t*>(d_word_);
    ops.decompress(sh, slab, static_cast<const uint8_t*>(d_in_), d_out_, status, d_ws_, stream_);
    check(cudaMemcpyAsync(h_word_, status, 4, cudaMemcpyDeviceToHost, stream_), "slab status");
    check(cudaStreamSynchronize(stream_), "slab decompress");
    if (const uint32_t st = *reinterpret_cast<const uint32_t*>(h_word_)) fail_status(st);
    check(cudaMemcpyAsync(h_out_, d_out_, sh.n_values * dtype_size(sh.dtype), cudaMemcpyDeviceToHost, stream_),
          "slab to host");
    check(cudaStreamSynchronize(stream_), "slab to host");
    return h_out_;
  }

 private:
  void allocate(size_t in_bytes, size_t out_bytes, size_t ws_bytes) {
    check(cudaSetDevice(device_), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaHostAlloc(reinterpret_cast<void**>(&h_in_), in_bytes ? in_bytes : 1, cudaHostAllocDefault), "pinned input");
    check(cudaHostAlloc(reinterpret_cast<void**>(&h_out_), out_bytes ? out_bytes : 1, cudaHostAllocDefault), "pinned output");
    check(cudaHostAlloc(reinterpret_cast<void**>(&h_word_), 16, cudaHostAllocDefault), "pinned word");
    check(cudaMalloc(&d_in_, in_bytes ? in_bytes : 1), "cudaMalloc slab input");
    check(cudaMalloc(&d_out_, out_bytes ? out_bytes : 1), "cudaMalloc slab output");
    check(cudaMalloc(&d_ws_, ws_bytes ? ws_bytes : 1), "cudaMalloc slab workspace");
    check(cudaMalloc(&d_word_, 16), "cudaMalloc");
  }
  void release() {
    cudaSetDevice(device_);
    if (stream_) cudaStreamSynchronize(stream_);
    cudaFreeHost(h_in_); cudaFreeHost(h_out_); cudaFreeHost(h_word_);
    cudaFree(d_in_); cudaFree(d_out_); cudaFree(d_ws_); cudaFree(d_word_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  int device_;
  size_t out_bytes_, ws_bytes_;
  cudaStream_t stream_ = nullptr;
  uint8_t *h_in_ = nullptr, *h_out_ = nullptr, *h_word_ = nullptr;
  void *d_in_ = nullptr, *d_out_ = nullptr, *d_ws_ = nullptr, *d_word_ = nullptr;
};

}  // namespace

std::unique_ptr<SlabCoder> make_gpu_coder(int device, const format::HeaderFields&, size_t in_bytes, size_t out_bytes,
                                          size_t ws_bytes) {
  if (!gpu_available()) pipeline::fail_no_gpu();
  return std::make_unique<GpuCoder>(device, in_bytes, out_bytes, ws_bytes);
}

}  // namespace pipeline
}  // namespace hpcz
