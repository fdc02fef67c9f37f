// The streaming path (compress_stream / decompress_stream): the same archive bytes as compress() for
// any slab size, lane count and backend, the same values as decompress(), and clean errors.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <cstdio>
#include <mutex>

#include "common.hpp"
#include "pipeline/internal.hpp"
#include "predict/lorenzo.hpp"
#include "quant/range.hpp"
#include "quant/range_cpu.hpp"

using namespace testutil;

namespace {

// A sink over a buffer of fixed capacity (writes from several threads at once; each byte once).
class BufferSink : public hpcz::Sink {
 public:
  explicit BufferSink(size_t capacity, bool sequential = false) : buf_(capacity), sequential_(sequential) {}
  void write(uint64_t off, const void* src, size_t n) override {
    if (off + n > buf_.size()) throw hpcz::Error(hpcz::ErrorCode::io, "past the buffer");
    if (sequential_) {  // a pipe: each write where the last one ended
      if (off != next_) throw hpcz::Error(hpcz::ErrorCode::io, "a sequential sink written out of order");
      next_ += n;
    }
    std::memcpy(buf_.data() + off, src, n);
    std::lock_guard<std::mutex> g(m_);
    end_ = std::max<uint64_t>(end_, off + n);
  }
  bool sequential() const override { return sequential_; }
  std::vector<uint8_t> bytes() const { return std::vector<uint8_t>(buf_.begin(), buf_.begin() + end_); }

