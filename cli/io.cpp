// The CLI's files: inputs (a regular file mapped, stdin or a pipe read whole) and outputs made as an
// unnamed file in the target's directory (or a hidden temporary there) given its name at the end, so
// that a failed or killed run leaves nothing behind; devices and FIFOs are written into as they are.
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

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

// A named temporary output in progress, removed if the process is interrupted (Ctrl-C, kill, a closed
// terminal or pipe) as gzip removes its own; then the signal ends the process as it would have (the
// parent sees it killed by the signal, 141 in a shell for SIGPIPE, as gzip's). A fixed buffer: the
// handler may only call async-signal-safe functions. (An unnamed O_TMPFILE output needs none of this.)
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

// What a file that cannot be an output is.
const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISBLK(m)) return "a block device";
  return "not a regular file";
}

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

// Gives the unnamed (O_TMPFILE) file open on fd the name `to`; false with errno set if it cannot.
bool link_unnamed(int fd, const std::string& to) {
  char proc[64];
  std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  if (::linkat(AT_FDCWD, proc, AT_FDCWD, to.c_str(), AT_SYMLINK_FOLLOW) == 0) return true;
  if (errno != ENOENT || ::access("/proc/self/fd", F_OK) == 0) return false;
  return ::linkat(fd, "", AT_FDCWD, to.c_str(), AT_EMPTY_PATH) == 0;  // no /proc (needs CAP_DAC_READ_SEARCH)
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

namespace {
// The directory a path's last component lies in ("." for a bare name).
std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}
// A hidden name beside target: ".NAME.hpcz-" and six random letters (X's for mkstemp).
std::string hidden_name(const std::string& target, bool random) {
  const size_t slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : target.substr(0, slash + 1);
  std::string name = dir + "." + target.substr(dir.size()) + ".hpcz-XXXXXX";
  if (random) {
    static std::mt19937_64 gen(std::random_device{}() ^ uint64_t(::getpid()) << 32);
    const char* letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (size_t i = name.size() - 6; i < name.size(); ++i) name[i] = letters[gen() % 62];
  }
  return name;
}
// Renames without replacing where the file system can (false, errno EEXIST, if to exists).
bool rename_new(const std::string& from, const std::string& to) {
#ifdef RENAME_NOREPLACE
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno != EINVAL && errno != ENOSYS) return false;
#endif
  return ::rename(from.c_str(), to.c_str()) == 0;
}
}  // namespace

