// The HDF5 filter from a C program linked to the system's HDF5 (as netCDF-C and h5dump are): the plugin
// found through HDF5_PLUGIN_PATH, set_local's calls resolved in this process's HDF5, datasets written
// and read back within the bound, smaller than raw. usage: h5_filter_test SAMPLE.bin OUT.h5
#include <hdf5.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

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
  std::vector<double> masked(ts.begin(), ts.end());
  for (size_t i = 0; i < masked.size(); i += 7) masked[i] = -1e10;
  masked[3] = NAN;
  const double fill = -1e10;
  roundtrip(file, "masked_f64", H5T_NATIVE_DOUBLE, masked, {100, 64, 128}, {50, 64, 128}, 1, 1, 1e-3, &fill, 1e-3);
  // A type the filter does not code is refused when the dataset is created.
  unsigned cd[8] = {1, 1, 2, 0, 0, 0, 0, 0};
  words(1e-3, cd + 3);
  hsize_t n = 100, c = 50;
  hid_t space = H5Screate_simple(1, &n, nullptr), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &c);
  H5Pset_filter(dcpl, kHpcz, H5Z_FLAG_MANDATORY, 8, cd);
  H5E_BEGIN_TRY { EXPECT(H5Dcreate2(file, "ints", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT) < 0); }
  H5E_END_TRY;
  H5Fclose(file);
  std::printf("h5_filter_test: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
