// The streaming host path: an array of any size through bounded buffers, in slabs of whole chunks.
//
// Compression: a first pass over the input finds the value range (the I/O threads read and reduce
// it), which settles eb and the step exactly as the one-shot path does. Then lanes (a CUDA stream of
// one GPU with its pinned and device buffers, several per GPU, or the CPU) take slabs in order: read,
// code the slab as a slab archive (codecs::Slab), and write its chunk bytes where they go, once the
// slabs before it have said how long they are. The chunk table is kept on the host (16 bytes a chunk)
// and written with the header last: the archive is byte-identical to compress()'s.
//
// Decompression: the header and table are read and checked first; each lane then reads a slab's
// chunks, rebuilds the slab archive around them (its own header and table, offsets from its start),
// decodes it and writes the values at their place.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <chrono>
#include <deque>
#include <exception>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dtype.hpp"
#include "pipeline/internal.hpp"
#include "pipeline/stream_io.hpp"
#include "quant/range.hpp"
#include "quant/range_cpu.hpp"

namespace hpcz {
namespace pipeline {
namespace {

// Pieces the I/O threads read and write: large enough for the kernel's fast path, small enough that
// a slab is spread over every thread.
constexpr uint64_t kIoPiece = uint64_t(4) << 20;
// The slab size when the budgets allow it: about 1 ms of PCIe copy, so a lane's fixed costs (launches,
// two synchronizations) stay small, and 3 lanes x 2 buffers of it stay well under the host budget.
constexpr uint64_t kDefaultSlabBytes = uint64_t(128) << 20;

// A fixed set of threads for the lanes' reads, writes and per-chunk work. run() may be called from
// several lanes at once; the caller works on its own job too.
class Pool {
 public:
  explicit Pool(unsigned n) {
    try {
      for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this] { work(); });
    } catch (...) {  // no thread to be had (a process limit): stop those started, then report it
      stop();
      throw;
    }
  }
  ~Pool() { stop(); }
  // fn(i) for every i < n; rethrows the first exception once all have run.
  void run(uint64_t n, const std::function<void(uint64_t)>& fn) {
    if (!n) return;
    Job j(&fn, n);
    {
      std::lock_guard<std::mutex> g(m_);
      jobs_.push_back(&j);
    }
    cv_.notify_all();
    for (;;) {  // help until every index is claimed
      uint64_t i;
      {
        std::lock_guard<std::mutex> g(m_);
        if (!claim(&j, i)) break;
      }
      execute(&j, i);
    }
    std::unique_lock<std::mutex> g(j.m);
    j.cv.wait(g, [&] { return j.done == j.n; });
    if (j.err) std::rethrow_exception(j.err);
  }

