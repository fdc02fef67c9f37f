// Sources and sinks of the streaming calls: a file descriptor (pread; a regular output file written
// through a shared mapping by several threads), a buffer in memory, a caller's buffer to write into.
#include "pipeline/stream_io.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/error.hpp"

namespace hpcz {
namespace {
std::string errno_text() { return std::strerror(errno); }
}  // namespace

namespace pipeline {

FdSource::~FdSource() {
  if (map_) ::munmap(map_, size_t(size_));
}

void FdSource::read(uint64_t off, void* dst, size_t n) {
  auto* p = static_cast<uint8_t*>(dst);
  while (n) {
    const ssize_t k = ::pread(fd_, p, std::min<size_t>(n, size_t(1) << 30), off_t(off));
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) fail(ErrorCode::io, "cannot read the input: " + errno_text());
    if (k == 0) fail(ErrorCode::io, "the input ended early (it shrank while being read)");
    p += k, off += uint64_t(k), n -= size_t(k);
  }
}

const uint8_t* FdSource::mapping() {
  std::call_once(once_, [&] {
    struct stat st;
    if (!size_ || ::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode) || uint64_t(st.st_size) < size_) return;
    void* m = ::mmap(nullptr, size_t(size_), PROT_READ, MAP_SHARED, fd_, 0);
    if (m != MAP_FAILED) map_ = static_cast<uint8_t*>(m);
  });
  return map_;
}

void FdSource::populate(uint64_t off, uint64_t n) {
#ifdef MADV_POPULATE_READ
  if (::madvise(map_ + off, size_t(n), MADV_POPULATE_READ) != 0 && errno != EINVAL && errno != EPERM)
    fail(ErrorCode::io, "cannot read the input: " + std::string(errno == EFAULT ? "it shrank while being read" : errno_text()));
#else
  (void)off, (void)n;
#endif
}

void FdSource::unmap_range(uint64_t off, uint64_t n) {
  if (map_) ::madvise(map_ + off, size_t(n), MADV_DONTNEED);
}

void BufferSink::write(uint64_t off, const void* src, size_t n) {
  if (off > capacity_ || n > capacity_ - off) fail(ErrorCode::internal, "internal error: a write past the buffer");
  std::memcpy(p_ + off, src, n);
}

}  // namespace pipeline

namespace {

class FdSink : public Sink {
 public:
  FdSink(int fd, bool sequential) : fd_(fd), sequential_(sequential) {
    struct stat st;
    regular_ = !sequential && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  }
  ~FdSink() override {
    if (map_) ::munmap(map_, map_size_);
  }
  bool sequential() const override { return sequential_; }
  // A new page of a file costs its allocation (tmpfs: 1.7 GB/s by pwrite from any number of threads,
  // the file's lock held; 2.8 GB/s by stores to a shared mapping from 32 threads, measured on an H100
  // host by bench/host/limits.cu): a regular file is sized and mapped once its largest size is known.
  void reserve(uint64_t max_size) override {
    if (!regular_ || max_size < (uint64_t(64) << 20)) return;
    if (::ftruncate(fd_, off_t(max_size)) != 0) return;
    void* m = ::mmap(nullptr, max_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (m == MAP_FAILED) return;  // pwrite then; finish() cuts the file to its size either way
    map_ = static_cast<uint8_t*>(m);
    map_size_ = max_size;
  }
  // A regular file ends where the output does: not at the reserved size, nor at an older, longer file's.
  void finish(uint64_t size) override {
    if (map_) ::munmap(map_, map_size_);
    map_ = nullptr;
    if (regular_ && ::ftruncate(fd_, off_t(size)) != 0) fail(ErrorCode::io, "cannot write the output: " + errno_text());
  }
  void write(uint64_t off, const void* src, size_t n) override {
    if (map_ && off + n <= map_size_ && populate(off, n)) {
      std::memcpy(map_ + off, src, n);
      // The written pages stay in the file; unmapping them keeps the process's resident set at its
      // buffers (whole pages inside the range only: a neighbour may still be storing into an edge).
      const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE)), a = (off + page - 1) / page * page,
                     b = (off + n) / page * page;
      if (a < b) ::madvise(map_ + a, b - a, MADV_DONTNEED);
      return;
    }
    auto* p = static_cast<const uint8_t*>(src);
    while (n) {
      const size_t step = std::min<size_t>(n, size_t(1) << 30);
      const ssize_t k = sequential_ ? ::write(fd_, p, step) : ::pwrite(fd_, p, step, off_t(off));
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) fail(ErrorCode::io, "cannot write the output: " + (k < 0 ? errno_text() : std::string("no space")));
      p += k, off += uint64_t(k), n -= size_t(k);
    }
  }

 private:
  // Allocates the pages of [off, off + n) (whole pages: the neighbours' stores do not mind): false
  // where the kernel has no MADV_POPULATE_WRITE (then pwrite); an Error(io) where the disk is full.
  bool populate(uint64_t off, size_t n) {
#ifdef MADV_POPULATE_WRITE
    const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE)), a = off / page * page;
    const uint64_t b = std::min<uint64_t>(map_size_, (off + n + page - 1) / page * page);
    if (::madvise(map_ + a, b - a, MADV_POPULATE_WRITE) == 0) return true;
    if (errno == EINVAL || errno == EPERM) return false;
    fail(ErrorCode::io, std::string("cannot write the output: ") +
                            (errno == EFAULT || errno == ENOMEM ? "no space left on its file system" : errno_text()));
#else
    (void)off, (void)n;
    return false;
#endif
  }
  int fd_;
  bool sequential_, regular_;
  uint8_t* map_ = nullptr;
  uint64_t map_size_ = 0;
};

class MemorySource : public Source {
 public:
  MemorySource(const void* p, uint64_t n) : p_(static_cast<const uint8_t*>(p)), n_(n) {}
  uint64_t size() const override { return n_; }
  void read(uint64_t off, void* dst, size_t n) override { std::memcpy(dst, p_ + off, n); }
  const uint8_t* data() const override { return p_; }

 private:
  const uint8_t* p_;
  uint64_t n_;
};

}  // namespace

std::unique_ptr<Source> fd_source(int fd, uint64_t size) { return std::make_unique<pipeline::FdSource>(fd, size); }
std::unique_ptr<Sink> fd_sink(int fd, bool sequential) { return std::make_unique<FdSink>(fd, sequential); }
std::unique_ptr<Source> memory_source(const void* data, uint64_t size) {
  return std::make_unique<MemorySource>(data, size);
}

}  // namespace hpcz
