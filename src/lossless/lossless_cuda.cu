// The GPU side of the lossless API: the batched device call and the host helper behind
// lossless_decompress (copy in, one launch, copy back). The kernels are in warp_decode.cuh.
#include <string>
#include <type_traits>

#include "common/cuda_check.hpp"
#include "lossless/lossless_internal.hpp"
#include "lossless/warp_decode.cuh"

namespace hpcz {
namespace {


// Allocations of the host helper, freed however it exits.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(p); }
  template <class T> T* as() const { return static_cast<T*>(p); }
};

}  // namespace

// Chunks are decoded largest first. A chunk's cost follows its tokens, which follow its compressed
// size (among levitus's 64 KiB chunks of bytes, by token count, the costliest is 300 times the
// cheapest, a land mask), and warps retire a block at a time: in index order a block waits on its
// slowest chunk and the launch ends on whatever chunks come last. Sorted by size, a block's chunks cost
// about the same and the last wave holds the cheapest (longest-processing-time-first scheduling): on
// an H200 levitus decodes 35% (Deflate) to 53% (RLE) faster, wrf's Deflate 16%. The order is one
// launch of one block, a counting sort on a logarithmic size class, so that it stays a small share of
// even a 0.8 ms decode (a five-launch radix sort measured slower there: docs/EXPERIMENTS.md; this one
// costs those columns up to 1.4%). It is used from kOrderMinChunks up; with a smaller workspace (0
// included) the chunks go in index order, with the same bytes and statuses. Within a class the order
// depends on the atomics' timing, which changes which warp decodes a chunk, never what it writes.
namespace {
constexpr size_t kOrderMinChunks = 512;
constexpr size_t kOrderMaxChunks = size_t(1) << 31;  // 32-bit indices; i += 1024 cannot wrap below it
constexpr int kOrderThreads = 1024;
constexpr int kSizeClasses = 4096;  // a multiple of kOrderThreads
bool ordered(size_t n) { return n >= kOrderMinChunks && n <= kOrderMaxChunks; }
// Exact below 128 bytes, then 64 classes an octave (sizes within 1.1% share one); 3,776 classes reach
// 2^64. Coarser classes (8 an octave) cost Deflate 1-2.5%: within a class the order is arbitrary, so
// a wide class mixes costs again.
__device__ uint32_t size_class(uint64_t bytes) {
  if (bytes < 128) return uint32_t(bytes);
  const uint32_t e = 63 - __clzll(bytes);  // 7 or more
  return 128 + (e - 7) * 64 + uint32_t(bytes >> (e - 6)) % 64;
}
// order[k] = the chunk to decode k-th: a count per class, an exclusive scan from the largest class
// down, then each chunk placed at its class's next free slot.
__global__ void __launch_bounds__(kOrderThreads) order_by_size_kernel(const uint64_t* in_sizes, uint32_t n,
                                                                      uint32_t* order) {
  constexpr int kPer = kSizeClasses / kOrderThreads;
  __shared__ uint32_t next[kSizeClasses];
  __shared__ uint32_t warp_before[kOrderThreads / 32];
  const uint32_t t = threadIdx.x, lane = t % 32, warp = t / 32;
  for (int j = 0; j < kPer; ++j) next[kPer * t + j] = 0;
  __syncthreads();
  for (uint32_t i = t; i < n; i += kOrderThreads) atomicAdd(&next[size_class(in_sizes[i])], 1u);
  __syncthreads();
  // Thread t holds the classes of ranks kPer*t .. kPer*t + kPer-1 counted from the largest class.
  uint32_t mine = 0;
  for (int j = 0; j < kPer; ++j) mine += next[kSizeClasses - 1 - (kPer * t + j)];
  uint32_t incl = mine;
  for (int d = 1; d < 32; d *= 2) {
    const uint32_t v = __shfl_up_sync(0xFFFFFFFFu, incl, d);
    if (lane >= uint32_t(d)) incl += v;
  }
  if (lane == 31) warp_before[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    const uint32_t total = warp_before[lane];
    uint32_t w = total;
    for (int d = 1; d < 32; d *= 2) {
      const uint32_t v = __shfl_up_sync(0xFFFFFFFFu, w, d);
      if (lane >= uint32_t(d)) w += v;
    }
    warp_before[lane] = w - total;
  }
  __syncthreads();
  uint32_t at = warp_before[warp] + incl - mine;
  for (int j = 0; j < kPer; ++j) {
    const int c = kSizeClasses - 1 - (kPer * int(t) + j);
    const uint32_t count = next[c];
    next[c] = at;
    at += count;
  }
  __syncthreads();
  for (uint32_t i = t; i < n; i += kOrderThreads) order[atomicAdd(&next[size_class(in_sizes[i])], 1u)] = i;
}
}  // namespace

size_t lossless_decompress_batch_workspace_size(const LosslessOptions&, size_t n_chunks) {
  return ordered(n_chunks) ? n_chunks * sizeof(uint32_t) : 0;
}