OutputFile::OutputFile(const std::string& path, bool force, const std::vector<std::string>& inputs)
    : path_(path), name_(path == "-" ? "standard output" : path), force_(force) {
  if (path == "-") {
    if (isatty(1) && !force) throw UsageError("standard output is a terminal: not writing binary data to it (-f to force)", false);
    fd_ = 1;
    streamed_ = true;
    return;
  }
  // The input whose mode, owner and times the output takes: a regular file (not stdin, a pipe, a device).
  struct stat src {};
  has_src_ = !inputs.empty() && inputs[0] != "-" && ::stat(inputs[0].c_str(), &src) == 0 && S_ISREG(src.st_mode);
  struct stat out {};
  const bool exists = ::lstat(path.c_str(), &out) == 0, link = exists && S_ISLNK(out.st_mode);
  if (!exists && errno != ENOENT) throw OutputError(path, errno_text());
  if (link && ::stat(path.c_str(), &out) != 0) {
    if (errno != ENOENT) throw OutputError(path, errno_text());
    throw InputError(path, "is a symbolic link to nothing: not followed, not replaced");
  }
  if (exists) {
    for (const std::string& in : inputs) {
      struct stat st;
      if (in != "-" && !S_ISCHR(out.st_mode) && ::stat(in.c_str(), &st) == 0 && st.st_dev == out.st_dev &&
          st.st_ino == out.st_ino)
        throw UsageError(path + ": is also the input", false);
    }
    if (S_ISCHR(out.st_mode) || S_ISFIFO(out.st_mode)) {  // written into, never replaced (a FIFO: once read)
      fd_ = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
      if (fd_ < 0) throw OutputError(path, errno_text());
      struct stat now {};
      const bool same = ::fstat(fd_, &now) == 0 && (S_ISCHR(now.st_mode) || S_ISFIFO(now.st_mode));
      const bool tty = same && isatty(fd_);
      if (!same || (tty && !force)) {
        ::close(fd_);
        fd_ = -1;
        if (!same) throw OutputError(path, "was replaced while being opened");
        throw UsageError(path + ": is a terminal: not writing binary data to it (-f to force)", false);
      }
      streamed_ = true;
      return;
    }
    if (!S_ISREG(out.st_mode))
      throw InputError(path, std::string("is ") + kind_of(out.st_mode) + ": not written (an output is a file, a FIFO or a character device)");
    struct stat one {};
    if (link && ::fstat(1, &one) == 0 && one.st_dev == out.st_dev && one.st_ino == out.st_ino) {
      fd_ = 1;  // /dev/stdout, /dev/fd/1 on a file: standard output, as "-" (appended to after >>)
      path_ = "-";
      streamed_ = true;
      return;
    }
    if (!force) throw UsageError(path + ": exists (-f to overwrite it)", false);
    if (link) {  // the file the link points at is replaced; the link stays
      char* real = ::realpath(path.c_str(), nullptr);
      if (!real) throw OutputError(path, errno_text());
      target_ = real;
      std::free(real);
    }
  }
  if (target_.empty()) target_ = path;
  // Created with the input's permission bits (the umask may only take some away until fchmod below).
  const mode_t mode = has_src_ ? (src.st_mode & 0777) : 0666;
#ifdef O_TMPFILE
  fd_ = ::open(dir_of(target_).c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
  unnamed_ = fd_ >= 0;
  if (fd_ < 0 && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) throw OutputError(path, errno_text());
#endif
  if (fd_ < 0) {  // no O_TMPFILE on this file system: a hidden temporary beside the target
    tmp_ = hidden_name(target_, false);
    fd_ = ::mkostemp(&tmp_[0], O_CLOEXEC);  // mode 0600 until fchmod
    if (fd_ < 0) {
      tmp_.clear();
      throw OutputError(path, errno_text());
    }
    track_pending(tmp_);
    if (!has_src_) {
      const mode_t mask = ::umask(0);
      ::umask(mask);
      ::fchmod(fd_, mode & ~mask);  // as a plain create would
    }
  }
  if (has_src_) {  // as gzip: the group (a member may give it), the owner (root may), the bits exactly
    mode_t m = mode;
    struct stat now {};
    if (::fstat(fd_, &now) != 0) throw OutputError(path, errno_text());
    // A group other than the input's gets no more than others do.
    if (now.st_gid != src.st_gid && ::fchown(fd_, uid_t(-1), src.st_gid) != 0) m &= ~mode_t(070 & ~((m & 07) << 3));
    if (now.st_uid != src.st_uid) {
      const int given = ::fchown(fd_, src.st_uid, gid_t(-1));  // root only; else the output is ours
      (void)given;
    }
    if (::fchmod(fd_, m) != 0) throw OutputError(path, errno_text());
    src_times_[0] = src.st_atim;
    src_times_[1] = src.st_mtim;
  }
}

OutputFile::~OutputFile() {
  if (fd_ >= 0 && !to_stdout()) ::close(fd_);
  if (!tmp_.empty() && !done_) ::unlink(tmp_.c_str());
  if (!tmp_.empty()) untrack_pending();
}

std::unique_ptr<Sink> OutputFile::sink() const { return std::make_unique<OutputSink>(fd_, streamed_, name_); }

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
  if (streamed_) {
    if (!to_stdout()) {
      const int r = ::close(fd_);
      fd_ = -1;
      if (r != 0) throw OutputError(name_, errno_text());
    }
    done_ = true;
    return;
  }
  if (has_src_) (void)::futimens(fd_, src_times_);  // after the last write; as gzip, best effort
  if (unnamed_ && !force_) {  // named where nothing is: never over a file that appeared meanwhile
    if (!link_unnamed(fd_, target_)) throw OutputError(path_, errno_text());
    const int r = ::close(fd_);
    fd_ = -1;
    if (r != 0) {
      const std::string why = errno_text();
      ::unlink(target_.c_str());
      throw OutputError(path_, why);
    }
    done_ = true;
    return;
  }
  if (unnamed_) {  // linkat cannot replace a file: a hidden name first, then renamed over the target
    for (int tries = 0;; ++tries) {
      tmp_ = hidden_name(target_, true);
      if (link_unnamed(fd_, tmp_)) break;
      const int e = errno;
      tmp_.clear();
      if (e != EEXIST || tries == 100) {
        errno = e;
        throw OutputError(path_, errno_text());
      }
    }
    track_pending(tmp_);
  }
  const int r = ::close(fd_);
  fd_ = -1;
  if (r != 0) throw OutputError(path_, errno_text());  // the destructor removes the temporary
  struct stat now {};
  if (::lstat(target_.c_str(), &now) == 0 && !S_ISREG(now.st_mode))
    throw InputError(path_, std::string("is now ") + kind_of(now.st_mode) + ": not replaced");
  if (force_ ? ::rename(tmp_.c_str(), target_.c_str()) != 0 : !rename_new(tmp_, target_))
    throw OutputError(path_, errno_text());
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
