// What decoding an untrusted archive may cost (issue 51, docs/SECURITY.md). The hostile archives of
// tests/hostile/ (make_hostile.py, from docs/FORMAT.md alone) declare far more than their bytes can hold;
// every decoding call must refuse them as corrupt without allocating what they declare. Allocations are
// counted here by replacing the global operator new (not under AddressSanitizer, which has its own):
// the largest single one and the peak of those alive while a call runs.
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "common.hpp"
#include "format/header.hpp"
#include "hpcz/hpcz.h"
#include "lossless/lossless_internal.hpp"
#include "pipeline/internal.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define HPCZ_COUNT_ALLOCS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HPCZ_COUNT_ALLOCS 0
#endif
#endif
#ifndef HPCZ_COUNT_ALLOCS
#define HPCZ_COUNT_ALLOCS 1
#endif

namespace allocs {
std::atomic<bool> on{false};
std::atomic<size_t> largest{0};
std::atomic<int64_t> live{0}, peak{0};
void added(void* p, size_t n) {
  if (!on.load(std::memory_order_relaxed)) return;
  size_t l = largest.load();
  while (n > l && !largest.compare_exchange_weak(l, n)) {}
  const int64_t now = live += int64_t(malloc_usable_size(p));
  int64_t k = peak.load();
  while (now > k && !peak.compare_exchange_weak(k, now)) {}
}
void removed(void* p) {
  if (p && on.load(std::memory_order_relaxed)) live -= int64_t(malloc_usable_size(p));
}
}  // namespace allocs

