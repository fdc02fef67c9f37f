// Small helpers shared by the CLI's commands.
#pragma once
#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hpcz/hpcz.hpp"

namespace hpcz::cli {

// Exit codes are a contract: 0 success, 1 usage error, 2 bad input (an input unreadable, truncated or
// corrupt; an output that is a directory, a socket or a block device), 3 runtime failure (no GPU, CUDA,
// an output that cannot be written: a full disk, no permission, an I/O error). A closed pipe on the
// output ends the process by SIGPIPE, silently, as gzip does (where SIGPIPE is ignored: exit 3).
enum Exit { kOk = 0, kUsage = 1, kBadInput = 2, kRuntime = 3 };

// Every error message is "hpcz: " and what() of one of these; about a file, what() is "FILE: reason".
// A usage error is printed in one line, then "Try 'hpcz VERB --help'." where the command line is at
// fault (an unknown option, a missing value); not where a file is (an existing output, a terminal).
struct UsageError : std::runtime_error {
  explicit UsageError(const std::string& what, bool point_to_help = true)
      : std::runtime_error(what), point_to_help(point_to_help) {}
  bool point_to_help;
};
struct InputError : std::runtime_error {  // exit 2
  using std::runtime_error::runtime_error;
  InputError(const std::string& file, const std::string& reason) : std::runtime_error(file + ": " + reason) {}
};
struct OutputError : std::runtime_error {  // exit 3: an output (or a temporary file) could not be written
  using std::runtime_error::runtime_error;
  OutputError(const std::string& file, const std::string& reason) : std::runtime_error(file + ": " + reason) {}
};
// How messages name a path: "-" is standard input (or output).
inline std::string input_name(const std::string& path) { return path == "-" ? "standard input" : path; }

std::vector<uint64_t> parse_dims(const std::string& s);
DType parse_dtype(const std::string& s);  // hpcz::parse_dtype, or a UsageError naming the accepted types
// hpcz::parse_codec, or a UsageError "FLAG must be fast, ratio or interp, not 'S'".
Codec parse_codec_flag(const std::string& flag, const std::string& s);
double parse_number(const std::string& s, const char* what);
std::vector<uint8_t> read_file(const std::string& path);
// A file's bytes, read-only, mapped rather than copied (a regular file; else read into memory).
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  const uint8_t* data() const { return map_ ? static_cast<const uint8_t*>(map_) : copy_.data(); }
  size_t size() const { return size_; }

 private:
  void* map_ = nullptr;
  size_t size_ = 0;
  std::vector<uint8_t> copy_;
};
// An output file, as gzip writes one. "-" is standard output. An existing character device or FIFO
// (/dev/null, a named pipe; a symbolic link to one) is written into as it is, with or without force; a
// directory, socket or block device is refused (InputError), and so is an existing file unless force,
// and always one of `inputs`; a symbolic link to standard output's own file (/dev/stdout) is "-". Anything else is a new regular file: made in the target's directory as
// an unnamed O_TMPFILE (a killed run leaves nothing) or, where the file system has none, as a hidden
// temporary removed on failure and on SIGINT/TERM/HUP/PIPE; commit() gives it the target's name (a
// symbolic link to a regular file keeps pointing at it). Without commit (an error on the way) nothing
// is left. A regular inputs[0] lends its permission bits (exactly, from the start), its owner and group
// where they can be given, and at commit its access and modification times; otherwise the mode is
// 0666 & ~umask. Failures to create or write it are OutputError (exit 3) naming the file.
class OutputFile {
 public:
  OutputFile(const std::string& path, bool force, const std::vector<std::string>& inputs);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  void write(const uint8_t* data, size_t size);
  void commit();
  bool to_stdout() const { return path_ == "-"; }
  // Written in order, never sought (standard output, a FIFO, a device): an archive's header comes last,
  // so compression assembles it in a Spool first.
  bool streamed() const { return streamed_; }
  int fd() const { return fd_; }
  const std::string& name() const { return name_; }  // for messages
  // A sink on fd() (sequential where streamed) whose failures are OutputError naming the output.
  std::unique_ptr<hpcz::Sink> sink() const;

 private:
  std::string path_, name_, target_, tmp_;  // target_: where the data lands (a link's regular file)
  int fd_ = -1;
  bool streamed_ = false, unnamed_ = false, force_ = false, has_src_ = false, done_ = false;
  timespec src_times_[2] = {};
};
// An input of the streaming calls: a regular file read where it lies, or anything else (standard
// input, a pipe, a device) first spooled to an unlinked temporary file in $TMPDIR (or /tmp), since
// compression reads its input twice (the value range, then the slabs).
class StreamInput {
 public:
  explicit StreamInput(const std::string& path);
  ~StreamInput();
  StreamInput(const StreamInput&) = delete;
  StreamInput& operator=(const StreamInput&) = delete;
  hpcz::Source& source() { return *src_; }
  uint64_t size() const { return size_; }

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::unique_ptr<hpcz::Source> src_;
};
// An unlinked temporary file in $TMPDIR (or /tmp): where an archive bound for standard output is
// assembled (its header comes last).
class Spool {
 public:
  Spool();
  ~Spool();
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;
  int fd() const { return fd_; }
  std::unique_ptr<hpcz::Sink> sink() const;  // failures are OutputError
  // Copies the first n bytes to descriptor out (standard output, a FIFO, a device), named `name`.
  void copy_to(int out, uint64_t n, const std::string& name) const;

 private:
  std::string name_;  // before fd_: the constructor fills it while making fd_
  int fd_ = -1;
};
// A progress bar over a whole streaming job on stderr (a terminal, not -q, jobs above 256 MiB).
std::function<void(uint64_t, uint64_t)> progress_bar(const char* stage);
// Writes a whole file, replacing one that exists (benchmark reports and scratch files).
void write_file(const std::string& path, const uint8_t* data, size_t size);
// -q: no messages but errors.
bool quiet();
void set_quiet(bool q);
std::string dims_string(const std::vector<uint64_t>& d);

int bench_main(const std::vector<std::string>& args);

}  // namespace hpcz::cli
