// hpcz command-line tool: a thin layer over the library. Dims are written slowest to fastest.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "cli_util.hpp"

namespace hpcz::cli {

static const char* kUsageText =
    "usage:\n"
    "  hpcz compress -i IN -o OUT -t f32|f64 -d DIMS (--abs E | --rel E) [--mode fast|ratio]\n"
    "                [--device auto|gpu|cpu] [--fill V] [--radius R] [--lossless] [--verbose]\n"
    "  hpcz decompress -i IN -o OUT [--device auto|gpu|cpu] [--verbose]\n"
    "  hpcz info IN [--json]\n"
    "  hpcz compare -t f32|f64 -d DIMS ORIGINAL DECOMPRESSED [--fill V]\n"
    "  hpcz bench [--data DIR] [--size-mib N] [--reps N] [--bounds rel:1e-2,abs:0.1,...] [--device gpu|cpu] [--quick]\n"
    "             [--fields SUBSTR] [--out FILE] [--mode fast|ratio]\n"
    "  hpcz lossless compress|decompress --codec rle1|rle2|deflate -i IN -o OUT [--elem 1|2|4|8] [--signed]\n"
    "                [--device auto|gpu|cpu] [--chunk-kib K]\n"
    "DIMS: slowest to fastest, e.g. 100x500x500 (numpy shape order); rank 1 to 4.\n"
    "exit: 0 success, 1 usage error, 2 bad input (unreadable, truncated or corrupt), 3 runtime failure.\n";

std::vector<uint64_t> parse_dims(const std::string& s) {
  std::vector<uint64_t> d;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, 'x')) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError("bad dims '" + s + "' (expected e.g. 100x500x500)");
    d.push_back(std::stoull(part));
  }
  if (d.empty() || d.size() > 4) throw UsageError("dims must have 1 to 4 extents: '" + s + "'");
  return d;
}

DType parse_dtype(const std::string& s) {
  if (s == "f32" || s == "float32") return DType::f32;
  if (s == "f64" || s == "float64") return DType::f64;
  throw UsageError("type must be f32 or f64, not '" + s + "'");
}

double parse_number(const std::string& s, const char* what) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end) throw UsageError(std::string("bad number for ") + what + ": '" + s + "'");
  return v;
}

std::string dims_string(const std::vector<uint64_t>& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "x" : "") + std::to_string(d[i]);
  return s;
}

namespace {
// Progress on stderr for big inputs when a person is watching.
struct Progress {
  bool on;
  explicit Progress(uint64_t bytes) : on(bytes > (256ull << 20) && isatty(2)) {}
  void show(const char* stage, double frac) const {
    if (!on) return;
    int w = 30, k = int(frac * w);
    std::fprintf(stderr, "\r%-12s [%s%s] %3d%%", stage, std::string(k, '#').c_str(), std::string(w - k, ' ').c_str(),
                 int(frac * 100));
    if (frac >= 1) std::fputc('\n', stderr);
  }
};
}  // namespace

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw InputError("cannot open '" + path + "'");
  std::streamoff n = f.tellg();
  if (n < 0) throw InputError("cannot read '" + path + "'");
  std::vector<uint8_t> buf(static_cast<size_t>(n));
  f.seekg(0);
  Progress pr(buf.size());
  const size_t step = 64ull << 20;
  for (size_t at = 0; at < buf.size(); at += step) {
    size_t k = std::min(step, buf.size() - at);
    if (!f.read(reinterpret_cast<char*>(buf.data() + at), std::streamsize(k))) throw InputError("cannot read '" + path + "'");
    pr.show("reading", double(at + k) / double(buf.size()));
  }
  return buf;
}

