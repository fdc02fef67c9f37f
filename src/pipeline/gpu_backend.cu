// CUDA backend: the device API (caller's stream and workspace, no allocation, no synchronization) and
// the host convenience path built on it.
#include <cuda_runtime.h>

#include <cstdlib>
#include <string>

#include "common/cuda_check.hpp"
#include "codecs/fast/kernels.cuh"
#include "codecs/ratio/ratio_gpu.hpp"
#include "pipeline/internal.hpp"
#include "pipeline/staged_copy.hpp"

namespace hpcz {
namespace {


using gpu::CompressState;
using fast::cuda::kThreads;

size_t state_bytes(uint64_t n_chunks) { return (sizeof(CompressState) + 8 * n_chunks + 255) & ~size_t(255); }

template <class T>
void compress_device_t(const T* d_in, const format::HeaderFields& h, uint8_t* d_out, uint64_t* d_size,
                       void* d_ws, cudaStream_t s) {
  auto* st = static_cast<CompressState*>(d_ws);
  auto* desc = reinterpret_cast<unsigned long long*>(st + 1);
  const uint64_t nc = h.n_chunks;
  gpu::init_kernel<<<nc ? (unsigned)std::min<uint64_t>((nc + 255) / 256, 1024) : 1, 256, 0, s>>>(st, desc, nc);
  check(cudaGetLastError(), "init kernel");
  const bool has_fill = h.flags & format::kFlagFill;
  if (nc) {
    constexpr uint32_t smem = fast::cuda::stage_bytes<T>();
    int sms = 132, dev = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    // The range comes first in both modes: rel needs it for eb, and both need max |x| for the step.
    unsigned grid = (unsigned)std::max<uint64_t>(1, std::min<uint64_t>((h.n_values / 4 + kThreads - 1) / kThreads, uint64_t(sms) * 16));
    gpu::range_kernel<T><<<grid, kThreads, 0, s>>>(d_in, h.n_values, has_fill, T(h.fill), st);
    check(cudaGetLastError(), "range kernel");
    // HPCZ_ENCODE_BLOCKS_PER_SM=3: an occupancy experiment for the benchmark (80 registers, spills);
    // the default is encode_min_blocks<T>().
    auto k = fast::cuda::encode_kernel<T>;
    if (const char* b = std::getenv("HPCZ_ENCODE_BLOCKS_PER_SM"); b && b[0] == '3') {
      k = fast::cuda::encode_kernel<T, 3>;
      check(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, 100), "carveout");
    }
    check(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "smem attribute");
    k<<<(unsigned)nc, kThreads, smem, s>>>(d_in, h.n_values, h, st, desc, d_out);
    check(cudaGetLastError(), "encode kernel");
  }
  gpu::seal_kernel<<<1, 32, 0, s>>>(h, st, d_out, reinterpret_cast<unsigned long long*>(d_size));
  check(cudaGetLastError(), "seal kernel");
}

// The fast mode's decoding workspace: the chunk table's checksum sum (8 bytes, summed by the first
// pass, checked by the second), then the list of chunks too large for the first pass ([0] count).
size_t fast_decode_workspace(uint64_t n_chunks) { return (8 + 4 * (n_chunks + 1) + 15) / 16 * 16; }

int sm_count() {
  static const int n = [] {
    int dev = 0, v = 0;
    cudaGetDevice(&dev);
    return cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess && v > 0 ? v : 132;
  }();
  return n;
}

template <class T>
void decompress_device_t(const ArchiveInfo& info, const uint8_t* d_a, T* d_out, uint32_t* d_status, void* d_ws,
                         cudaStream_t s) {
  check(cudaMemsetAsync(d_status, 0, sizeof(uint32_t), s), "status reset");
  if (info.n_chunks == 0) return;
  auto* table_sum = static_cast<unsigned long long*>(d_ws);
  auto* d_large = reinterpret_cast<uint32_t*>(table_sum + 1);
  check(cudaMemsetAsync(d_ws, 0, 12, s), "workspace reset");  // the table sum and the list's count
  // The chunk table's checksum is summed by the first pass (each block adds its own entry) and checked
  // by the second: a separate one-block kernel over the table cost about 2% of the decoding time.
  const auto p = quant::make_params<T>(info.eb_abs, info.step, info.fill.has_value(), info.fill.value_or(0.0));
  // Pass 1: every chunk, a small stage; pass 2: the chunks that did not fit, full stage, fixed grid.
  // f32: compiled for 6 blocks per SM (40 registers, a few spills). Measured on an H200 at rel 1e-3 and
  // 1e-4 (bench/results, fast v7): mean decompression 734 GB/s at the natural 4 blocks, 824 at 5, 831
  // at 6; the single-pass kernel before it (3 blocks, 64 KiB stage) ran these rows at 792.
  auto k1 = fast::cuda::decode_kernel<T, sizeof(T) == 4 ? 6 : 1>;
  constexpr uint32_t smem1 = fast::cuda::kSmallStage;
  check(cudaFuncSetAttribute(k1, cudaFuncAttributeMaxDynamicSharedMemorySize, smem1), "smem attribute");
  k1<<<(unsigned)info.n_chunks, kThreads, smem1, s>>>(d_a, info.archive_size, info.n_values, p, d_out, d_status, d_large,
                                                      table_sum);
  check(cudaGetLastError(), "decode kernel");
  auto k2 = fast::cuda::decode_large_kernel<T>;
  constexpr uint32_t smem2 = fast::cuda::decode_stage_bytes<T>();
  check(cudaFuncSetAttribute(k2, cudaFuncAttributeMaxDynamicSharedMemorySize, smem2), "smem attribute");
  const unsigned grid2 = (unsigned)std::min<uint64_t>(info.n_chunks, uint64_t(sm_count()) * 3);
  k2<<<grid2, kThreads, smem2, s>>>(d_a, info.archive_size, info.n_values, info.n_chunks, p, d_out, d_status, d_large,
                                    table_sum, info.table_checksum);
  check(cudaGetLastError(), "decode kernel (large chunks)");
}

template <class F> struct Defer { F f; ~Defer() { f(); } };
template <class F> Defer<F> defer(F f) { return {f}; }

}  // namespace

