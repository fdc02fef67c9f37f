// hpcz_bench_internal --mode codebook: the ratio mode's codebook construction (Tian et al.'s two phases: code
// lengths by the parallel rounds of Ostadzadeh et al., then canonical codes) for one histogram on
// the GPU (one thread block: book_kernel, as the compressor launches it per chunk) against the CPU build
// of the same book (sort, Moffat-Katajainen, length limit, canonical codes; one core), at 1,024, 2,048
// and 4,096 symbols (radius 512 to 2048; the format's alphabet ends at 4,096). Histograms: a dense one
// (every symbol used, two-sided geometric counts) and the quant codes of each field's first chunk at
// rel 1e-3. Both books must be equal; the times are medians of --reps builds after a warm-up.
#include <chrono>
#include <cmath>

#include "bench_util.hpp"
#include "codecs/ratio_class/engine_gpu.hpp"
#include "predict/lorenzo.hpp"
#include "codecs/ratio_class/chunk.hpp"
#include "common/dtype.hpp"

namespace hpcz::cli {
namespace {

std::vector<uint32_t> dense_histogram(uint32_t nsym) {
  std::vector<uint32_t> h(nsym);
  // Counts from 2^24 at the centre down to 1 at the ends: every symbol used, many distinct weights.
  const double decay = std::log(double(1 << 24)) / (nsym / 2);
  for (uint32_t s = 0; s < nsym; ++s) {
    const double d = std::fabs(double(s) - double(nsym / 2));
    h[s] = std::max<uint32_t>(1, uint32_t(std::exp(std::log(double(1 << 24)) - decay * d)));
  }
  return h;
}

template <class T> std::vector<uint32_t> field_histogram(const Field& f, uint32_t radius) {
  const auto raw = read_file(f.path);
  const T* x = reinterpret_cast<const T*>(raw.data());
  const uint64_t n = raw.size() / sizeof(T);
  double mn = INFINITY, mx = -INFINITY;
  for (uint64_t i = 0; i < n; ++i)
    if (std::isfinite(x[i])) mn = std::min(mn, double(x[i])), mx = std::max(mx, double(x[i]));
  if (!(mn <= mx)) return {};
  const double eb = 1e-3 * (mx - mn);
  const auto p = quant::make_params<T>(eb, quant::choose_step<T>(eb, true, mn, mx), false, 0);
  const auto shape = predict::working_shape(f.dims.data(), int(f.dims.size()));
  ratio::EncodeScratch<T> sc;
  std::vector<uint8_t> chunk;
  ratio::encode_chunk(x, predict::chunk_shape(shape, 0), p, radius, sc, chunk);
  return sc.hist;
}

}  // namespace

int bench_codebook_main(const std::vector<std::string>& args) {
  std::string data_dir = default_data_dir(), filter, out_path, device = gpu_available() ? "gpu" : "cpu";
  int reps = 20;
  for (size_t i = 0; i < args.size(); ++i) {
    auto val = [&] { return option_value(args, i); };
    if (args[i] == "--mode") val();
    else if (args[i] == "--data") data_dir = val();
    else if (args[i] == "--fields") filter = val();
    else if (args[i] == "--reps") reps = int(parse_number(val(), "--reps"));
    else if (args[i] == "--out") out_path = val();
    else if (args[i] == "--device") device = val();
    else if (args[i] == "--size-mib" || args[i] == "--bounds") val();  // other modes' options: no effect here
    else if (args[i] != "--quick") throw UsageError("unknown bench option '" + args[i] + "'");
  }
  if (device != "gpu" && device != "cpu") throw UsageError("--device must be gpu or cpu");
  if (reps < 1) throw UsageError("--reps must be >= 1");
  const bool gpu = device == "gpu";
  if (gpu && !gpu_available()) throw Error(ErrorCode::backend_unavailable, "no usable CUDA GPU for bench");
  std::string report;
  auto emit = [&](const std::string& s) {
    std::fputs(s.c_str(), stdout);
    std::fflush(stdout);
    report += s;
  };
  emit("# hpcz bench\n\nmode: codebook, device: " + (gpu ? gpu_name() : std::string("CPU")) + ", reps: " +
       std::to_string(reps) + " (medians), one book: GPU = book_kernel on one thread block (kernel time between "
       "events), CPU = build_book on one core\n\n");
  emit("| histogram | symbols | used | GPU us | CPU us | CPU / GPU | GPU us, 32 books in one launch | same book |\n"
       "|---|---|---|---|---|---|---|---|\n");
  const auto fields = find_fields(data_dir, filter);
  int rows = 0, differ = 0;
  for (uint32_t nsym : {1024u, 2048u, 4096u}) {
    std::vector<std::pair<std::string, std::vector<uint32_t>>> hists{{"dense geometric", dense_histogram(nsym)}};
    for (const Field& f : fields) {
      auto h = detail::dispatch_dtype(f.dtype, [&](auto tr) {
        using T = typename decltype(tr)::value_type;
        return field_histogram<T>(f, nsym / 2);
      });
      if (!h.empty()) hists.push_back({f.name + " rel 1e-3", std::move(h)});
    }
    for (const auto& [name, h] : hists) {
      uint32_t used = 0;
      for (uint32_t c : h) used += c != 0;
      std::vector<double> cpu_t;
      ratio::Book book;
      for (int r = 0; r < reps + 1; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        book = ratio::build_book(h.data(), nsym);
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        if (r) cpu_t.push_back(us);
      }
      const double cpu_us = median(cpu_t);
      std::string gpu_col = "-", ratio_col = "-", many_col = "-", same = "-";
      if (gpu) {
        double ms = 0, many_ms = 0;
        const auto len = ratio::gpu_build_books(h, nsym, &ms, reps);
        // A 512 MiB compression builds 32 books (one a chunk) in one launch, a thread block each.
        std::vector<uint32_t> many;
        for (int k = 0; k < 32; ++k) many.insert(many.end(), h.begin(), h.end());
        ratio::gpu_build_books(many, nsym, &many_ms, reps);
        same = len == book.len ? "yes" : "NO";
        differ += len != book.len;
        gpu_col = fmt("%.1f", ms * 1e3);
        ratio_col = fmt("%.2f", cpu_us / (ms * 1e3));
        many_col = fmt("%.1f", many_ms * 1e3);
      }
      emit("| " + name + " | " + std::to_string(nsym) + " | " + std::to_string(used) + " | " + gpu_col + " | " +
           fmt("%.1f", cpu_us) + " | " + ratio_col + " | " + many_col + " | " + same + " |\n");
      ++rows;
    }
  }
  if (!out_path.empty()) write_file(out_path, reinterpret_cast<const uint8_t*>(report.data()), report.size());
  if (differ) {
    std::fprintf(stderr, "hpcz: bench: %d GPU books differ from the CPU's\n", differ);
    return kRuntime;
  }
  return rows ? kOk : kBadInput;
}

}  // namespace hpcz::cli