// Mapping skips the read's copy and the zero-filled buffer it lands in: a 539 MB input took 0.33 s
// to read into a vector on an H200 host (the page cache gives 4 GB/s).
InputFile::InputFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  struct stat st;
  if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    size_ = size_t(st.st_size);
    const Progress pr(size_);
    // Populated at once, or a step at a time under a progress bar (a cold file on a slow disk).
    void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | (pr.on ? 0 : MAP_POPULATE), fd, 0);
    map_ = m == MAP_FAILED ? nullptr : m;
    if (map_ && pr.on) {
      const size_t step = size_t(64) << 20;
      volatile uint8_t sink = 0;
      for (size_t at = 0; at < size_; at += step) {
        const size_t k = std::min(step, size_ - at);
        for (size_t b = 0; b < k; b += 4096) sink = sink + static_cast<const uint8_t*>(map_)[at + b];  // fault the pages in
        pr.show("reading", double(at + k) / double(size_));
      }
    }
  }
  if (fd >= 0) ::close(fd);
  if (!map_) {  // not a regular file, empty, or not mappable: read it
    copy_ = read_file(path);
    size_ = copy_.size();
  }
}
InputFile::~InputFile() {
  if (map_) ::munmap(map_, size_);
}

void write_file(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw InputError("cannot create '" + path + "'");
  Progress pr(size);
  const size_t step = 64ull << 20;
  for (size_t at = 0; at < size; at += step) {
    size_t k = std::min(step, size - at);
    f.write(reinterpret_cast<const char*>(data + at), std::streamsize(k));
    pr.show("writing", double(at + k) / double(size));
  }
  if (!f.flush()) throw InputError("cannot write '" + path + "'");
}

namespace {

struct Args {
  std::map<std::string, std::string> opt;
  std::vector<std::string> pos;
  bool flag(const std::string& k) const { return opt.count(k) != 0; }
  std::string get(const std::string& k) const {
    auto it = opt.find(k);
    if (it == opt.end()) throw UsageError("missing " + k);
    return it->second;
  }
};

Args parse(const std::vector<std::string>& a, const std::vector<std::string>& with_value,
           const std::vector<std::string>& flags) {
  Args r;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& s = a[i];
    bool takes = std::find(with_value.begin(), with_value.end(), s) != with_value.end();
    bool is_flag = std::find(flags.begin(), flags.end(), s) != flags.end();
    if (takes) {
      if (i + 1 >= a.size()) throw UsageError(s + " needs a value");
      if (r.opt.count(s)) throw UsageError(s + " given twice");
      r.opt[s] = a[++i];
    } else if (is_flag) {
      r.opt[s] = "";
    } else if (s.size() > 1 && s[0] == '-' && !std::isdigit(static_cast<unsigned char>(s[1]))) {
      throw UsageError("unknown option " + s);
    } else {
      r.pos.push_back(s);
    }
  }
  return r;
}

