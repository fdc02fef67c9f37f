// The CLI's files: inputs (a regular file mapped, stdin or a pipe read whole) and outputs written to a
// temporary file beside the target and renamed into place, so that a failed run leaves nothing behind.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli_util.hpp"

namespace hpcz::cli {
namespace {

// Progress on stderr for big inputs when a person is watching.
struct Progress {
  bool on;
  explicit Progress(uint64_t bytes) : on(bytes > (256ull << 20) && isatty(2) && !quiet()) {}
  void show(const char* stage, double frac) const {
    if (!on) return;
    int w = 30, k = int(frac * w);
    std::fprintf(stderr, "\r%-12s [%s%s] %3d%%", stage, std::string(k, '#').c_str(), std::string(w - k, ' ').c_str(),
                 int(frac * 100));
    if (frac >= 1) std::fputc('\n', stderr);
  }
};

std::string errno_text() { return std::strerror(errno); }

// Everything a descriptor yields, in steps (stdin, a pipe, a character device).
std::vector<uint8_t> read_all(int fd, const std::string& name) {
  std::vector<uint8_t> buf;
  size_t used = 0;
  for (;;) {
    if (buf.size() - used < (size_t(1) << 20)) buf.resize(std::max<size_t>(buf.size() * 2, size_t(4) << 20));
    const ssize_t k = ::read(fd, buf.data() + used, buf.size() - used);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) throw InputError(name, errno_text());
    if (k == 0) break;
    used += size_t(k);
  }
  buf.resize(used);
  return buf;
}

// Opens an input, refusing what is not data (a directory, a socket), with the reason in the message.
int open_input(const std::string& path, struct stat& st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, errno_text());
  if (::fstat(fd, &st) != 0) {
    const std::string why = errno_text();
    ::close(fd);
    throw InputError(path, why);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw InputError(path, "is a directory");
  }
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode)) {
    ::close(fd);
    throw InputError(path, "is not a file");
  }
  return fd;
}

bool quiet_flag = false;

// The temporary output in progress, removed if the process is interrupted (Ctrl-C, kill, a closed
// terminal or pipe) as gzip removes its own; then the signal ends the process as it would have (the
// parent sees it killed by the signal, 141 in a shell for SIGPIPE, as gzip's). A fixed buffer: the
// handler may only call async-signal-safe functions.
char g_pending[4096];
volatile sig_atomic_t g_has_pending = 0;

void remove_pending_and_reraise(int sig) {
  if (g_has_pending) ::unlink(g_pending);
  ::signal(sig, SIG_DFL);
  ::raise(sig);  // delivered when the handler returns (the signal is blocked until then)
}
// A library that ends the process with exit() (libgomp when it cannot start a thread) skips our
// destructors; the temporary output goes all the same.
void remove_pending_at_exit() {
  if (g_has_pending) ::unlink(g_pending);
}

void track_pending(const std::string& path) {
  static const bool installed = [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
      struct sigaction old {};
      if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // as gzip: left ignored
      struct sigaction sa {};
      sa.sa_handler = remove_pending_and_reraise;
      sigemptyset(&sa.sa_mask);
      sigaction(sig, &sa, nullptr);
    }
    std::atexit(remove_pending_at_exit);
    return true;
  }();
  (void)installed;
  g_has_pending = 0;
  if (path.size() >= sizeof g_pending) return;
  std::memcpy(g_pending, path.c_str(), path.size() + 1);
  g_has_pending = 1;
}
void untrack_pending() { g_has_pending = 0; }

// The library's sink on a descriptor, its failures (a full disk, an I/O error, a broken pipe) reported
// as OutputError naming the file (exit 3), not as the Error(io) that reading an input also throws.
class OutputSink : public Sink {
 public:
  OutputSink(int fd, bool sequential, std::string name) : sink_(fd_sink(fd, sequential)), name_(std::move(name)) {}
  bool sequential() const override { return sink_->sequential(); }
  void reserve(uint64_t max_size) override {
    guard([&] { sink_->reserve(max_size); });
  }
  void finish(uint64_t size) override {
    guard([&] { sink_->finish(size); });
  }
  void write(uint64_t offset, const void* src, size_t size) override {
    guard([&] { sink_->write(offset, src, size); });
  }

