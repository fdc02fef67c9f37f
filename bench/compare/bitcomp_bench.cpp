// bitcomp_bench: hpcz's fast mode beside NVIDIA nvCOMP's Bitcomp lossy mode on the same device-resident
// data, in one process (written against nvCOMP 6.0.0 from the nvidia-libnvcomp-cu13 wheel).
//
//   hpcz_bitcomp_bench [--data DIR] [--fields REGEX] [--bounds rel:1e-2,rel:1e-3,rel:1e-4]
//                      [--size-mib 512] [--reps 10] [--chunk-kib 64] [--algorithm 0|1] [--type f16] [--out FILE]
//
// --type f16: each field's values rounded to float16 (cuda_fp16's nearest) and both compressors given
// the float16 array (hpcz's float16 storage type, Bitcomp's NVCOMP_TYPE_FLOAT16); fields with a finite
// value beyond float16's range are left out.
// Each field (DIR/NAME_D0xD1..._f32|f64.bin, dims slowest first) is tiled along its slowest axis to at
// least --size-mib, as `hpcz bench` tiles it, and copied to the GPU once. For each bound:
//   1. hpcz fast at the requested bound; its archive gives eb, the absolute bound;
//   2. Bitcomp lossy (BITCOMP_LOSSY_FP_TO_SIGNED) with delta = the largest power of two <= 2 eb (nvCOMP
//      rounds delta down to a power of two and guarantees |error| <= delta / 2, so delta / 2 <= eb),
//      in --chunk-kib chunks, one batched call each way;
//   3. hpcz fast at abs = delta / 2: both at equal maximum error.
// Times: the whole call between CUDA events (hpcz's with the read-back of the archive size or the
// status, as `hpcz bench`), 2 warm-ups, median of --reps; GB/s = 1e9 input bytes a second. CR: input
// bytes over the archive's (hpcz) or the chunks' summed compressed sizes (Bitcomp, no chunk index
// counted). PSNR and the maximum error are measured on the host against the original; every
// reconstruction is checked against its bound (a violation fails the run, exit status 1).
#include <hpcz/hpcz.hpp>

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <dirent.h>
#include <nvcomp.h>
#include <nvcomp/bitcomp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const std::string& s) {
  std::fprintf(stderr, "bitcomp_bench: %s\n", s.c_str());
  std::exit(2);
}
void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) die(std::string(what) + ": " + cudaGetErrorString(e));
}
void ckn(nvcompStatus_t s, const char* what) {
  if (s != nvcompSuccess) die(std::string(what) + ": nvcomp status " + std::to_string(int(s)));
}
std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

struct Field {
  std::string name, path;
  hpcz::DType dtype;
  std::vector<uint64_t> dims;
};

std::vector<Field> find_fields(const std::string& dir, const std::string& filter) {
  static const std::regex name_re(R"(^(.+)_(\d+(?:x\d+)*)_(f32|f64)\.bin$)");
  const std::regex keep(filter.empty() ? ".*" : filter);
  std::vector<Field> out;
  DIR* d = opendir(dir.c_str());
  if (!d) die("cannot open " + dir);
  while (dirent* e = readdir(d)) {
    std::smatch m;
    const std::string f = e->d_name;
    if (!std::regex_match(f, m, name_re) || !std::regex_search(f, keep)) continue;
    Field x{m[1], dir + "/" + f, m[3] == "f64" ? hpcz::DType::f64 : hpcz::DType::f32, {}};
    std::stringstream ss(m[2]);
    std::string part;
    while (std::getline(ss, part, 'x')) x.dims.push_back(std::stoull(part));
    out.push_back(x);
  }
  closedir(d);
  std::sort(out.begin(), out.end(), [](const Field& a, const Field& b) { return a.name < b.name; });
  return out;
}

struct Timer {
  cudaStream_t s;
  cudaEvent_t e0, e1;
  template <class F>
  double median_s(int reps, F&& call) {
    std::vector<double> t;
    for (int r = 0; r < reps + 2; ++r) {
      ck(cudaEventRecord(e0, s), "event");
      call();
      ck(cudaEventRecord(e1, s), "event");
      ck(cudaEventSynchronize(e1), "timed call");
      float ms = 0;
      cudaEventElapsedTime(&ms, e0, e1);
      if (r >= 2) t.push_back(ms / 1e3);
    }
    return median(t);
  }
};