 private:
  std::vector<uint8_t> buf_;
  bool sequential_;
  uint64_t next_ = 0, end_ = 0;
  std::mutex m_;
};

std::vector<uint8_t> stream_compress(const std::vector<uint8_t>& bytes, hpcz::DType t, const std::vector<uint64_t>& dims,
                                     const hpcz::Options& o, const hpcz::StreamOptions& so) {
  auto src = hpcz::memory_source(bytes.data(), bytes.size());
  BufferSink sink(hpcz::max_compressed_size(bytes.size() / hpcz::dtype_size(t), t));
  const uint64_t size = hpcz::compress_stream(*src, t, dims, o, sink, so).archive_size;
  std::vector<uint8_t> a = sink.bytes();
  CHECK(a.size() == size);
  return a;
}

std::vector<uint8_t> stream_decompress(const std::vector<uint8_t>& a, hpcz::Backend b, const hpcz::StreamOptions& so,
                                       bool sequential = false) {
  auto src = hpcz::memory_source(a.data(), a.size());
  const hpcz::ArchiveInfo info = hpcz::inspect_header(a.data(), a.size());
  BufferSink sink(info.n_values * hpcz::dtype_size(info.dtype), sequential);
  hpcz::decompress_stream(*src, sink, b, so);
  return sink.bytes();
}

// Slab sizes from one chunk (many slabs, the last one short) to the whole array.
std::vector<size_t> slab_sizes(hpcz::Codec codec, hpcz::DType t, uint64_t n) {
  const size_t vb = hpcz::dtype_size(t);
  if (codec == hpcz::Codec::fast) return {65536, 65536 * 7, n * vb};
  return {1, 3 * (size_t(1) << 22) * vb, n * vb};  // 1 byte: one chunk a slab
}

// Every real field, both codecs, a rel and an abs bound, with and without the lossless stage: the
// stream's archive is compress()'s byte for byte, and both decoders give decompress()'s values.
void stream_matches_one_shot(hpcz::Backend backend) {
  int checked = 0;
  for (const Field& f : real_fields()) {
    for (hpcz::Codec codec : {hpcz::Codec::fast, hpcz::Codec::ratio}) {
      for (int variant = 0; variant < 3; ++variant) {
        hpcz::Options o;
        o.codec = codec;
        o.mode = variant == 1 ? hpcz::BoundMode::abs : hpcz::BoundMode::rel;
        o.bound = variant == 1 ? 0.5 : 1e-3;
        o.second_stage = variant == 2;
        o.backend = hpcz::Backend::cpu;
        const std::vector<uint8_t> want = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
        std::vector<uint8_t> values;
        hpcz::decompress(want.data(), want.size(), values, hpcz::Backend::cpu);
        o.backend = backend;
        for (size_t slab : slab_sizes(codec, f.dtype, f.n())) {
          hpcz::StreamOptions so;
          so.slab_bytes = slab;
          const std::vector<uint8_t> a = stream_compress(f.bytes, f.dtype, f.dims, o, so);
          CHECK_MSG(a == want, f.name << " codec " << int(codec) << " variant " << variant << " slab " << slab
                                      << ": the stream's archive differs from compress()'s");
          CHECK_MSG(stream_decompress(want, backend, so) == values,
                    f.name << " codec " << int(codec) << " variant " << variant << " slab " << slab
                           << ": the stream decodes other values");
          ++checked;
        }
      }
    }
  }
  std::fprintf(stderr, "  %d streams checked\n", checked);
  CHECK(checked >= 18);
}

// A 3-D field stretched to two ratio chunks and one plane (the last chunk a single plane, alone in
// its slab), and the same values read as 2-D and 1-D.
void odd_shapes(hpcz::Backend backend) {
  int checked = 0;
  for (const Field& f : real_fields()) {
    if (f.dims.size() != 3 || f.dtype != hpcz::DType::f32) continue;
    const uint64_t plane = f.dims[1] * f.dims[2], cs = hpcz::predict::kTargetChunkValues / plane;
    if (cs < 1) continue;
    const uint64_t nz = 2 * cs + 1;
    std::vector<uint8_t> bytes(nz * plane * 4);
    for (uint64_t z = 0; z < nz; ++z)
      std::memcpy(&bytes[z * plane * 4], &f.bytes[(z % f.dims[0]) * plane * 4], plane * 4);
    for (const std::vector<uint64_t>& dims : std::vector<std::vector<uint64_t>>{
             {nz, f.dims[1], f.dims[2]}, {nz * f.dims[1], f.dims[2]}, {nz * plane}, {1, nz, f.dims[1], f.dims[2]}}) {
      hpcz::Options o;
      o.codec = hpcz::Codec::ratio;
      o.backend = hpcz::Backend::cpu;
      const std::vector<uint8_t> want = hpcz::compress(bytes.data(), hpcz::DType::f32, dims, o);
      std::vector<uint8_t> values;
      hpcz::decompress(want.data(), want.size(), values, hpcz::Backend::cpu);
      o.backend = backend;
      hpcz::StreamOptions so;
      so.slab_bytes = 1;
      CHECK_MSG(stream_compress(bytes, hpcz::DType::f32, dims, o, so) == want, f.name << " rank " << dims.size());
      CHECK_MSG(stream_decompress(want, backend, so) == values, f.name << " rank " << dims.size());
      ++checked;
    }
  }
  std::fprintf(stderr, "  %d shapes checked\n", checked);
  CHECK(checked >= 4);
}

// A field k times over along its slowest axis: its bytes and dims.
std::vector<uint8_t> tiled(const Field& f, uint64_t k, std::vector<uint64_t>& dims) {
  std::vector<uint8_t> bytes;
  for (uint64_t i = 0; i < k; ++i) bytes.insert(bytes.end(), f.bytes.begin(), f.bytes.end());
  dims = f.dims;
  dims[0] *= k;
  return bytes;
}

bool have_gpu() {
  if (hpcz::gpu_available()) return true;
  std::fprintf(stderr, "  no GPU: skipped\n");
  return false;
}

}  // namespace

