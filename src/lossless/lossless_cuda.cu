// The GPU side of the lossless API: the batched device call and the host helper behind
// lossless_decompress (copy in, one launch, copy back). The kernels are in warp_decode.cuh.
#include <string>
#include <type_traits>

#include <cub/device/device_radix_sort.cuh>

#include "pipeline/cuda_check.hpp"
#include "lossless/lossless_internal.hpp"
#include "lossless/warp_decode.cuh"

namespace hpcz {
namespace {

using pipeline::check;

// Allocations of the host helper, freed however it exits.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(p); }
  template <class T> T* as() const { return static_cast<T*>(p); }
};

}  // namespace

// Deflate chunks are decoded largest first. A chunk's cost follows its tokens, which follow its
// compressed size (among levitus's 64 KiB chunks of bytes, by token count, the costliest is 300 times
// the cheapest, a land mask), and warps retire a block at a time: in index order a block waits on its
// slowest chunk and the launch ends on whatever chunks come last. Sorted by size, a block's four chunks
// cost about the same and the last wave holds the cheapest (longest-processing-time-first scheduling):
// levitus 25.7 -> 34.8 GB/s, wrf 207 -> 241, the rest within 1% (lossless v29). The order costs a
// two-pass radix sort of 16-bit keys (the size in 64-byte units, saturated at 4 MiB), so it is used
// from kOrderMinChunks up, where it is a small share of the decode; with a smaller workspace (0
// included) the chunks go in index order, with the same bytes and statuses. RLE stays in index order:
// ordered too it gained 38-50% on levitus but lost 5-8% on the columns it decodes at 600+ GB/s, where
// the sort's launches are a visible share (lossless v30).
namespace {
constexpr size_t kOrderMinChunks = 512;
constexpr size_t kOrderMaxChunks = size_t(1) << 30;  // cub counts items in an int
constexpr size_t kAlign = 256;
size_t align_up(size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }
bool ordered(const LosslessOptions& opt, size_t n) {
  return opt.codec == LosslessCodec::deflate && n >= kOrderMinChunks && n <= kOrderMaxChunks;
}
// Workspace: keys in and out (u16), chunk indices in and out (u32), then cub's temporary storage.
struct OrderLayout {
  size_t keys = 0, indices = 0, sort_temp = 0, total = 0;
  explicit OrderLayout(size_t n) {
    check(cub::DeviceRadixSort::SortPairsDescending(nullptr, sort_temp, (const uint16_t*)nullptr, (uint16_t*)nullptr,
                                                    (const uint32_t*)nullptr, (uint32_t*)nullptr, int(n)),
          "sort size");
    keys = align_up(n * sizeof(uint16_t));
    indices = align_up(n * sizeof(uint32_t));
    total = 2 * keys + 2 * indices + sort_temp;
  }
};
__global__ void order_keys_kernel(const uint64_t* in_sizes, uint16_t* keys, uint32_t* indices, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint64_t units = in_sizes[i] >> 6;
  keys[i] = uint16_t(units < 0xFFFF ? units : 0xFFFF);
  indices[i] = i;
}
}  // namespace

size_t lossless_decompress_batch_workspace_size(const LosslessOptions& opt, size_t n_chunks) {
  return ordered(opt, n_chunks) ? OrderLayout(n_chunks).total : 0;
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
  const uint32_t* order = nullptr;
  if (ordered(opt, n_chunks) && d_workspace) {
    const OrderLayout L(n_chunks);
    if (workspace_size >= L.total) {
      auto* base = static_cast<uint8_t*>(d_workspace);
      auto* keys_in = reinterpret_cast<uint16_t*>(base);
      auto* keys_out = reinterpret_cast<uint16_t*>(base + L.keys);
      auto* idx_in = reinterpret_cast<uint32_t*>(base + 2 * L.keys);
      auto* idx_out = reinterpret_cast<uint32_t*>(base + 2 * L.keys + L.indices);
      void* temp = base + 2 * L.keys + 2 * L.indices;
      const uint32_t n = uint32_t(n_chunks);
      order_keys_kernel<<<(n + 255) / 256, 256, 0, s>>>(d_in_sizes, keys_in, idx_in, n);
      size_t temp_bytes = L.sort_temp;
      check(cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, keys_in, keys_out, idx_in, idx_out, int(n),
                                                      0, 16, s),
            "sort chunks by size");
      order = idx_out;
    }
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