struct Result {
  double comp_s = 0, decomp_s = 0, bytes = 0;
  hpcz::Metrics m;
  bool refused = false;  // Bitcomp took no such delta for this type
};

// hpcz fast mode, device to device, as `hpcz bench` times it.
Result run_hpcz(Timer& tm, int reps, const void* d_in, void* d_back, const Field& f, const std::vector<uint64_t>& dims,
                uint64_t n, const hpcz::Options& o, std::vector<uint8_t>& host_back, double& eb_abs) {
  const size_t vb = hpcz::dtype_size(f.dtype), cap = hpcz::max_compressed_size(n, f.dtype);
  const size_t ws = hpcz::compress_device_workspace_size(f.dtype, dims, o);
  void *d_out = nullptr, *d_ws = nullptr, *d_dws = nullptr;
  uint64_t* d_size = nullptr;
  uint32_t* d_status = nullptr;
  ck(cudaMalloc(&d_out, cap), "malloc");
  if (ws) ck(cudaMalloc(&d_ws, ws), "malloc");
  ck(cudaMalloc(&d_size, 8), "malloc");
  ck(cudaMalloc(&d_status, 4), "malloc");
  uint64_t size = 0;
  uint32_t status = 0;
  Result r;
  r.comp_s = tm.median_s(reps, [&] {
    hpcz::compress_device(d_in, f.dtype, dims, o, d_out, cap, d_size, d_ws, ws, tm.s);
    cudaMemcpyAsync(&size, d_size, 8, cudaMemcpyDeviceToHost, tm.s);
  });
  std::vector<uint8_t> archive(size);
  ck(cudaMemcpy(archive.data(), d_out, size, cudaMemcpyDeviceToHost), "d2h");
  const hpcz::ArchiveInfo info = hpcz::inspect(archive.data(), archive.size());
  // A float16 array's eb_abs is the code bound on its float32 code values (docs/FORMAT.md 3.1): the
  // bound it keeps is the one asked for.
  eb_abs = f.dtype != hpcz::DType::f16 ? info.eb_abs
           : info.mode == hpcz::BoundMode::abs ? info.bound : info.bound * (info.range_max - info.range_min);
  const size_t dws = hpcz::decompress_device_workspace_size(info);
  if (dws) ck(cudaMalloc(&d_dws, dws), "malloc");
  r.decomp_s = tm.median_s(reps, [&] {
    hpcz::decompress_device(info, d_out, d_back, d_status, d_dws, dws, tm.s);
    cudaMemcpyAsync(&status, d_status, 4, cudaMemcpyDeviceToHost, tm.s);
  });
  if (status) die("hpcz decode status " + std::to_string(status));
  host_back.resize(n * vb);
  ck(cudaMemcpy(host_back.data(), d_back, n * vb, cudaMemcpyDeviceToHost), "d2h");
  r.bytes = double(size);
  cudaFree(d_out), cudaFree(d_ws), cudaFree(d_dws), cudaFree(d_size), cudaFree(d_status);
  return r;
}