TEST(roundtrip_stream_matches_one_shot_cpu) { stream_matches_one_shot(hpcz::Backend::cpu); }
TEST(roundtrip_stream_odd_shapes_cpu) { odd_shapes(hpcz::Backend::cpu); }
TEST(roundtrip_stream_matches_one_shot_gpu) {
  if (have_gpu()) stream_matches_one_shot(hpcz::Backend::gpu);
}
TEST(roundtrip_stream_odd_shapes_gpu) {
  if (have_gpu()) odd_shapes(hpcz::Backend::gpu);
}

// Several GPUs (every visible one, then each alone), several lanes each: the same bytes.
TEST(roundtrip_stream_every_gpu_same_bytes) {
  if (!have_gpu()) return;
  const std::vector<Field> fields = real_fields();
  const Field& f = fields.front();
  const uint64_t k = 40;  // tiled to a few MB: slabs enough for every lane
  std::vector<uint64_t> dims;
  const std::vector<uint8_t> bytes = tiled(f, k, dims);
  for (hpcz::Codec codec : {hpcz::Codec::fast, hpcz::Codec::ratio}) {
    hpcz::Options o;
    o.codec = codec;
    o.backend = hpcz::Backend::cpu;
    const std::vector<uint8_t> want = hpcz::compress(bytes.data(), f.dtype, dims, o);
    std::vector<std::vector<int>> sets = {{}};
    for (int d = 0; d < hpcz::gpu_count(); ++d) sets.push_back({d});
    for (const auto& devices : sets) {
      hpcz::StreamOptions so;
      so.devices = devices;
      so.slab_bytes = codec == hpcz::Codec::fast ? (size_t(1) << 20) : 1;
      o.backend = hpcz::Backend::gpu;
      CHECK_MSG(stream_compress(bytes, f.dtype, dims, o, so) == want, "devices " << devices.size());
      std::vector<uint8_t> values;
      hpcz::decompress(want.data(), want.size(), values, hpcz::Backend::cpu);
      CHECK_MSG(stream_decompress(want, hpcz::Backend::gpu, so) == values, "devices " << devices.size());
    }
  }
  std::fprintf(stderr, "  %d GPUs visible\n", hpcz::gpu_count());
}

// Files through descriptors, a sequential sink (a pipe) for decompression, the progress callback.
TEST(roundtrip_stream_files_and_pipes) {
  const Field f = real_fields().front();
  char in_path[] = "/tmp/hpcz-stream-in-XXXXXX", out_path[] = "/tmp/hpcz-stream-out-XXXXXX";
  const int in_fd = mkstemp(in_path), out_fd = mkstemp(out_path);
  REQUIRE(in_fd >= 0 && out_fd >= 0);
  REQUIRE(::write(in_fd, f.bytes.data(), f.bytes.size()) == ssize_t(f.bytes.size()));
  hpcz::Options o;
  o.backend = hpcz::Backend::cpu;
  const std::vector<uint8_t> want = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
  hpcz::StreamOptions so;
  so.slab_bytes = 65536 * 3;
  std::atomic<uint64_t> calls{0}, last{0};
  so.progress = [&](uint64_t done, uint64_t total) {
    ++calls;
    last = done;
    CHECK(total == f.bytes.size());
  };
  auto src = hpcz::fd_source(in_fd, f.bytes.size());
  auto sink = hpcz::fd_sink(out_fd);
  const uint64_t size = hpcz::compress_stream(*src, f.dtype, f.dims, o, *sink, so).archive_size;
  std::vector<uint8_t> a = read_all(out_path);
  CHECK(size == want.size());
  CHECK(a == want);
  CHECK(calls >= 2);
  CHECK(last == f.bytes.size());
  std::vector<uint8_t> values;
  hpcz::decompress(want.data(), want.size(), values, hpcz::Backend::cpu);
  CHECK(stream_decompress(want, hpcz::Backend::cpu, so, true) == values);
  ::close(in_fd);
  ::close(out_fd);
  ::unlink(in_path);
  ::unlink(out_path);
}

