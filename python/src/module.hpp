// What the module's source files share: the array types it takes, the parsers of the Python call's
// words and the wording of a device decoder's status.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <optional>
#include <string>

#include "hpcz/hpcz.hpp"

namespace hpcz_python {
namespace nb = nanobind;

using Bytes = nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Values = nb::ndarray<nb::c_contig, nb::device::cpu>;            // written into
using ReadValues = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;  // read only (read-only arrays too)

hpcz::Codec codec_of(const std::string& mode);
hpcz::BoundMode bound_mode_of(const std::string& kind);
hpcz::DType dtype_of(int bits);
// The device calls' options: plain archives, on the GPU. abs_bound: abs_and_rel's and abs_or_rel's
// absolute bound (bound is then the rel factor).
hpcz::Options options_of(const std::string& mode, const std::string& bound_kind, double bound, std::optional<double> fill,
                         double abs_bound = 0.0);
// "corrupt archive: ..." for a device decoder's nonzero status word (hpcz.hpp, decompress_device).
std::string decode_status_message(uint32_t status);
// An archive's header bytes (available of them) as inspect_header reads them, refused (hpcz::Error)
// where the archive's size differs from the header's or it needs the host (the lossless stage).
hpcz::ArchiveInfo device_archive_info(const uint8_t* header, size_t available, size_t archive_size);

// cupy_batch.cpp: batches of cupy arrays read and placed in C++.
void bind_cupy_batches(nb::module_& m);
}  // namespace hpcz_python
