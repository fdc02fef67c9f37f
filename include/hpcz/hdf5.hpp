// hpcz and HDF5: direct chunk writes of datasets that use the hpcz filter (id 34520), from host or
// device memory. The chunk is compressed by hpcz with the dataset's own filter parameters and written
// with H5Dwrite_chunk, skipping HDF5's filter pipeline, so a GPU simulation writes at the speed of its
// GPU; readers decode it through the filter like any other chunk, on a CPU or a GPU.
// Library hpcz_hdf5 (built where HDF5 is found); link it with HDF5 and hpcz.
#pragma once
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "hpcz/hpcz.hpp"

namespace hpcz::hdf5 {

constexpr H5Z_filter_t kFilterId = 34520;

// How a dataset's chunks are coded: the options of its hpcz filter, the dtype and the chunk's shape as
// hpcz codes it (more than 4 dims: the slowest merged). Error(invalid_argument) if the dataset is not
// chunked or its pipeline holds other filters than hpcz (a direct write must do every filter's work).
struct ChunkCoding {
  Options options;
  DType dtype = DType::f32;
  std::vector<uint64_t> dims;
  uint64_t n_values = 0;
  std::vector<hsize_t> chunk;  // HDF5's chunk dims
  // What HDF5 pads edge chunks with, stored by the filter for a rel bound: a chunk whose range it would
  // widen is coded with the padding left out, as the filter codes it.
  std::optional<double> padding;
};
ChunkCoding chunk_coding(hid_t dset);

// Compresses one whole chunk (the chunk's dims, the dataset's dtype; an edge chunk padded as the caller
// likes) held in host memory and writes it at `offset` (the chunk's first element, one per dim).
// Returns the bytes written. backend: where compress() codes it.
size_t write_chunk(hid_t dset, const hsize_t* offset, const void* chunk, Backend backend = Backend::automatic);

// Direct chunk writes from device memory on the GPU current at construction. Holds, for the dataset's
// chunk size, the device workspace and archive buffer and a pinned host buffer, so writes allocate
// nothing. The lossless second stage is host-only: chunks written here are plain archives (readers
// need no flag for that; the filter decodes both).
class DeviceChunkWriter {
 public:
  explicit DeviceChunkWriter(hid_t dset);
  ~DeviceChunkWriter();
  DeviceChunkWriter(const DeviceChunkWriter&) = delete;
  DeviceChunkWriter& operator=(const DeviceChunkWriter&) = delete;
  // d_chunk: a whole chunk on this writer's GPU, 16-byte aligned, ready on `stream` (a cudaStream_t; 0:
  // the default stream). Compresses it on that stream, waits for it and writes it; returns the bytes.
  size_t write(const hsize_t* offset, const void* d_chunk, void* stream = nullptr);
  const ChunkCoding& coding() const { return coding_; }

 private:
  hid_t dset_;
  ChunkCoding coding_;
  int device_ = 0;
  size_t capacity_ = 0, workspace_size_ = 0;
  void* d_archive_ = nullptr;
  void* d_workspace_ = nullptr;
  uint64_t* d_size_ = nullptr;
  uint8_t* h_archive_ = nullptr;  // pinned
};

}  // namespace hpcz::hdf5