// Bad requests and bad archives: the right error, nothing written past the output's size.
TEST(corrupt_stream_errors) {
  const Field f = real_fields().front();
  hpcz::Options o;
  o.backend = hpcz::Backend::cpu;
  const std::vector<uint8_t> a = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
  auto code_of = [](auto&& fn) {
    try {
      fn();
    } catch (const hpcz::Error& e) {
      return int(e.code());
    }
    return 0;
  };
  hpcz::StreamOptions so;
  so.slab_bytes = 65536;
  // The input's size must match the dims; a sequential sink cannot take an archive (header last).
  CHECK(code_of([&] {
          auto src = hpcz::memory_source(f.bytes.data(), f.bytes.size() - 4);
          BufferSink sink(a.size() * 2);
          hpcz::compress_stream(*src, f.dtype, f.dims, o, sink, so);
        }) == int(hpcz::ErrorCode::invalid_argument));
  CHECK(code_of([&] {
          auto src = hpcz::memory_source(f.bytes.data(), f.bytes.size());
          BufferSink sink(a.size() * 2, true);
          hpcz::compress_stream(*src, f.dtype, f.dims, o, sink, so);
        }) == int(hpcz::ErrorCode::invalid_argument));
  // Truncated, trailing bytes, a damaged chunk, a damaged table, not an archive.
  auto decode = [&](std::vector<uint8_t> bad) {
    return code_of([&] { stream_decompress(bad, hpcz::Backend::cpu, so); });
  };
  CHECK(decode(std::vector<uint8_t>(a.begin(), a.end() - 1)) == int(hpcz::ErrorCode::corrupt_archive));
  CHECK(decode(std::vector<uint8_t>(a.begin(), a.begin() + 100)) == int(hpcz::ErrorCode::corrupt_archive));
  std::vector<uint8_t> longer = a;
  longer.push_back(0);
  CHECK(decode(longer) == int(hpcz::ErrorCode::corrupt_archive));
  std::vector<uint8_t> chunk = a;
  chunk[chunk.size() - 10] ^= 1;
  CHECK(decode(chunk) == int(hpcz::ErrorCode::corrupt_archive));
  std::vector<uint8_t> table = a;
  table[hpcz::kHeaderSize + 3] ^= 1;
  CHECK(decode(table) == int(hpcz::ErrorCode::corrupt_archive));
  CHECK(decode(f.bytes) == int(hpcz::ErrorCode::corrupt_archive));
  if (hpcz::gpu_available()) {
    CHECK(code_of([&] { stream_decompress(chunk, hpcz::Backend::gpu, so); }) == int(hpcz::ErrorCode::corrupt_archive));
    hpcz::StreamOptions tiny;
    tiny.device_memory = 1024;  // below one chunk's buffers
    o.backend = hpcz::Backend::gpu;
    CHECK(code_of([&] { stream_compress(f.bytes, f.dtype, f.dims, o, tiny); }) == int(hpcz::ErrorCode::invalid_argument));
    tiny.devices = {hpcz::gpu_count()};
    CHECK(code_of([&] { stream_compress(f.bytes, f.dtype, f.dims, o, tiny); }) == int(hpcz::ErrorCode::invalid_argument));
  }
}