void lossless_decompress_batch_device(const LosslessOptions& opt, const uint8_t* const* d_in, const uint64_t* d_in_sizes,
                                      uint8_t* const* d_out, const uint64_t* d_out_capacity, uint64_t* d_out_sizes,
                                      LosslessStatus* d_status, size_t n_chunks, void* d_workspace, size_t workspace_size,
                                      void* stream) {
  if (n_chunks == 0) return;
  const lossless::IntType t{opt.elem_bytes, opt.is_signed};
  if (opt.codec != LosslessCodec::deflate && t.bytes != 1 && t.bytes != 2 && t.bytes != 4 && t.bytes != 8)
    throw Error(ErrorCode::invalid_argument, "element size must be 1, 2, 4 or 8 bytes");
  namespace k = lossless::cuda;
  const unsigned blocks = unsigned((n_chunks + k::kWarpsPerBlock - 1) / k::kWarpsPerBlock);
  const unsigned threads = 32 * k::kWarpsPerBlock;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  uint32_t* order = nullptr;
  if (ordered(n_chunks) && d_workspace && workspace_size >= n_chunks * sizeof(uint32_t)) {
    order = static_cast<uint32_t*>(d_workspace);
    order_by_size_kernel<<<1, kOrderThreads, 0, s>>>(d_in_sizes, uint32_t(n_chunks), order);
  }
  // RLE kernels are specialised on the element type.
  auto launch = [&](auto codec, auto bytes, auto is_signed) {
    k::batch_kernel<decltype(codec)::value, decltype(bytes)::value, decltype(is_signed)::value>
        <<<blocks, threads, 0, s>>>(t, d_in, d_in_sizes, d_out, d_out_capacity, d_out_sizes, d_status, n_chunks, order);
  };
  auto launch_rle = [&](auto codec) {
    using B = std::integral_constant<bool, true>;
    using U = std::integral_constant<bool, false>;
    switch (t.bytes * 2 + t.is_signed) {
      case 2: launch(codec, std::integral_constant<int, 1>{}, U{}); break;
      case 3: launch(codec, std::integral_constant<int, 1>{}, B{}); break;
      case 4: launch(codec, std::integral_constant<int, 2>{}, U{}); break;
      case 5: launch(codec, std::integral_constant<int, 2>{}, B{}); break;
      case 8: launch(codec, std::integral_constant<int, 4>{}, U{}); break;
      case 9: launch(codec, std::integral_constant<int, 4>{}, B{}); break;
      case 16: launch(codec, std::integral_constant<int, 8>{}, U{}); break;
      default: launch(codec, std::integral_constant<int, 8>{}, B{}); break;
    }
  };
  switch (opt.codec) {
    case LosslessCodec::rle1: launch_rle(std::integral_constant<int, 0>{}); break;
    case LosslessCodec::rle2: launch_rle(std::integral_constant<int, 1>{}); break;
    default:
      k::batch_kernel<2><<<blocks, threads, 0, s>>>(t, d_in, d_in_sizes, d_out, d_out_capacity, d_out_sizes, d_status,
                                                    n_chunks, order);
  }
  check(cudaGetLastError(), "lossless batch kernel");
}

namespace lossless {

void decode_chunks_gpu(const LosslessOptions& opt, const uint8_t* blob, uint64_t blob_size,
                       const std::vector<ChunkRef>& chunks, uint8_t* out, uint64_t out_size,
                       std::vector<uint64_t>& sizes, std::vector<LosslessStatus>& status, bool with_workspace) {
  const size_t n = chunks.size();
  sizes.assign(n, 0);
  status.assign(n, LosslessStatus::corrupt);
  if (n == 0) return;
  // One buffer for the arrays: in pointers, in sizes, out pointers, capacities (built here and copied
  // in at once), then the sizes and statuses the kernel writes.
  DeviceBuffer d_blob(blob_size), d_out(out_size), d_arrays(n * (5 * sizeof(uint64_t) + sizeof(LosslessStatus)));
  check(cudaMemcpy(d_blob.p, blob, blob_size, cudaMemcpyHostToDevice), "copy in");
  std::vector<uint64_t> arrays(4 * n);
  for (size_t i = 0; i < n; ++i) {
    arrays[i] = reinterpret_cast<uint64_t>(d_blob.as<uint8_t>() + chunks[i].in_offset);
    arrays[n + i] = chunks[i].in_size;
    arrays[2 * n + i] = reinterpret_cast<uint64_t>(d_out.as<uint8_t>() + chunks[i].out_offset);
    arrays[3 * n + i] = chunks[i].out_capacity;
  }
  check(cudaMemcpy(d_arrays.p, arrays.data(), arrays.size() * 8, cudaMemcpyHostToDevice), "copy in");
  uint64_t* a = d_arrays.as<uint64_t>();
  uint64_t* d_sizes = a + 4 * n;
  auto* d_status = reinterpret_cast<LosslessStatus*>(a + 5 * n);
  const size_t ws = with_workspace ? lossless_decompress_batch_workspace_size(opt, n) : 0;
  DeviceBuffer d_ws(ws);
  lossless_decompress_batch_device(opt, reinterpret_cast<const uint8_t* const*>(a), a + n,
                                   reinterpret_cast<uint8_t* const*>(a + 2 * n), a + 3 * n, d_sizes, d_status, n,
                                   d_ws.p, ws, nullptr);
  check(cudaDeviceSynchronize(), "lossless batch kernel");
  check(cudaMemcpy(out, d_out.p, out_size, cudaMemcpyDeviceToHost), "copy out");
  check(cudaMemcpy(sizes.data(), d_sizes, n * sizeof(uint64_t), cudaMemcpyDeviceToHost), "copy out");
  check(cudaMemcpy(status.data(), d_status, n * sizeof(LosslessStatus), cudaMemcpyDeviceToHost), "copy out");
}

}  // namespace lossless
}  // namespace hpcz
