// The streaming path's file source (stream_io.cpp, with the other sources and sinks): the range pass
// reads a file through its mapping; and the sink over a caller's buffer that the host calls stream into.
#pragma once
#include <mutex>

#include "hpcz/hpcz.hpp"

namespace hpcz::pipeline {

// A file read with pread from the I/O threads; the range pass reads it through a mapping instead (no
// copy), piece by piece, unmapping each piece once reduced.
class FdSource : public Source {
 public:
  FdSource(int fd, uint64_t size) : fd_(fd), size_(size) {}
  ~FdSource() override;
  uint64_t size() const override { return size_; }
  void read(uint64_t off, void* dst, size_t n) override;
  // The file mapped read-only, or nullptr (not a regular file, or not mappable).
  const uint8_t* mapping();
  void populate(uint64_t off, uint64_t n);     // page-aligned off
  void unmap_range(uint64_t off, uint64_t n);  // page-aligned off; the pages stay in the page cache

 private:
  int fd_;
  uint64_t size_;
  uint8_t* map_ = nullptr;
  std::once_flag once_;
};

// A sink over a caller's buffer of fixed capacity (each byte written once, from any thread).
class BufferSink : public Sink {
 public:
  BufferSink(uint8_t* p, uint64_t capacity) : p_(p), capacity_(capacity) {}
  void write(uint64_t off, const void* src, size_t n) override;

 private:
  uint8_t* p_;
  uint64_t capacity_;
};

}  // namespace hpcz::pipeline
