// Built instead of gpu_backend.cu when no CUDA compiler is found: the GPU is never available.
#include "pipeline/internal.hpp"

namespace hpcz {
namespace {
[[noreturn]] void none() { throw Error(ErrorCode::backend_unavailable, "this hpcz was built without CUDA"); }
}  // namespace
bool gpu_available() { return false; }
int gpu_count() { return 0; }
std::string gpu_name() { return ""; }
size_t compress_device_workspace_size(uint64_t, DType) { none(); }
size_t compress_device_workspace_size(DType, const std::vector<uint64_t>&, const Options&) { none(); }
void compress_device(const void*, DType, const std::vector<uint64_t>&, const Options&, void*, size_t, uint64_t*,
                     void*, size_t, void*) { none(); }
size_t decompress_device_workspace_size(const ArchiveInfo&) { none(); }
void decompress_device(const ArchiveInfo&, const void*, void*, uint32_t*, void*, size_t, void*) { none(); }
size_t compress_device_batch_workspace_size(const std::vector<ArrayRef>&, const Options&) { none(); }
void compress_device_batch(const std::vector<ArrayRef>&, const Options&, void* const*, const size_t*, uint64_t*, void*,
                           size_t, void*) { none(); }
size_t read_device_headers_workspace_size(size_t) { none(); }
void read_device_headers(const void* const*, const size_t*, size_t, uint8_t*, void*, size_t, void*) { none(); }
size_t decompress_device_batch_workspace_size(const std::vector<ArchiveInfo>&) { none(); }
void decompress_device_batch(const std::vector<ArchiveInfo>&, const void* const*, void* const*, uint32_t*, void*, size_t,
                             void*) { none(); }
namespace pipeline {
size_t compress_gpu_host(const void*, const format::HeaderFields&, const std::function<uint8_t*(size_t)>&) { none(); }
void decompress_gpu_host(const uint8_t*, const ArchiveInfo&, void*) { none(); }
std::unique_ptr<SlabCoder> make_gpu_coder(int, const format::HeaderFields&, size_t, size_t, size_t) { none(); }
size_t gpu_slab_workspace(const format::HeaderFields&, bool) { none(); }
GpuRoom current_gpu_room() { none(); }
size_t gpu_one_shot_bytes(const format::HeaderFields&, bool) { none(); }
size_t device_compress_workspace(const format::HeaderFields&) { none(); }
size_t device_decompress_workspace(const format::HeaderFields&) { none(); }
void compress_batch_gpu(const std::vector<BatchCompressItem>&, const PlaceBatchArchive&, std::vector<ItemStatus>&) { none(); }
void decompress_batch_gpu(const std::vector<BatchDecodeItem>&, std::vector<ItemStatus>&) { none(); }
void release_gpu_buffers() {}
std::string gpu_unavailable_reason() { return "this hpcz was built without CUDA"; }
void fail_no_gpu() { none(); }
}  // namespace pipeline
}  // namespace hpcz

// The lossless GPU path (lossless_cuda.cu).
#include "lossless/lossless_internal.hpp"
namespace hpcz {
size_t lossless_decompress_batch_workspace_size(const LosslessOptions&, size_t) {
  throw Error(ErrorCode::backend_unavailable, "this hpcz was built without CUDA");
}
void lossless_decompress_batch_device(const LosslessOptions&, const uint8_t* const*, const uint64_t*, uint8_t* const*,
                                      const uint64_t*, uint64_t*, LosslessStatus*, size_t, void*, size_t, void*) {
  throw Error(ErrorCode::backend_unavailable, "this hpcz was built without CUDA");
}
namespace lossless {
void decode_chunks_gpu(const LosslessOptions&, const uint8_t*, uint64_t, const std::vector<ChunkRef>&, uint8_t*, uint64_t,
                       std::vector<uint64_t>&, std::vector<LosslessStatus>&, bool) {
  throw Error(ErrorCode::backend_unavailable, "this hpcz was built without CUDA");
}
}  // namespace lossless
}  // namespace hpcz
