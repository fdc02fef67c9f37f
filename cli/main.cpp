// hpcz command-line tool: a thin layer over the library. Dims are written slowest to fastest.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdarg>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include <sys/resource.h>

#include "cli_util.hpp"

namespace hpcz::cli {

// {CODECS}: the codec names (hpcz::codec_names), joined by |.
static const char* kUsageTemplate =
    "usage:\n"
    "  hpcz compress IN [-o OUT | -c] -t TYPE -d DIMS (--abs E | --rel E | --abs E --rel E [--either] |\n"
    "                --pw-rel R | --psnr DB | --nrmse E) [--mode {CODECS}]\n"
    "                [--device auto|gpu|cpu] [--gpus LIST] [--gpu-memory SIZE] [--fill V] [--radius R]\n"
    "                [--lossless] [-f] [-q] [--verbose]\n"
    "  hpcz decompress IN [-o OUT | -c] [--device auto|gpu|cpu] [--gpus LIST] [--gpu-memory SIZE]\n"
    "                [--max-output SIZE] [-f] [-q] [--verbose]\n"
    "  hpcz test ARCHIVE... [--device auto|gpu|cpu] [--gpus LIST] [--gpu-memory SIZE] [--max-output SIZE] [-q]\n"
    "  hpcz info IN [--json]\n"
    "  hpcz compare -t TYPE -d DIMS ORIGINAL DECOMPRESSED [--fill V]\n"
    "  hpcz bench [--mode {CODECS}] [--data DIR] [--fields SUBSTR[,SUBSTR...]] [--size-mib N] [--reps N]\n"
    "             [--bounds rel:1e-2,abs:0.1,...] [--device gpu|cpu] [--quick] [--out FILE]\n"
    "  hpcz lossless compress|decompress [--codec rle1|rle2|deflate] IN (-o OUT | -c) [--elem 1|2|4|8] [--signed]\n"
    "                [--device auto|gpu|cpu] [--chunk-kib K] [-f] [-q]\n"
    "Any size streams through bounded memory, on every GPU (--gpus 0,1: those; --gpu-memory 8G: at most\n"
    "that much of each) or the CPU. IN: a file, or '-': standard input, spooled to $TMPDIR first (compression\n"
    "reads its input twice); -i IN works too. Without -o, OUT is standard output for -c (--stdout) or IN '-',\n"
    "else IN.hpcz (compress) or IN less .hpcz (decompress). OUT '-': standard output, never a terminal\n"
    "unless -f. Options go in any order; --opt=V is --opt V. An existing OUT is kept unless -f;\n"
    "OUT is made unnamed in its directory and named at the end, so a failed or killed run leaves nothing;\n"
    "it takes IN's permission bits and times. A FIFO or character device (/dev/null) as OUT is written\n"
    "into, never replaced; a directory, socket or block device is refused. Messages go to stderr\n"
    "(-q: errors only). hpcz VERB --help: that verb's usage.\n"
    "DIMS: slowest to fastest, e.g. 100x500x500 (numpy shape order); rank 1 to 4.\n"
    "TYPE: f32, f64, f16, bf16, i8, u8, i16, u16, i32, u32, i64 or u64. f16, bf16 and the integers are coded\n"
    "  as f32 (i32, u32, i64, u64: f64; i64 and u64 within +-2^53) and held in memory; integer bounds are\n"
    "  whole numbers (--abs 0: lossless).\n"
    "--abs E --rel R: every value within both bounds (abs_and_rel); with --either, within one (abs_or_rel).\n"
    "--pw-rel R: every value within R x |value| (0 < R < 1; zero and signs kept; --mode ratio and interp code\n"
    "  log2 |value| and take R from 1e-6).\n"
    "--psnr DB, --nrmse E: the array's PSNR (of its value range) at least DB, or its NRMSE at most E;\n"
    "  `hpcz info` gives the PSNR achieved. The whole array is held in memory.\n"
    "--max-output 4G: an archive whose array is larger is refused (bad input) before any is decoded.\n"
    "exit: 0 success, 1 usage error, 2 bad input (unreadable, truncated or corrupt; OUT a directory, socket\n"
    "or block device), 3 runtime failure (OUT not written: full, no permission, I/O error). A closed pipe\n"
    "on OUT ends hpcz by SIGPIPE, silently, as gzip.\n";

const std::string& usage_text() {
  static const std::string text = [] {
    std::string t = kUsageTemplate, codecs;
    for (const std::string& n : codec_names()) codecs += (codecs.empty() ? "" : "|") + n;
    for (size_t at; (at = t.find("{CODECS}")) != std::string::npos;) t.replace(at, 8, codecs);
    return t;
  }();
  return text;
}

// The usage lines of one verb (its line and the continuation lines under it), then the general notes.
std::string verb_usage(const std::string& verb) {
  std::string out = "usage:\n", text = usage_text();
  bool in_verb = false;
  size_t at = text.find('\n') + 1;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end - at + 1);
    if (line.rfind("  hpcz ", 0) == 0) in_verb = line.rfind("  hpcz " + verb + " ", 0) == 0;
    else if (line.rfind("   ", 0) != 0) in_verb = false, out += line;  // the notes after the verbs
    if (in_verb) out += line;
    at = end + 1;
  }
  return out;
}