 private:
  template <class F>
  void guard(F f) {
    try {
      f();
    } catch (const Error& e) {
      if (e.code() != ErrorCode::io) throw;
      std::string why = e.what();  // "cannot write the output: REASON": the reason after the file's name
      const std::string lead = "cannot write the output: ";
      if (why.compare(0, lead.size(), lead) == 0) why.erase(0, lead.size());
      throw OutputError(name_, why);
    }
  }
  std::unique_ptr<Sink> sink_;
  std::string name_;
};

// All n bytes to a descriptor (a pipe takes them in pieces); name: the file, for the message.
void write_all(int fd, const uint8_t* p, size_t n, const std::string& name) {
  for (size_t at = 0; at < n;) {
    const ssize_t w = ::write(fd, p + at, n - at);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw OutputError(name, errno_text());
    if (w == 0) throw OutputError(name, "nothing written");
    at += size_t(w);
  }
}

}  // namespace

bool quiet() { return quiet_flag; }
void set_quiet(bool q) { quiet_flag = q; }

// The rest of an open input (regular files in steps under a progress bar; pipes and devices to the end).
static std::vector<uint8_t> read_open(int fd, const struct stat& st, const std::string& path) {
  if (!S_ISREG(st.st_mode)) return read_all(fd, path);
  std::vector<uint8_t> buf(size_t(st.st_size));
  Progress pr(buf.size());
  const size_t step = size_t(64) << 20;
  for (size_t at = 0; at < buf.size();) {
    const ssize_t k = ::read(fd, buf.data() + at, std::min(step, buf.size() - at));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) throw InputError(path, k < 0 ? errno_text() : "it shrank while being read");
    at += size_t(k);
    pr.show("reading", double(at) / double(buf.size()));
  }
  return buf;
}

std::vector<uint8_t> read_file(const std::string& path) {
  if (path == "-") return read_all(0, "standard input");
  struct stat st;
  const int fd = open_input(path, st);
  try {
    std::vector<uint8_t> buf = read_open(fd, st, path);
    ::close(fd);
    return buf;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

// Mapping skips the read's copy and the zero-filled buffer it lands in: a 539 MB input took 0.33 s
// to read into a vector on an H200 host (the page cache gives 4 GB/s). Whatever is not mapped is read
// from the descriptor already open (a named pipe opened twice could lose its writer or wait forever).
InputFile::InputFile(const std::string& path) {
  if (path == "-") {
    copy_ = read_all(0, "standard input");
    size_ = copy_.size();
    return;
  }
  struct stat st;
  const int fd = open_input(path, st);
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    size_ = size_t(st.st_size);
    const Progress pr(size_);
    // Populated at once, or a step at a time under a progress bar (a cold file on a slow disk).
    void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | (pr.on ? 0 : MAP_POPULATE), fd, 0);
    map_ = m == MAP_FAILED ? nullptr : m;
    if (map_ && pr.on) {
      const size_t step = size_t(64) << 20;
      volatile uint8_t sink = 0;
      for (size_t at = 0; at < size_; at += step) {
        const size_t k = std::min(step, size_ - at);
        for (size_t b = 0; b < k; b += 4096) sink = sink + static_cast<const uint8_t*>(map_)[at + b];  // fault the pages in
        pr.show("reading", double(at + k) / double(size_));
      }
    }
  }
  if (!map_) {  // a pipe, a device, an empty file, or not mappable: read it
    try {
      copy_ = read_open(fd, st, path);
    } catch (...) {
      ::close(fd);
      throw;
    }
    size_ = copy_.size();
  }
  ::close(fd);
}
InputFile::~InputFile() {
  if (map_) ::munmap(map_, size_);
}

OutputFile::OutputFile(const std::string& path, bool force, const std::vector<std::string>& inputs)
    : path_(path), name_(path == "-" ? "standard output" : path) {
  if (path == "-") {
    if (isatty(1) && !force) throw UsageError("standard output is a terminal: not writing binary data to it (-f to force)");
    fd_ = 1;
    return;
  }
  struct stat out;
  if (::stat(path.c_str(), &out) == 0) {
    for (const std::string& in : inputs) {
      struct stat st;
      if (in != "-" && ::stat(in.c_str(), &st) == 0 && st.st_dev == out.st_dev && st.st_ino == out.st_ino)
        throw UsageError(path + ": is also the input");
    }
    if (S_ISDIR(out.st_mode)) throw UsageError(path + ": is a directory");
    if (!force) throw UsageError(path + ": exists (-f to overwrite it)");
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  tmp_ = dir + "." + base + ".hpcz-XXXXXX";
  fd_ = ::mkstemp(&tmp_[0]);
  if (fd_ < 0) {
    tmp_.clear();
    throw OutputError(path, errno_text());
  }
  track_pending(tmp_);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, 0666 & ~mask);  // as a plain create would (mkstemp makes it 0600)
}

