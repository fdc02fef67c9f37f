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
//
// Here: the two calls, the range pass and the host calls that stream. Beside it: stream_pool (the I/O
// threads and the gate that orders slabs), stream_plan (slabs and lanes within the budgets),
// stream_lanes (a lane's thread and coder), stream_io (sources and sinks).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <numeric>
#include <string>

#include "common/dtype.hpp"
#include "pipeline/internal.hpp"
#include "pipeline/stream_io.hpp"
#include "pipeline/stream_lanes.hpp"
#include "pipeline/stream_plan.hpp"
#include "pipeline/stream_pool.hpp"
#include "quant/bound.hpp"
#include "quant/range_cpu.hpp"

namespace hpcz {
namespace pipeline {
namespace {

// The bound settled (into h) from the whole input's range and step sample (sample_maxabs: the slabs'
// encoders settle the same bound from the range and it, codecs::Slab).
template <class T> void settle_range_stream(Pool& pool, Source& in, format::HeaderFields& h, double& sample_maxabs) {
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
  sample_maxabs = detail::from_bits<double>(mag);
  quant::store(h, quant::settle_as<T>(quant::bound_of(h), kmin, kmax, sample_maxabs));
}

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

ArchiveInfo pipeline::compress_slabs(Source& in, DType dtype, const std::vector<uint64_t>& dims, const Options& opt,
                                     Sink& out, const StreamOptions& so) {
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
  double sample_maxabs = 0.0;  // the step's sample, set by the range pass before lanes.go()
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
      const uint8_t* a = coder.compress(sh, codecs::Slab{c0, true, sample_maxabs}, size);
      const SlabTable t{a, count};
      const uint64_t sdata = format::data_offset(count);
      // The slab's chunks must be what the codec may write (the whole archive is checked again at the end).
      if (size < sdata || t.offset(0) != sdata || t.offset(count - 1) + t.size(count - 1) != size)
        fail(ErrorCode::internal, "internal error: a slab archive does not read back");
      if (opt.second_stage) {
        std::vector<const uint8_t*> src(count);
        std::vector<uint32_t> sizes(count);
        for (uint64_t c = 0; c < count; ++c) src[c] = a + t.offset(c), sizes[c] = t.size(c);
        staged = stage_chunks(src.data(), sizes.data(), count,
                              [&](uint64_t tasks, const std::function<void(uint64_t)>& fn) { pool.run(tasks, fn); });
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
                                    format::chunk_checksum(h.codec, format::archive_version(h.codec, true, h.mode), s.data(), s.size()));
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
  detail::dispatch_dtype(dtype, [&](auto tr) { settle_range_stream<typename decltype(tr)::value_type>(pool, in, h, sample_maxabs); });
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

ArchiveInfo pipeline::decompress_slabs(Source& in, Sink& out, Backend backend, const StreamOptions& so,
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
  a.resize(compress_slabs(*src, dtype, dims, plain, sink, room_options(room)).archive_size);
  return a;
}

void decompress_host_stream(const uint8_t* archive, size_t size, void* out, size_t out_capacity, Backend backend,
                            const GpuRoom& room) {
  auto src = memory_source(archive, size);
  BufferSink sink(static_cast<uint8_t*>(out), out_capacity);
  decompress_slabs(*src, sink, backend, room_options(room), DecodeLimits{});
}

}  // namespace pipeline

}  // namespace hpcz
