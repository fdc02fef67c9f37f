// Small helpers shared by the CLI's commands.
#pragma once
#include <cstdint>
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

 private:
  std::string path_, tmp_;
  int fd_ = -1;
  bool done_ = false;
};
// Writes a whole file, replacing one that exists (benchmark reports and scratch files).
void write_file(const std::string& path, const uint8_t* data, size_t size);
// -q: no messages but errors.
bool quiet();
void set_quiet(bool q);
std::string dims_string(const std::vector<uint64_t>& d);

int bench_main(const std::vector<std::string>& args);

}  // namespace hpcz::cli