OutputFile::~OutputFile() {
  if (fd_ >= 0 && !to_stdout()) ::close(fd_);
  if (!tmp_.empty() && !done_) ::unlink(tmp_.c_str());
  if (!tmp_.empty()) untrack_pending();
}

std::unique_ptr<Sink> OutputFile::sink() const { return std::make_unique<OutputSink>(fd_, to_stdout(), name_); }

void OutputFile::write(const uint8_t* data, size_t size) {
  Progress pr(size);
  const size_t step = size_t(64) << 20;
  for (size_t at = 0; at < size;) {
    const size_t n = std::min(step, size - at);
    write_all(fd_, data + at, n, name_);
    at += n;
    pr.show("writing", double(at) / double(size));
  }
}

void OutputFile::commit() {
  if (to_stdout()) return;
  const int r = ::close(fd_);
  fd_ = -1;
  if (r != 0) throw OutputError(path_, errno_text());  // the destructor removes the temporary
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) throw OutputError(path_, errno_text());
  untrack_pending();
  done_ = true;
}

namespace {
int temp_file(std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/hpcz-spool-XXXXXX";
  name = "temporary file in " + path.substr(0, path.rfind('/'));
  const int fd = ::mkostemp(&path[0], O_CLOEXEC);
  if (fd < 0) throw OutputError(name, errno_text());
  ::unlink(path.c_str());
  return fd;
}
}  // namespace

StreamInput::StreamInput(const std::string& path) {
  struct stat st;
  const int fd = path == "-" ? 0 : open_input(path, st);
  if (path != "-" && S_ISREG(st.st_mode)) {
    fd_ = fd;
    size_ = uint64_t(st.st_size);
  } else {  // spooled: read in steps to the end, written to the temporary file
    try {
      std::string spool;
      fd_ = temp_file(spool);
      std::vector<uint8_t> buf(size_t(4) << 20);
      for (;;) {
        const ssize_t k = ::read(fd, buf.data(), buf.size());
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) throw InputError(input_name(path), errno_text());
        if (k == 0) break;
        write_all(fd_, buf.data(), size_t(k), spool);
        size_ += uint64_t(k);
      }
    } catch (...) {
      if (fd > 0) ::close(fd);
      if (fd_ >= 0) ::close(fd_);
      throw;
    }
    if (fd > 0) ::close(fd);
  }
  src_ = hpcz::fd_source(fd_, size_);
}
StreamInput::~StreamInput() {
  if (fd_ > 0) ::close(fd_);
}

Spool::Spool() : fd_(temp_file(name_)) {}
Spool::~Spool() { ::close(fd_); }
std::unique_ptr<Sink> Spool::sink() const { return std::make_unique<OutputSink>(fd_, false, name_); }
void Spool::copy_to(int out, uint64_t n, const std::string& name) const {
  std::vector<uint8_t> buf(size_t(4) << 20);
  for (uint64_t at = 0; at < n;) {
    const ssize_t k = ::pread(fd_, buf.data(), size_t(std::min<uint64_t>(buf.size(), n - at)), off_t(at));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) throw OutputError(name_, "cannot read it back: " + (k < 0 ? errno_text() : std::string("it is short")));
    write_all(out, buf.data(), size_t(k), name);
    at += uint64_t(k);
  }
}

std::function<void(uint64_t, uint64_t)> progress_bar(const char* stage) {
  if (!isatty(2) || quiet()) return nullptr;
  return [stage](uint64_t done, uint64_t total) {
    Progress pr(total);
    pr.show(stage, total ? double(done) / double(total) : 1.0);
  };
}

void write_file(const std::string& path, const uint8_t* data, size_t size) {
  OutputFile f(path, true, {});
  f.write(data, size);
  f.commit();
}

}  // namespace hpcz::cli