// Outputs above 64 MiB go through a shared mapping (pages populated range by range): a tiled field
// compressed and decompressed file to file, byte for byte what the one-shot calls give.
TEST(roundtrip_stream_mapped_output) {
  const Field f = real_fields().front();
  const uint64_t k = (uint64_t(72) << 20) / f.bytes.size() + 1;
  std::vector<uint64_t> dims;
  const std::vector<uint8_t> bytes = tiled(f, k, dims);
  hpcz::Options o;
  o.backend = hpcz::Backend::cpu;
  o.mode = hpcz::BoundMode::abs;
  o.bound = 0;  // lossless: an archive above 64 MiB too
  const std::vector<uint8_t> want = hpcz::compress(bytes.data(), f.dtype, dims, o);
  CHECK(want.size() > (uint64_t(64) << 20));
  char a_path[] = "/tmp/hpcz-stream-a-XXXXXX", v_path[] = "/tmp/hpcz-stream-v-XXXXXX";
  const int a_fd = mkstemp(a_path), v_fd = mkstemp(v_path);
  REQUIRE(a_fd >= 0 && v_fd >= 0);
  {
    auto src = hpcz::memory_source(bytes.data(), bytes.size());
    auto sink = hpcz::fd_sink(a_fd);
    hpcz::compress_stream(*src, f.dtype, dims, o, *sink);
  }
  CHECK(read_all(a_path) == want);
  {
    auto src = hpcz::fd_source(a_fd, want.size());
    auto sink = hpcz::fd_sink(v_fd);
    hpcz::decompress_stream(*src, *sink, hpcz::Backend::cpu);
  }
  CHECK(read_all(v_path) == bytes);  // abs 0: bit for bit
  ::close(a_fd);
  ::close(v_fd);
  ::unlink(a_path);
  ::unlink(v_path);
}

// compress() and decompress() take the streaming path where the one-shot GPU buffers would not fit
// the GPU's free memory: that path over host memory gives the same archive and values, also within a
// small room (smaller slabs, fewer lanes).
TEST(roundtrip_stream_host_calls_beyond_the_gpu) {
  const bool gpu = hpcz::gpu_available();
  const hpcz::pipeline::GpuRoom room = gpu ? hpcz::pipeline::current_gpu_room() : hpcz::pipeline::GpuRoom{};
  if (gpu) CHECK(room.bytes > (size_t(64) << 20));
  int checked = 0;
  for (const Field& f : real_fields()) {
    for (hpcz::Codec codec : {hpcz::Codec::fast, hpcz::Codec::ratio}) {
      hpcz::Options o;
      o.codec = codec;
      o.backend = hpcz::Backend::cpu;
      const std::vector<uint8_t> want = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
      std::vector<uint8_t> values;
      hpcz::decompress(want.data(), want.size(), values, hpcz::Backend::cpu);
      for (hpcz::Backend b : {hpcz::Backend::cpu, hpcz::Backend::gpu}) {
        if (b == hpcz::Backend::gpu && !gpu) continue;
        o.backend = b;
        for (size_t bytes : {room.bytes, size_t(24) << 20}) {
          const hpcz::pipeline::GpuRoom r{room.device, bytes};
          CHECK_MSG(hpcz::pipeline::compress_host_stream(f.bytes.data(), f.dtype, f.dims, o, r) == want, f.name);
          std::vector<uint8_t> back(values.size());
          hpcz::pipeline::decompress_host_stream(want.data(), want.size(), back.data(), back.size(), b, r);
          CHECK_MSG(back == values, f.name);
          ++checked;
        }
      }
    }
  }
  CHECK(checked >= 2);
}

// A damaged chunk early in a long archive stops every lane: the error comes back long before the
// lanes could have decoded the rest (a sink that counts what it was given).
TEST(corrupt_stream_stops_early) {
  const Field f = real_fields().front();
  const uint64_t k = 64;
  std::vector<uint64_t> dims;
  const std::vector<uint8_t> bytes = tiled(f, k, dims);
  hpcz::Options o;
  o.backend = hpcz::Backend::cpu;
  std::vector<uint8_t> a = hpcz::compress(bytes.data(), f.dtype, dims, o);
  const hpcz::ArchiveInfo info = hpcz::inspect(a.data(), a.size());
  a[info.chunks[1].offset + 3] ^= 0x40;  // chunk 1: in the first slab
  struct Counting : hpcz::Sink {
    std::atomic<uint64_t> bytes{0};
    void write(uint64_t, const void*, size_t n) override { bytes += n; }
  } sink;
  hpcz::StreamOptions so;
  so.slab_bytes = 65536 * 4;  // hundreds of slabs
  auto src = hpcz::memory_source(a.data(), a.size());
  bool threw = false;
  try {
    hpcz::decompress_stream(*src, sink, hpcz::Backend::cpu, so);
  } catch (const hpcz::Error& e) {
    threw = e.code() == hpcz::ErrorCode::corrupt_archive;
  }
  CHECK(threw);
  CHECK_MSG(sink.bytes < bytes.size() / 4, "the lanes went on after the error: " << sink.bytes << " bytes written");
}