bool gpu_available() {
  // The first call also creates the device's context (cudaFree(0)), the few hundred ms of a GPU's
  // start-up, so that a caller can pay it early or on another thread (the CLI does, while it reads).
  static const bool ok = [] {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0 && cudaFree(nullptr) == cudaSuccess;
  }();
  return ok;
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
  return state_bytes(detail::div_ceil(n_values, format::kChunkInputBytes / dtype_size(dtype)));
}

size_t compress_device_workspace_size(DType dtype, const std::vector<uint64_t>& dims, const Options& opt) {
  const format::HeaderFields h = pipeline::header_template(dtype, dims, opt);
  if (opt.codec == Codec::ratio) return pipeline::ratio_compress_workspace(h);
  return compress_device_workspace_size(h.n_values, dtype);
}

void compress_device(const void* d_in, DType dtype, const std::vector<uint64_t>& dims, const Options& opt,
                     void* d_out, size_t out_capacity, uint64_t* d_size, void* d_ws, size_t ws_size, void* stream) {
  if (!gpu_available()) throw Error(ErrorCode::backend_unavailable, "no usable CUDA GPU");
  if (opt.second_stage)
    throw Error(ErrorCode::invalid_argument, "the lossless second stage runs through the host API (compress)");
  format::HeaderFields h = pipeline::header_template(dtype, dims, opt);
  if (out_capacity < max_compressed_size(h.n_values, dtype))
    throw Error(ErrorCode::invalid_argument, "output capacity below max_compressed_size()");
  if (ws_size < compress_device_workspace_size(dtype, dims, opt))
    throw Error(ErrorCode::invalid_argument, "workspace below compress_device_workspace_size()");
  if ((reinterpret_cast<uintptr_t>(d_in) | reinterpret_cast<uintptr_t>(d_out)) & 15)
    throw Error(ErrorCode::invalid_argument, "device buffers must be 16-byte aligned");
  auto s = static_cast<cudaStream_t>(stream);
  if (opt.codec == Codec::ratio)
    pipeline::ratio_compress_device(d_in, h, static_cast<uint8_t*>(d_out), d_size, d_ws, s);
  else if (dtype == DType::f64)
    compress_device_t(static_cast<const double*>(d_in), h, static_cast<uint8_t*>(d_out), d_size, d_ws, s);
  else
    compress_device_t(static_cast<const float*>(d_in), h, static_cast<uint8_t*>(d_out), d_size, d_ws, s);
}

size_t decompress_device_workspace_size(const ArchiveInfo& info) {
  return info.codec == Codec::ratio ? pipeline::ratio_decompress_workspace(info) : fast_decode_workspace(info.n_chunks);
}