// Bitcomp lossy, batched over chunk_bytes chunks of the device buffer.
Result run_bitcomp(Timer& tm, int reps, const void* d_in, void* d_back, const Field& f, uint64_t n, double delta,
                   size_t chunk_bytes, int algorithm, std::vector<uint8_t>& host_back) {
  const size_t vb = hpcz::dtype_size(f.dtype), total = n * vb;
  const size_t nc = (total + chunk_bytes - 1) / chunk_bytes;
  nvcompBatchedBitcompCompressOpts_t co = nvcompBatchedBitcompCompressDefaultOpts;
  co.algorithm = algorithm;
  co.data_type = f.dtype == hpcz::DType::f64 ? NVCOMP_TYPE_FLOAT64
                 : f.dtype == hpcz::DType::f16 ? NVCOMP_TYPE_FLOAT16 : NVCOMP_TYPE_FLOAT32;
  co.delta = delta;
  co.mode = BITCOMP_LOSSY_FP_TO_SIGNED;
  nvcompBatchedBitcompDecompressOpts_t dopt = nvcompBatchedBitcompDecompressDefaultOpts;
  size_t max_out = 0, ctemp = 0, dtemp = 0;
  if (nvcompBatchedBitcompCompressGetMaxOutputChunkSize(chunk_bytes, co, &max_out) != nvcompSuccess) {
    Result refused;
    refused.refused = true;
    return refused;
  }
  max_out = (max_out + 7) / 8 * 8;
  ckn(nvcompBatchedBitcompCompressGetTempSize(nc, chunk_bytes, co, &ctemp, total, tm.s), "compress temp size");
  ckn(nvcompBatchedBitcompDecompressGetTempSize(nc, chunk_bytes, dopt, &dtemp, total, tm.s), "decompress temp size");
  std::vector<const void*> in_ptr(nc);
  std::vector<void*> comp_ptr(nc), back_ptr(nc);
  std::vector<size_t> in_bytes(nc);
  uint8_t *d_comp = nullptr, *d_temp = nullptr;
  ck(cudaMalloc(&d_comp, nc * max_out), "malloc");
  if (std::max(ctemp, dtemp)) ck(cudaMalloc(&d_temp, std::max(ctemp, dtemp)), "malloc");
  for (size_t k = 0; k < nc; ++k) {
    in_ptr[k] = static_cast<const uint8_t*>(d_in) + k * chunk_bytes;
    back_ptr[k] = static_cast<uint8_t*>(d_back) + k * chunk_bytes;
    comp_ptr[k] = d_comp + k * max_out;
    in_bytes[k] = std::min(chunk_bytes, total - k * chunk_bytes);
  }
  const void** d_in_ptr;
  void **d_comp_ptr, **d_back_ptr;
  size_t *d_in_bytes, *d_comp_bytes, *d_back_bytes;
  nvcompStatus_t* d_st;
  ck(cudaMalloc(&d_in_ptr, nc * sizeof(void*)), "malloc");
  ck(cudaMalloc(&d_comp_ptr, nc * sizeof(void*)), "malloc");
  ck(cudaMalloc(&d_back_ptr, nc * sizeof(void*)), "malloc");
  ck(cudaMalloc(&d_in_bytes, nc * sizeof(size_t)), "malloc");
  ck(cudaMalloc(&d_comp_bytes, nc * sizeof(size_t)), "malloc");
  ck(cudaMalloc(&d_back_bytes, nc * sizeof(size_t)), "malloc");
  ck(cudaMalloc(&d_st, nc * sizeof(nvcompStatus_t)), "malloc");
  ck(cudaMemcpy(d_in_ptr, in_ptr.data(), nc * sizeof(void*), cudaMemcpyHostToDevice), "h2d");
  ck(cudaMemcpy(d_comp_ptr, comp_ptr.data(), nc * sizeof(void*), cudaMemcpyHostToDevice), "h2d");
  ck(cudaMemcpy(d_back_ptr, back_ptr.data(), nc * sizeof(void*), cudaMemcpyHostToDevice), "h2d");
  ck(cudaMemcpy(d_in_bytes, in_bytes.data(), nc * sizeof(size_t), cudaMemcpyHostToDevice), "h2d");
  Result r;
  r.comp_s = tm.median_s(reps, [&] {
    ckn(nvcompBatchedBitcompCompressAsync(d_in_ptr, d_in_bytes, chunk_bytes, nc, d_temp, ctemp, d_comp_ptr,
                                          d_comp_bytes, co, d_st, tm.s),
        "compress");
  });
  std::vector<size_t> comp_bytes(nc);
  std::vector<nvcompStatus_t> st(nc);
  ck(cudaMemcpy(comp_bytes.data(), d_comp_bytes, nc * sizeof(size_t), cudaMemcpyDeviceToHost), "d2h");
  ck(cudaMemcpy(st.data(), d_st, nc * sizeof(nvcompStatus_t), cudaMemcpyDeviceToHost), "d2h");
  for (size_t k = 0; k < nc; ++k) {
    if (st[k] != nvcompSuccess) die("Bitcomp compress status " + std::to_string(int(st[k])) + " on chunk " + std::to_string(k));
    r.bytes += double(comp_bytes[k]);
  }
  r.decomp_s = tm.median_s(reps, [&] {
    ckn(nvcompBatchedBitcompDecompressAsync((const void* const*)d_comp_ptr, d_comp_bytes, d_in_bytes, d_back_bytes, nc,
                                            d_temp, dtemp, d_back_ptr, dopt, d_st, tm.s),
        "decompress");
  });
  std::vector<size_t> back_bytes(nc);
  ck(cudaMemcpy(back_bytes.data(), d_back_bytes, nc * sizeof(size_t), cudaMemcpyDeviceToHost), "d2h");
  ck(cudaMemcpy(st.data(), d_st, nc * sizeof(nvcompStatus_t), cudaMemcpyDeviceToHost), "d2h");
  for (size_t k = 0; k < nc; ++k)
    if (st[k] != nvcompSuccess || back_bytes[k] != in_bytes[k])
      die("Bitcomp decompress status " + std::to_string(int(st[k])) + " on chunk " + std::to_string(k));
  host_back.resize(total);
  ck(cudaMemcpy(host_back.data(), d_back, total, cudaMemcpyDeviceToHost), "d2h");
  cudaFree(d_comp), cudaFree(d_temp), cudaFree(d_in_ptr), cudaFree(d_comp_ptr), cudaFree(d_back_ptr);
  cudaFree(d_in_bytes), cudaFree(d_comp_bytes), cudaFree(d_back_bytes), cudaFree(d_st);
  return r;
}