#if HPCZ_COUNT_ALLOCS
// operator new[] and the nothrow forms call these (as the standard's default versions do).
void* operator new(std::size_t n) {
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  allocs::added(p, n);
  return p;
}
void* operator new(std::size_t n, std::align_val_t a) {
  void* p = nullptr;
  if (posix_memalign(&p, std::max(size_t(a), sizeof(void*)), n ? n : 1)) throw std::bad_alloc();
  allocs::added(p, n);
  return p;
}
void operator delete(void* p) noexcept {
  allocs::removed(p);
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
void operator delete(void* p, std::align_val_t) noexcept { operator delete(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { operator delete(p); }
#endif

using namespace testutil;

namespace {

// Counts the allocations made while it lives (every thread's).
struct AllocWatch {
  AllocWatch() {
    allocs::largest = 0;
    allocs::live = 0;
    allocs::peak = 0;
    allocs::on = true;
  }
  ~AllocWatch() { allocs::on = false; }
  size_t largest() const { return allocs::largest; }
  int64_t peak() const { return allocs::peak; }
};

// What a call may allocate while it refuses a hostile archive: a few MiB (the chunk table, small
// buffers, threads), never what the archive declares (GiB).
constexpr size_t kSmall = size_t(4) << 20;
#define CHECK_SMALL(w, what)                                                                                   \
  do {                                                                                                         \
    if (HPCZ_COUNT_ALLOCS) {                                                                                   \
      CHECK_MSG((w).largest() < kSmall, what << ": an allocation of " << (w).largest() << " bytes");           \
      CHECK_MSG((w).peak() < int64_t(2 * kSmall), what << ": " << (w).peak() << " bytes allocated at once"); \
    }                                                                                                          \
  } while (0)

std::vector<uint8_t> hostile(const std::string& name) {
  auto a = read_all(std::string(HPCZ_SOURCE_DIR) + "/tests/hostile/" + name);
  REQUIRE(!a.empty());
  return a;
}

template <class F> int error_of(F&& f, std::string* msg = nullptr) {
  try {
    f();
  } catch (const hpcz::Error& e) {
    if (msg) *msg = e.what();
    return int(e.code());
  }
  return 0;
}

struct NullSink : hpcz::Sink {
  void write(uint64_t, const void*, size_t) override {}
};

constexpr int kCorrupt = int(hpcz::ErrorCode::corrupt_archive), kInvalid = int(hpcz::ErrorCode::invalid_argument);

}  // namespace

// The counter itself: it sees the library's allocations, from any thread.
TEST(unit_alloc_watch_counts) {
  if (!HPCZ_COUNT_ALLOCS) return;
  std::vector<float> x(1 << 20, 1.5f);
  hpcz::Options o;
  o.backend = hpcz::Backend::cpu;
  const auto a = hpcz::compress(x.data(), hpcz::DType::f32, {x.size()}, o);
  AllocWatch w;
  std::vector<uint8_t> out;
  hpcz::decompress(a.data(), a.size(), out, hpcz::Backend::cpu);
  CHECK(w.largest() >= x.size() * 4);
  CHECK(w.peak() >= int64_t(x.size() * 4));
}

// The archives that declare more than their bytes can hold: every entry point refuses each, and
// allocates a few MiB at most (they declare 1 GiB of values, and up to 1 GiB of plain chunks; they took
// 1 to 3 GB before the checks).
TEST(corrupt_hostile_archives_refused_small) {
  if (!HPCZ_COUNT_ALLOCS) std::fprintf(stderr, "  allocation counting off (AddressSanitizer)\n");
  for (const char* name : {"stage_bomb_ratio.hpcz", "stage_bomb_padded.hpcz", "stage_bomb_fast.hpcz",
                           "values_bomb_ratio.hpcz"}) {
    const auto a = hostile(name);
    std::string msg;
    {
      AllocWatch w;
      std::vector<uint8_t> out;
      CHECK_MSG(error_of([&] { hpcz::decompress(a.data(), a.size(), out, hpcz::Backend::cpu); }, &msg) == kCorrupt,
                name << ": " << msg);
      CHECK_SMALL(w, name << " decompress");
    }
    {
      AllocWatch w;
      uint8_t one = 0;
      CHECK_MSG(error_of([&] { hpcz::decompress(a.data(), a.size(), &one, 1, hpcz::Backend::cpu); }, &msg) == kCorrupt,
                name << " (into a buffer): " << msg);
      CHECK_SMALL(w, name << " decompress into a buffer");
    }
    {
      AllocWatch w;
      CHECK_MSG(error_of([&] { hpcz::stage_sizes(a.data(), a.size()); }, &msg) == kCorrupt, name << " stage_sizes: " << msg);
      CHECK_SMALL(w, name << " stage_sizes");
    }
    {
      AllocWatch w;
      auto src = hpcz::memory_source(a.data(), a.size());
      NullSink sink;
      CHECK_MSG(error_of([&] { hpcz::decompress_stream(*src, sink, hpcz::Backend::cpu); }, &msg) == kCorrupt,
                name << " decompress_stream: " << msg);
      CHECK_SMALL(w, name << " decompress_stream");
    }
    if (hpcz::gpu_available()) {  // refused before any GPU work: no pinned or device buffer either
      AllocWatch w;
      std::vector<uint8_t> out;
      CHECK_MSG(error_of([&] { hpcz::decompress(a.data(), a.size(), out, hpcz::Backend::gpu); }, &msg) == kCorrupt,
                name << " on the GPU: " << msg);
      auto src = hpcz::memory_source(a.data(), a.size());
      NullSink sink;
      CHECK_MSG(error_of([&] { hpcz::decompress_stream(*src, sink, hpcz::Backend::gpu); }, &msg) == kCorrupt,
                name << " decompress_stream on the GPU: " << msg);
      CHECK_SMALL(w, name << " on the GPU");
    }
    {
      AllocWatch w;
      uint8_t one = 0;
      const auto st = hpcz::decompress_batch({{a.data(), a.size()}}, {{&one, 1}}, hpcz::Backend::cpu);
      // refused as corrupt, or for its buffer (the batch checks the caller's buffers first)
      CHECK_MSG(st[0].code == kCorrupt || st[0].code == kInvalid, name << " decompress_batch: " << st[0].message);
      CHECK_SMALL(w, name << " decompress_batch");
    }
  }
}

// Which check refuses each: the chunk table (the bytes cannot hold the chunk's values) or a piece's own
// size (it cannot decode to its plain length), before anything is decoded.
TEST(corrupt_hostile_archives_messages) {
  struct Case { const char* name; const char* says; };
  for (Case c : {Case{"stage_bomb_ratio.hpcz", "cannot hold its values"}, Case{"values_bomb_ratio.hpcz", "cannot hold its values"},
                 Case{"stage_bomb_padded.hpcz", "cannot decode to"}, Case{"stage_bomb_fast.hpcz", "cannot decode to"}}) {
    const auto a = hostile(c.name);
    std::string msg;
    std::vector<uint8_t> out;
    CHECK(error_of([&] { hpcz::decompress(a.data(), a.size(), out, hpcz::Backend::cpu); }, &msg) == kCorrupt);
    CHECK_MSG(msg.find(c.says) != std::string::npos, c.name << ": " << msg);
  }
  // The table alone refuses the first two: inspect() (what `hpcz info` reads) already.
  for (const char* name : {"stage_bomb_ratio.hpcz", "values_bomb_ratio.hpcz"}) {
    const auto a = hostile(name);
    CHECK(error_of([&] { hpcz::inspect(a.data(), a.size()); }) == kCorrupt);
  }
}

// An archive whose bytes do justify what it declares (genuine Deflate pieces of zeros, at the most they
// expand): it decodes a plain chunk at a time before finding it malformed, and the 1 GiB array it
// declares is what max_output caps.
TEST(corrupt_hostile_zeros_capped) {
  const auto a = hostile("stage_zeros_ratio.hpcz");
  const auto info = hpcz::inspect(a.data(), a.size());
  REQUIRE(info.n_values * 8 == uint64_t(1) << 30);
  hpcz::DecodeLimits limits;
  limits.max_output = uint64_t(64) << 20;
  std::string msg;
  {
    AllocWatch w;
    std::vector<uint8_t> out;
    CHECK(error_of([&] { hpcz::decompress(a.data(), a.size(), out, hpcz::Backend::cpu, limits); }, &msg) == kInvalid);
    CHECK_MSG(msg.find("max_output") != std::string::npos, msg);
    CHECK_SMALL(w, "zeros decompress with max_output");
    CHECK(out.empty());
  }
  {
    AllocWatch w;
    auto src = hpcz::memory_source(a.data(), a.size());
    NullSink sink;
    CHECK(error_of([&] { hpcz::decompress_stream(*src, sink, hpcz::Backend::cpu, {}, limits); }) == kInvalid);
    CHECK_SMALL(w, "zeros decompress_stream with max_output");
  }
  // Without a cap the stream decodes: corrupt, having held two plain chunks (8 MiB each) and one
  // chunk's values at most.
  auto src = hpcz::memory_source(a.data(), a.size());
  NullSink sink;
  CHECK(error_of([&] { hpcz::decompress_stream(*src, sink, hpcz::Backend::cpu); }, &msg) == kCorrupt);
  CHECK_MSG(msg.find("malformed") != std::string::npos, msg);
  // stage_sizes reads the first bytes of each plain chunk only: the zeros there are malformed.
  AllocWatch w;
  CHECK(error_of([&] { hpcz::stage_sizes(a.data(), a.size()); }) == kCorrupt);
  CHECK_SMALL(w, "zeros stage_sizes");
}

// The fewest bytes a codec accepts for a chunk (CodecOps::chunk_min, what the table is checked against)
// is what its encoder writes for a constant field: the bound is exact, so no genuine archive is refused.
TEST(unit_chunk_min_is_what_a_constant_field_takes) {
  for (hpcz::Codec codec : {hpcz::Codec::fast, hpcz::Codec::ratio, hpcz::Codec::interp})
    for (hpcz::DType t : {hpcz::DType::f32, hpcz::DType::f64}) {
      const std::vector<uint64_t> dims = {3, 1000, 1500};  // ratio: chunks of whole planes; fast: many chunks
      std::vector<uint8_t> zeros(4500000 * hpcz::dtype_size(t), 0);
      hpcz::Options o;
      o.codec = codec;
      o.mode = hpcz::BoundMode::abs;
      o.bound = 0.5;
      o.backend = hpcz::Backend::cpu;
      const auto a = hpcz::compress(zeros.data(), t, dims, o);
      const auto info = hpcz::inspect(a.data(), a.size());
      const auto h = hpcz::pipeline::header_of(info);
      const auto& ops = hpcz::codecs::get(codec);
      for (uint64_t c = 0; c < info.n_chunks; ++c) {
        CHECK(info.chunks[c].size >= ops.chunk_min(h, c));
        if (codec != hpcz::Codec::interp)
          CHECK_MSG(info.chunks[c].size == ops.chunk_min(h, c),
                    ops.name << " chunk " << c << ": " << info.chunks[c].size << " bytes, least " << ops.chunk_min(h, c));
      }
      std::vector<uint8_t> back;
      hpcz::decompress(a.data(), a.size(), back, hpcz::Backend::cpu);
      CHECK(back == zeros);
      o.second_stage = true;  // and with the stage, where the pieces come closest to their expansion bound
      const auto s = hpcz::compress(zeros.data(), t, dims, o);
      back.clear();
      hpcz::decompress(s.data(), s.size(), back, hpcz::Backend::cpu);
      CHECK(back == zeros);
    }
}

// The expansion bounds the pieces are checked against hold for what the encoders write at their most
// compressible (zeros), and a piece that claims more than its bound is refused.
TEST(unit_stage_expansion_bounds) {
  const std::vector<uint8_t> zeros(size_t(1) << 24, 0);
  hpcz::LosslessOptions o;
  o.codec = hpcz::LosslessCodec::deflate;
  const auto z = hpcz::lossless::encode_chunk(zeros.data(), zeros.size(), o);
  if (!z.empty()) CHECK(zeros.size() <= hpcz::lossless::kMaxDeflateExpansion * z.size());
  o.codec = hpcz::LosslessCodec::rle2;
  const auto r = hpcz::lossless::encode_chunk(zeros.data(), zeros.size(), o);
  CHECK(zeros.size() <= hpcz::lossless::kMaxRleValuesPerByte * r.size());
  CHECK(zeros.size() > (hpcz::lossless::kMaxRleValuesPerByte - 8) * r.size());  // the bound is nearly reached
}

// stage_sizes (what `hpcz info` prints) reads only the stage headers and each plain chunk's first bytes,
// yet gives the same split as on the plain archive, and what the stage saved from the declared sizes.
TEST(unit_stage_sizes_without_removing_the_stage) {
  auto fields = real_fields();
  REQUIRE(!fields.empty());
  const Field& f = fields.front();
  for (hpcz::Codec codec : {hpcz::Codec::ratio, hpcz::Codec::interp, hpcz::Codec::fast}) {
    hpcz::Options o;
    o.codec = codec;
    o.bound = 1e-3;
    o.backend = hpcz::Backend::cpu;
    const auto plain = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
    o.second_stage = true;
    const auto staged = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
    const hpcz::StageSizes p = hpcz::stage_sizes(plain.data(), plain.size());
    AllocWatch w;
    const hpcz::StageSizes s = hpcz::stage_sizes(staged.data(), staged.size());
    CHECK_SMALL(w, "stage_sizes of a staged archive");
    CHECK(s.header_and_table == p.header_and_table && s.codebook == p.codebook && s.gap_metadata == p.gap_metadata &&
          s.codes == p.codes && s.outliers == p.outliers && s.exceptions == p.exceptions && s.raw_chunks == p.raw_chunks);
    CHECK(p.second_stage_saved == 0);
    CHECK_MSG(s.second_stage_saved == int64_t(plain.size()) - int64_t(staged.size()),
              s.second_stage_saved << " vs " << int64_t(plain.size()) - int64_t(staged.size()));
    if (codec != hpcz::Codec::fast) CHECK(s.codes > 0);
  }
}

// The stage comes off a run of chunks at a time on the CPU, its pieces in batches: any run and batch
// size gives the same values and the same plain archive.
TEST(roundtrip_stage_runs_and_batches) {
  for (hpcz::Codec codec : {hpcz::Codec::fast, hpcz::Codec::ratio}) {
    // fast: 10 chunks of 64 KiB; ratio (rank 1: chunks of 2^22 values): 3 chunks
    const size_t n = codec == hpcz::Codec::fast ? 9 * 16384 + 77 : (size_t(2) << 22) + 1000;
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = float(std::sin(i * 0.002) * 50 + (i % 97 == 0 ? 1e4 : 0));
    hpcz::Options o;
    o.codec = codec;
    o.bound = 1e-4;
    o.backend = hpcz::Backend::cpu;
    o.second_stage = true;
    const auto a = hpcz::compress(x.data(), hpcz::DType::f32, {n}, o);
    const auto info = hpcz::inspect(a.data(), a.size());
    REQUIRE(info.n_chunks >= 3);
    std::vector<uint8_t> want;
    hpcz::decompress(a.data(), a.size(), want, hpcz::Backend::cpu);
    REQUIRE(want.size() == n * 4);
    const auto plain = hpcz::pipeline::remove_second_stage(a.data(), a.size(), info, hpcz::Backend::cpu);
    for (uint64_t batch : {uint64_t(1), uint64_t(70000), uint64_t(1) << 30}) {
      std::vector<uint8_t> got(want.size(), 0xee);
      hpcz::pipeline::decompress_staged_cpu(a.data(), info, got.data(), batch);
      CHECK_MSG(got == want, hpcz::codecs::get(codec).name << " runs of " << batch << " bytes");
      CHECK(hpcz::pipeline::remove_second_stage(a.data(), a.size(), info, hpcz::Backend::cpu, batch) == plain);
      if (hpcz::gpu_available() && batch > 1)  // the GPU's batches copy in only their own bytes
        CHECK_MSG(hpcz::pipeline::remove_second_stage(a.data(), a.size(), info, hpcz::Backend::gpu, batch) == plain,
                  "GPU batches of " << batch << " bytes");
    }
    if (hpcz::gpu_available()) {
      std::vector<uint8_t> got;
      hpcz::decompress(a.data(), a.size(), got, hpcz::Backend::gpu);
      CHECK(got == want);
    }
    std::vector<uint8_t> via_plain;
    hpcz::decompress(plain.data(), plain.size(), via_plain, hpcz::Backend::cpu);
    CHECK(via_plain == want);
  }
}

// max_output: an archive whose array is larger is refused (invalid_argument) by every decoding call,
// before the output is allocated; one at the limit decodes.
TEST(unit_decode_limits) {
  std::vector<double> x(50000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(i * 0.01);
  hpcz::Options o;
  o.backend = hpcz::Backend::cpu;
  for (bool stage : {false, true}) {
    o.second_stage = stage;
    const auto a = hpcz::compress(x.data(), hpcz::DType::f64, {x.size()}, o);
    const uint64_t need = x.size() * 8;
    hpcz::DecodeLimits at, below;
    at.max_output = need;
    below.max_output = need - 1;
    std::vector<uint8_t> out;
    std::string msg;
    CHECK(error_of([&] { hpcz::decompress(a.data(), a.size(), out, hpcz::Backend::cpu, below); }, &msg) == kInvalid);
    CHECK_MSG(msg.find("max_output") != std::string::npos, msg);
    CHECK(out.empty());
    CHECK(error_of([&] { hpcz::decompress(a.data(), a.size(), out, hpcz::Backend::cpu, at); }) == 0);
    CHECK(out.size() == need);
    std::vector<uint8_t> buf(need);
    CHECK(error_of([&] { hpcz::decompress(a.data(), a.size(), buf.data(), buf.size(), hpcz::Backend::cpu, below); }) == kInvalid);
    CHECK(error_of([&] { hpcz::decompress(a.data(), a.size(), buf.data(), buf.size(), hpcz::Backend::cpu, at); }) == 0);
    CHECK(buf == out);
    auto src = hpcz::memory_source(a.data(), a.size());
    NullSink sink;
    CHECK(error_of([&] { hpcz::decompress_stream(*src, sink, hpcz::Backend::cpu, {}, below); }) == kInvalid);
    CHECK(error_of([&] { hpcz::decompress_stream(*src, sink, hpcz::Backend::cpu, {}, at); }) == 0);
    const auto st = hpcz::decompress_batch({{a.data(), a.size()}, {a.data(), a.size()}},
                                           {{buf.data(), buf.size()}, {buf.data(), buf.size()}}, hpcz::Backend::cpu,
                                           nullptr, below);
    CHECK(st[0].code == kInvalid && st[1].code == kInvalid);
    // The C API: the limit refused as an invalid argument; a buffer too small without a limit, out of space.
    CHECK(hpcz_decompress_limited(a.data(), a.size(), buf.data(), buf.size(), HPCZ_CPU, need - 1) == HPCZ_INVALID_ARGUMENT);
    CHECK(std::string(hpcz_last_error()).find("max_output") != std::string::npos);
    CHECK(hpcz_decompress_limited(a.data(), a.size(), buf.data(), buf.size() / 2, HPCZ_CPU, need - 1) == HPCZ_INVALID_ARGUMENT);
    CHECK(hpcz_decompress_limited(a.data(), a.size(), buf.data(), buf.size() / 2, HPCZ_CPU, 0) == HPCZ_OUT_OF_SPACE);
    CHECK(hpcz_decompress_limited(a.data(), a.size(), buf.data(), buf.size(), HPCZ_CPU, need) == HPCZ_OK);
    CHECK(hpcz_decompress_limited(a.data(), a.size(), buf.data(), buf.size(), HPCZ_CPU, 0) == HPCZ_OK);
    CHECK(buf == out);
  }
}