 private:
  struct Job {
    Job(const std::function<void(uint64_t)>* f, uint64_t count) : fn(f), n(count) {}
    const std::function<void(uint64_t)>* fn;
    uint64_t n, next = 0, done = 0;
    std::exception_ptr err;
    std::mutex m;
    std::condition_variable cv;
  };
  // Under m_: the next index of j; the last claim takes j off the queue (nothing touches it after).
  bool claim(Job* j, uint64_t& i) {
    if (j->next >= j->n) return false;
    i = j->next++;
    if (j->next == j->n) jobs_.erase(std::find(jobs_.begin(), jobs_.end(), j));
    return true;
  }
  void execute(Job* j, uint64_t i) {
    std::exception_ptr e;
    try {
      (*j->fn)(i);
    } catch (...) {
      e = std::current_exception();
    }
    std::lock_guard<std::mutex> g(j->m);
    if (e && !j->err) j->err = e;
    if (++j->done == j->n) j->cv.notify_all();
  }
  void stop() {
    {
      std::lock_guard<std::mutex> g(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }
  void work() {
    for (;;) {
      Job* j;
      uint64_t i;
      {
        std::unique_lock<std::mutex> g(m_);
        cv_.wait(g, [&] { return stop_ || !jobs_.empty(); });
        if (stop_) return;
        j = jobs_.front();
        claim(j, i);
      }
      execute(j, i);
    }
  }
  std::vector<std::thread> threads_;
  std::deque<Job*> jobs_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
};

unsigned io_threads() { return std::max(4u, std::min(32u, std::thread::hardware_concurrency())); }

// Reads [off, off + n) of `in` into dst, in pieces over the pool.
void read_range(Pool& pool, Source& in, uint64_t off, uint8_t* dst, uint64_t n) {
  pool.run((n + kIoPiece - 1) / kIoPiece, [&](uint64_t k) {
    const uint64_t at = k * kIoPiece;
    in.read(off + at, dst + at, size_t(std::min(kIoPiece, n - at)));
  });
}
void write_range(Pool& pool, Sink& out, uint64_t off, const uint8_t* src, uint64_t n) {
  if (out.sequential()) {
    out.write(off, src, n);
    return;
  }
  pool.run((n + kIoPiece - 1) / kIoPiece, [&](uint64_t k) {
    const uint64_t at = k * kIoPiece;
    out.write(off + at, src + at, size_t(std::min(kIoPiece, n - at)));
  });
}

// Slabs pass in order: slab k learns where it goes (the sum of the sizes before it) once slabs < k
// have passed. abort() wakes every waiter with the error of the lane that failed.
class Gate {
 public:
  uint64_t wait(uint64_t k) {
    std::unique_lock<std::mutex> g(m_);
    cv_.wait(g, [&] { return aborted_ || passed_ == k; });
    if (aborted_) throw Error(ErrorCode::internal, "aborted");  // never surfaces: the first error does
    return base_;
  }
  void pass(uint64_t size) {
    {
      std::lock_guard<std::mutex> g(m_);
      base_ += size;
      ++passed_;
    }
    cv_.notify_all();
  }
  void abort() {
    {
      std::lock_guard<std::mutex> g(m_);
      aborted_ = true;
    }
    stopped_ = true;
    cv_.notify_all();
  }
  // A lane failed: the others take no further slab.
  bool stopped() const { return stopped_; }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  uint64_t passed_ = 0, base_ = 0;
  bool aborted_ = false;
  std::atomic<bool> stopped_{false};
};

template <class T> void settle_range_stream(Pool& pool, Source& in, format::HeaderFields& h) {
  using K = typename detail::Bits<T>::type;
  const bool has_fill = h.flags & format::kFlagFill;
  const T fill = T(h.fill);
  const uint64_t per = kIoPiece / sizeof(T), pieces = (h.n_values + per - 1) / per;
  std::mutex m;
  K nmin = ~K(0), nmax = 0;
  uint64_t mag = 0;  // the step's sample (quant::fold_step_samples), over the whole input
  const uint8_t* mem = in.data();
  auto* file = dynamic_cast<FdSource*>(&in);
  const uint8_t* mapped = !mem && file ? file->mapping() : nullptr;
  pool.run(pieces, [&](uint64_t k) {
    const uint64_t first = k * per, n = std::min(per, h.n_values - first);
    K a = ~K(0), b = 0;
    uint64_t s = 0;
    auto fold = [&](const T* v) {
      quant::fold_range_keys(v, n, has_fill, fill, a, b);
      s = quant::fold_step_samples(v, first, n, h.n_values, has_fill, fill, s);
    };
    if (mem) {
      fold(reinterpret_cast<const T*>(mem) + first);
    } else if (mapped) {
      // Faulted in first, so that a file cut short meanwhile is an error here, not a SIGBUS below.
      file->populate(first * sizeof(T), n * sizeof(T));
      fold(reinterpret_cast<const T*>(mapped) + first);
      file->unmap_range(first * sizeof(T), n * sizeof(T));
    } else {
      thread_local std::vector<T> buf;
      buf.resize(per);
      in.read(first * sizeof(T), buf.data(), n * sizeof(T));
      fold(buf.data());
    }
    std::lock_guard<std::mutex> g(m);
    nmin = std::min(nmin, a);
    nmax = std::max(nmax, b);
    mag = std::max(mag, s);
  });
  uint64_t kmin, kmax;
  quant::widen_keys<T>(nmin, nmax, kmin, kmax);
  h.sample_maxabs = detail::from_bits<double>(mag);
  quant::settle_range(h, kmin, kmax);
}

// How a call is cut: slab_chunks chunks a slab, one lane per entry of `lanes` (a GPU id, or -1: the CPU).
struct Plan {
  uint64_t slab_chunks = 1, n_slabs = 0;
  std::vector<int> lanes;
  size_t in_bytes = 0, out_bytes = 0, ws_bytes = 0;  // a lane's buffers
};

Plan plan_stream(const format::HeaderFields& h, Backend backend, const StreamOptions& so, bool compress) {
  Plan p;
  const uint64_t vb = dtype_size(h.dtype), chunk_bytes = uint64_t(h.chunk_values) * vb;
  std::vector<int> devices;
  if (backend == Backend::gpu) {
    const int count = gpu_count();
    if (so.devices.empty())
      for (int d = 0; d < count; ++d) devices.push_back(d);
    for (int d : so.devices) {
      if (d < 0 || d >= count)
        fail(ErrorCode::invalid_argument, "no GPU " + std::to_string(d) + " (" + std::to_string(count) + " visible)");
      if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
    }
    if (devices.empty()) fail_no_gpu();
  }
  int per_device = devices.empty() ? 2 : std::max(1, so.lanes_per_device);
  const uint64_t n_lanes = devices.empty() ? 2 : devices.size() * per_device;
  uint64_t target = so.slab_bytes ? so.slab_bytes : std::min<uint64_t>(kDefaultSlabBytes, so.host_memory / (2 * n_lanes));
  p.slab_chunks = std::max<uint64_t>(1, std::min<uint64_t>(target / chunk_bytes, h.n_chunks));
  auto sizes = [&](uint64_t chunks) {
    const format::HeaderFields sh = codecs::slab_header(h, 0, std::min(chunks, h.n_chunks));
    const size_t values = sh.n_values * vb, archive = max_compressed_size(sh.n_values, h.dtype);
    p.in_bytes = compress ? values : archive;
    p.out_bytes = compress ? archive : values;
    p.ws_bytes = devices.empty() ? 0 : gpu_slab_workspace(sh, compress);
    return p.in_bytes + p.out_bytes + p.ws_bytes;
  };
  if (!devices.empty()) {  // within the device budget: smaller slabs, then fewer lanes
    while (p.slab_chunks > 1 && per_device * sizes(p.slab_chunks) > so.device_memory) p.slab_chunks /= 2;
    const size_t need = sizes(p.slab_chunks);
    if (need > so.device_memory)
      fail(ErrorCode::invalid_argument, "a GPU memory budget of " + std::to_string(so.device_memory) +
                                            " bytes is below one slab's " + std::to_string(need));
    per_device = int(std::min<size_t>(per_device, so.device_memory / need));
  }
  sizes(p.slab_chunks);
  p.n_slabs = h.n_chunks ? (h.n_chunks + p.slab_chunks - 1) / p.slab_chunks : 0;
  // Device by device in turn, so that a call of few slabs (lanes beyond the slabs would only hold
  // memory) still spreads them over every GPU.
  if (devices.empty()) p.lanes.assign(2, -1);
  for (int k = 0; k < per_device; ++k)
    for (int d : devices) p.lanes.push_back(d);
  if (p.lanes.size() > p.n_slabs) p.lanes.resize(p.n_slabs);
  return p;
}

std::unique_ptr<SlabCoder> make_coder(int lane, const format::HeaderFields& h, const Plan& p) {
  if (lane < 0) return make_cpu_coder(h, p.in_bytes, p.out_bytes);
  return make_gpu_coder(lane, h, p.in_bytes, p.out_bytes, p.ws_bytes);
}

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A lane's time by phase, added to the call's StreamStats when the lane ends.
struct LaneTimes {
  double read = 0, code = 0, write = 0;
};

// One thread per lane. Each makes its coder at once (pinned buffers, a GPU's context: the slowest part
// of a start), then waits for go() (compression: once the range pass has settled the header) and runs
// fn. The first error stops the other lanes (through the gate) and is rethrown by join().
class Lanes {
 public:
  Lanes(const Plan& p, const format::HeaderFields& h, Gate& gate,
        std::function<void(SlabCoder&, LaneTimes&)> fn)
      : gate_(gate), fn_(std::move(fn)) {
    try {
      for (int lane : p.lanes) start(lane, h, p);
    } catch (...) {  // no thread to be had: the lanes started end without running, then the error
      release(false);
      for (auto& t : threads_) t.join();
      threads_.clear();
      throw;
    }
  }
  ~Lanes() {
    if (!threads_.empty()) {
      release(false);
      for (auto& t : threads_) t.join();
    }
  }
  void go() { release(true); }
  // Waits for every lane; rethrows the first error. Adds the lanes' times to stats.
  void join(StreamStats* stats) {
    release(false);  // no-op after go()
    for (auto& t : threads_) t.join();
    threads_.clear();
    if (stats) {
      stats->setup = setup_;
      stats->read = times_.read, stats->code = times_.code, stats->write = times_.write;
    }
    if (first_) std::rethrow_exception(first_);
  }

 private:
  void start(int lane, const format::HeaderFields& h, const Plan& p) {
    threads_.emplace_back([this, lane, h, &p] {
      LaneTimes t;
      try {
        const Clock::time_point t0 = Clock::now();
        std::unique_ptr<SlabCoder> coder = make_coder(lane, h, p);
        note_setup(since(t0));
        if (wait_go()) fn_(*coder, t);
      } catch (...) {
        std::lock_guard<std::mutex> g(m_);
        if (!first_) first_ = std::current_exception();
        gate_.abort();
      }
      std::lock_guard<std::mutex> g(m_);
      times_.read += t.read, times_.code += t.code, times_.write += t.write;
    });
  }
  void release(bool run) {
    {
      std::lock_guard<std::mutex> g(m_);
      if (released_) return;
      released_ = true;
      run_ = run;
    }
    cv_.notify_all();
  }
  bool wait_go() {
    std::unique_lock<std::mutex> g(m_);
    cv_.wait(g, [&] { return released_; });
    return run_;
  }
  void note_setup(double s) {
    std::lock_guard<std::mutex> g(m_);
    setup_ = std::max(setup_, s);
  }
  Gate& gate_;
  std::function<void(SlabCoder&, LaneTimes&)> fn_;
  std::vector<std::thread> threads_;
  std::mutex m_;
  std::condition_variable cv_;
  bool released_ = false, run_ = false;
  std::exception_ptr first_;
  double setup_ = 0;
  LaneTimes times_;
};

struct Progress {
  Progress(const StreamOptions& o, uint64_t t) : so(o), total(t) {}
  const StreamOptions& so;
  uint64_t total, done = 0;
  std::mutex m;
  void add(uint64_t bytes) {
    if (!so.progress) return;
    std::lock_guard<std::mutex> g(m);
    done += bytes;
    so.progress(done, total);
  }
};

// Table entries of a slab archive, moved to where the slab's chunks lie in the whole archive.
struct SlabTable {
  const uint8_t* a;
  uint64_t n;
  uint64_t offset(uint64_t c) const { return detail::load_u64_le(a + format::kHeaderBytes + 16 * c); }
  uint32_t size(uint64_t c) const { return detail::load_u32_le(a + format::kHeaderBytes + 16 * c + 8); }
  uint32_t sum(uint64_t c) const { return detail::load_u32_le(a + format::kHeaderBytes + 16 * c + 12); }
};

// The slab archive of chunks [c0, c0 + count) of a checked archive, its chunk bytes (bytes, from
// info.chunks[c0].offset on) already at a + data_offset(count): writes its header and table.
format::HeaderFields slab_prefix(const ArchiveInfo& info, uint64_t c0, uint64_t count, uint64_t bytes, uint8_t* a) {
  format::HeaderFields sh = codecs::slab_header(header_of(info), c0, count);
  const uint64_t base = format::data_offset(count), shift = info.chunks[c0].offset;
  for (uint64_t c = 0; c < count; ++c) {
    const ChunkEntry& e = info.chunks[c0 + c];
    format::write_chunk_entry(a + format::kHeaderBytes + 16 * c, base + (e.offset - shift), e.size, e.checksum);
  }
  sh.archive_size = base + bytes;
  sh.table_checksum = format::checksum(a + format::kHeaderBytes, count * format::kChunkEntryBytes);
  format::write_header(a, sh);
  return sh;
}

}  // namespace
}  // namespace pipeline

using namespace pipeline;

ArchiveInfo compress_stream(Source& in, DType dtype, const std::vector<uint64_t>& dims, const Options& opt, Sink& out,
                         const StreamOptions& so) {
  if (out.sequential())
    fail(ErrorCode::invalid_argument, "compress_stream writes its header last: it needs a sink that can seek");
  format::HeaderFields h = header_template(dtype, dims, opt);
  const uint64_t vb = dtype_size(dtype);
  if (in.size() != h.n_values * vb)
    fail(ErrorCode::invalid_argument, "the input has " + std::to_string(in.size()) + " bytes; the dims need " +
                                          std::to_string(h.n_values * vb));
  const Clock::time_point t_start = Clock::now();
  const Backend backend = resolve_backend(opt.backend, opt.codec);
  Pool pool(io_threads());
  // The lanes start (buffers, contexts) while the range pass reads the input: the plan does not depend
  // on the range, the slabs' coding does.
  const Plan p = plan_stream(h, backend, so, true);
  const uint64_t data0 = format::data_offset(h.n_chunks);
  std::vector<uint8_t> prefix(data0);  // header, then the table, filled slab by slab
  Gate gate;
  std::atomic<uint64_t> next{0};
  Progress progress(so, h.n_values * vb);
  Lanes lanes(p, h, gate, [&](SlabCoder& coder, LaneTimes& lt) {
    std::vector<std::vector<uint8_t>> staged;
    for (uint64_t k; !gate.stopped() && (k = next++) < p.n_slabs;) {
      const uint64_t c0 = k * p.slab_chunks, count = std::min(p.slab_chunks, h.n_chunks - c0);
      const format::HeaderFields sh = codecs::slab_header(h, c0, count);
      Clock::time_point t0 = Clock::now();
      read_range(pool, in, c0 * h.chunk_values * vb, coder.input(), sh.n_values * vb);
      lt.read += since(t0);
      t0 = Clock::now();
      uint64_t size = 0;
      const uint8_t* a = coder.compress(sh, codecs::Slab{c0, true}, size);
      const SlabTable t{a, count};
      const uint64_t sdata = format::data_offset(count);
      // The slab's chunks must be what the codec may write (the whole archive is checked again at the end).
      if (size < sdata || t.offset(0) != sdata || t.offset(count - 1) + t.size(count - 1) != size)
        fail(ErrorCode::internal, "internal error: a slab archive does not read back");
      if (opt.second_stage) {
        staged.assign(count, {});
        pool.run(count, [&](uint64_t c) { staged[c] = stage_chunk(a + t.offset(c), t.size(c)); });
        size = 0;
        for (auto& s : staged) size += s.size();
      } else {
        size -= sdata;
      }
      lt.code += since(t0);
      t0 = Clock::now();
      const uint64_t base = data0 + gate.wait(k);
      gate.pass(size);
      uint64_t at = base;
      for (uint64_t c = 0; c < count; ++c) {
        uint8_t* e = prefix.data() + format::kHeaderBytes + 16 * (c0 + c);
        if (opt.second_stage) {
          const auto& s = staged[c];
          format::write_chunk_entry(e, at, uint32_t(s.size()),
                                    format::chunk_checksum(format::archive_version(h.codec, true), s.data(), s.size()));
          at += s.size();
        } else {
          format::write_chunk_entry(e, base + (t.offset(c) - sdata), t.size(c), t.sum(c));
        }
      }
      if (opt.second_stage) {
        std::vector<uint64_t> place(count + 1, base);
        for (uint64_t c = 0; c < count; ++c) place[c + 1] = place[c] + staged[c].size();
        pool.run(count, [&](uint64_t c) { out.write(place[c], staged[c].data(), staged[c].size()); });
      } else {
        write_range(pool, out, base, a + sdata, size);
      }
      lt.write += since(t0);
      progress.add(sh.n_values * vb);
    }
  });
  const Clock::time_point t_range = Clock::now();
  detail::dispatch_dtype(dtype, [&](auto tr) { settle_range_stream<typename decltype(tr)::value_type>(pool, in, h); });
  const double range_s = since(t_range);
  out.reserve(max_compressed_size(h.n_values, h.dtype));
  lanes.go();
  lanes.join(so.stats);
  h.archive_size = data0 + gate.wait(p.n_slabs);
  if (opt.second_stage) h.flags |= format::kFlagSecondStage;
  h.table_checksum = format::checksum(prefix.data() + format::kHeaderBytes, h.n_chunks * format::kChunkEntryBytes);
  format::write_header(prefix.data(), h);
  ArchiveInfo info;
  try {  // hpcz never hands out an archive it cannot read back: the whole frame is checked
    info = parse_archive(prefix.data(), prefix.size(), false);
    parse_table(info, prefix.data() + format::kHeaderBytes);
  } catch (const Error& e) {
    fail(ErrorCode::internal, std::string("internal error: the archive written does not read back (") + e.what() + ")");
  }
  out.write(0, prefix.data(), prefix.size());
  out.finish(h.archive_size);
  info.chunks.clear();
  if (so.stats) {
    so.stats->total = since(t_start);
    so.stats->range = range_s;
    so.stats->lanes = int(p.lanes.size());
    so.stats->slabs = p.n_slabs;
    so.stats->slab_bytes = std::min<uint64_t>(p.slab_chunks * h.chunk_values, h.n_values) * vb;
  }
  return info;
}

ArchiveInfo decompress_stream(Source& in, Sink& out, Backend backend, const StreamOptions& so,
                              const DecodeLimits& limits) {
  const Clock::time_point t_start = Clock::now();
  uint8_t head[format::kHeaderBytes];
  const size_t got = size_t(std::min<uint64_t>(in.size(), sizeof head));
  in.read(0, head, got);
  ArchiveInfo info = parse_archive(head, got, false);
  check_limits(info, limits);
  if (in.size() < info.data_offset)
    fail(ErrorCode::corrupt_archive, "corrupt archive: truncated (" + std::to_string(in.size()) + " of " +
                                         std::to_string(info.archive_size) + " bytes)");
  std::vector<uint8_t> prefix(info.data_offset);
  Pool pool(io_threads());
  read_range(pool, in, 0, prefix.data(), prefix.size());
  info = parse_archive(prefix.data(), prefix.size(), false);
  if (in.size() != info.archive_size)
    fail(ErrorCode::corrupt_archive,
         in.size() < info.archive_size ? "corrupt archive: truncated (" + std::to_string(in.size()) + " of " +
                                             std::to_string(info.archive_size) + " bytes)"
                                       : std::string("corrupt archive: trailing bytes after the archive"));
  parse_table(info, prefix.data() + format::kHeaderBytes);
  if (info.n_values == 0) return info;
  const Backend used = resolve_backend(backend, info.codec);
  format::HeaderFields h = header_of(info);
  h.flags &= ~format::kFlagSecondStage;  // the lanes decode plain slabs
  const uint64_t vb = dtype_size(info.dtype);
  Plan p = plan_stream(h, used, so, false);
  // A slab archive's pinned buffer: the largest slab this archive has, not the codec's bound.
  auto slab_span = [&](uint64_t k, uint64_t& c0, uint64_t& count, uint64_t& from, uint64_t& bytes) {
    c0 = k * p.slab_chunks, count = std::min(p.slab_chunks, info.n_chunks - c0);
    const ChunkEntry& last = info.chunks[c0 + count - 1];
    from = info.chunks[c0].offset, bytes = last.offset + last.size - from;
  };
  // Under the second stage, every stored chunk's stage header is read and checked first (its plain
  // size and pieces against the bytes behind them), before any lane sizes a buffer: an archive whose
  // pieces cannot hold what it declares takes none of it. A slab's plain chunks are then what they
  // declare.
  std::vector<uint64_t> plain;
  if (info.second_stage) {
    plain.resize(info.n_chunks);
    constexpr uint64_t kGroup = 1024;  // chunks a job
    pool.run((info.n_chunks + kGroup - 1) / kGroup, [&](uint64_t g) {
      std::vector<uint8_t> head;
      for (uint64_t c = g * kGroup; c < std::min(info.n_chunks, (g + 1) * kGroup); ++c) {
        const ChunkEntry& e = info.chunks[c];
        uint8_t first[8];
        const uint32_t n0 = std::min<uint32_t>(e.size, 6);
        in.read(e.offset, first, n0);
        head.assign(first, first + n0);
        head.resize(stage_head_bytes(first, e.size));
        if (head.size() > n0) in.read(e.offset + n0, head.data() + n0, head.size() - n0);
        plain[c] = read_stage_head(head.data(), e.size, info, c).plain;
      }
    });
  }
  size_t most = 0;
  for (uint64_t k = 0; k < p.n_slabs; ++k) {
    uint64_t c0, count, from, bytes;
    slab_span(k, c0, count, from, bytes);
    if (info.second_stage) bytes = std::accumulate(plain.begin() + c0, plain.begin() + c0 + count, uint64_t(0));
    most = std::max<size_t>(most, format::data_offset(count) + bytes);
  }
  p.in_bytes = std::min(p.in_bytes, most);
  out.reserve(info.n_values * vb);
  Gate gate;
  std::atomic<uint64_t> next{0};
  Progress progress(so, info.n_values * vb);
  Lanes lanes(p, h, gate, [&](SlabCoder& coder, LaneTimes& lt) {
    std::vector<uint8_t> stored;
    for (uint64_t k; !gate.stopped() && (k = next++) < p.n_slabs;) {
      uint64_t c0, count, from, bytes;
      slab_span(k, c0, count, from, bytes);
      const uint64_t sdata = format::data_offset(count);
      format::HeaderFields sh;
      Clock::time_point t0 = Clock::now();
      if (!info.second_stage) {
        read_range(pool, in, from, coder.input() + sdata, bytes);
        sh = slab_prefix(info, c0, count, bytes, coder.input());
      } else {  // the stage comes off on the CPU (or the GPU's lossless decoder), slab by slab
        stored.resize(sdata + bytes);
        read_range(pool, in, from, stored.data() + sdata, bytes);
        const format::HeaderFields ss = slab_prefix(info, c0, count, bytes, stored.data());
        ArchiveInfo si = info;
        si.n_values = ss.n_values;
        si.n_chunks = count;
        si.data_offset = sdata;
        si.archive_size = ss.archive_size;
        si.table_checksum = ss.table_checksum;
        si.chunks.assign(info.chunks.begin() + c0, info.chunks.begin() + c0 + count);
        for (ChunkEntry& e : si.chunks) e.offset = sdata + (e.offset - from);
        const std::vector<uint8_t> plain = remove_second_stage(stored.data(), stored.size(), si, used);
        if (plain.size() > p.in_bytes) fail(ErrorCode::corrupt_archive, "corrupt archive: a chunk grows past its bound");
        std::memcpy(coder.input(), plain.data(), plain.size());
        sh = format::read_header(plain.data()).f;
      }
      lt.read += since(t0);
      t0 = Clock::now();
      const uint8_t* values = coder.decompress(sh, codecs::Slab{c0, false});
      lt.code += since(t0);
      t0 = Clock::now();
      const uint64_t at = c0 * h.chunk_values * vb, n = sh.n_values * vb;
      if (out.sequential()) {
        gate.wait(k);
        out.write(at, values, n);
        gate.pass(n);
      } else {
        write_range(pool, out, at, values, n);
      }
      lt.write += since(t0);
      progress.add(n);
    }
  });
  lanes.go();
  lanes.join(so.stats);
  out.finish(info.n_values * vb);
  if (so.stats) {
    so.stats->total = since(t_start);
    so.stats->lanes = int(p.lanes.size());
    so.stats->slabs = p.n_slabs;
    so.stats->slab_bytes = std::min<uint64_t>(p.slab_chunks * h.chunk_values, h.n_values) * vb;
  }
  return info;
}

// ---- the host calls on the streaming path -----------------------------------------------------------

namespace {
// A sink over a caller's buffer of fixed capacity (each byte written once, from any thread).
class BufferSink : public Sink {
 public:
  BufferSink(uint8_t* p, uint64_t capacity) : p_(p), capacity_(capacity) {}
  void write(uint64_t off, const void* src, size_t n) override {
    if (off > capacity_ || n > capacity_ - off) fail(ErrorCode::internal, "internal error: a write past the buffer");
    std::memcpy(p_ + off, src, n);
  }

