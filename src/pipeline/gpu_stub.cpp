// Built instead of gpu_backend.cu when no CUDA compiler is found: the GPU is never available.
#include "pipeline/internal.hpp"

namespace hpcz {
namespace {
[[noreturn]] void none() { throw Error(ErrorCode::backend_unavailable, "this hpcz was built without CUDA"); }
}  // namespace
bool gpu_available() { return false; }
std::string gpu_name() { return ""; }
size_t compress_device_workspace_size(uint64_t, DType) { none(); }
size_t compress_device_workspace_size(DType, const std::vector<uint64_t>&, const Options&) { none(); }
void compress_device(const void*, DType, const std::vector<uint64_t>&, const Options&, void*, size_t, uint64_t*,
                     void*, size_t, void*) { none(); }
size_t decompress_device_workspace_size(const ArchiveInfo&) { none(); }
void decompress_device(const ArchiveInfo&, const void*, void*, uint32_t*, void*, size_t, void*) { none(); }
namespace pipeline {
std::vector<uint8_t> compress_gpu_host(const void*, const format::HeaderFields&) { none(); }
void decompress_gpu_host(const uint8_t*, const ArchiveInfo&, void*) { none(); }
std::vector<uint8_t> gpu_build_books(const std::vector<uint32_t>&, uint32_t, double*) { none(); }
}  // namespace pipeline
}  // namespace hpcz
