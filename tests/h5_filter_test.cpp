// The HDF5 filter from a C program linked to the system's HDF5 (as netCDF-C and h5dump are): the plugin
// found through HDF5_PLUGIN_PATH, set_local's calls resolved in this process's HDF5, datasets written
// and read back within the bound, smaller than raw. usage: h5_filter_test SAMPLE.bin OUT.h5
#include <hdf5.h>
#if HPCZ_HAS_CUDA
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "hpcz/hdf5.hpp"

namespace {

constexpr H5Z_filter_t kHpcz = 34520;
int failures = 0;
#define EXPECT(c)                                                   \
  do {                                                              \
    if (!(c)) {                                                     \
      std::fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #c); \
      ++failures;                                                   \
    }                                                               \
  } while (0)

void words(double x, unsigned* w) {
  uint64_t u;
  std::memcpy(&u, &x, 8);
  w[0] = unsigned(u), w[1] = unsigned(u >> 32);
}

// Writes `values` (type, dims) chunked with the filter (mode, bound kind, bound, fill), reads it back.
template <class T>
void roundtrip(hid_t file, const char* name, hid_t type, const std::vector<T>& values, std::vector<hsize_t> dims,
               std::vector<hsize_t> chunk, unsigned mode, unsigned kind, double bound, const double* fill, double eb) {
  unsigned cd[8] = {1, mode, kind, 0, 0, fill ? 1u : 0u, 0, 0};
  words(bound, cd + 3);
  if (fill) words(*fill, cd + 6);
  hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  EXPECT(H5Pset_chunk(dcpl, int(chunk.size()), chunk.data()) >= 0);
  EXPECT(H5Pset_filter(dcpl, kHpcz, H5Z_FLAG_MANDATORY, 8, cd) >= 0);
  hid_t ds = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  EXPECT(ds >= 0);
  EXPECT(H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0);
  EXPECT(H5Dget_storage_size(ds) < values.size() * sizeof(T));
  H5Dclose(ds);
  std::vector<T> back(values.size());
  ds = H5Dopen2(file, name, H5P_DEFAULT);
  EXPECT(H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()) >= 0);
  size_t bad = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const bool exact = !std::isfinite(values[i]) || (fill && values[i] == T(*fill));
    if (exact ? std::memcmp(&values[i], &back[i], sizeof(T)) != 0
              : std::fabs(double(values[i]) - double(back[i])) > eb)
      ++bad;
  }
  EXPECT(bad == 0);
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
}

// Direct chunk writes (hpcz_hdf5): chunks compressed from host memory and, with a GPU, from device
// memory, written with H5Dwrite_chunk, read back through the filter within the bound; the stored bytes
// are hpcz's archive of the chunk (the same from the GPU as from the CPU).
void direct_chunks(hid_t file, const std::vector<float>& ts, bool lossless) {
  const hsize_t dims[3] = {100, 64, 128}, chunk[3] = {25, 64, 128};
  const size_t chunk_values = 25 * 64 * 128;
  unsigned cd[8] = {1, 2, 1, 0, 0, lossless ? 2u : 0u, 0, 0};
  const double eb = 0.05;
  words(eb, cd + 3);
  hid_t space = H5Screate_simple(3, dims, nullptr), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 3, chunk);
  H5Pset_filter(dcpl, kHpcz, H5Z_FLAG_MANDATORY, 8, cd);
  const char* name = lossless ? "ts_direct_lossless" : "ts_direct";
  hid_t ds = H5Dcreate2(file, name, H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  EXPECT(ds >= 0);
  const hpcz::hdf5::ChunkCoding coding = hpcz::hdf5::chunk_coding(ds);
  EXPECT(coding.options.codec == hpcz::Codec::ratio && coding.options.bound == eb && coding.n_values == chunk_values);
  EXPECT(coding.options.second_stage == lossless && coding.dims.size() == 3 && coding.chunk[0] == 25);
  const bool gpu = hpcz::gpu_available();
  std::vector<std::vector<uint8_t>> expected;
  for (int c = 0; c < 4; ++c) {
    const float* host = ts.data() + c * chunk_values;
    hsize_t offset[3] = {hsize_t(25 * c), 0, 0};
    hpcz::Options o = coding.options;
    o.backend = hpcz::Backend::cpu;
#if HPCZ_HAS_CUDA
    if (gpu && c % 2) {
      hpcz::hdf5::DeviceChunkWriter writer(ds);
      void* d = nullptr;
      EXPECT(cudaMalloc(&d, chunk_values * 4) == cudaSuccess);
      cudaMemcpy(d, host, chunk_values * 4, cudaMemcpyHostToDevice);
      const size_t size = writer.write(offset, d);
      cudaFree(d);
      o.second_stage = false;  // a device chunk is a plain archive
      expected.push_back(hpcz::compress(host, hpcz::DType::f32, coding.dims, o));
      EXPECT(size == expected.back().size());
      continue;
    }
#endif
    const size_t size = hpcz::hdf5::write_chunk(ds, offset, host, hpcz::Backend::cpu);
    expected.push_back(hpcz::compress(host, hpcz::DType::f32, coding.dims, o));
    EXPECT(size == expected.back().size());
  }
  H5Dclose(ds);
  ds = H5Dopen2(file, name, H5P_DEFAULT);
  for (int c = 0; c < 4; ++c) {
    hsize_t offset[3] = {hsize_t(25 * c), 0, 0};
    hsize_t stored = 0;
    uint32_t mask = 1;
    EXPECT(H5Dget_chunk_storage_size(ds, offset, &stored) >= 0 && stored == expected[c].size());
    std::vector<uint8_t> bytes(stored);
    EXPECT(H5Dread_chunk(ds, H5P_DEFAULT, offset, &mask, bytes.data()) >= 0 && mask == 0);
    EXPECT(bytes == expected[c]);
  }
  std::vector<float> back(ts.size());
  EXPECT(H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()) >= 0);
  size_t bad = 0;
  for (size_t i = 0; i < ts.size(); ++i) bad += !(std::fabs(double(ts[i]) - double(back[i])) <= eb);
  EXPECT(bad == 0);
  H5Dclose(ds);
  std::printf("h5_filter_test: direct chunk writes%s: %s\n", lossless ? " (lossless stage)" : "",
              gpu ? "CPU and GPU" : "CPU (no GPU)");
  // A pipeline with another filter, or without hpcz, is refused: a direct write does hpcz's work alone.
  H5Pset_shuffle(dcpl);
  ds = H5Dcreate2(file, lossless ? "shuffled_l" : "shuffled", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  bool refused = false;
  try {
    hpcz::hdf5::chunk_coding(ds);
  } catch (const hpcz::Error& e) {
    refused = e.code() == hpcz::ErrorCode::invalid_argument;
  }
  EXPECT(refused);
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
}