 private:
  uint8_t* p_;
  uint64_t capacity_;
};
}  // namespace

namespace pipeline {

// The host calls' share of the GPU: its device alone (a process may own one GPU of several) and at most
// the free memory there.
StreamOptions room_options(const GpuRoom& room) {
  StreamOptions so;
  so.devices = {room.device};
  so.device_memory = std::min(so.device_memory, room.bytes);
  return so;
}

std::vector<uint8_t> compress_host_stream(const void* in, DType dtype, const std::vector<uint64_t>& dims,
                                          const Options& opt, const GpuRoom& room) {
  Options plain = opt;
  plain.second_stage = false;  // compress() adds it to the whole archive, as on the one-shot path
  uint64_t n = 1;
  for (uint64_t d : dims) n *= d;
  std::vector<uint8_t> a(max_compressed_size(n, dtype));
  auto src = memory_source(in, n * dtype_size(dtype));
  BufferSink sink(a.data(), a.size());
  a.resize(compress_stream(*src, dtype, dims, plain, sink, room_options(room)).archive_size);
  return a;
}

void decompress_host_stream(const uint8_t* archive, size_t size, void* out, size_t out_capacity, Backend backend,
                            const GpuRoom& room) {
  auto src = memory_source(archive, size);
  BufferSink sink(static_cast<uint8_t*>(out), out_capacity);
  decompress_stream(*src, sink, backend, room_options(room));
}

}  // namespace pipeline

}  // namespace hpcz
