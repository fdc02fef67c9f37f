// Small helpers shared by the CLI's commands.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hpcz/hpcz.hpp"

namespace hpcz::cli {

// Exit codes are a contract: 0 success, 1 usage error, 2 bad input (an input unreadable, truncated or
// corrupt), 3 runtime failure (no GPU, CUDA, an output that cannot be written: a full disk, no
// permission, an I/O error). A closed pipe on the
// output ends the process by SIGPIPE, silently, as gzip does (where SIGPIPE is ignored: exit 3).
enum Exit { kOk = 0, kUsage = 1, kBadInput = 2, kRuntime = 3 };

// Every error message is "hpcz: " and what() of one of these; about a file, what() is "FILE: reason".
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
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
DType parse_dtype(const std::string& s);
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
// An output written to a temporary file beside path and renamed onto it by commit(); without commit
// (an error on the way) the temporary file is removed. "-" is standard output. Refuses an existing
// file unless force, and always one of `inputs`. Failures to create or write it are OutputError
// (exit 3) naming the file.
class OutputFile {
 public:
  OutputFile(const std::string& path, bool force, const std::vector<std::string>& inputs);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  void write(const uint8_t* data, size_t size);
  void commit();
  bool to_stdout() const { return path_ == "-"; }
  int fd() const { return fd_; }
  const std::string& name() const { return name_; }  // for messages
  // A sink on fd() (sequential for standard output) whose failures are OutputError naming the output.
  std::unique_ptr<hpcz::Sink> sink() const;

 private:
  std::string path_, name_, tmp_;
  int fd_ = -1;
  bool done_ = false;
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
