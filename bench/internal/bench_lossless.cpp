// hpcz_bench_internal --mode lossless: decoding throughput of the lossless codecs.
//
// Datasets from each real float32 field: two integer columns (int32) for ORC RLE v1 and v2, the field
// quantized at rel 1e-2 ("run-rich": smooth fields repeat or ramp for several values) and at rel 1e-5
// ("run-poor"); and the field's raw bytes for Deflate (zlib level 6), plus, if present, a text file.
// Each is cut into 64 KiB chunks (decoded size), encoded on the CPU, and the compressed chunks are
// replicated in device memory until the decoded total reaches --size-mib (distinct copies, so the
// input is not served from L2). GPU: the batched device call (one warp per chunk) between CUDA events,
// 2 warm-ups, median of --reps, in decoded bytes per second, also as a fraction of the copy roofline
// ((compressed + decoded bytes) / time over the copy's read + write bandwidth). CPU: the batched
// call on all cores over the same chunks (one copy). gpu==cpu compares every decoded byte and status.
// --dump DIR writes each Deflate dataset as DIR/NAME/chunks.bin, chunks.idx, expected.bin (the input
// of bench/compare/, for nvCOMP and libdeflate on the same chunks).
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <omp.h>
#include <sys/stat.h>

#include "bench_util.hpp"
#include "cli_util.hpp"
#include "lossless/lossless_internal.hpp"
#include "pipeline/internal.hpp"

