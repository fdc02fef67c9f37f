// Parallel HDF5 under MPI through the filter: every rank writes its hyperslab (whole chunks along the
// slowest axis, plus a partial one where the ranks do not divide it) of one chunked, filtered dataset
// collectively; rank 0 then reads the whole file back alone and checks the bound. Prints the aggregate
// write throughput (after an untimed write of one chunk a rank, which starts each rank's GPU where the
// filter uses one). usage: mpirun -np N mpi_filter_test SAMPLE.bin OUT.h5 [COPIES=4] [CHUNK_ROWS=25]
#include <hdf5.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    if (!rank) std::fprintf(stderr, "usage: mpi_filter_test SAMPLE.bin OUT.h5 [COPIES]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int copies = argc > 3 ? std::atoi(argv[3]) : 4;
  const hsize_t chunk_rows = argc > 4 ? hsize_t(std::atoi(argv[4])) : 25;
  if (copies < 1 || chunk_rows < 1) MPI_Abort(MPI_COMM_WORLD, 2);
  const hsize_t plane = 64 * 128, rows = hsize_t(100) * copies;  // the sample tiled along years
  std::vector<float> base(100 * plane);
  std::ifstream in(argv[1], std::ios::binary);
  in.read(reinterpret_cast<char*>(base.data()), std::streamsize(base.size() * 4));
  if (!in) MPI_Abort(MPI_COMM_WORLD, 1);
  auto value = [&](hsize_t r, hsize_t k) { return base[(r % 100) * plane + k]; };
  const double bound = 0.05;
  uint64_t u;
  std::memcpy(&u, &bound, 8);
  const unsigned params[8] = {1, 2, 1, unsigned(u), unsigned(u >> 32), 0, 0, 0};  // ratio, abs 0.05
  // Each rank's rows: an even share, the last rank the rest.
  const hsize_t share = rows / size, first = rank * share, count = rank == size - 1 ? rows - first : share;
  std::vector<float> mine(count * plane);
  for (hsize_t r = 0; r < count; ++r)
    for (hsize_t k = 0; k < plane; ++k) mine[r * plane + k] = value(first + r, k);

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  hid_t file = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  const hsize_t chunk[3] = {chunk_rows, 64, 128};
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 3, chunk);
  H5Pset_filter(dcpl, 34520, H5Z_FLAG_MANDATORY, 8, params);
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);  // filtered datasets are written collectively
  // Rows [first, first + count) of a dataset of `total` rows, written collectively.
  auto write = [&](const char* name, hsize_t total, hsize_t first, hsize_t count, const float* data) {
    const hsize_t dims[3] = {total, 64, 128}, start[3] = {first, 0, 0}, extent[3] = {count, 64, 128};
    hid_t space = H5Screate_simple(3, dims, nullptr);
    hid_t ds = H5Dcreate2(file, name, H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    hid_t fspace = H5Dget_space(ds), mspace = H5Screate_simple(3, extent, nullptr);
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, nullptr, extent, nullptr);
    const bool ok = ds >= 0 && H5Dwrite(ds, H5T_NATIVE_FLOAT, mspace, fspace, dxpl, data) >= 0;
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Dclose(ds);
    H5Sclose(space);
    return ok;
  };
  std::vector<float> warm(chunk_rows * plane);
  for (hsize_t r = 0; r < chunk_rows; ++r)
    for (hsize_t k = 0; k < plane; ++k) warm[r * plane + k] = value(r, k);
  int ok = write("warmup", chunk_rows * size, chunk_rows * rank, chunk_rows, warm.data());
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  ok &= write("ts", rows, first, count, mine.data());
  H5Pclose(dxpl);
  H5Pclose(dcpl);
  H5Pclose(fapl);
  H5Fclose(file);
  MPI_Barrier(MPI_COMM_WORLD);
  const double seconds = MPI_Wtime() - t0;
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) {
    std::vector<float> back(rows * plane);
    hid_t f = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);  // one rank alone, no MPI-IO
    hid_t d = H5Dopen2(f, "ts", H5P_DEFAULT);
    all_ok &= H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()) >= 0;
    double worst = 0;
    for (hsize_t r = 0; r < rows; ++r)
      for (hsize_t k = 0; k < plane; ++k) worst = std::fmax(worst, std::fabs(double(back[r * plane + k]) - value(r, k)));
    const hsize_t stored = H5Dget_storage_size(d);
    H5Dclose(d);
    H5Fclose(f);
    all_ok &= worst <= bound && stored < rows * plane * 4 / 3;
    std::printf("mpi_filter_test: %d ranks, %llu rows, chunks of %.1f MiB, write %.3f s = %.3f GB/s aggregate, CR %.2f, max error %g: %s\n",
                size, (unsigned long long)rows, chunk_rows * plane * 4 / 1048576.0, seconds, rows * plane * 4 / seconds / 1e9,
                double(rows * plane * 4) / double(stored), worst, all_ok ? "ok" : "FAILED");
  }
  MPI_Bcast(&all_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