// A rel bound with edge chunks: chunks written directly (write_chunk, and DeviceChunkWriter with a
// GPU), each padded with 0 as HDF5 pads them, store the bytes the filter stores for the same chunks,
// the edge chunk's padding (0, below every temperature) left out of its range: the values read back
// are within 1e-3 of the range written.
void direct_rel_padding(hid_t file, const std::vector<float>& ts) {
  const hsize_t dims[3] = {100, 64, 128}, chunk[3] = {30, 64, 128};
  const size_t plane = 64 * 128, chunk_values = 30 * plane;
  const double rel = 1e-3;
  unsigned cd[8] = {1, 1, 2, 0, 0, 0, 0, 0};
  words(rel, cd + 3);
  hid_t space = H5Screate_simple(3, dims, nullptr), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 3, chunk);
  H5Pset_filter(dcpl, kHpcz, H5Z_FLAG_MANDATORY, 8, cd);
  hid_t through = H5Dcreate2(file, "rel_through_filter", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  hid_t direct = H5Dcreate2(file, "rel_direct", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  EXPECT(through >= 0 && direct >= 0);
  EXPECT(H5Dwrite(through, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ts.data()) >= 0);
  const hpcz::hdf5::ChunkCoding coding = hpcz::hdf5::chunk_coding(direct);
  EXPECT(coding.padding && *coding.padding == 0.0);
  const bool gpu = hpcz::gpu_available();
  for (int c = 0; c < 4; ++c) {
    std::vector<float> piece(chunk_values, 0.0f);  // HDF5's padding: the default fill value, 0
    const size_t rows = std::min<size_t>(30, 100 - 30 * c);
    std::copy(ts.begin() + 30 * c * plane, ts.begin() + (30 * c + rows) * plane, piece.begin());
    hsize_t offset[3] = {hsize_t(30 * c), 0, 0};
#if HPCZ_HAS_CUDA
    if (gpu && c % 2) {
      hpcz::hdf5::DeviceChunkWriter writer(direct);
      void* d = nullptr;
      EXPECT(cudaMalloc(&d, chunk_values * 4) == cudaSuccess);
      cudaMemcpy(d, piece.data(), chunk_values * 4, cudaMemcpyHostToDevice);
      writer.write(offset, d);
      cudaFree(d);
      continue;
    }
#endif
    hpcz::hdf5::write_chunk(direct, offset, piece.data(), hpcz::Backend::cpu);
  }
  for (int c = 0; c < 4; ++c) {
    hsize_t offset[3] = {hsize_t(30 * c), 0, 0}, a = 0, b = 0;
    uint32_t mask = 1;
    EXPECT(H5Dget_chunk_storage_size(through, offset, &a) >= 0 && H5Dget_chunk_storage_size(direct, offset, &b) >= 0);
    std::vector<uint8_t> x(a), y(b);
    EXPECT(H5Dread_chunk(through, H5P_DEFAULT, offset, &mask, x.data()) >= 0);
    EXPECT(H5Dread_chunk(direct, H5P_DEFAULT, offset, &mask, y.data()) >= 0);
    EXPECT(x == y);
  }
  const auto [lo, hi] = std::minmax_element(ts.begin(), ts.end());
  const double eb = rel * (double(*hi) - double(*lo));
  for (hid_t ds : {through, direct}) {
    std::vector<float> back(ts.size());
    EXPECT(H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()) >= 0);
    size_t bad = 0;
    for (size_t i = 0; i < ts.size(); ++i) bad += !(std::fabs(double(ts[i]) - double(back[i])) <= eb);
    EXPECT(bad == 0);
    H5Dclose(ds);
  }
  std::printf("h5_filter_test: direct chunk writes with a rel bound and edge chunks: the filter's bytes (%s)\n",
              gpu ? "CPU and GPU" : "CPU");
  H5Pclose(dcpl);
  H5Sclose(space);
}

