// Glue between the public API, the archive format and the backends.
#pragma once
#include <vector>

#include "format/header.hpp"
#include "hpcz/hpcz.hpp"

namespace hpcz::pipeline {

// Checks the request and fills every header field that does not depend on the data.
format::HeaderFields header_template(DType dtype, const std::vector<uint64_t>& dims, const Options& opt);

// Parses the header; with full, also the chunk table, which must lie inside `size` bytes.
ArchiveInfo parse_archive(const uint8_t* a, size_t size, bool full);

[[noreturn]] void fail(ErrorCode code, const std::string& msg);

std::vector<uint8_t> compress_cpu(const void* in, format::HeaderFields h);
void decompress_cpu(const uint8_t* archive, const ArchiveInfo& info, void* out);

// Defined in the CUDA part (or as stubs that throw when the build has no CUDA).
std::vector<uint8_t> compress_gpu_host(const void* in, const format::HeaderFields& h);
void decompress_gpu_host(const uint8_t* archive, const ArchiveInfo& info, void* out);

// The ratio mode's codebook kernel on its own (tests and the codebook benchmark): one book per
// histogram of nsym counts; returns the code lengths (nsym per book) and the kernel's time in ms.
std::vector<uint8_t> gpu_build_books(const std::vector<uint32_t>& hists, uint32_t nsym, double* ms);

}  // namespace hpcz::pipeline