namespace {

// A storage type's archive (float16, bfloat16, the integers) bounds its float32 or float64 code values by
// eb_abs, the code bound (docs/FORMAT.md 3.1), which is not the bound its values keep: the request's
// absolute bound (abs, or rel x the range), or 0 where the mode has none of its own (the targets).
bool storage_type(DType t) { return t != DType::f32 && t != DType::f64; }
// The type a storage type's values are coded as (FORMAT.md 3.1).
const char* code_name(DType t) {
  return t == DType::i32 || t == DType::u32 || t == DType::i64 || t == DType::u64 ? "float64" : "float32";
}
double values_bound(const ArchiveInfo& i) {
  if (i.mode == BoundMode::abs) return i.bound;
  if (i.mode == BoundMode::rel) return i.range_valid ? i.bound * (i.range_max - i.range_min) : 0.0;
  return 0.0;
}
// "eb_abs 0.05", or for a storage type "bound 0.011875 (code bound 0.0625)".
std::string bound_note(const ArchiveInfo& i) {
  char b[128];
  if (storage_type(i.dtype) && (i.mode == BoundMode::abs || i.mode == BoundMode::rel))
    std::snprintf(b, sizeof b, "bound %.6g (code bound %.6g)", values_bound(i), i.eb_abs);
  else
    std::snprintf(b, sizeof b, "eb_abs %.6g", i.eb_abs);
  return b;
}

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

// As zstd and gzip take them: options and arguments in any order; a long option's value after it or
// after '=' (--rel 1e-3, --rel=1e-3); "--" ends the options; "-" alone is an argument (standard input
// or output); "-5" too (a negative number). Messages name an option as it was typed.
Args parse(const std::vector<std::string>& a, const std::vector<std::string>& with_value,
           const std::vector<std::string>& flags) {
  static const std::map<std::string, std::string> alias = {{"--force", "-f"}, {"--quiet", "-q"}, {"--stdout", "-c"}};
  const auto among = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  Args r;
  bool options = true;
  for (size_t i = 0; i < a.size(); ++i) {
    std::string s = a[i];
    if (!options || s.size() < 2 || s[0] != '-' || std::isdigit(static_cast<unsigned char>(s[1]))) {
      r.pos.push_back(s);
      continue;
    }
    if (s == "--") {
      options = false;
      continue;
    }
    std::optional<std::string> value;
    const size_t eq = s.find('=');
    if (s.compare(0, 2, "--") == 0 && eq != std::string::npos) value = s.substr(eq + 1), s.resize(eq);
    const std::string typed = s;
    if (const auto it = alias.find(s); it != alias.end()) s = it->second;
    if (among(with_value, s)) {
      if (r.opt.count(s)) throw UsageError(typed + " given twice");
      if (!value) {
        if (i + 1 >= a.size()) throw UsageError(typed + " needs a value");
        value = a[++i];
      }
      r.opt[s] = *value;
    } else if (among(flags, s)) {
      if (value) throw UsageError(typed + " takes no value");
      r.opt[s] = "";
    } else {
      throw UsageError("unknown option '" + typed + "'");
    }
  }
  return r;
}

// bench's own parsers read "--opt VALUE": "--opt=VALUE" is split for them (its flags left whole, so
// that "--quick=1" is refused as unknown rather than "1").
std::vector<std::string> split_long_values(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const std::string& s : args) {
    const size_t eq = s.find('=');
    if (s.compare(0, 2, "--") == 0 && eq != std::string::npos && s.compare(0, eq, "--quick") != 0 &&
        s.compare(0, eq, "--no-second-stage") != 0) {
      out.push_back(s.substr(0, eq));
      out.push_back(s.substr(eq + 1));
    } else {
      out.push_back(s);
    }
  }
  return out;
}