// Whether HDF5's error stack holds a record whose description contains `what`.
bool stack_says(const char* what) {
  struct Find {
    const char* what;
    bool found;
  } f{what, false};
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD,
           [](unsigned, const H5E_error2_t* e, void* d) -> herr_t {
             auto* f = static_cast<Find*>(d);
             f->found |= e->desc && std::strstr(e->desc, f->what) != nullptr;
             return 0;
           },
           &f);
  return f.found;
}

// A dataset whose pipeline or words hpcz refuses fails at H5Dcreate2 (even with the filter optional:
// set_local fails), with hpcz's reason on the error stack; nothing is written raw later.
void refused(hid_t file, const char* name, const unsigned* cd, size_t n, bool shuffle_first, hid_t type,
             const char* reason) {
  hsize_t dims = 100, chunk = 50;
  hid_t space = H5Screate_simple(1, &dims, nullptr), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &chunk);
  if (shuffle_first) H5Pset_shuffle(dcpl);
  EXPECT(H5Pset_filter(dcpl, kHpcz, H5Z_FLAG_OPTIONAL, n, cd) >= 0);
  hid_t ds;
  bool said = false;
  H5E_BEGIN_TRY {
    ds = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    said = stack_says(reason);
    H5Eclear2(H5E_DEFAULT);
  }
  H5E_END_TRY;
  if (ds >= 0 || !said) std::fprintf(stderr, "%s: created %d, reason \"%s\" on the stack %d\n", name, ds >= 0, reason, said);
  EXPECT(ds < 0);
  EXPECT(said);
  if (ds >= 0) H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
}

