// The GPU side of the lossless API: the batched device call and the host helper behind
// lossless_decompress (copy in, one launch, copy back). The kernels are in warp_decode.cuh.
#include <string>
#include <type_traits>

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

size_t lossless_decompress_batch_workspace_size(const LosslessOptions&, size_t) { return 0; }

void lossless_decompress_batch_device(const LosslessOptions& opt, const uint8_t* const* d_in, const uint64_t* d_in_sizes,
                                      uint8_t* const* d_out, const uint64_t* d_out_capacity, uint64_t* d_out_sizes,
                                      LosslessStatus* d_status, size_t n_chunks, void*, size_t, void* stream) {
  if (n_chunks == 0) return;
  const lossless::IntType t{opt.elem_bytes, opt.is_signed};
  if (opt.codec != LosslessCodec::deflate && t.bytes != 1 && t.bytes != 2 && t.bytes != 4 && t.bytes != 8)
    throw Error(ErrorCode::invalid_argument, "element size must be 1, 2, 4 or 8 bytes");
  namespace k = lossless::cuda;
  const unsigned blocks = unsigned((n_chunks + k::kWarpsPerBlock - 1) / k::kWarpsPerBlock);
  const unsigned threads = 32 * k::kWarpsPerBlock;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  // RLE kernels are specialised on the element type.
  auto launch = [&](auto codec, auto bytes, auto is_signed) {
    k::batch_kernel<decltype(codec)::value, decltype(bytes)::value, decltype(is_signed)::value>
        <<<blocks, threads, 0, s>>>(t, d_in, d_in_sizes, d_out, d_out_capacity, d_out_sizes, d_status, n_chunks);
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
      k::batch_kernel<2><<<blocks, threads, 0, s>>>(t, d_in, d_in_sizes, d_out, d_out_capacity, d_out_sizes, d_status, n_chunks);
  }
  check(cudaGetLastError(), "lossless batch kernel");
}

namespace lossless {

void decode_chunks_gpu(const LosslessOptions& opt, const uint8_t* blob, uint64_t blob_size,
                       const std::vector<ChunkRef>& chunks, uint8_t* out, uint64_t out_size,
                       std::vector<uint64_t>& sizes, std::vector<LosslessStatus>& status) {
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
  lossless_decompress_batch_device(opt, reinterpret_cast<const uint8_t* const*>(a), a + n,
                                   reinterpret_cast<uint8_t* const*>(a + 2 * n), a + 3 * n, d_sizes, d_status, n,
                                   nullptr, 0, nullptr);
  check(cudaDeviceSynchronize(), "lossless batch kernel");
  check(cudaMemcpy(out, d_out.p, out_size, cudaMemcpyDeviceToHost), "copy out");
  check(cudaMemcpy(sizes.data(), d_sizes, n * sizeof(uint64_t), cudaMemcpyDeviceToHost), "copy out");
  check(cudaMemcpy(status.data(), d_status, n * sizeof(LosslessStatus), cudaMemcpyDeviceToHost), "copy out");
}

}  // namespace lossless
}  // namespace hpcz