// IN and OUT of compress, decompress and lossless, as zstd takes them: IN as an argument or -i IN ('-':
// standard input); OUT from -o, else standard output (-c, or IN '-', as zstd in a pipe), else named
// after IN: IN.hpcz (compress), IN less its .hpcz (decompress; another suffix is refused, as gzip
// does). `Naming::none` (lossless, whose suffix depends on the codec): no name made, -o or -c needed.
struct InOut {
  std::string in, out;
};
enum class Naming { add_suffix, drop_suffix, none };
InOut in_and_out(const Args& a, Naming naming) {
  if (a.flag("-i") && !a.pos.empty())
    throw UsageError("unexpected argument '" + a.pos[0] + "' (the input is -i " + a.get("-i") + ")");
  if (a.pos.size() > 1) throw UsageError("one input at a time, not '" + a.pos[0] + "' and '" + a.pos[1] + "'");
  if (!a.flag("-i") && a.pos.empty()) throw UsageError("missing -i IN (or IN alone; '-' for standard input)");
  InOut r;
  r.in = a.flag("-i") ? a.get("-i") : a.pos[0];
  if (a.flag("-c")) {
    if (a.flag("-o") && a.get("-o") != "-") throw UsageError("-c writes to standard output: not with -o " + a.get("-o"));
    r.out = "-";
  } else if (a.flag("-o")) {
    r.out = a.get("-o");
  } else if (r.in == "-") {
    r.out = "-";
  } else if (naming == Naming::none) {
    throw UsageError("give -o OUT (or -c for standard output)");
  } else if (naming == Naming::add_suffix) {
    r.out = r.in + ".hpcz";
  } else {
    const std::string ext = ".hpcz";
    const size_t name = r.in.rfind('/') + 1;  // 0 without a directory; a name of ext alone has no stem
    if (r.in.size() - name <= ext.size() || r.in.compare(r.in.size() - ext.size(), ext.size(), ext) != 0)
      throw UsageError(r.in + ": no .hpcz suffix to take off for the output's name: give -o OUT (or -c)", false);
    r.out = r.in.substr(0, r.in.size() - ext.size());
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

// Runs a library call reading the input `in`; its complaints about that input (damaged, of an unknown
// version, unreadable) become InputError naming the file. Output failures are OutputError already.
template <class F>
auto about_input(const std::string& in, F f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    if (e.code() == ErrorCode::corrupt_archive || e.code() == ErrorCode::unsupported || e.code() == ErrorCode::io)
      throw InputError(input_name(in), e.what());
    throw;
  }
}

// A status line on stderr, unless -q.
void note(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void note(const char* fmt, ...) {
  if (quiet()) return;
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
}

// A size flag's value: bytes, or a number with K, M or G.
uint64_t parse_size(const Args& a, const char* flag) {
  const std::string v = a.get(flag);
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  const std::string unit = end ? end : "";
  const double scale = unit.empty() ? 1 : unit == "K" ? 1024.0 : unit == "M" ? 1048576.0 : unit == "G" ? 1073741824.0 : -1;
  if (v.empty() || !(x > 0) || scale < 0 || !(x * scale < 1e18))
    throw UsageError(std::string(flag) + " takes a size like 512M or 8G, not '" + v + "'");
  return uint64_t(x * scale);
}

// --gpus LIST and --gpu-memory SIZE: which GPUs the slabs go to and how much of each the job takes.
StreamOptions stream_options(const Args& a, Backend& backend) {
  StreamOptions so;
  if (a.flag("--gpus")) {
    if (backend == Backend::cpu) throw UsageError("--gpus with --device cpu");
    backend = Backend::gpu;
    const std::string list = a.get("--gpus");
    size_t at = 0;
    for (;;) {
      const size_t comma = std::min(list.find(',', at), list.size());
      const std::string id = list.substr(at, comma - at);
      if (id.empty() || id.size() > 4 || id.find_first_not_of("0123456789") != std::string::npos)
        throw UsageError("--gpus takes GPU numbers separated by commas, e.g. 0,1; not '" + list + "'");
      so.devices.push_back(std::stoi(id));
      if (comma == list.size()) break;
      at = comma + 1;
    }
  }
  if (a.flag("--gpu-memory")) so.device_memory = size_t(parse_size(a, "--gpu-memory"));
  return so;
}

// --max-output SIZE (decompress, test): an archive whose array is larger is refused from its header,
// before anything is decoded (exit 2, or counted bad by test); the library checks it again.
DecodeLimits decode_limits(const Args& a) {
  DecodeLimits l;
  if (a.flag("--max-output")) l.max_output = parse_size(a, "--max-output");
  return l;
}
void check_limits(Source& in, const std::string& name, const DecodeLimits& l) {
  if (!l.max_output) return;
  uint8_t head[kHeaderSize];
  const size_t n = size_t(std::min<uint64_t>(in.size(), sizeof head));
  in.read(0, head, n);
  const ArchiveInfo i = about_input(name, [&] { return inspect_header(head, n); });
  const uint64_t need = i.n_values * dtype_size(i.dtype);
  if (need > l.max_output)
    throw InputError(input_name(name), "the archive's array is " + std::to_string(need) +
                                           " bytes, above --max-output (" + std::to_string(l.max_output) + ")");
}

// The most resident memory the process has had (pinned buffers included; the page cache of its files not).
double peak_rss_mib() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0;
}

// --verbose: where a streaming job's time went.
void print_stats(const StreamStats& st) {
  std::fprintf(stderr,
               "%d lanes, %llu slabs of %.0f MiB; %.3f s in all: range pass %.3f s, slowest lane start-up %.3f s; "
               "summed over the lanes: read %.3f s, code %.3f s, write %.3f s\n",
               st.lanes, (unsigned long long)st.slabs, double(st.slab_bytes) / 1048576.0, st.total, st.range, st.setup,
               st.read, st.code, st.write);
}


int cmd_compress(const std::vector<std::string>& args) {
  Args a = parse(args, {"-i", "-o", "-t", "-d", "--abs", "--rel", "--pw-rel", "--psnr", "--nrmse", "--mode", "--device", "--fill", "--radius", "--gpus",
                        "--gpu-memory"},
                 {"--lossless", "--verbose", "-f", "-q", "-c", "--either"});
  set_quiet(a.flag("-q"));
  const InOut io = in_and_out(a, Naming::add_suffix);
  const std::string &in = io.in, &out = io.out;
  const DType t = parse_dtype(a.get("-t"));
  const auto dims = parse_dims(a.get("-d"));
  // --abs and --rel together: both hold (abs_and_rel); --either: one of them (abs_or_rel).
  const bool has_abs = a.flag("--abs"), has_rel = a.flag("--rel"), has_pw = a.flag("--pw-rel");
  const bool has_psnr = a.flag("--psnr"), has_nrmse = a.flag("--nrmse");
  const int others = int(has_pw) + int(has_psnr) + int(has_nrmse);
  if (others > 1 || (others && (has_abs || has_rel)))
    throw UsageError("--pw-rel, --psnr and --nrmse are bounds of their own: one of them, without --abs or --rel");
  if (!has_abs && !has_rel && !others) throw UsageError("give --abs E, --rel E, both, --pw-rel R, --psnr DB or --nrmse E");
  if (a.flag("--either") && !(has_abs && has_rel)) throw UsageError("--either takes both --abs E and --rel E");
  Options o;
  o.mode = has_abs && has_rel ? (a.flag("--either") ? BoundMode::abs_or_rel : BoundMode::abs_and_rel)
                              : (has_abs ? BoundMode::abs : BoundMode::rel);
  if (has_pw) o.mode = BoundMode::pw_rel;
  if (has_psnr) o.mode = BoundMode::psnr;
  if (has_nrmse) o.mode = BoundMode::nrmse;
  o.bound = parse_number(a.get(has_pw ? "--pw-rel" : has_psnr ? "--psnr" : has_nrmse ? "--nrmse" : has_rel ? "--rel" : "--abs"),
                         "the error bound");
  if (!(o.bound >= 0) || !std::isfinite(o.bound)) throw UsageError("the error bound must be finite and >= 0");
  if (has_pw && !(o.bound > 0 && o.bound < 1)) throw UsageError("--pw-rel R takes 0 < R < 1");
  if (has_abs && has_rel) {
    o.abs_bound = parse_number(a.get("--abs"), "the error bound");
    if (!(o.abs_bound >= 0) || !std::isfinite(o.abs_bound)) throw UsageError("the error bound must be finite and >= 0");
  }
  if (a.flag("--mode")) o.codec = parse_codec_flag("--mode", a.get("--mode"));  // else Options' default, fast
  o.second_stage = a.flag("--lossless");  // the lossless second stage (Deflate or ORC RLE v2 per chunk)
  if (a.flag("--radius")) {
    if (o.codec == Codec::fast) throw UsageError("--radius applies to --mode ratio and interp");
    const double r = parse_number(a.get("--radius"), "--radius");
    if (!(r >= 1 && r <= 2048) || r != std::floor(r)) throw UsageError("--radius must be an integer 1 to 2048");
    o.radius = uint32_t(r);
  }
  if (a.flag("--fill")) {
    o.fill = parse_number(a.get("--fill"), "--fill");
    if (!std::isfinite(*o.fill))  // the library's "must be finite" would read as if NaN could not be kept
      throw UsageError("--fill " + a.get("--fill") + ": NaN and Inf need no fill value; they come back bit for bit without one",
                       false);
  }
  o.backend = parse_backend(a);
  StreamOptions so = stream_options(a, o.backend);
  uint64_t n = 1;
  for (auto d : dims) n *= d;
  OutputFile sink(out, a.flag("-f"), {in});
  auto t0 = std::chrono::steady_clock::now();
  PhaseClock clock;
  auto backend = resolve_backend_async(o.backend);
  StreamInput input(in);
  if (input.size() != n * dtype_size(t))
    throw InputError(input_name(in), "has " + std::to_string(input.size()) + " bytes; " + dims_string(dims) + " " +
                                         dtype_short_name(t) + " needs " + std::to_string(n * dtype_size(t)));
  clock.mark("open");
  backend.get();  // started while the input opened
  o.backend = resolve_backend(o.backend, o.codec, o.mode);
  clock.mark("backend start-up");
  so.progress = progress_bar("compressing");
  StreamStats stats;
  so.stats = &stats;
  ArchiveInfo info;
  if (sink.streamed()) {  // the header comes last: assembled in a temporary file, then copied out
    Spool spool;
    info = about_input(in, [&] { return compress_stream(input.source(), t, dims, o, *spool.sink(), so); });
    spool.copy_to(sink.fd(), info.archive_size, sink.name());
  } else {
    info = about_input(in, [&] { return compress_stream(input.source(), t, dims, o, *sink.sink(), so); });
  }
  sink.commit();
  clock.mark("compress (read, code, write)");
  double secs = seconds_since(t0);
  if (a.flag("--verbose")) {
    std::fprintf(stderr, "%s; peak host memory %.0f MiB\n", clock.text.c_str(), peak_rss_mib());
    print_stats(stats);
  }
  note("%s: %llu -> %llu bytes, CR %.3f, %s, %s, %.3f s (%.2f GB/s file to file)\n", out.c_str(),
       (unsigned long long)input.size(), (unsigned long long)info.archive_size,
       double(input.size()) / double(info.archive_size), bound_note(info).c_str(), o.backend == Backend::gpu ? "gpu" : "cpu", secs,
       double(input.size()) / secs / 1e9);
  return kOk;
}

int cmd_decompress(const std::vector<std::string>& args) {
  Args a = parse(args, {"-i", "-o", "--device", "--gpus", "--gpu-memory", "--max-output"}, {"--verbose", "-f", "-q", "-c"});
  set_quiet(a.flag("-q"));
  const InOut io = in_and_out(a, Naming::drop_suffix);
  const std::string &in = io.in, &out = io.out;
  Backend asked = parse_backend(a);
  StreamOptions so = stream_options(a, asked);
  const DecodeLimits limits = decode_limits(a);
  OutputFile sink(out, a.flag("-f"), {in});
  auto t0 = std::chrono::steady_clock::now();
  PhaseClock clock;
  auto backend = resolve_backend_async(asked);
  StreamInput input(in);
  check_limits(input.source(), in, limits);
  clock.mark("open");
  backend.get();  // started while the input opened
  clock.mark("backend start-up");
  so.progress = progress_bar("decompressing");
  StreamStats stats;
  so.stats = &stats;
  const ArchiveInfo info =
      about_input(in, [&] { return decompress_stream(input.source(), *sink.sink(), asked, so, limits); });
  const Backend b = resolve_backend(asked, info.codec, info.mode);
  sink.commit();
  clock.mark("decompress (read, decode, write)");
  double secs = seconds_since(t0);
  if (a.flag("--verbose")) {
    std::fprintf(stderr, "%s; peak host memory %.0f MiB\n", clock.text.c_str(), peak_rss_mib());
    print_stats(stats);
  }
  const uint64_t bytes = info.n_values * dtype_size(info.dtype);
  note("%s: %s %s, %llu bytes, %s, %.3f s (%.2f GB/s file to file)\n", out.c_str(), dtype_short_name(info.dtype),
       dims_string(info.dims).c_str(), (unsigned long long)bytes, b == Backend::gpu ? "gpu" : "cpu", secs,
       double(bytes) / secs / 1e9);
  return kOk;
}

// Discards what it is given: hpcz test decodes without writing.
struct NullSink : Sink {
  void write(uint64_t, const void*, size_t) override {}
};

// Verifies archives as gzip -t and zstd -t do: every checksum, then a full decode (streamed, so any
// size), no output. Exit 0 if all are good, 2 if any is damaged (each named on stderr).
int cmd_test(const std::vector<std::string>& args) {
  Args a = parse(args, {"--device", "--gpus", "--gpu-memory", "--max-output"}, {"-q"});
  if (a.pos.empty()) throw UsageError("test takes one or more archives");
  set_quiet(a.flag("-q"));
  Backend asked = parse_backend(a);
  const StreamOptions so = stream_options(a, asked);
  const DecodeLimits limits = decode_limits(a);
  resolve_backend(asked);  // a GPU asked for and absent is refused before any archive is read
  int bad = 0;
  for (const std::string& path : a.pos) {
    try {
      StreamInput input(path);
      NullSink discard;
      check_limits(input.source(), path, limits);
      const ArchiveInfo head = decompress_stream(input.source(), discard, asked, so, limits);
      note("%s: OK (%s %s)\n", path.c_str(), dtype_short_name(head.dtype), dims_string(head.dims).c_str());
    } catch (const InputError& e) {
      std::fprintf(stderr, "hpcz: %s\n", e.what());
      ++bad;
    } catch (const Error& e) {
      if (e.code() != ErrorCode::corrupt_archive && e.code() != ErrorCode::unsupported && e.code() != ErrorCode::io)
        throw;
      std::fprintf(stderr, "hpcz: %s: %s\n", input_name(path).c_str(), e.what());
      ++bad;
    }
  }
  return bad ? kBadInput : kOk;
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
  const InputFile archive(a.pos[0]);  // mapped: an archive of any size, no copy
  ArchiveInfo i = about_input(a.pos[0], [&] { return inspect(archive.data(), archive.size()); });
  // The stage headers are read before anything is printed: a damaged one names the file, after no
  // half-printed summary.
  StageSizes z{};
  if (i.codec != Codec::fast) z = about_input(a.pos[0], [&] { return stage_sizes(archive.data(), archive.size()); });
  const double raw = double(i.n_values * dtype_size(i.dtype));
  const char* dt = dtype_short_name(i.dtype);
  const char* mode = bound_mode_name(i.mode);
  if (a.flag("--json")) {
    std::printf("{\n  \"format_version\": %u,\n  \"dtype\": \"%s\",\n  \"dims\": [", i.version, dt);
    for (size_t k = 0; k < i.dims.size(); ++k) std::printf("%s%llu", k ? ", " : "", (unsigned long long)i.dims[k]);
    std::printf("],\n  \"n_values\": %llu,\n  \"codec\": \"%s\",\n  \"bound_mode\": \"%s\",\n  \"bound\": %s,\n"
                "  \"eb_abs\": %s,\n  \"range\": %s,\n  \"fill\": %s,\n  \"chunk_values\": %u,\n  \"block_values\": %u,\n"
                "  \"archive_bytes\": %llu,\n  \"compression_ratio\": %s,\n  \"second_stage\": %s,\n",
                (unsigned long long)i.n_values, codec_name(i.codec), mode, json_num(i.bound).c_str(), json_num(i.eb_abs).c_str(),
                i.range_valid ? ("[" + json_num(i.range_min) + ", " + json_num(i.range_max) + "]").c_str() : "null",
                i.fill ? json_num(*i.fill).c_str() : "null", i.chunk_values, i.block_values,
                (unsigned long long)i.archive_size, json_num(raw / double(i.archive_size)).c_str(),
                i.second_stage ? "true" : "false");
    // hpcz.info()'s names for the same fields (README, "Archive info keys"), and the two it has that
    // were not printed here; dtype keeps "f32" (hpcz.info() says "float32").
    std::printf("  \"version\": %u,\n  \"shape\": [", i.version);
    for (size_t k = 0; k < i.dims.size(); ++k) std::printf("%s%llu", k ? ", " : "", (unsigned long long)i.dims[k]);
    std::printf("],\n  \"mode\": \"%s\",\n  \"bound_kind\": \"%s\",\n  \"lossless\": %s,\n"
                "  \"archive_size\": %llu,\n  \"step\": %s,\n  \"n_chunks\": %llu,\n",
                codec_name(i.codec), mode, i.second_stage ? "true" : "false", (unsigned long long)i.archive_size,
                json_num(i.step).c_str(), (unsigned long long)i.n_chunks);
    if (i.psnr_achieved)  // null: infinite (every value exact)
      std::printf("  \"psnr_achieved\": %s,\n", std::isinf(*i.psnr_achieved) ? "null" : json_num(*i.psnr_achieved).c_str());
    if (i.codec != Codec::fast) {
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
  // Dims as -d takes them: a reversed -d cannot be told from the file's size, but shows here.
  std::printf("  array        %s %s (dims slowest to fastest; %llu values, %.0f bytes)\n", dt, dims_string(i.dims).c_str(),
              (unsigned long long)i.n_values, raw);
  if (i.codec == Codec::ratio) {
    std::printf("  codec        ratio (Lorenzo + Huffman, radius %u)\n", i.block_values);
  } else if (i.codec == Codec::interp) {
    std::printf("  codec        interp (Lorenzo or interpolation per chunk + Huffman, radius %u)\n", i.block_values);
  } else {
    std::printf("  codec        fast (block fixed-length, %u values per block)\n", i.block_values);
  }
  if (i.second_stage) std::printf("  second stage lossless (Deflate or ORC RLE v2 per chunk)\n");
  if (i.psnr_achieved && std::isinf(*i.psnr_achieved))
    std::printf("  bound        %s %.6g -> absolute %.9g; PSNR achieved: infinite (every value exact)\n", mode, i.bound,
                i.eb_abs);
  else if (i.psnr_achieved)
    std::printf("  bound        %s %.6g -> absolute %.9g; PSNR achieved %.2f dB\n", mode, i.bound, i.eb_abs, *i.psnr_achieved);
  else if (i.mode == BoundMode::pw_rel && storage_type(i.dtype))
    std::printf(i.codec == Codec::fast
                    ? "  bound        pw_rel %.6g (every %s value within that x |value|; their %s code values within %.9g x |value|)\n"
                    : "  bound        pw_rel %.6g (every %s value within that x |value|; log2 |value| of their %s code values within %.9g)\n",
                i.bound, dtype_name(i.dtype), code_name(i.dtype), i.eb_abs);
  else if (i.mode == BoundMode::pw_rel)
    if (i.codec == Codec::fast)
      std::printf("  bound        pw_rel %.6g (every value within that x |value|; steps of %.17g ulps)\n", i.bound, i.step);
    else
      std::printf("  bound        pw_rel %.6g (every value within that x |value|; log2 |value| within %.17g)\n", i.bound,
                  i.eb_abs);
  else if ((i.mode == BoundMode::abs_and_rel || i.mode == BoundMode::abs_or_rel) && storage_type(i.dtype))
    std::printf("  bound        %s (rel %.6g %s an abs bound) on the %s values (code bound %.9g on their %s code values)\n",
                mode, i.bound, i.mode == BoundMode::abs_and_rel ? "and" : "or", dtype_name(i.dtype), i.eb_abs,
                code_name(i.dtype));
  else if (i.mode == BoundMode::abs_and_rel || i.mode == BoundMode::abs_or_rel)
    std::printf("  bound        %s (rel %.6g %s an abs bound) -> absolute %.9g\n", mode, i.bound,
                i.mode == BoundMode::abs_and_rel ? "and" : "or", i.eb_abs);
  else if (storage_type(i.dtype))
    std::printf("  bound        %s %.6g -> absolute %.9g on the %s values (code bound %.9g on their %s code values)\n",
                mode, i.bound, values_bound(i), dtype_name(i.dtype), i.eb_abs, code_name(i.dtype));
  else
    std::printf("  bound        %s %.6g -> absolute %.9g\n", mode, i.bound, i.eb_abs);
  if (i.range_valid) std::printf("  value range  [%.9g, %.9g]\n", i.range_min, i.range_max);
  else std::printf("  value range  none (no finite values)\n");
  if (i.fill) std::printf("  fill value   %.9g (kept exactly)\n", *i.fill);
  std::printf("  size         %llu bytes, ratio %.3f, %.3f bits/value\n", (unsigned long long)i.archive_size,
              raw / double(i.archive_size), i.n_values ? 8.0 * double(i.archive_size) / double(i.n_values) : 0.0);
  std::printf("  chunks       %llu of %u values, data at offset %llu\n", (unsigned long long)i.n_chunks, i.chunk_values,
              (unsigned long long)i.data_offset);
  if (i.codec != Codec::fast) {
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
// The lossless codec a file was written with, from its first bytes: gzip (1f 8b) or zlib -> deflate,
// an HZLC container -> the codec it records; "" if none says (a raw ORC stream or raw Deflate).
std::string lossless_codec_of(const std::vector<uint8_t>& d) {
  if (d.size() >= 2 && d[0] == 0x1f && d[1] == 0x8b) return "deflate";
  if (d.size() >= 2 && (d[0] & 0x0f) == 8 && (d[0] >> 4) <= 7 && (d[0] * 256 + d[1]) % 31 == 0) return "deflate";
  if (d.size() >= 7 && std::memcmp(d.data(), "HZLC", 4) == 0) return d[6] == 1 ? "rle1" : d[6] == 2 ? "rle2" : "";
  return "";
}

int cmd_lossless(const std::vector<std::string>& args) {
  if (args.empty() || (args[0] != "compress" && args[0] != "decompress"))
    throw UsageError("lossless needs compress or decompress");
  const bool comp = args[0] == "compress";
  Args a = parse(std::vector<std::string>(args.begin() + 1, args.end()), {"--codec", "-i", "-o", "--elem", "--device", "--chunk-kib"},
                 {"--signed", "-f", "-q", "-c"});
  set_quiet(a.flag("-q"));
  const InOut io = in_and_out(a, Naming::none);
  const std::string &in = io.in, &out = io.out;
  OutputFile sink(out, a.flag("-f"), {in});
  auto t0 = std::chrono::steady_clock::now();
  auto data = read_file(in);
  // Decompressing, the codec may come from the input: gzip's or zlib's header, or the HZLC container's.
  std::string c = a.flag("--codec") ? a.get("--codec") : comp ? "" : lossless_codec_of(data);
  if (c.empty())
    throw UsageError(comp ? "lossless compress needs --codec" : "give --codec: " + input_name(in) + " has no gzip, zlib or HZLC header");
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
  std::vector<uint8_t> res;
  try {
    res = about_input(in, [&] {
      return comp ? lossless_compress(data.data(), data.size(), o) : lossless_decompress(data.data(), data.size(), o);
    });
  } catch (const Error& e) {
    if (e.code() == ErrorCode::invalid_argument) throw InputError(input_name(in), e.what());  // a size not a multiple of --elem
    throw;
  }
  sink.write(res.data(), res.size());
  sink.commit();
  const double secs = seconds_since(t0);
  note("%s: %zu -> %zu bytes (%s, %s), %.3f s\n", out.c_str(), data.size(), res.size(), c.c_str(),
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
  const InputFile x(a.pos[0]), y(a.pos[1]);
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

int run_verb(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fprintf(stderr, "hpcz: no command given (compress, decompress, test, info, compare, lossless, bench)\n"
                         "Try 'hpcz --help'.\n");
    return kUsage;
  }
  if (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    std::fputs(usage_text().c_str(), stdout);
    return kOk;
  }
  if (args[0] == "--version" || args[0] == "version") {
    std::printf("%s\n", version_string());
    return kOk;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  const bool known = cmd == "compress" || cmd == "decompress" || cmd == "test" || cmd == "info" || cmd == "compare" ||
                     cmd == "lossless" || cmd == "bench";
  if (known && std::any_of(args.begin(), args.end(), [](const std::string& x) { return x == "--help" || x == "-h"; })) {
    std::fputs(verb_usage(cmd).c_str(), stdout);
    return kOk;
  }
  try {
    if (cmd == "compress") return cmd_compress(args);
    if (cmd == "decompress") return cmd_decompress(args);
    if (cmd == "test") return cmd_test(args);
    if (cmd == "info") return cmd_info(args);
    if (cmd == "compare") return cmd_compare(args);
    if (cmd == "lossless") return cmd_lossless(args);
    if (cmd == "bench") return bench_main(split_long_values(args));
    throw UsageError("unknown command '" + cmd + "'");
  } catch (const UsageError& e) {  // one line and where help is, as gzip; not the whole usage
    std::fprintf(stderr, "hpcz: %s\n", e.what());
    if (e.point_to_help) std::fprintf(stderr, "Try 'hpcz%s%s --help'.\n", known ? " " : "", known ? cmd.c_str() : "");
    return kUsage;
  } catch (const InputError& e) {
    std::fprintf(stderr, "hpcz: %s\n", e.what());
    return kBadInput;
  } catch (const OutputError& e) {
    std::fprintf(stderr, "hpcz: %s\n", e.what());
    return kRuntime;
  } catch (const Error& e) {
    std::fprintf(stderr, "hpcz: %s\n", e.what());
    switch (e.code()) {
      case ErrorCode::invalid_argument: return kUsage;
      case ErrorCode::corrupt_archive:
      case ErrorCode::unsupported:
      case ErrorCode::io: return kBadInput;
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

// A verb, then standard output flushed: what printf could not write (info > /dev/full) fails the run.
int run(int argc, char** argv) {
  const int rc = run_verb(argc, argv);
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "hpcz: standard output: %s\n", errno ? std::strerror(errno) : "write error");
    return kRuntime;
  }
  return rc;
}

}  // namespace hpcz::cli

int main(int argc, char** argv) { return hpcz::cli::run(argc, argv); }