void refusals(hid_t file) {
  unsigned cd[8] = {1, 1, 1, 0, 0, 0, 0, 0};
  words(10.0, cd + 3);
  refused(file, "shuffle_first", cd, 8, true, H5T_NATIVE_FLOAT, "hpcz must be the first filter");
  auto with = [&](unsigned word, unsigned value) {
    static unsigned v[8];
    std::memcpy(v, cd, sizeof v);
    v[word] = value;
    return v;
  };
  refused(file, "version_3", with(0, 3), 8, false, H5T_NATIVE_FLOAT, "unknown version");
  refused(file, "mode_4", with(1, 4), 8, false, H5T_NATIVE_FLOAT, "unknown mode");
  refused(file, "mode_0", with(1, 0), 8, false, H5T_NATIVE_FLOAT, "unknown mode");
  refused(file, "kind_8", with(2, 8), 8, false, H5T_NATIVE_FLOAT, "unknown bound kind");
  refused(file, "flags_4", with(5, 4), 8, false, H5T_NATIVE_FLOAT, "unknown flags");
  refused(file, "fill_flag_alone", with(5, 1), 6, false, H5T_NATIVE_FLOAT, "no fill value");
  refused(file, "half_a_bound", cd, 4, false, H5T_NATIVE_FLOAT, "by half");
  for (double bad : {double(NAN), -1.0, double(INFINITY), -double(INFINITY)}) {
    unsigned v[8];
    std::memcpy(v, cd, sizeof v);
    words(bad, v + 3);
    refused(file, ("bound_" + std::to_string(bad)).c_str(), v, 8, false, H5T_NATIVE_DOUBLE, "finite number >= 0");
  }
  unsigned f[8] = {1, 1, 1, 0, 0, 1, 0, 0};
  words(1.0, f + 3);
  words(0.1, f + 6);  // not a float32
  refused(file, "fill_not_f32", f, 8, false, H5T_NATIVE_FLOAT, "not representable as float32");
  words(double(NAN), f + 6);
  refused(file, "fill_nan", f, 8, false, H5T_NATIVE_DOUBLE, "fill value must be finite");
  refused(file, "bitfield_optional", cd, 8, false, H5T_NATIVE_B64, "not a number (8 bytes)");
  refused(file, "big_endian", cd, 8, false, H5T_IEEE_F32BE, "big-endian float32");

  // Accepted words with the filter asked as optional: set_local makes it mandatory, so a chunk hpcz
  // could not code would fail the write rather than be stored raw. A filter after hpcz is fine.
  hsize_t dims = 100, chunk = 50;
  hid_t space = H5Screate_simple(1, &dims, nullptr), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &chunk);
  EXPECT(H5Pset_filter(dcpl, kHpcz, H5Z_FLAG_OPTIONAL, 8, cd) >= 0);
  H5Pset_fletcher32(dcpl);
  hid_t ds = H5Dcreate2(file, "optional_then_fletcher", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  EXPECT(ds >= 0);
  std::vector<float> v(100), back(100);
  for (int i = 0; i < 100; ++i) v[i] = float(i * i);
  EXPECT(H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
  EXPECT(H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()) >= 0);
  bool within = true;
  for (int i = 0; i < 100; ++i) within &= std::fabs(double(back[i]) - double(v[i])) <= 10.0;
  EXPECT(within);
  hid_t made = H5Dget_create_plist(ds);
  unsigned flags = ~0u;
  EXPECT(H5Pget_filter2(made, 0, &flags, nullptr, nullptr, 0, nullptr, nullptr) == kHpcz);
  EXPECT((flags & H5Z_FLAG_OPTIONAL) == 0);
  H5Pclose(made);
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return std::fprintf(stderr, "usage: h5_filter_test SAMPLE.bin OUT.h5\n"), 2;
  EXPECT(H5Zfilter_avail(kHpcz) > 0);  // loads the plugin from HDF5_PLUGIN_PATH
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<float> ts(100 * 64 * 128);
  in.read(reinterpret_cast<char*>(ts.data()), std::streamsize(ts.size() * sizeof(float)));
  EXPECT(in.good());
  hid_t file = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  roundtrip(file, "ts_fast", H5T_NATIVE_FLOAT, ts, {100, 64, 128}, {25, 64, 128}, 1, 1, 0.05, nullptr, 0.05);
  roundtrip(file, "ts_ratio_edge_chunks", H5T_NATIVE_FLOAT, ts, {100, 64, 128}, {30, 50, 128}, 2, 1, 0.05, nullptr, 0.05);
  // rel in edge chunks: within rel x the range written (HDF5's zero padding, 200 K below these
  // temperatures, is left out of the chunks' ranges).
  const auto [lo, hi] = std::minmax_element(ts.begin(), ts.end());
  for (unsigned mode : {1u, 2u})
    roundtrip(file, mode == 1 ? "ts_rel_edge_fast" : "ts_rel_edge_ratio", H5T_NATIVE_FLOAT, ts, {100, 64, 128},
              {30, 50, 128}, mode, 2, 1e-3, nullptr, 1e-3 * (double(*hi) - double(*lo)));
  std::vector<double> masked(ts.begin(), ts.end());
  for (size_t i = 0; i < masked.size(); i += 7) masked[i] = -1e10;
  masked[3] = NAN;
  const double fill = -1e10;
  roundtrip(file, "masked_f64", H5T_NATIVE_DOUBLE, masked, {100, 64, 128}, {50, 64, 128}, 1, 1, 1e-3, &fill, 1e-3);
  direct_chunks(file, ts, false);
  direct_chunks(file, ts, true);
  direct_rel_padding(file, ts);
  refusals(file);
  // A type the filter does not code (a bitfield) is refused when the dataset is created.
  unsigned cd[8] = {1, 1, 2, 0, 0, 0, 0, 0};
  words(1e-3, cd + 3);
  hsize_t n = 100, c = 50;
  hid_t space = H5Screate_simple(1, &n, nullptr), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &c);
  H5Pset_filter(dcpl, kHpcz, H5Z_FLAG_MANDATORY, 8, cd);
  H5E_BEGIN_TRY { EXPECT(H5Dcreate2(file, "bits", H5T_NATIVE_B64, space, H5P_DEFAULT, dcpl, H5P_DEFAULT) < 0); }
  H5E_END_TRY;
  H5Fclose(file);
  std::printf("h5_filter_test: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
