// nvcomp_deflate_bench: batched raw-Deflate decompression throughput of NVIDIA nvCOMP
// (low-level C API, nvcomp/deflate.h; written against nvCOMP 6.0.0 from the
// nvidia-libnvcomp-cu13 wheel).
//
//   nvcomp_deflate_bench [options] DIR | chunks.bin chunks.idx [expected.bin]
//     --iters N            timed runs (default 10); --warmup W (default 2)
//     --replicate K        decode K independent copies of the input per call (bigger batch)
//     --backend B          default | cuda | hw   (nvcompDecompressBackend_t; default: DEFAULT)
//     --no-temp-query      leave the per-call temp-size query out of the timed region
//     --device D           CUDA device (default 0)
//     --no-verify          skip the comparison with expected.bin
//
// All inputs are device-resident before timing: compressed chunks are packed into one
// device buffer (each chunk start aligned to max(16, required input alignment)), output
// slices are preallocated, and the pointer/size arrays live on the device. One timed run:
//   cudaEventRecord(start)
//   nvcompBatchedDeflateDecompressGetTempSize(...)   (host-side query; see --no-temp-query)
//   nvcompBatchedDeflateDecompressAsync(...)
//   cudaEventRecord(stop); cudaEventSynchronize(stop)
// The temp buffer is allocated once beforehand. After the last run the per-chunk statuses
// and decoded sizes are checked and the output is compared with expected.bin.
// Prints one line:
//   nvcomp_deflate chunks=.. in_bytes=.. out_bytes=.. median_ms=.. out_GBps=.. verified=..
// GB/s = 1e9 bytes/s of uncompressed output.
#include "chunkset.hpp"

#include <cuda_runtime.h>
#include <nvcomp.h>
#include <nvcomp/deflate.h>

#include <chrono>

using namespace cmpbench;

#define CUDA_CHECK(x)                                                                              \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess)                                                                         \
      die(std::string(#x) + " failed: " + cudaGetErrorString(e_) + " at line " +                   \
          std::to_string(__LINE__));                                                               \
  } while (0)