double copy_bandwidth(void* a, void* b, size_t bytes, Timer& tm, int reps) {
  return 2.0 * double(bytes) / tm.median_s(reps, [&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, tm.s); });
}

}  // namespace

int main(int argc, char** argv) {
  std::string data = ".data", filter, bounds_s = "rel:1e-2,rel:1e-3,rel:1e-4", out_path, type = "native";
  double size_mib = 512;
  int reps = 10, algorithm = 0;
  size_t chunk_kib = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--data") data = val();
    else if (a == "--fields") filter = val();
    else if (a == "--bounds") bounds_s = val();
    else if (a == "--size-mib") size_mib = std::stod(val());
    else if (a == "--reps") reps = std::stoi(val());
    else if (a == "--chunk-kib") chunk_kib = std::stoul(val());
    else if (a == "--algorithm") algorithm = std::stoi(val());
    else if (a == "--out") out_path = val();
    else if (a == "--type") type = val();
    else die("unknown option " + a);
  }
  if (type != "native" && type != "f16") die("--type must be f16 (or left out)");
  if (reps < 1 || chunk_kib < 1 || chunk_kib * 1024 > nvcompBitcompCompressionMaxAllowedChunkSize) die("bad --reps or --chunk-kib");
  std::vector<std::pair<hpcz::BoundMode, double>> bounds;
  std::vector<std::string> labels;
  {
    std::stringstream ss(bounds_s);
    std::string p;
    while (std::getline(ss, p, ',')) {
      const auto c = p.find(':');
      if (c == std::string::npos || (p.substr(0, c) != "rel" && p.substr(0, c) != "abs")) die("bound " + p + " must be rel:E or abs:E");
      bounds.push_back({p.substr(0, c) == "rel" ? hpcz::BoundMode::rel : hpcz::BoundMode::abs, std::stod(p.substr(c + 1))});
      labels.push_back(p);
    }
  }
  const std::vector<Field> fields = find_fields(data, filter);
  if (fields.empty()) die("no fields in " + data);
  int nvv = 0;
  Timer tm;
  ck(cudaStreamCreate(&tm.s), "stream");
  ck(cudaEventCreate(&tm.e0), "event");
  ck(cudaEventCreate(&tm.e1), "event");
  cudaDeviceProp prop;
  ck(cudaGetDeviceProperties(&prop, 0), "device");
  std::string report;
  auto emit = [&](const std::string& s) {
    std::fputs(s.c_str(), stdout);
    std::fflush(stdout);
    report += s;
  };
  {
    nvcompProperties_t props;
    if (nvcompGetProperties(&props) == nvcompSuccess) nvv = int(props.version);
  }
  emit(std::string("# hpcz fast mode vs nvCOMP Bitcomp lossy") + (type == "f16" ? ", float16 arrays" : "") + "\n\n");
  emit(std::string("device: ") + prop.name + ", nvCOMP " + std::to_string(nvv / 1000) + "." + std::to_string(nvv % 1000 / 100) + "." +
       std::to_string(nvv % 100) + ", Bitcomp algorithm " + std::to_string(algorithm) + ", " + std::to_string(chunk_kib) +
       " KiB chunks, reps: " + std::to_string(reps) + ", fields tiled along the slowest axis to >= " + fmt("%.0f", size_mib) + " MiB\n\n");
  emit("Bitcomp: delta = the largest power of two <= 2 eb, max error <= delta/2. fast@eb: hpcz at the requested bound; "
       "fast@d/2: hpcz at abs = delta/2 (equal max error). GB/s of input, median of the whole call between CUDA events.\n\n");
  const size_t copy_bytes = size_t(size_mib * (1 << 20));
  double copy_bw = 0;
  {
    void *a, *b;
    ck(cudaMalloc(&a, copy_bytes), "malloc");
    ck(cudaMalloc(&b, copy_bytes), "malloc");
    ck(cudaMemset(a, 1, copy_bytes), "memset");
    copy_bw = copy_bandwidth(a, b, copy_bytes, tm, reps);
    cudaFree(a), cudaFree(b);
  }
  emit("device-to-device copy: " + fmt("%.1f", copy_bw / 2e9) + " GB/s copied = " + fmt("%.1f", copy_bw / 1e9) + " GB/s read+write\n\n");
  emit("| field | bound | eb | delta/2 | Bitcomp comp GB/s | decomp GB/s | CR | PSNR dB | max err/(delta/2) "
       "| fast@eb comp GB/s | decomp GB/s | CR | PSNR dB | fast@d/2 comp GB/s | decomp GB/s | CR | PSNR dB |\n");
  emit("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  struct Sums {
    std::vector<double> c, d, cr;
  } sb, se, sd;
  int failures = 0;
  std::vector<std::string> behind;
  for (Field f : fields) {
    std::ifstream in(f.path, std::ios::binary);
    std::vector<uint8_t> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t vb = hpcz::dtype_size(f.dtype);
    uint64_t n0 = 1;
    for (uint64_t d : f.dims) n0 *= d;
    if (raw.size() != n0 * vb) die(f.path + ": size does not match its name");
    const uint64_t tiles = std::max<uint64_t>(1, uint64_t(std::ceil(size_mib * (1 << 20) / double(raw.size()))));
    std::vector<uint64_t> dims = f.dims;
    dims[0] *= tiles;
    const uint64_t n = n0 * tiles;
    std::vector<uint8_t> host(raw.size() * tiles), back;
    for (uint64_t t = 0; t < tiles; ++t) std::memcpy(host.data() + t * raw.size(), raw.data(), raw.size());
    if (type == "f16") {  // the values rounded to float16; a field beyond its range left out
      std::vector<uint8_t> h16(n * 2);
      bool fits = true;
      for (uint64_t i = 0; i < n && fits; ++i) {
        double v;
        if (f.dtype == hpcz::DType::f64) std::memcpy(&v, &host[8 * i], 8);
        else { float x; std::memcpy(&x, &host[4 * i], 4); v = x; }
        fits = !std::isfinite(v) || std::fabs(v) <= 65504.0;
        const __half h = __float2half_rn(float(v));
        std::memcpy(&h16[2 * i], &h, 2);
      }
      if (!fits) {
        emit("| " + f.name + " | left out: values beyond float16's range |\n");
        continue;
      }
      host.swap(h16);
      f.dtype = hpcz::DType::f16;
    }
    void *d_in = nullptr, *d_back = nullptr;
    ck(cudaMalloc(&d_in, host.size()), "malloc");
    ck(cudaMalloc(&d_back, host.size()), "malloc");
    ck(cudaMemcpy(d_in, host.data(), host.size(), cudaMemcpyHostToDevice), "h2d");
    const double in_b = double(host.size());
    for (size_t bi = 0; bi < bounds.size(); ++bi) {
      hpcz::Options o;
      o.codec = hpcz::Codec::fast;
      o.backend = hpcz::Backend::gpu;
      o.mode = bounds[bi].first;
      o.bound = bounds[bi].second;
      double eb = 0, eb2 = 0;
      Result re = run_hpcz(tm, reps, d_in, d_back, f, dims, n, o, back, eb);
      re.m = hpcz::compare(host.data(), back.data(), f.dtype, n);
      int e2 = 0;
      std::frexp(2 * eb, &e2);
      const double delta = std::ldexp(1.0, e2 - 1), half = delta / 2;
      Result rb = run_bitcomp(tm, reps, d_in, d_back, f, n, delta, chunk_kib * 1024, algorithm, back);
      if (rb.refused) {
        emit("| " + f.name + " | " + labels[bi] + " | " + fmt("%.4g", eb) + " | " + fmt("%.4g", half) +
             " | Bitcomp refused this delta for the type |\n");
        continue;
      }
      rb.m = hpcz::compare(host.data(), back.data(), f.dtype, n);
      hpcz::Options oh = o;
      oh.mode = hpcz::BoundMode::abs;
      oh.bound = half;
      Result rd = run_hpcz(tm, reps, d_in, d_back, f, dims, n, oh, back, eb2);
      rd.m = hpcz::compare(host.data(), back.data(), f.dtype, n);
      auto bad = [&](const Result& r, double bound, const char* who) {
        if (r.m.nonfinite_mismatch || !(r.m.max_abs_error <= bound)) {
          std::fprintf(stderr, "bitcomp_bench: %s on %s %s: max error %.6g over its bound %.6g (%llu non-finite mismatches)\n",
                       who, f.name.c_str(), labels[bi].c_str(), r.m.max_abs_error, bound,
                       (unsigned long long)r.m.nonfinite_mismatch);
          ++failures;
        }
      };
      bad(re, eb, "hpcz fast");
      bad(rb, half, "Bitcomp");
      bad(rd, half, "hpcz fast at delta/2");
      auto gb = [&](double s) { return in_b / s / 1e9; };
      auto cols = [&](const Result& r) {
        return fmt("%.1f", gb(r.comp_s)) + " | " + fmt("%.1f", gb(r.decomp_s)) + " | " + fmt("%.2f", in_b / r.bytes) + " | " +
               fmt("%.2f", r.m.psnr);
      };
      emit("| " + f.name + " | " + labels[bi] + " | " + fmt("%.4g", eb) + " | " + fmt("%.4g", half) + " | " + cols(rb) + " | " +
           fmt("%.3f", half > 0 ? rb.m.max_abs_error / half : 0.0) + " | " + cols(re) + " | " + cols(rd) + " |\n");
      for (auto [s, r] : {std::pair<Sums*, Result*>{&sb, &rb}, {&se, &re}, {&sd, &rd}}) {
        s->c.push_back(gb(r->comp_s));
        s->d.push_back(gb(r->decomp_s));
        s->cr.push_back(in_b / r->bytes);
      }
      if (in_b / rd.bytes < in_b / rb.bytes)
        behind.push_back(f.name + " " + labels[bi] + " (" + fmt("%.2f", in_b / rd.bytes) + " vs " + fmt("%.2f", in_b / rb.bytes) + ")");
    }
    cudaFree(d_in), cudaFree(d_back);
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / double(v.size());
  };
  auto gmean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += std::log(x);
    return v.empty() ? 0 : std::exp(s / double(v.size()));
  };
  emit("\n| over " + std::to_string(sb.c.size()) + " rows | comp GB/s (mean) | decomp GB/s (mean) | CR (geomean) |\n|---|---|---|---|\n");
  for (auto [name, s] : {std::pair<const char*, Sums*>{"Bitcomp lossy", &sb}, {"hpcz fast at the requested bound", &se},
                         {"hpcz fast at delta/2 (equal max error)", &sd}})
    emit(std::string("| ") + name + " | " + fmt("%.1f", mean(s->c)) + " | " + fmt("%.1f", mean(s->d)) + " | " + fmt("%.2f", gmean(s->cr)) + " |\n");
  emit("\nhpcz fast at equal max error / Bitcomp: compression " + fmt("%.2f", mean(sd.c) / mean(sb.c)) + "x, decompression " +
       fmt("%.2f", mean(sd.d) / mean(sb.d)) + "x, CR " + fmt("%.2f", gmean(sd.cr) / gmean(sb.cr)) + "x\n");
  emit("rows where hpcz fast at equal max error has the lower CR: " + std::to_string(behind.size()) + "\n");
  for (const std::string& b : behind) emit("- " + b + "\n");
  if (failures) emit("\nBOUND VIOLATIONS: " + std::to_string(failures) + " (see stderr)\n");
  if (!out_path.empty()) {
    std::ofstream o(out_path);
    o << report;
  }
  return failures ? 1 : 0;
}
