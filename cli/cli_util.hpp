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

// Exit codes are a contract: 0 success, 1 usage error, 2 bad input, 3 runtime failure (no GPU, CUDA).
enum Exit { kOk = 0, kUsage = 1, kBadInput = 2, kRuntime = 3 };

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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
// file unless force, and always one of `inputs`.
class OutputFile {
 public:
  OutputFile(const std::string& path, bool force, const std::vector<std::string>& inputs);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  void write(const uint8_t* data, size_t size);
  void commit();
  bool to_stdout() const { return path_ == "-"; }
  int fd() const { return to_stdout() ? 1 : fd_; }

 private:
  std::string path_, tmp_;
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
  // Copies the first n bytes to descriptor out (standard output).
  void copy_to(int out, uint64_t n, const std::string& name) const;

 private:
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