#define NVCOMP_CHECK(x)                                                                            \
  do {                                                                                             \
    nvcompStatus_t s_ = (x);                                                                       \
    if (s_ != nvcompSuccess)                                                                       \
      die(std::string(#x) + " failed: " + nvcompGetStatusString(s_) + " (" + std::to_string((int)s_) + \
          ") at line " + std::to_string(__LINE__));                                                \
  } while (0)

namespace {

size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

std::string ver_str(uint32_t v) {
  // nvCOMP: major*1000 + minor*100 + patch; CUDA runtime: major*1000 + minor*10
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 100) + "." + std::to_string(v % 100);
}

void usage() {
  std::fprintf(stderr,
               "usage: nvcomp_deflate_bench [--iters N] [--warmup W] [--replicate K] [--backend default|cuda|hw]\n"
               "                            [--no-temp-query] [--device D] [--no-verify]\n"
               "                            DIR | chunks.bin chunks.idx [expected.bin]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 10, warmup = 2, replicate = 1, device = 0;
  bool verify = true, time_temp_query = true;
  std::string backend_name = "default";
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto sval = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--iters") iters = std::atoi(sval().c_str());
    else if (a == "--warmup") warmup = std::atoi(sval().c_str());
    else if (a == "--replicate") replicate = std::atoi(sval().c_str());
    else if (a == "--device") device = std::atoi(sval().c_str());
    else if (a == "--backend") backend_name = sval();
    else if (a == "--no-temp-query") time_temp_query = false;
    else if (a == "--no-verify") verify = false;
    else if (a == "-h" || a == "--help") usage();
    else if (!a.empty() && a[0] == '-') usage();
    else paths.push_back(a);
  }
  if (iters < 1 || warmup < 0 || replicate < 1) usage();

  nvcompBatchedDeflateDecompressOpts_t opts = nvcompBatchedDeflateDecompressDefaultOpts;
  if (backend_name == "default") opts.backend = NVCOMP_DECOMPRESS_BACKEND_DEFAULT;
  else if (backend_name == "cuda") opts.backend = NVCOMP_DECOMPRESS_BACKEND_CUDA;
  else if (backend_name == "hw") opts.backend = NVCOMP_DECOMPRESS_BACKEND_HARDWARE;
  else usage();

  ChunkSet cs = load(paths, verify);
  const size_t n = cs.chunks.size();
  const size_t total = n * (size_t)replicate;

  nvcompProperties_t props{};
  NVCOMP_CHECK(nvcompGetProperties(&props));
  CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp dp{};
  CUDA_CHECK(cudaGetDeviceProperties(&dp, device));
  std::string dev_name = dp.name;
  for (char& ch : dev_name)
    if (ch == ' ') ch = '_';

  nvcompAlignmentRequirements_t al{};
  NVCOMP_CHECK(nvcompBatchedDeflateDecompressGetRequiredAlignments(opts, &al));
  const size_t in_align = std::max<size_t>(16, al.input);
  const size_t out_align = std::max<size_t>(16, al.output);

  // Host-side layout of the packed compressed data and the output slices.
  std::vector<size_t> h_comp_off(total), h_out_off(total), h_comp_bytes(total), h_out_bytes(total);
  size_t comp_buf = 0, out_buf = 0;
  for (size_t k = 0; k < total; ++k) {
    const Chunk& c = cs.chunks[k % n];
    comp_buf = align_up(comp_buf, in_align);
    out_buf = align_up(out_buf, out_align);
    h_comp_off[k] = comp_buf;
    h_out_off[k] = out_buf;
    h_comp_bytes[k] = c.comp_size;
    h_out_bytes[k] = c.raw_size;
    comp_buf += c.comp_size;
    out_buf += c.raw_size;
  }
  comp_buf = std::max<size_t>(comp_buf, 1);
  out_buf = std::max<size_t>(out_buf, 1);
  std::vector<uint8_t> h_comp(comp_buf, 0);
  for (size_t k = 0; k < total; ++k) {
    const Chunk& c = cs.chunks[k % n];
    std::memcpy(h_comp.data() + h_comp_off[k], cs.comp.data() + c.comp_off, c.comp_size);
  }

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  uint8_t *d_comp = nullptr, *d_out = nullptr;
  CUDA_CHECK(cudaMalloc(&d_comp, comp_buf));
  CUDA_CHECK(cudaMalloc(&d_out, out_buf));
  CUDA_CHECK(cudaMemcpy(d_comp, h_comp.data(), comp_buf, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_out, 0, out_buf));

  std::vector<const void*> h_comp_ptrs(total);
  std::vector<void*> h_out_ptrs(total);
  for (size_t k = 0; k < total; ++k) {
    h_comp_ptrs[k] = d_comp + h_comp_off[k];
    h_out_ptrs[k] = d_out + h_out_off[k];
  }
  const void** d_comp_ptrs = nullptr;
  void** d_out_ptrs = nullptr;
  size_t *d_comp_bytes = nullptr, *d_out_buf_bytes = nullptr, *d_out_actual = nullptr;
  nvcompStatus_t* d_status = nullptr;
  CUDA_CHECK(cudaMalloc(&d_comp_ptrs, total * sizeof(void*)));
  CUDA_CHECK(cudaMalloc(&d_out_ptrs, total * sizeof(void*)));
  CUDA_CHECK(cudaMalloc(&d_comp_bytes, total * sizeof(size_t)));
  CUDA_CHECK(cudaMalloc(&d_out_buf_bytes, total * sizeof(size_t)));
  CUDA_CHECK(cudaMalloc(&d_out_actual, total * sizeof(size_t)));
  CUDA_CHECK(cudaMalloc(&d_status, total * sizeof(nvcompStatus_t)));
  CUDA_CHECK(cudaMemcpy(d_comp_ptrs, h_comp_ptrs.data(), total * sizeof(void*), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_out_ptrs, h_out_ptrs.data(), total * sizeof(void*), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_comp_bytes, h_comp_bytes.data(), total * sizeof(size_t), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_out_buf_bytes, h_out_bytes.data(), total * sizeof(size_t), cudaMemcpyHostToDevice));

  const size_t max_raw = (size_t)cs.max_raw;
  const size_t total_raw = (size_t)cs.raw_total * replicate;
  size_t temp_bytes = 0;
  NVCOMP_CHECK(nvcompBatchedDeflateDecompressGetTempSize(total, max_raw, opts, &temp_bytes, total_raw, stream));
  void* d_temp = nullptr;
  CUDA_CHECK(cudaMalloc(&d_temp, std::max<size_t>(temp_bytes, 1)));  // cudaMalloc: >= 256-byte aligned
  if (al.temp > 256) die("temp alignment requirement above 256 not handled");

  // Host cost of the temp-size query alone (it enqueues nothing, per the header).
  double temp_query_us = 0;
  {
    const int reps = 1000;
    size_t tb = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r)
      NVCOMP_CHECK(nvcompBatchedDeflateDecompressGetTempSize(total, max_raw, opts, &tb, total_raw, stream));
    auto t1 = std::chrono::steady_clock::now();
    temp_query_us = std::chrono::duration<double, std::micro>(t1 - t0).count() / reps;
  }

  cudaEvent_t ev0, ev1;
  CUDA_CHECK(cudaEventCreate(&ev0));
  CUDA_CHECK(cudaEventCreate(&ev1));
  std::vector<double> ms;
  for (int it = 0; it < warmup + iters; ++it) {
    // Poison statuses and sizes so the checks below see only the last run's results.
    CUDA_CHECK(cudaMemsetAsync(d_status, 0xFF, total * sizeof(nvcompStatus_t), stream));
    CUDA_CHECK(cudaMemsetAsync(d_out_actual, 0xFF, total * sizeof(size_t), stream));
    CUDA_CHECK(cudaEventRecord(ev0, stream));
    if (time_temp_query) {
      size_t tb = 0;
      NVCOMP_CHECK(nvcompBatchedDeflateDecompressGetTempSize(total, max_raw, opts, &tb, total_raw, stream));
      if (tb > temp_bytes) die("temp size grew between queries");
    }
    NVCOMP_CHECK(nvcompBatchedDeflateDecompressAsync(d_comp_ptrs, d_comp_bytes, d_out_buf_bytes, d_out_actual,
                                                     total, d_temp, temp_bytes, d_out_ptrs, opts, d_status,
                                                     stream));
    CUDA_CHECK(cudaEventRecord(ev1, stream));
    CUDA_CHECK(cudaEventSynchronize(ev1));
    float e = 0;
    CUDA_CHECK(cudaEventElapsedTime(&e, ev0, ev1));
    if (it >= warmup) ms.push_back(e);
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaStreamSynchronize(stream));

  // Per-chunk statuses and decoded sizes of the last run.
  std::vector<nvcompStatus_t> h_status(total);
  std::vector<size_t> h_actual(total);
  CUDA_CHECK(cudaMemcpy(h_status.data(), d_status, total * sizeof(nvcompStatus_t), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(h_actual.data(), d_out_actual, total * sizeof(size_t), cudaMemcpyDeviceToHost));
  size_t failed = 0;
  for (size_t k = 0; k < total; ++k)
    if (h_status[k] != nvcompSuccess || h_actual[k] != h_out_bytes[k]) {
      if (failed < 10)
        std::fprintf(stderr, "decode failure: chunk %zu (replica %zu) status=%d (%s) decoded=%llu want=%llu\n",
                     k % n, k / n, (int)h_status[k], nvcompGetStatusString(h_status[k]),
                     (unsigned long long)h_actual[k], (unsigned long long)h_out_bytes[k]);
      ++failed;
    }

  std::string verified = "skipped";
  size_t mismatches = 0;
  if (verify && cs.have_expected) {
    std::vector<uint8_t> h_out(out_buf);
    CUDA_CHECK(cudaMemcpy(h_out.data(), d_out, out_buf, cudaMemcpyDeviceToHost));
    int reported = 0;
    for (size_t k = 0; k < total; ++k) {
      const Chunk& c = cs.chunks[k % n];
      size_t got = std::min<size_t>(h_actual[k], c.raw_size);  // never read past the slice
      if (!check_chunk(k % n, h_out.data() + h_out_off[k], got, cs.expected.data() + c.raw_off, c.raw_size,
                       reported))
        ++mismatches;
    }
    verified = (mismatches == 0 && failed == 0) ? "yes" : "no";
  } else if (failed) {
    verified = "no";
  }

  double med = median(ms);
  double mn = *std::min_element(ms.begin(), ms.end());
  double out_bytes = (double)total_raw, in_bytes = (double)cs.comp_total * replicate;
  std::printf(
      "nvcomp_deflate chunks=%zu in_bytes=%.0f out_bytes=%.0f replicate=%d iters=%d median_ms=%.4f min_ms=%.4f "
      "out_GBps=%.3f in_GBps=%.3f temp_bytes=%zu temp_query_in_timing=%s temp_query_us=%.3f backend=%s "
      "failed=%zu mismatches=%zu verified=%s nvcomp_version=%s nvcomp_cudart=%u device=%s\n",
      total, in_bytes, out_bytes, replicate, iters, med, mn, out_bytes / (med * 1e6), in_bytes / (med * 1e6),
      temp_bytes, time_temp_query ? "yes" : "no", temp_query_us, backend_name.c_str(), failed, mismatches,
      verified.c_str(), ver_str(props.version).c_str(), props.cudart_version, dev_name.c_str());

  cudaFree(d_temp);
  cudaFree(d_status);
  cudaFree(d_out_actual);
  cudaFree(d_out_buf_bytes);
  cudaFree(d_comp_bytes);
  cudaFree(d_out_ptrs);
  cudaFree(d_comp_ptrs);
  cudaFree(d_out);
  cudaFree(d_comp);
  cudaEventDestroy(ev0);
  cudaEventDestroy(ev1);
  cudaStreamDestroy(stream);
  return (failed || mismatches) ? 1 : 0;
}