// fd_sink over a regular file ends the file where the archive ends, whatever was there before (an
// older, longer file) and whichever way it was written.
TEST(roundtrip_stream_sink_cuts_the_file) {
  const Field f = real_fields().front();
  hpcz::Options o;
  o.backend = hpcz::Backend::cpu;
  const std::vector<uint8_t> want = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
  char path[] = "/tmp/hpcz-stream-old-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const std::vector<uint8_t> junk(want.size() * 3 + 12345, 0x5a);
  REQUIRE(::write(fd, junk.data(), junk.size()) == ssize_t(junk.size()));
  auto src = hpcz::memory_source(f.bytes.data(), f.bytes.size());
  auto sink = hpcz::fd_sink(fd);
  hpcz::compress_stream(*src, f.dtype, f.dims, o, *sink);
  CHECK(read_all(path) == want);
  ::close(fd);
  ::unlink(path);
}

// An abs bound's step takes its margin from a sample (quant::step_from_sample), and the range is taken
// as the encoder reads: spikes a thousand times larger than any sampled value, at indices the sample
// skips, still come back within the bound and widen the header's range; a NaN at a sampled index is
// not a magnitude, and a -0 there is 0. The same archive from the CPU, the stream in slabs of one chunk, and the GPU.
TEST(roundtrip_abs_step_sample_misses_spikes) {
  const uint64_t n = uint64_t(1) << 20;  // sample stride 16
  std::vector<float> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = float(std::sin(double(i) * 1e-3) * 3.0 + std::cos(double(i) * 0.37));
  for (uint64_t i = 7; i < n; i += 4112) v[i] = (i / 4112 % 2 ? -1.0f : 1.0f) * float(3000 + i % 1000);  // i % 16 == 7
  v[16 * 5] = std::numeric_limits<float>::quiet_NaN();
  v[0] = -0.0f;  // sampled: counts as 0, not as the largest magnitude
  uint64_t sampled = 0;
  for (uint64_t k = 0; k < hpcz::quant::step_sample_count(n); ++k) {
    const uint64_t i = hpcz::quant::step_sample_index(k, n);
    CHECK(i == k * 16);  // floor(k n / 2^16)
    sampled = std::max(sampled, hpcz::quant::sample_key(v[i], false, 0.0f));
  }
  const double sample_max = hpcz::detail::from_bits<double>(sampled);
  // Folded piece by piece (as the stream's range pass reads), the same sample as at once, also where
  // n is not a multiple of the sample count (indices floor(k n / 2^16), strictly increasing).
  for (uint64_t m : {n, uint64_t(65536 + 1), uint64_t(3 * 65536 + 12345), uint64_t(1000)}) {
    const uint64_t whole = hpcz::quant::fold_step_samples(v.data(), 0, m, m, false, 0.0f, 0);
    uint64_t pieces = 0;
    for (uint64_t first = 0; first < m; first += 999)
      pieces = hpcz::quant::fold_step_samples(v.data() + first, first, std::min<uint64_t>(999, m - first), m, false, 0.0f, pieces);
    CHECK_MSG(whole == pieces && whole != 0, "n " << m);
    for (uint64_t k = 1; k < hpcz::quant::step_sample_count(m); ++k)
      REQUIRE(hpcz::quant::step_sample_index(k, m) > hpcz::quant::step_sample_index(k - 1, m) &&
              hpcz::quant::step_sample_index(k, m) < m);
  }
  REQUIRE(sample_max > 3.0 && sample_max < 4.5);
  float mn = v[0], mx = v[0];
  for (float x : v)
    if (x == x) mn = std::min(mn, x), mx = std::max(mx, x);
  REQUIRE(mn < -3000 && mx > 3000);
  const std::vector<uint8_t> bytes(reinterpret_cast<const uint8_t*>(v.data()), reinterpret_cast<const uint8_t*>(v.data() + n));
  for (double eb : {1e-2, 1e-5}) {
    hpcz::Options o;
    o.mode = hpcz::BoundMode::abs;
    o.bound = eb;
    o.codec = hpcz::Codec::fast;
    o.backend = hpcz::Backend::cpu;
    const std::vector<uint8_t> a = hpcz::compress(v.data(), hpcz::DType::f32, {n}, o);
    std::vector<uint8_t> back;
    const hpcz::ArchiveInfo info = hpcz::decompress(a.data(), a.size(), back, hpcz::Backend::cpu);
    CHECK(info.range_valid && info.range_min == mn && info.range_max == mx);
    CHECK(info.step == hpcz::quant::choose_step<float>(eb, true, info.range_min, info.range_max, sample_max));
    const Check c = strict_check(bytes, back, hpcz::DType::f32, eb);
    CHECK_MSG(c.violations == 0, "abs " << eb << ": " << c.violations << " values outside the bound");
    hpcz::StreamOptions so;
    so.slab_bytes = 65536;
    CHECK_MSG(stream_compress(bytes, hpcz::DType::f32, {n}, o, so) == a, "abs " << eb << ": the stream's archive differs");
    if (hpcz::gpu_available()) {
      o.backend = hpcz::Backend::gpu;
      CHECK_MSG(hpcz::compress(v.data(), hpcz::DType::f32, {n}, o) == a, "abs " << eb << ": the GPU's archive differs");
      CHECK_MSG(stream_compress(bytes, hpcz::DType::f32, {n}, o, so) == a, "abs " << eb << ": the GPU stream's archive differs");
    }
  }
}