namespace hpcz::cli {
namespace {

struct Dataset {
  std::string name;
  LosslessOptions o;
  std::vector<uint8_t> data;  // decoded bytes
};

std::vector<uint8_t> quantized_column(const std::vector<float>& x, double rel) {
  float mn = INFINITY, mx = -INFINITY;
  for (float v : x)
    if (std::isfinite(v)) { mn = std::min(mn, v); mx = std::max(mx, v); }
  const double step = 2.0 * rel * (double(mx) - double(mn));
  std::vector<uint8_t> out(x.size() * 4);
  for (size_t i = 0; i < x.size(); ++i) {
    const int32_t q = std::isfinite(x[i]) && step > 0 ? int32_t(std::llround(double(x[i]) / step)) : 0;
    std::memcpy(&out[4 * i], &q, 4);
  }
  return out;
}

// The chunks of a compressed dataset: offsets into the compressed file and decoded sizes.
struct Chunks {
  std::vector<uint8_t> file;
  std::vector<uint64_t> in_off, in_size, out_size;
  uint64_t out_total = 0;
};

// The dataset cut into chunk_bytes pieces, each encoded alone by the library's own chunk encoder
// (raw Deflate or an ORC RLE stream: what the files' members and HZLC chunks hold), back to back in
// c.file. (Parsing the file formats here instead would break with every header change.)
Chunks split(const Dataset& d) {
  Chunks c;
  const uint64_t per = d.o.chunk_bytes;
  for (uint64_t at = 0; at < d.data.size(); at += per) {
    const uint64_t n = std::min<uint64_t>(per, d.data.size() - at);
    const std::vector<uint8_t> e = lossless::encode_chunk(d.data.data() + at, size_t(n), d.o);
    if (e.empty() && n) throw Error(ErrorCode::unsupported, "this build has no Deflate encoder (zlib)");
    c.in_off.push_back(c.file.size());
    c.in_size.push_back(e.size());
    c.out_size.push_back(n);
    c.file.insert(c.file.end(), e.begin(), e.end());
  }
  for (auto s : c.out_size) c.out_total += s;
  return c;
}

void dump(const std::string& dir, const Dataset& d, const Chunks& c) {
  mkdir(dir.c_str(), 0755);
  const std::string sub = dir + "/" + d.name;
  mkdir(sub.c_str(), 0755);
  std::ofstream bin(sub + "/chunks.bin", std::ios::binary), idx(sub + "/chunks.idx", std::ios::binary),
      exp(sub + "/expected.bin", std::ios::binary);
  uint64_t at = 0;
  for (size_t k = 0; k < c.in_off.size(); ++k) {
    bin.write(reinterpret_cast<const char*>(c.file.data() + c.in_off[k]), std::streamsize(c.in_size[k]));
    const uint64_t e[3] = {at, c.in_size[k], c.out_size[k]};
    idx.write(reinterpret_cast<const char*>(e), sizeof e);
    at += c.in_size[k];
  }
  exp.write(reinterpret_cast<const char*>(d.data.data()), std::streamsize(d.data.size()));
}

// The lossless second stage of the lossy modes: CR with and without it on every field (untiled, rel
// 1e-2 / 1e-3 / 1e-4, both codecs; geometric means), and for the ratio mode what it costs: the CPU time
// to add it (host API, 512 MiB tiled field) and the GPU time of the batched lossless decoding that
// removes it (device-resident staged chunks, median of reps).
template <class Emit>
void second_stage_table(const std::string& data_dir, const std::string& filter, double size_mib, int reps, bool gpu,
                        Emit&& emit
#if HPCZ_HAS_CUDA
                        , cudaStream_t s
#endif
) {
  emit("\n## The lossless second stage over the lossy modes\n\n");
  emit("| field | codec | bound | CR | CR + 2nd stage | gain | add (CPU s, tiled) | remove (GPU ms, tiled) | remove GB/s of field |\n");
  emit("|---|---|---|---|---|---|---|---|---|\n");
  std::vector<double> lg[2][3][2];  // codec, bound, without/with
  const double rels[3] = {1e-2, 1e-3, 1e-4};
  for (const Field& f : find_fields(data_dir, filter)) {
    const auto raw = read_file(f.path);
    for (int ci = 0; ci < 2; ++ci)
      for (int bi = 0; bi < 3; ++bi) {
        Options o;
        o.bound = rels[bi];
        o.codec = ci == 0 ? Codec::ratio : Codec::fast;
        o.backend = Backend::cpu;
        const auto plain = compress(raw.data(), f.dtype, f.dims, o);
        o.second_stage = true;
        const auto staged = compress(raw.data(), f.dtype, f.dims, o);
        const double cr0 = double(raw.size()) / double(plain.size()), cr1 = double(raw.size()) / double(staged.size());
        lg[ci][bi][0].push_back(std::log(cr0));
        lg[ci][bi][1].push_back(std::log(cr1));
        std::string add_cell = "-", rm_cell = "-", gbs_cell = "-";
#if HPCZ_HAS_CUDA
        if (gpu && ci == 0) {
          // Tile along the slowest axis, compress on the GPU, time the stage's addition on the host.
          const uint64_t k = std::max<uint64_t>(1, uint64_t(std::ceil(size_mib * (1 << 20) / double(raw.size()))));
          std::vector<uint8_t> tiled(raw.size() * k);
          for (uint64_t r = 0; r < k; ++r) std::memcpy(&tiled[r * raw.size()], raw.data(), raw.size());
          std::vector<uint64_t> dims = f.dims;
          dims[0] *= k;
          o.backend = Backend::gpu;
          o.second_stage = false;
          auto t0 = std::chrono::steady_clock::now();
          const auto tp = compress(tiled.data(), f.dtype, dims, o);
          const double t_plain = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          o.second_stage = true;
          t0 = std::chrono::steady_clock::now();
          const auto ts = compress(tiled.data(), f.dtype, dims, o);
          const double t_staged = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          add_cell = fmt("%.3f", t_staged - t_plain);
          // The staged archive on the device; time the batched decoding of its pieces.
          const ArchiveInfo info = inspect(ts.data(), ts.size());
          uint8_t* d_a;
          ck(cudaMalloc(&d_a, ts.size()), "malloc");
          ck(cudaMemcpy(d_a, ts.data(), ts.size(), cudaMemcpyHostToDevice), "copy");
          // The encoded pieces, by codec, as the host API finds them (pipeline::second_stage_pieces).
          const pipeline::StagePieces sp = pipeline::second_stage_pieces(ts.data(), info);
          const uint64_t out_total = sp.dense[0] + sp.dense[1];
          uint8_t* d_out;
          ck(cudaMalloc(&d_out, out_total ? out_total : 1), "malloc");
          uint64_t* d_arr[2] = {nullptr, nullptr};
          uint64_t o_at = 0;
          for (int t = 0; t < 2; ++t) {  // per codec: in pointers, in sizes, out pointers, capacities, sizes, statuses
            const size_t n = sp.refs[t].size();
            if (!n) continue;
            std::vector<uint64_t> arr(4 * n);
            for (size_t i = 0; i < n; ++i) {
              const auto& r = sp.refs[t][i];
              arr[i] = reinterpret_cast<uint64_t>(d_a + r.in_offset);
              arr[n + i] = r.in_size;
              arr[2 * n + i] = reinterpret_cast<uint64_t>(d_out + o_at);
              arr[3 * n + i] = r.out_capacity;
              o_at += r.out_capacity;
            }
            ck(cudaMalloc(&d_arr[t], n * 44), "malloc");
            ck(cudaMemcpy(d_arr[t], arr.data(), 32 * n, cudaMemcpyHostToDevice), "copy");
          }
          auto codec_of = [](int t) { return LosslessOptions{t == 0 ? LosslessCodec::deflate : LosslessCodec::rle2, 1}; };
          size_t ws[2] = {0, 0};
          void* d_ws[2] = {nullptr, nullptr};
          for (int t = 0; t < 2; ++t) {
            ws[t] = lossless_decompress_batch_workspace_size(codec_of(t), sp.refs[t].size());
            if (ws[t]) ck(cudaMalloc(&d_ws[t], ws[t]), "malloc");
          }
          const double ms = 1e3 * median_seconds(reps, s, [&] {
            for (int t = 0; t < 2; ++t) {
              const size_t n = sp.refs[t].size();
              if (!n) continue;
              lossless_decompress_batch_device(codec_of(t), reinterpret_cast<const uint8_t* const*>(d_arr[t]),
                                               d_arr[t] + n, reinterpret_cast<uint8_t* const*>(d_arr[t] + 2 * n),
                                               d_arr[t] + 3 * n, d_arr[t] + 4 * n,
                                               reinterpret_cast<LosslessStatus*>(d_arr[t] + 5 * n), n, d_ws[t], ws[t], s);
            }
          });
          for (void* p : d_ws) cudaFree(p);
          rm_cell = fmt("%.3f", ms);
          gbs_cell = fmt("%.0f", double(tiled.size()) / (ms * 1e-3) / 1e9);
          cudaFree(d_a);
          cudaFree(d_out);
          for (auto* p : d_arr) if (p) cudaFree(p);
        }
#endif
        emit("| " + f.name + " | " + codec_name(ci == 0 ? Codec::ratio : Codec::fast) + " | rel " + fmt("%.0e", rels[bi]) + " | " + fmt("%.2f", cr0) +
             " | " + fmt("%.2f", cr1) + " | " + fmt("%+.1f%%", 100 * (cr1 / cr0 - 1)) + " | " + add_cell + " | " + rm_cell +
             " | " + gbs_cell + " |\n");
      }
  }
  emit("\ngeometric mean CR over the fields (rel 1e-2 / 1e-3 / 1e-4):\n");
  for (int ci = 0; ci < 2; ++ci)
    for (int w = 0; w < 2; ++w) {
      std::string line = std::string("- ") + codec_name(ci == 0 ? Codec::ratio : Codec::fast) + (w ? " + second stage" : "") + ": ";
      for (int bi = 0; bi < 3; ++bi) {
        double m = 0;
        for (double v : lg[ci][bi][w]) m += v;
        line += (bi ? " / " : "") + fmt("%.2f", lg[ci][bi][w].empty() ? 0 : std::exp(m / double(lg[ci][bi][w].size())));
      }
      emit(line + "\n");
    }
}

}  // namespace

int bench_lossless_main(const std::vector<std::string>& args) {
  std::string data_dir = default_data_dir(), filter, out_path, dump_dir, text = "/usr/share/common-licenses/GPL-3";
  double size_mib = 512;
  int reps = 10;
  bool stage_table = true;
  for (size_t i = 0; i < args.size(); ++i) {
    auto val = [&] { return option_value(args, i); };
    if (args[i] == "--mode") val();
    else if (args[i] == "--data") data_dir = val();
    else if (args[i] == "--size-mib") size_mib = parse_number(val(), "--size-mib");
    else if (args[i] == "--reps") reps = int(parse_number(val(), "--reps"));
    else if (args[i] == "--fields") filter = val();
    else if (args[i] == "--out") out_path = val();
    else if (args[i] == "--dump") dump_dir = val();
    else if (args[i] == "--text") text = val();
    else if (args[i] == "--no-second-stage") stage_table = false;
    else throw UsageError("unknown bench option '" + args[i] + "'");
  }
  if (reps < 1) throw UsageError("--reps must be >= 1");
  const bool gpu = gpu_available();
  std::vector<Dataset> sets;
  for (const Field& f : find_fields(data_dir, filter)) {
    if (f.dtype != DType::f32) continue;
    auto raw = read_file(f.path);
    std::vector<float> x(raw.size() / 4);
    std::memcpy(x.data(), raw.data(), x.size() * 4);
    for (LosslessCodec c : {LosslessCodec::rle1, LosslessCodec::rle2}) {
      const char* cn = c == LosslessCodec::rle1 ? "rle1" : "rle2";
      sets.push_back({f.name + "/q1e-2/" + cn, LosslessOptions{c, 4, true}, quantized_column(x, 1e-2)});
      sets.push_back({f.name + "/q1e-5/" + cn, LosslessOptions{c, 4, true}, quantized_column(x, 1e-5)});
    }
    sets.push_back({f.name + "/bytes/deflate", LosslessOptions{LosslessCodec::deflate}, raw});
  }
  {
    std::ifstream tf(text, std::ios::binary);
    std::vector<uint8_t> t((std::istreambuf_iterator<char>(tf)), std::istreambuf_iterator<char>());
    if (!t.empty()) sets.push_back({"text/deflate", LosslessOptions{LosslessCodec::deflate}, t});
  }
  std::string report;
  auto emit = [&](const std::string& s) {
    std::fputs(s.c_str(), stdout);
    std::fflush(stdout);
    report += s;
  };
  emit("# hpcz bench --mode lossless\n\n");
  emit("device: " + (gpu ? gpu_name() : std::string("none (CPU only)")) + ", CPU threads: " +
       std::to_string(omp_get_max_threads()) + ", reps: " + std::to_string(reps) + ", decoded size per dataset >= " +
       fmt("%.0f", size_mib) + " MiB on the GPU (compressed chunks replicated), 64 KiB chunks\n\n");
  double copy_bw = 0;
#if HPCZ_HAS_CUDA
  cudaStream_t s = nullptr;
  if (gpu) {
    ck(cudaStreamCreate(&s), "stream");
    copy_bw = copy_bandwidth(size_t(size_mib * (1 << 20)), reps, s);
    emit("device-to-device copy: " + fmt("%.1f", copy_bw / 2e9) + " GB/s copied = " + fmt("%.1f", copy_bw / 1e9) +
         " GB/s read+write (the roofline below)\n\n");
  }
#endif
  emit("| dataset | codec | elem | CR | chunks (GPU) | GPU decode GB/s | % roof | CPU decode GB/s | gpu==cpu |\n");
  emit("|---|---|---|---|---|---|---|---|---|\n");
  std::vector<double> gm_gpu[3];
  for (Dataset& d : sets) {
    d.o.backend = Backend::cpu;
    const Chunks c = split(d);
    if (!dump_dir.empty() && d.o.codec == LosslessCodec::deflate) {
      std::string nm = d.name;
      for (char& ch : nm) if (ch == '/') ch = '_';
      Dataset named = d;
      named.name = nm;
      dump(dump_dir, named, c);
    }
    const size_t n1 = c.in_off.size();
    uint64_t in_total = 0;
    for (auto v : c.in_size) in_total += v;
    // CPU: the batched call over the chunks replicated to >= 64 MiB decoded (or --size-mib if less),
    // so that all threads have work (one copy of a few MB times thread start-up more than decoding).
    const uint64_t cpu_copies =
        std::max<uint64_t>(1, uint64_t(std::ceil(std::min(size_mib, 64.0) * (1 << 20) / double(std::max<uint64_t>(1, c.out_total)))));
    const size_t nc = n1 * size_t(cpu_copies);
    std::vector<uint8_t> cpu_out(c.out_total * cpu_copies);
    std::vector<const uint8_t*> in(nc);
    std::vector<uint8_t*> out(nc);
    std::vector<uint64_t> caps(nc), sizes(nc), in_sizes(nc);
    std::vector<LosslessStatus> st(nc);
    uint64_t at = 0;
    for (size_t k = 0; k < nc; ++k) {
      in[k] = c.file.data() + c.in_off[k % n1];
      in_sizes[k] = c.in_size[k % n1];
      caps[k] = c.out_size[k % n1];
      out[k] = cpu_out.data() + at;
      at += c.out_size[k % n1];
    }
    std::vector<double> tc;
    for (int r = 0; r < std::min(reps, 3) + 1; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      lossless_decompress_batch(d.o, in.data(), in_sizes.data(), out.data(), caps.data(), sizes.data(), st.data(), nc);
      if (r) tc.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    bool cpu_ok = true;
    for (uint64_t r = 0; r < cpu_copies && cpu_ok; ++r)
      cpu_ok = std::memcmp(cpu_out.data() + r * c.out_total, d.data.data(), c.out_total) == 0;
    for (auto v : st) cpu_ok &= v == LosslessStatus::ok;
    const double cpu_gbs = double(c.out_total * cpu_copies) / median(tc) / 1e9;
    std::string gpu_cell = "-", roof_cell = "-", same = "-", chunks_cell = std::to_string(n1);
#if HPCZ_HAS_CUDA
    if (gpu) {
      const uint64_t copies = std::max<uint64_t>(1, uint64_t(std::ceil(size_mib * (1 << 20) / double(c.out_total))));
      const size_t n = n1 * copies;
      // Compressed chunks packed 16-byte aligned, replicated; outputs back to back.
      std::vector<uint64_t> poff(n1);
      uint64_t packed = 0;
      for (size_t k = 0; k < n1; ++k) { poff[k] = packed; packed += (c.in_size[k] + 15) / 16 * 16; }
      std::vector<uint8_t> one(packed, 0);
      for (size_t k = 0; k < n1; ++k) std::memcpy(&one[poff[k]], c.file.data() + c.in_off[k], c.in_size[k]);
      uint8_t *d_in, *d_out;
      ck(cudaMalloc(&d_in, packed * copies), "malloc");
      ck(cudaMalloc(&d_out, c.out_total * copies), "malloc");
      for (uint64_t r = 0; r < copies; ++r) ck(cudaMemcpy(d_in + r * packed, one.data(), packed, cudaMemcpyHostToDevice), "copy");
      std::vector<uint64_t> arr(4 * n);
      for (uint64_t r = 0; r < copies; ++r) {
        uint64_t o = r * c.out_total;
        for (size_t k = 0; k < n1; ++k) {
          const size_t i = r * n1 + k;
          arr[i] = reinterpret_cast<uint64_t>(d_in + r * packed + poff[k]);
          arr[n + i] = c.in_size[k];
          arr[2 * n + i] = reinterpret_cast<uint64_t>(d_out + o);
          arr[3 * n + i] = c.out_size[k];
          o += c.out_size[k];
        }
      }
      uint64_t* d_arr;
      ck(cudaMalloc(&d_arr, n * (5 * 8 + 4)), "malloc");
      ck(cudaMemcpy(d_arr, arr.data(), arr.size() * 8, cudaMemcpyHostToDevice), "copy");
      auto* d_status = reinterpret_cast<LosslessStatus*>(d_arr + 5 * n);
      const size_t ws = lossless_decompress_batch_workspace_size(d.o, n);
      void* d_ws = nullptr;
      if (ws) ck(cudaMalloc(&d_ws, ws), "malloc");
      const double t = median_seconds(reps, s, [&] {
        lossless_decompress_batch_device(d.o, reinterpret_cast<const uint8_t* const*>(d_arr), d_arr + n,
                                         reinterpret_cast<uint8_t* const*>(d_arr + 2 * n), d_arr + 3 * n, d_arr + 4 * n,
                                         d_status, n, d_ws, ws, s);
      });
      const double gbs = double(c.out_total * copies) / t / 1e9;
      gm_gpu[int(d.o.codec)].push_back(gbs);
      gpu_cell = fmt("%.1f", gbs);
      roof_cell = fmt("%.1f", 100.0 * double((in_total + c.out_total) * copies) / t / copy_bw);
      chunks_cell = std::to_string(n);
      // Every copy decoded right, and equal to the CPU's bytes and statuses.
      std::vector<uint8_t> g(c.out_total * copies);
      std::vector<LosslessStatus> gst(n);
      ck(cudaMemcpy(g.data(), d_out, g.size(), cudaMemcpyDeviceToHost), "copy");
      ck(cudaMemcpy(gst.data(), d_status, n * 4, cudaMemcpyDeviceToHost), "copy");
      bool eq = cpu_ok;
      for (uint64_t r = 0; r < copies && eq; ++r) eq = std::memcmp(g.data() + r * c.out_total, cpu_out.data(), c.out_total) == 0;
      for (auto v : gst) eq &= v == LosslessStatus::ok;
      same = eq ? "yes" : "NO";
      cudaFree(d_in);
      cudaFree(d_out);
      cudaFree(d_arr);
      if (d_ws) cudaFree(d_ws);
    }
#endif
    const char* cn = d.o.codec == LosslessCodec::rle1 ? "rle1" : d.o.codec == LosslessCodec::rle2 ? "rle2" : "deflate";
    emit("| " + d.name + " | " + cn + " | " + (d.o.codec == LosslessCodec::deflate ? std::string("-") : std::to_string(d.o.elem_bytes)) +
         " | " + fmt("%.2f", double(c.out_total) / double(in_total)) + " | " + chunks_cell + " | " + gpu_cell + " | " +
         roof_cell + " | " + fmt("%.2f", cpu_gbs) + (cpu_ok ? "" : " (WRONG)") + " | " + same + " |\n");
  }
  if (stage_table) second_stage_table(data_dir, filter, size_mib, reps, gpu, emit
#if HPCZ_HAS_CUDA
                                      , s
#endif
  );
  const char* names[3] = {"rle1", "rle2", "deflate"};
  for (int k = 0; k < 3; ++k) {
    if (gm_gpu[k].empty()) continue;
    double lg = 0;
    for (double v : gm_gpu[k]) lg += std::log(v);
    emit(std::string("\ngeometric mean GPU decode, ") + names[k] + ": " + fmt("%.1f", std::exp(lg / double(gm_gpu[k].size()))) + " GB/s");
  }
  emit("\n");
  if (!out_path.empty()) write_file(out_path, reinterpret_cast<const uint8_t*>(report.data()), report.size());
  return 0;
}

}  // namespace hpcz::cli