Backend parse_backend(const Args& a) {
  if (!a.flag("--device")) return Backend::automatic;
  std::string d = a.get("--device");
  if (d == "auto") return Backend::automatic;
  if (d == "gpu") return Backend::gpu;
  if (d == "cpu") return Backend::cpu;
  throw UsageError("--device must be auto, gpu or cpu");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Where a file-to-file call's time went, for --verbose (stderr).
struct PhaseClock {
  std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
  std::string text;
  void mark(const char* what) {
    const auto now = std::chrono::steady_clock::now();
    char b[64];
    std::snprintf(b, sizeof b, "%s%s %.3f s", text.empty() ? "" : ", ", what, std::chrono::duration<double>(now - t).count());
    text += b;
    t = now;
  }
};

// The backend resolved on another thread while the input is read: a GPU's start-up (the driver and
// the context: a few hundred ms) then overlaps the file read instead of adding to it.
std::future<Backend> resolve_backend_async(Backend b) {
  return std::async(std::launch::async, [b] { return resolve_backend(b); });
}

int cmd_compress(const std::vector<std::string>& args) {
  Args a = parse(args, {"-i", "-o", "-t", "-d", "--abs", "--rel", "--mode", "--device", "--fill", "--radius"},
                 {"--lossless", "--verbose"});
  if (!a.pos.empty()) throw UsageError("unexpected argument '" + a.pos[0] + "'");
  if (a.flag("--abs") == a.flag("--rel")) throw UsageError("give exactly one of --abs E or --rel E");
  Options o;
  o.mode = a.flag("--abs") ? BoundMode::abs : BoundMode::rel;
  o.bound = parse_number(a.get(a.flag("--abs") ? "--abs" : "--rel"), "the error bound");
  if (!(o.bound >= 0) || !std::isfinite(o.bound)) throw UsageError("the error bound must be finite and >= 0");
  const std::string mode = a.flag("--mode") ? a.get("--mode") : "fast";
  if (mode != "fast" && mode != "ratio") throw UsageError("--mode must be fast or ratio, not '" + mode + "'");
  o.codec = mode == "ratio" ? Codec::ratio : Codec::fast;
  o.second_stage = a.flag("--lossless");  // the lossless second stage (Deflate or ORC RLE v2 per chunk)
  if (a.flag("--radius")) {
    if (o.codec != Codec::ratio) throw UsageError("--radius applies to --mode ratio");
    const double r = parse_number(a.get("--radius"), "--radius");
    if (!(r >= 1 && r <= 2048) || r != std::floor(r)) throw UsageError("--radius must be an integer 1 to 2048");
    o.radius = uint32_t(r);
  }
  if (a.flag("--fill")) o.fill = parse_number(a.get("--fill"), "--fill");
  o.backend = parse_backend(a);
  const DType t = parse_dtype(a.get("-t"));
  const auto dims = parse_dims(a.get("-d"));
  const std::string in = a.get("-i"), out = a.get("-o");
  uint64_t n = 1;
  for (auto d : dims) n *= d;
  auto t0 = std::chrono::steady_clock::now();
  PhaseClock clock;
  auto backend = resolve_backend_async(o.backend);
  const InputFile data(in);
  if (data.size() != n * dtype_size(t))
    throw InputError("'" + in + "' has " + std::to_string(data.size()) + " bytes; " + dims_string(dims) + " " +
                     (t == DType::f32 ? "f32" : "f64") + " needs " + std::to_string(n * dtype_size(t)));
  clock.mark("read");
  Backend used = backend.get();
  clock.mark("backend start-up (after the read)");
  o.backend = used;
  auto archive = compress(data.data(), t, dims, o);
  clock.mark("compress");
  write_file(out, archive.data(), archive.size());
  clock.mark("write");
  double secs = seconds_since(t0);
  if (a.flag("--verbose")) std::fprintf(stderr, "%s\n", clock.text.c_str());
  ArchiveInfo info = inspect(archive.data(), archive.size());
  std::printf("%s: %zu -> %zu bytes, CR %.3f, eb_abs %.6g, %s, %.3f s (%.2f GB/s file to file)\n", out.c_str(),
              data.size(), archive.size(), double(data.size()) / double(archive.size()), info.eb_abs,
              used == Backend::gpu ? "gpu" : "cpu", secs, double(data.size()) / secs / 1e9);
  return kOk;
}

int cmd_decompress(const std::vector<std::string>& args) {
  Args a = parse(args, {"-i", "-o", "--device"}, {"--verbose"});
  if (!a.pos.empty()) throw UsageError("unexpected argument '" + a.pos[0] + "'");
  const Backend asked = parse_backend(a);
  const std::string in = a.get("-i"), out = a.get("-o");
  auto t0 = std::chrono::steady_clock::now();
  PhaseClock clock;
  auto backend = resolve_backend_async(asked);
  const InputFile archive(in);
  clock.mark("read");
  const Backend b = backend.get();
  clock.mark("backend start-up (after the read)");
  // The values go straight into a buffer that is neither zero-filled nor copied again.
  const ArchiveInfo head = inspect(archive.data(), archive.size());  // the whole frame, before allocating
  const size_t bytes = size_t(head.n_values * dtype_size(head.dtype));
  std::unique_ptr<uint8_t[]> values(new uint8_t[bytes ? bytes : 1]);
  ArchiveInfo info = decompress(archive.data(), archive.size(), values.get(), bytes, b);
  clock.mark("decompress");
  write_file(out, values.get(), bytes);
  clock.mark("write");
  double secs = seconds_since(t0);
  if (a.flag("--verbose")) std::fprintf(stderr, "%s\n", clock.text.c_str());
  std::printf("%s: %s %s, %zu bytes, %s, %.3f s\n", out.c_str(), info.dtype == DType::f32 ? "f32" : "f64",
              dims_string(info.dims).c_str(), bytes, b == Backend::gpu ? "gpu" : "cpu", secs);
  return kOk;
}

std::string json_num(double v) {
  if (std::isnan(v)) return "null";
  if (std::isinf(v)) return v > 0 ? "1e999" : "-1e999";
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

int cmd_info(const std::vector<std::string>& args) {
  Args a = parse(args, {}, {"--json"});
  if (a.pos.size() != 1) throw UsageError("info takes one archive");
  auto archive = read_file(a.pos[0]);
  ArchiveInfo i = inspect(archive.data(), archive.size());
  const double raw = double(i.n_values * dtype_size(i.dtype));
  const char* dt = i.dtype == DType::f32 ? "f32" : "f64";
  const char* mode = i.mode == BoundMode::abs ? "abs" : "rel";
  if (a.flag("--json")) {
    std::printf("{\n  \"format_version\": %u,\n  \"dtype\": \"%s\",\n  \"dims\": [", i.version, dt);
    for (size_t k = 0; k < i.dims.size(); ++k) std::printf("%s%llu", k ? ", " : "", (unsigned long long)i.dims[k]);
    std::printf("],\n  \"n_values\": %llu,\n  \"codec\": \"%s\",\n  \"bound_mode\": \"%s\",\n  \"bound\": %s,\n"
                "  \"eb_abs\": %s,\n  \"range\": %s,\n  \"fill\": %s,\n  \"chunk_values\": %u,\n  \"block_values\": %u,\n"
                "  \"archive_bytes\": %llu,\n  \"compression_ratio\": %s,\n  \"second_stage\": %s,\n",
                (unsigned long long)i.n_values, i.codec == Codec::ratio ? "ratio" : "fast", mode, json_num(i.bound).c_str(), json_num(i.eb_abs).c_str(),
                i.range_valid ? ("[" + json_num(i.range_min) + ", " + json_num(i.range_max) + "]").c_str() : "null",
                i.fill ? json_num(*i.fill).c_str() : "null", i.chunk_values, i.block_values,
                (unsigned long long)i.archive_size, json_num(raw / double(i.archive_size)).c_str(),
                i.second_stage ? "true" : "false");
    if (i.codec == Codec::ratio) {
      const StageSizes z = stage_sizes(archive.data(), archive.size());
      std::printf("  \"stages\": {\"header_and_table\": %llu, \"codebook\": %llu, \"gap_metadata\": %llu, "
                  "\"codes\": %llu, \"outliers\": %llu, \"exceptions\": %llu, \"raw_chunks\": %llu, "
                  "\"second_stage_saved\": %lld},\n",
                  (unsigned long long)z.header_and_table, (unsigned long long)z.codebook,
                  (unsigned long long)z.gap_metadata, (unsigned long long)z.codes, (unsigned long long)z.outliers,
                  (unsigned long long)z.exceptions, (unsigned long long)z.raw_chunks, (long long)z.second_stage_saved);
    }
    std::printf("  \"chunks\": [");
    for (size_t c = 0; c < i.chunks.size(); ++c)
      std::printf("%s\n    {\"offset\": %llu, \"size\": %u, \"checksum\": %u}", c ? "," : "",
                  (unsigned long long)i.chunks[c].offset, i.chunks[c].size, i.chunks[c].checksum);
    std::printf("%s]\n}\n", i.chunks.empty() ? "" : "\n  ");
    return kOk;
  }
  std::printf("hpcz archive, format version %u\n", i.version);
  std::printf("  array        %s %s (%llu values, %.0f bytes)\n", dt, dims_string(i.dims).c_str(),
              (unsigned long long)i.n_values, raw);
  if (i.codec == Codec::ratio) {
    std::printf("  codec        ratio (Lorenzo + Huffman, radius %u)\n", i.block_values);
  } else {
    std::printf("  codec        fast (block fixed-length, %u values per block)\n", i.block_values);
  }
  if (i.second_stage) std::printf("  second stage lossless (Deflate or ORC RLE v2 per chunk)\n");
  std::printf("  bound        %s %.6g -> absolute %.9g\n", mode, i.bound, i.eb_abs);
  if (i.range_valid) std::printf("  value range  [%.9g, %.9g]\n", i.range_min, i.range_max);
  else std::printf("  value range  none (no finite values)\n");
  if (i.fill) std::printf("  fill value   %.9g (kept exactly)\n", *i.fill);
  std::printf("  size         %llu bytes, ratio %.3f, %.3f bits/value\n", (unsigned long long)i.archive_size,
              raw / double(i.archive_size), i.n_values ? 8.0 * double(i.archive_size) / double(i.n_values) : 0.0);
  std::printf("  chunks       %llu of %u values, data at offset %llu\n", (unsigned long long)i.n_chunks, i.chunk_values,
              (unsigned long long)i.data_offset);
  if (i.codec == Codec::ratio) {
    const StageSizes z = stage_sizes(archive.data(), archive.size());
    std::printf("  stages       codes %llu, codebook %llu, gap metadata %llu, outliers %llu, exceptions %llu,\n"
                "               raw chunks %llu, header+table %llu bytes; second stage saved %lld\n",
                (unsigned long long)z.codes, (unsigned long long)z.codebook, (unsigned long long)z.gap_metadata,
                (unsigned long long)z.outliers, (unsigned long long)z.exceptions, (unsigned long long)z.raw_chunks,
                (unsigned long long)z.header_and_table, (long long)z.second_stage_saved);
  }
  const size_t show = std::min<size_t>(i.chunks.size(), 8);
  std::printf("  %-8s %14s %10s %10s\n", "chunk", "offset", "size", "checksum");
  for (size_t c = 0; c < show; ++c)
    std::printf("  %-8zu %14llu %10u   %08x\n", c, (unsigned long long)i.chunks[c].offset, i.chunks[c].size,
                i.chunks[c].checksum);
  if (i.chunks.size() > show) std::printf("  ... %zu more (--json lists all)\n", i.chunks.size() - show);
  return kOk;
}

// Lossless codecs: rle1 / rle2 write ORC integer RLE streams over --elem-byte little-endian integers in
// an HZLC container of 64 KiB chunks (raw ORC streams still decode); deflate writes gzip whose members
// are the chunks (and reads any gzip, zlib or raw Deflate). Chunked input decodes on the GPU when
// there is one (--device).
int cmd_lossless(const std::vector<std::string>& args) {
  if (args.empty() || (args[0] != "compress" && args[0] != "decompress"))
    throw UsageError("lossless needs compress or decompress");
  const bool comp = args[0] == "compress";
  Args a = parse(std::vector<std::string>(args.begin() + 1, args.end()), {"--codec", "-i", "-o", "--elem", "--device", "--chunk-kib"},
                 {"--signed"});
  if (!a.pos.empty()) throw UsageError("unexpected argument '" + a.pos[0] + "'");
  const std::string c = a.get("--codec");
  LosslessOptions o;
  if (c == "rle1") o.codec = LosslessCodec::rle1;
  else if (c == "rle2") o.codec = LosslessCodec::rle2;
  else if (c == "deflate") o.codec = LosslessCodec::deflate;
  else throw UsageError("--codec must be rle1, rle2 or deflate, not '" + c + "'");
  if (a.flag("--elem")) {
    const std::string e = a.get("--elem");
    if (e != "1" && e != "2" && e != "4" && e != "8") throw UsageError("--elem must be 1, 2, 4 or 8");
    o.elem_bytes = std::stoi(e);
  }
  o.is_signed = a.flag("--signed");
  o.backend = parse_backend(a);
  if (a.flag("--chunk-kib")) {
    const double k = parse_number(a.get("--chunk-kib"), "--chunk-kib");
    if (!(k >= 1 && k <= 1048576) || k != std::floor(k)) throw UsageError("--chunk-kib must be a whole number from 1 to 1048576");
    o.chunk_bytes = uint32_t(k) * 1024;
  }
  const std::string in = a.get("-i"), out = a.get("-o");
  auto t0 = std::chrono::steady_clock::now();
  auto data = read_file(in);
  std::vector<uint8_t> res;
  try {
    res = comp ? lossless_compress(data.data(), data.size(), o) : lossless_decompress(data.data(), data.size(), o);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::invalid_argument) throw InputError(e.what());  // e.g. a size not a multiple of --elem
    throw;
  }
  write_file(out, res.data(), res.size());
  const double secs = seconds_since(t0);
  std::printf("%s: %zu -> %zu bytes (%s, %s), %.3f s\n", out.c_str(), data.size(), res.size(), c.c_str(),
              comp ? "compressed" : "decompressed", secs);
  return kOk;
}

int cmd_compare(const std::vector<std::string>& args) {
  Args a = parse(args, {"-t", "-d", "--fill"}, {});
  if (a.pos.size() != 2) throw UsageError("compare takes ORIGINAL and DECOMPRESSED");
  const DType t = parse_dtype(a.get("-t"));
  const auto dims = parse_dims(a.get("-d"));
  std::optional<double> fill;
  if (a.flag("--fill")) fill = parse_number(a.get("--fill"), "--fill");
  uint64_t n = 1;
  for (auto d : dims) n *= d;
  auto x = read_file(a.pos[0]), y = read_file(a.pos[1]);
  const uint64_t need = n * dtype_size(t);
  if (x.size() != need || y.size() != need)
    throw InputError("both files must hold " + std::to_string(need) + " bytes (" + dims_string(dims) + ")");
  Metrics m = compare(x.data(), y.data(), t, n, fill);
  std::printf("values            %llu\n", (unsigned long long)m.n);
  std::printf("value range       %.9g\n", m.value_range);
  std::printf("max abs error     %.9g\n", m.max_abs_error);
  std::printf("max rel error     %.9g   (max abs error / value range)\n", m.max_rel_error);
  std::printf("PSNR              %.4f dB\n", m.psnr);
  std::printf("NRMSE             %.9g\n", m.nrmse);
  std::printf("non-finite diffs  %llu\n", (unsigned long long)m.nonfinite_mismatch);
  return kOk;
}

}  // namespace

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    std::fputs(kUsageText, args.empty() ? stderr : stdout);
    return args.empty() ? kUsage : kOk;
  }
  if (args[0] == "--version" || args[0] == "version") {
    std::printf("%s\n", version_string());
    return kOk;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  try {
    if (cmd == "compress") return cmd_compress(args);
    if (cmd == "decompress") return cmd_decompress(args);
    if (cmd == "info") return cmd_info(args);
    if (cmd == "compare") return cmd_compare(args);
    if (cmd == "lossless") return cmd_lossless(args);
    if (cmd == "bench") return bench_main(args);
    throw UsageError("unknown command '" + cmd + "'");
  } catch (const UsageError& e) {
    std::fprintf(stderr, "hpcz: %s\n%s", e.what(), kUsageText);
    return kUsage;
  } catch (const InputError& e) {
    std::fprintf(stderr, "hpcz: %s\n", e.what());
    return kBadInput;
  } catch (const Error& e) {
    std::fprintf(stderr, "hpcz: %s\n", e.what());
    switch (e.code()) {
      case ErrorCode::invalid_argument: return kUsage;
      case ErrorCode::corrupt_archive:
      case ErrorCode::unsupported: return kBadInput;
      default: return kRuntime;
    }
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "hpcz: out of memory\n");
    return kRuntime;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hpcz: %s\n", e.what());
    return kRuntime;
  }
}

}  // namespace hpcz::cli

int main(int argc, char** argv) { return hpcz::cli::run(argc, argv); }