// Every golden archive (tests/golden: each format version, staged or not) decodes on the streaming
// path, in slabs of a chunk or two, to the values the one-shot decoder gives, on the CPU and the GPU.
// (A staged slab is resealed at today's version: its chunks then carry that version's checksums.)
TEST(roundtrip_stream_decodes_golden_archives) {
  const std::string dir = std::string(HPCZ_SOURCE_DIR) + "/tests/golden/";
  DIR* d = opendir(dir.c_str());
  REQUIRE(d != nullptr);
  std::vector<std::string> files;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() > 5 && n.substr(n.size() - 5) == ".hpcz") files.push_back(n);
  }
  closedir(d);
  REQUIRE(files.size() >= 20);
  for (const std::string& f : files) {
    const std::vector<uint8_t> a = read_all(dir + f);
    std::vector<uint8_t> want;
    hpcz::decompress(a.data(), a.size(), want, hpcz::Backend::cpu);
    const hpcz::ArchiveInfo info = hpcz::inspect_header(a.data(), a.size());
    hpcz::StreamOptions so;
    so.slab_bytes = 2 * size_t(info.chunk_values) * hpcz::dtype_size(info.dtype);
    CHECK_MSG(stream_decompress(a, hpcz::Backend::cpu, so) == want, f << ": the stream's values differ (CPU)");
    if (hpcz::gpu_available() &&
        hpcz::resolve_backend(hpcz::Backend::automatic, info.codec, info.mode) == hpcz::Backend::gpu)
      CHECK_MSG(stream_decompress(a, hpcz::Backend::gpu, so) == want, f << ": the stream's values differ (GPU)");
    CHECK_MSG(stream_decompress(a, hpcz::Backend::automatic, so) == want, f << ": the stream's values differ (auto)");
  }
}