void decompress_device(const ArchiveInfo& info, const void* d_archive, void* d_out, uint32_t* d_status, void* d_ws,
                       size_t ws_size, void* stream) {
  if (!gpu_available()) throw Error(ErrorCode::backend_unavailable, "no usable CUDA GPU");
  if (info.second_stage)
    throw Error(ErrorCode::unsupported, "archives with the lossless second stage decode through the host API (decompress)");
  if ((reinterpret_cast<uintptr_t>(d_archive) | reinterpret_cast<uintptr_t>(d_out)) & 15)
    throw Error(ErrorCode::invalid_argument, "device buffers must be 16-byte aligned");
  auto s = static_cast<cudaStream_t>(stream);
  auto a = static_cast<const uint8_t*>(d_archive);
  if (info.codec == Codec::ratio) {
    if (ws_size < decompress_device_workspace_size(info))
      throw Error(ErrorCode::invalid_argument, "workspace below decompress_device_workspace_size()");
    check(cudaMemsetAsync(d_status, 0, sizeof(uint32_t), s), "status reset");
    if (info.n_chunks) pipeline::ratio_decompress_device(info, a, d_out, d_status, d_ws, s);
    return;
  }
  if (ws_size < decompress_device_workspace_size(info) || (!d_ws && info.n_chunks))
    throw Error(ErrorCode::invalid_argument, "workspace below decompress_device_workspace_size()");
  if (info.dtype == DType::f64) decompress_device_t(info, a, static_cast<double*>(d_out), d_status, d_ws, s);
  else decompress_device_t(info, a, static_cast<float*>(d_out), d_status, d_ws, s);
}

namespace pipeline {

std::vector<uint8_t> compress_gpu_host(const void* in, const format::HeaderFields& h) {
  const DType dt = DType(h.dtype);
  const size_t in_bytes = h.n_values * dtype_size(dt), cap = max_compressed_size(h.n_values, dt);
  std::vector<uint64_t> dims(h.dims, h.dims + h.ndims);
  Options opt;
  opt.mode = BoundMode(h.mode);
  opt.bound = h.bound;
  opt.codec = Codec(h.codec);
  if (h.codec == uint8_t(Codec::ratio)) opt.radius = h.block_values;
  if (h.flags & format::kFlagFill) opt.fill = h.fill;
  const size_t ws_bytes = compress_device_workspace_size(dt, dims, opt);
  void *d_in = nullptr, *d_out = nullptr, *d_ws = nullptr;
  uint64_t* d_size = nullptr;
  auto cleanup = defer([&] { cudaFree(d_in); cudaFree(d_out); cudaFree(d_ws); cudaFree(d_size); });
  check(cudaMalloc(&d_in, in_bytes ? in_bytes : 1), "cudaMalloc input");
  check(cudaMalloc(&d_out, cap), "cudaMalloc output");
  check(cudaMalloc(&d_ws, ws_bytes), "cudaMalloc workspace");
  check(cudaMalloc(&d_size, sizeof(uint64_t)), "cudaMalloc size");
  copy_to_device(d_in, in, in_bytes);
  compress_device(d_in, dt, dims, opt, d_out, cap, d_size, d_ws, ws_bytes, nullptr);
  uint64_t size = 0;
  check(cudaMemcpy(&size, d_size, sizeof size, cudaMemcpyDeviceToHost), "compress");
  std::vector<uint8_t> out(size);
  copy_to_host(out.data(), d_out, size);
  return out;
}

void decompress_gpu_host(const uint8_t* archive, const ArchiveInfo& info, void* out) {
  const size_t out_bytes = info.n_values * dtype_size(info.dtype);
  void *d_a = nullptr, *d_out = nullptr, *d_ws = nullptr;
  uint32_t* d_status = nullptr;
  auto cleanup = defer([&] { cudaFree(d_a); cudaFree(d_out); cudaFree(d_status); cudaFree(d_ws); });
  const size_t ws_bytes = decompress_device_workspace_size(info);
  if (ws_bytes) check(cudaMalloc(&d_ws, ws_bytes), "cudaMalloc workspace");
  check(cudaMalloc(&d_a, info.archive_size), "cudaMalloc archive");
  check(cudaMalloc(&d_out, out_bytes), "cudaMalloc output");
  check(cudaMalloc(&d_status, sizeof(uint32_t)), "cudaMalloc status");
  copy_to_device(d_a, archive, info.archive_size);
  decompress_device(info, d_a, d_out, d_status, d_ws, ws_bytes, nullptr);
  uint32_t status = 0;
  check(cudaMemcpy(&status, d_status, sizeof status, cudaMemcpyDeviceToHost), "decompress");
  if (status)
    throw Error(ErrorCode::corrupt_archive, std::string("corrupt archive:") +
                                                (status & 1 ? " chunk checksum mismatch;" : "") +
                                                (status & 2 ? " malformed chunk or chunk table entry;" : "") +
                                                (status & 4 ? " chunk table checksum mismatch;" : ""));
  copy_to_host(out, d_out, out_bytes);
}

}  // namespace pipeline
}  // namespace hpcz
