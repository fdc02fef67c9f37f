// Direct chunk writes of hpcz-filtered datasets (include/hpcz/hdf5.hpp).
#include <string>
#include <utility>

#include "filter_params.hpp"
#include "hpcz/hdf5.hpp"
#if HPCZ_HAS_CUDA
#include <cuda_runtime.h>
#endif

namespace hpcz::hdf5 {
namespace {

[[noreturn]] void fail(ErrorCode c, const std::string& what) { throw Error(c, what); }

// Closes an HDF5 identifier when it goes out of scope.
struct Handle {
  hid_t id;
  herr_t (*close)(hid_t);
  ~Handle() {
    if (id >= 0) close(id);
  }
};

#if HPCZ_HAS_CUDA
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail(ErrorCode::cuda, std::string(what) + ": " + cudaGetErrorString(e));
}
#endif

}  // namespace

ChunkCoding chunk_coding(hid_t dset) {
  Handle dcpl{H5Dget_create_plist(dset), H5Pclose};
  if (dcpl.id < 0) fail(ErrorCode::invalid_argument, "hpcz::hdf5: not a dataset");
  if (H5Pget_layout(dcpl.id) != H5D_CHUNKED) fail(ErrorCode::invalid_argument, "hpcz::hdf5: the dataset is not chunked");
  if (H5Pget_nfilters(dcpl.id) != 1)
    fail(ErrorCode::invalid_argument, "hpcz::hdf5: the dataset's filters are not hpcz alone: write it through H5Dwrite");
  unsigned flags = 0, values[h5z::kMaxValues];
  size_t n = sizeof values / sizeof values[0];
  if (H5Pget_filter_by_id2(dcpl.id, kFilterId, &flags, &n, values, 0, nullptr, nullptr) < 0)
    fail(ErrorCode::invalid_argument, "hpcz::hdf5: the dataset does not use the hpcz filter");
  h5z::FilterParams p;
  const size_t user = n >= 1 ? h5z::user_values(values[0]) : h5z::kUserValues;  // set_local's words follow
  if (n >= user + h5z::kLocalValues)
    if (const char* why = h5z::invalid_words(n, values, values[user]))
      fail(ErrorCode::invalid_argument, std::string("hpcz::hdf5: ") + (why + 6));  // without "hpcz: "
  if (!h5z::parse_params(n, values, p))
    fail(ErrorCode::unsupported, "hpcz::hdf5: hpcz filter parameters of an unknown version");
  ChunkCoding c;
  c.options = p.options;
  c.dtype = p.dtype;
  c.dims = p.dims;
  c.n_values = p.n_values;
  c.padding = p.padding;
  c.chunk.resize(values[user + 1]);
  if (H5Pget_chunk(dcpl.id, int(c.chunk.size()), c.chunk.data()) != int(c.chunk.size()))
    fail(ErrorCode::invalid_argument, "hpcz::hdf5: the dataset's chunk dims do not match its filter parameters");
  uint64_t count = 1;
  for (hsize_t d : c.chunk) count *= d;
  if (count != c.n_values)
    fail(ErrorCode::invalid_argument, "hpcz::hdf5: the dataset's chunk dims do not match its filter parameters");
  return c;
}

namespace {
void write_archive(hid_t dset, const hsize_t* offset, const void* archive, size_t size) {
  if (H5Dwrite_chunk(dset, H5P_DEFAULT, 0, offset, size, archive) < 0)
    fail(ErrorCode::io, "hpcz::hdf5: H5Dwrite_chunk failed");
}
}  // namespace

size_t write_chunk(hid_t dset, const hsize_t* offset, const void* chunk, Backend backend) {
  ChunkCoding c = chunk_coding(dset);
  c.options.backend = backend;
  std::vector<uint8_t> archive = compress(chunk, c.dtype, c.dims, c.options);
  if (c.padding && h5z::padding_recode(archive.data(), archive.size(), chunk, c.dtype, c.n_values, *c.padding, c.options))
    archive = compress(chunk, c.dtype, c.dims, c.options);
  write_archive(dset, offset, archive.data(), archive.size());
  return archive.size();
}

