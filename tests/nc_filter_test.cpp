// The HDF5 filter from netCDF-C (nc_def_var_filter): a netCDF-4 variable written through it and read
// back within the bound, smaller than raw. The plugin comes from HDF5_PLUGIN_PATH, as ncdump finds it.
// usage: nc_filter_test SAMPLE.bin OUT.nc
#include <netcdf.h>
#include <netcdf_filter.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#define NC(call)                                                                     \
  do {                                                                               \
    if (int e_ = (call); e_ != NC_NOERR) {                                           \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, nc_strerror(e_)); \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 3) return std::fprintf(stderr, "usage: nc_filter_test SAMPLE.bin OUT.nc\n"), 2;
  std::vector<float> ts(100 * 64 * 128), back(ts.size());
  std::ifstream in(argv[1], std::ios::binary);
  in.read(reinterpret_cast<char*>(ts.data()), std::streamsize(ts.size() * sizeof(float)));
  if (!in) return std::fprintf(stderr, "cannot read %s\n", argv[1]), 1;
  const double bound = 0.05;
  uint64_t u;
  std::memcpy(&u, &bound, 8);
  // version 1, ratio mode, abs bound, the bound's two words, no fill, no lossless stage (docs/FORMAT.md 14)
  const unsigned params[8] = {1, 2, 1, unsigned(u), unsigned(u >> 32), 0, 0, 0};
  int nc, dims[3], var;
  NC(nc_create(argv[2], NC_CLOBBER | NC_NETCDF4, &nc));
  NC(nc_def_dim(nc, "year", 100, &dims[0]));
  NC(nc_def_dim(nc, "lat", 64, &dims[1]));
  NC(nc_def_dim(nc, "lon", 128, &dims[2]));
  NC(nc_def_var(nc, "ts", NC_FLOAT, 3, dims, &var));
  const size_t chunks[3] = {25, 64, 128};
  NC(nc_def_var_chunking(nc, var, NC_CHUNKED, chunks));
  NC(nc_def_var_filter(nc, var, 34520, 8, params));
  NC(nc_put_var_float(nc, var, ts.data()));
  NC(nc_close(nc));
  NC(nc_open(argv[2], NC_NOWRITE, &nc));
  NC(nc_inq_varid(nc, "ts", &var));
  unsigned id = 0;
  size_t nparams = 0;
  NC(nc_inq_var_filter(nc, var, &id, &nparams, nullptr));
  NC(nc_get_var_float(nc, var, back.data()));
  NC(nc_close(nc));
  double worst = 0;
  for (size_t i = 0; i < ts.size(); ++i) worst = std::fmax(worst, std::fabs(double(ts[i]) - double(back[i])));
  std::ifstream f(argv[2], std::ios::binary | std::ios::ate);
  const long long size = f.tellg();
  const bool ok = id == 34520 && nparams >= 8 && worst <= bound && size < (long long)(ts.size() * 4 / 3);
  std::printf("nc_filter_test: filter %u, %zu params, max error %g (bound %g), %lld bytes: %s\n", id, nparams, worst,
              bound, size, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