#if HPCZ_HAS_CUDA
DeviceChunkWriter::DeviceChunkWriter(hid_t dset) : dset_(dset), coding_(chunk_coding(dset)) {
  if (!gpu_available()) fail(ErrorCode::backend_unavailable, "hpcz::hdf5: no usable GPU");
  coding_.options.second_stage = false;  // compress_device writes plain archives
  check(cudaGetDevice(&device_), "cudaGetDevice");
  capacity_ = max_compressed_size(coding_.n_values, coding_.dtype);
  workspace_size_ = compress_device_workspace_size(coding_.dtype, coding_.dims, coding_.options);
  try {
    check(cudaMalloc(&d_archive_, capacity_), "cudaMalloc");
    check(cudaMalloc(&d_workspace_, workspace_size_ ? workspace_size_ : 1), "cudaMalloc");
    check(cudaMalloc(reinterpret_cast<void**>(&d_size_), sizeof(uint64_t)), "cudaMalloc");
    check(cudaMallocHost(reinterpret_cast<void**>(&h_archive_), capacity_), "cudaMallocHost");
  } catch (...) {
    cudaFree(d_archive_);
    cudaFree(d_workspace_);
    cudaFree(d_size_);
    throw;
  }
}

DeviceChunkWriter::~DeviceChunkWriter() {
  int current = 0;
  cudaGetDevice(&current);
  cudaSetDevice(device_);
  cudaFree(d_archive_);
  cudaFree(d_workspace_);
  cudaFree(d_size_);
  cudaFreeHost(h_archive_);
  cudaSetDevice(current);
}

size_t DeviceChunkWriter::write(const hsize_t* offset, const void* d_chunk, void* stream) {
  int current = 0;
  check(cudaGetDevice(&current), "cudaGetDevice");
  check(cudaSetDevice(device_), "cudaSetDevice");
  struct Restore {
    int device;
    ~Restore() { cudaSetDevice(device); }
  } restore{current};
  auto s = static_cast<cudaStream_t>(stream);
  compress_device(d_chunk, coding_.dtype, coding_.dims, coding_.options, d_archive_, capacity_, d_size_, d_workspace_,
                  workspace_size_, stream);
  uint64_t size = 0;
  check(cudaMemcpyAsync(h_archive_, d_size_, sizeof size, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(s), "compress_device");
  std::memcpy(&size, h_archive_, sizeof size);
  if (size == 0 || size > capacity_) fail(ErrorCode::internal, "hpcz::hdf5: the device reported an archive of bad size");
  check(cudaMemcpyAsync(h_archive_, d_archive_, size, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(s), "cudaMemcpyAsync");
  if (coding_.padding && h5z::range_relative(coding_.options.mode) &&
      h5z::padding_at_end(h_archive_, size, *coding_.padding)) {
    // The filter's padding rule (rel, abs_and_rel, abs_or_rel): the few chunks it codes again, from a host copy.
    std::vector<uint8_t> host(coding_.n_values * dtype_size(coding_.dtype));
    check(cudaMemcpy(host.data(), d_chunk, host.size(), cudaMemcpyDeviceToHost), "cudaMemcpy");
    Options o = coding_.options;
    h5z::leave_out_padding(host.data(), coding_.dtype, coding_.n_values, *coding_.padding, o);
    const std::vector<uint8_t> archive = compress(host.data(), coding_.dtype, coding_.dims, o);
    write_archive(dset_, offset, archive.data(), archive.size());
    return archive.size();
  }
  write_archive(dset_, offset, h_archive_, size);
  return size;
}
#else
DeviceChunkWriter::DeviceChunkWriter(hid_t dset) : dset_(dset) {
  fail(ErrorCode::backend_unavailable, "hpcz::hdf5: this build of hpcz has no CUDA");
}
DeviceChunkWriter::~DeviceChunkWriter() = default;
size_t DeviceChunkWriter::write(const hsize_t*, const void*, void*) {
  fail(ErrorCode::backend_unavailable, "hpcz::hdf5: this build of hpcz has no CUDA");
}
#endif

}  // namespace hpcz::hdf5
