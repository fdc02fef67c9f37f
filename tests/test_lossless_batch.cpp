// Chunked lossless streams and the batched decoders: container round trips on real data, the batch
// API's statuses, damaged containers, and (with a GPU) the warp-per-chunk decoders against the CPU's on
// the same chunks, valid and damaged.
#include <cstdio>
#include <map>
#include <random>
#include <tuple>

#include "common.hpp"
#include "common/hd.hpp"
#include "format/checksum.hpp"
#include "lossless/lossless_internal.hpp"
#if HPCZ_TEST_ZLIB
#include <zlib.h>
#endif

using hpcz::LosslessCodec;
using hpcz::LosslessOptions;
using hpcz::LosslessStatus;

uint64_t detail_load_n_chunks(const std::vector<uint8_t>& a);

namespace {

// Integer columns derived from the real fields, as little-endian bytes of `bytes`-wide elements:
// quantized values (run-poor), their differences (run-rich where the field is smooth), raw bytes.
std::vector<std::vector<uint8_t>> int_columns(int bytes, size_t max_values) {
  std::vector<std::vector<uint8_t>> cols;
  for (const auto& f : testutil::real_fields()) {
    if (f.dtype != hpcz::DType::f32) continue;
    const float* x = reinterpret_cast<const float*>(f.bytes.data());
    const size_t n = std::min<uint64_t>(f.n(), max_values);
    std::vector<uint8_t> q(n * bytes), dq(n * bytes);
    int64_t prev = 0;
    for (size_t i = 0; i < n; ++i) {
      const int64_t v = std::isfinite(x[i]) ? int64_t(std::llround(double(x[i]) * 100)) : 0;
      for (int b = 0; b < bytes; ++b) {
        q[i * bytes + b] = uint8_t(uint64_t(v) >> (8 * b));
        dq[i * bytes + b] = uint8_t(uint64_t(v - prev) >> (8 * b));
      }
      prev = v;
    }
    cols.push_back(std::move(q));
    cols.push_back(std::move(dq));
    cols.emplace_back(f.bytes.begin(), f.bytes.begin() + std::min<size_t>(f.bytes.size(), max_values * bytes));
  }
  return cols;
}

// One chunk for the batch API: options, stream, capacity.
struct Chunk {
  LosslessOptions o;
  std::vector<uint8_t> in;
  uint64_t cap;
};

#if HPCZ_TEST_ZLIB
std::vector<uint8_t> zlib_raw(const uint8_t* d, size_t n, int level, int strategy) {
  z_stream z{};
  deflateInit2(&z, level, Z_DEFLATED, -15, 8, strategy);
  std::vector<uint8_t> out(deflateBound(&z, uLong(n)) + 16);
  z.next_in = const_cast<uint8_t*>(d);
  z.avail_in = uInt(n);
  z.next_out = out.data();
  z.avail_out = uInt(out.size());
  deflate(&z, Z_FINISH);
  out.resize(out.size() - z.avail_out);
  deflateEnd(&z);
  return out;
}
#endif

// Valid chunks of every codec, element type and (for Deflate) zlib strategy, from real data; then
// damaged copies of them: truncated, bytes flipped, capacity one short.
std::vector<Chunk> chunk_corpus(size_t max_values, bool damaged) {
  std::vector<Chunk> good;
  const uint32_t kPiece = 16384;
  for (int bytes : {1, 2, 4, 8})
    for (bool sgn : {false, true})
      for (const auto& col : int_columns(bytes, max_values))
        for (LosslessCodec c : {LosslessCodec::rle1, LosslessCodec::rle2}) {
          LosslessOptions o{c, bytes, sgn};
          o.backend = hpcz::Backend::cpu;
          o.chunk_bytes = kPiece;
          // Each piece's ORC stream, as the container codes it (the batch API takes streams; the
          // container stores a piece that codes no smaller as it is, and those are left out there).
          for (uint64_t k = 0; k * kPiece < col.size(); ++k) {
            const uint64_t out = std::min<uint64_t>(kPiece, col.size() - k * kPiece);
            good.push_back({o, hpcz::lossless::encode_chunk(col.data() + k * kPiece, out, o), out});
          }
        }
#if HPCZ_TEST_ZLIB
  std::vector<std::vector<uint8_t>> sources;
  for (const auto& f : testutil::real_fields()) sources.emplace_back(f.bytes.begin(), f.bytes.begin() + std::min<size_t>(f.bytes.size(), 4 * max_values));
  for (const char* text : {"/usr/share/common-licenses/GPL-3", "/usr/include/zlib.h"}) {
    auto t = testutil::read_all(text);
    if (!t.empty()) sources.push_back(t);
  }
  int variant = 0;
  for (const auto& s : sources)
    for (size_t at = 0; at < s.size(); at += 65536, ++variant) {
      const size_t n = std::min<size_t>(65536, s.size() - at);
      const int levels[] = {0, 1, 6, 9, 6, 6, 6};
      const int strategies[] = {Z_DEFAULT_STRATEGY, Z_DEFAULT_STRATEGY, Z_DEFAULT_STRATEGY, Z_DEFAULT_STRATEGY,
                                Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED};
      const int v = variant % 7;
      LosslessOptions o{LosslessCodec::deflate};
      good.push_back({o, zlib_raw(s.data() + at, n, levels[v], strategies[v]), n});
    }
  // Chunks over 1 MiB compressed: the GPU decodes those with 64-bit offsets, the rest with 32-bit ones
  // (warp_decode.cuh, kSmallDeflateInput).
  // (HPCZ_LOSSLESS_BIG=0 leaves them out: racecheck takes minutes over one warp's 1.5 MB.)
  const char* big_env = std::getenv("HPCZ_LOSSLESS_BIG");
  const auto fields = testutil::real_fields();
  if (!(big_env && std::atoi(big_env) == 0) && !fields.empty() && fields[0].bytes.size() >= (1500u << 10)) {
    const std::vector<uint8_t> big(fields[0].bytes.begin(), fields[0].bytes.begin() + (1500u << 10));
    for (int strategy : {Z_HUFFMAN_ONLY, Z_DEFAULT_STRATEGY}) {
      LosslessOptions o{LosslessCodec::deflate};
      auto z = zlib_raw(big.data(), big.size(), 1, strategy);
      if (z.size() > (1u << 20)) good.push_back({o, std::move(z), big.size()});
    }
  }
#endif
  if (!damaged) return good;
  std::vector<Chunk> all = good;
  std::mt19937_64 rng(11);
  for (const Chunk& g : good) {
    if (g.in.empty()) continue;
    Chunk t = g;
    t.in.resize(rng() % t.in.size());
    all.push_back(t);
    Chunk f = g;
    for (int k = 0, flips = 1 + int(rng() % 3); k < flips; ++k) f.in[rng() % f.in.size()] ^= uint8_t(1 + rng() % 255);
    all.push_back(f);
    Chunk s = g;
    s.cap = g.cap ? g.cap - 1 : 0;
    all.push_back(s);
  }
  return all;
}

}  // namespace

uint64_t detail_load_n_chunks(const std::vector<uint8_t>& a) { return hpcz::detail::load_u64_le(a.data() + 24); }

TEST(unit_lossless_container_round_trips) {
  // Whole files through lossless_compress / lossless_decompress on the CPU: small chunks, so there
  // are many; the output must be the chunked formats and decode to the input.
  size_t checked = 0;
  for (int bytes : {1, 2, 4, 8})
    for (const auto& col : int_columns(bytes, 40000))
      for (LosslessCodec c : {LosslessCodec::rle1, LosslessCodec::rle2, LosslessCodec::deflate}) {
        LosslessOptions o{c, bytes, bytes == 2};
        o.backend = hpcz::Backend::cpu;
        o.chunk_bytes = 8192;
#if !HPCZ_TEST_ZLIB
        if (c == LosslessCodec::deflate) continue;
#endif
        const auto a = hpcz::lossless_compress(col.data(), col.size(), o);
        if (c == LosslessCodec::deflate) CHECK(a.size() > 20 && a[0] == 0x1f && a[12] == 'H' && a[13] == 'Z');
        else CHECK(a.size() >= 48 && std::memcmp(a.data(), "HZLC", 4) == 0 && detail_load_n_chunks(a) == (col.size() + 8191) / 8192);
        CHECK_MSG(hpcz::lossless_decompress(a.data(), a.size(), o) == col, "codec " << int(c) << " bytes " << bytes);
        ++checked;
      }
  // Empty input.
  for (LosslessCodec c : {LosslessCodec::rle1, LosslessCodec::rle2}) {
    LosslessOptions o{c, 4};
    o.backend = hpcz::Backend::cpu;
    const auto a = hpcz::lossless_compress(nullptr, 0, o);
    CHECK(hpcz::lossless_decompress(a.data(), a.size(), o).empty());
  }
  std::fprintf(stderr, "  %zu column/codec pairs round-tripped through chunked files\n", checked);
  CHECK(checked > 0);
}

TEST(unit_lossless_batch_statuses) {
  // The batch API on the CPU: valid chunks decode to their recorded size; truncated ones are corrupt;
  // a capacity one short overflows; sizes are 0 for failed chunks.
  const auto corpus = chunk_corpus(20000, false);
  REQUIRE(!corpus.empty());
  std::map<std::tuple<int, int, bool>, std::vector<const Chunk*>> groups;
  for (const Chunk& c : corpus) groups[{int(c.o.codec), c.o.elem_bytes, c.o.is_signed}].push_back(&c);
  size_t ok = 0, short_cap = 0, truncated = 0;
  for (auto& [key, cs] : groups) {
    for (int mode = 0; mode < 3; ++mode) {  // 0 as is, 1 capacity - 1, 2 truncated to half
      const size_t n = cs.size();
      std::vector<std::vector<uint8_t>> ins(n), outs(n);
      std::vector<const uint8_t*> in(n);
      std::vector<uint8_t*> out(n);
      std::vector<uint64_t> in_sizes(n), caps(n), sizes(n, 7);
      std::vector<LosslessStatus> st(n);
      for (size_t i = 0; i < n; ++i) {
        ins[i] = cs[i]->in;
        if (mode == 2) ins[i].resize(ins[i].size() / 2);
        caps[i] = cs[i]->cap - (mode == 1 && cs[i]->cap ? 1 : 0);
        outs[i].resize(caps[i] + 1);
        in[i] = ins[i].data();
        out[i] = outs[i].data();
        in_sizes[i] = ins[i].size();
      }
      hpcz::lossless_decompress_batch(cs[0]->o, in.data(), in_sizes.data(), out.data(), caps.data(), sizes.data(), st.data(), n);
      for (size_t i = 0; i < n; ++i) {
        if (mode == 0) {
          CHECK(st[i] == LosslessStatus::ok && sizes[i] == cs[i]->cap);
          ok += st[i] == LosslessStatus::ok;
        } else if (mode == 1 && cs[i]->cap) {
          CHECK(st[i] == LosslessStatus::output_overflow && sizes[i] == 0);
          short_cap += st[i] == LosslessStatus::output_overflow;
        } else if (mode == 2 && cs[i]->in.size() > 8 && cs[i]->o.codec == LosslessCodec::deflate) {
          // A Deflate stream cut in half always misses its final block.
          CHECK(st[i] == LosslessStatus::corrupt && sizes[i] == 0);
          truncated += st[i] == LosslessStatus::corrupt;
        }
      }
    }
  }
  std::fprintf(stderr, "  %zu chunks decoded, %zu overflows and %zu truncations reported\n", ok, short_cap, truncated);
}

TEST(unit_lossless_container_stores_incompressible_chunks) {
  // Random bytes grow under ORC RLE (v1 by about a third): such chunks are stored as they are
  // (container version 2), so no HZLC file is larger than its input by more than its header and
  // table; files whose every chunk codes smaller stay version 1. Mixed files (random and run-rich
  // chunks) decode on the CPU and, where there is one, the GPU, and damage is still caught.
  std::mt19937_64 rng(11);
  std::vector<uint8_t> noise(400000), mixed(400000);
  for (auto& x : noise) x = uint8_t(rng());
  for (size_t i = 0; i < mixed.size(); ++i) mixed[i] = (i / 65536) % 2 ? uint8_t(rng()) : uint8_t(i / 1000);
  for (LosslessCodec c : {LosslessCodec::rle1, LosslessCodec::rle2})
    for (int bytes : {1, 4}) {
      LosslessOptions o{c, bytes};
      o.backend = hpcz::Backend::cpu;
      const uint64_t chunks = (noise.size() + o.chunk_bytes - 1) / o.chunk_bytes;
      const auto a = hpcz::lossless_compress(noise.data(), noise.size(), o);
      CHECK_MSG(a.size() <= noise.size() + 48 + 16 * chunks, "codec " << int(c) << " bytes " << bytes << ": " << a.size());
      CHECK(a[4] == 2);
      CHECK(hpcz::lossless_decompress(a.data(), a.size(), o) == noise);
      const auto m = hpcz::lossless_compress(mixed.data(), mixed.size(), o);
      CHECK(m[4] == 2 && m.size() < mixed.size());
      CHECK(hpcz::lossless_decompress(m.data(), m.size(), o) == mixed);
      if (hpcz::gpu_available()) {
        LosslessOptions g = o;
        g.backend = hpcz::Backend::gpu;
        CHECK_MSG(hpcz::lossless_decompress(m.data(), m.size(), g) == mixed, "GPU, codec " << int(c));
      }
      auto b = m;
      b[b.size() - 100] ^= 0x40;  // inside the last chunk, a stored one
      bool caught = false;
      try {
        hpcz::lossless_decompress(b.data(), b.size(), o);
      } catch (const hpcz::Error& e) {
        caught = e.code() == hpcz::ErrorCode::corrupt_archive;
      }
      CHECK(caught);
    }
  // Run-rich data only: version 1, as before.
  std::vector<uint8_t> runs(200000);
  for (size_t i = 0; i < runs.size(); ++i) runs[i] = uint8_t(i / 5000);
  LosslessOptions o{LosslessCodec::rle1, 1};
  o.backend = hpcz::Backend::cpu;
  const auto a = hpcz::lossless_compress(runs.data(), runs.size(), o);
  CHECK(a[4] == 1 && hpcz::lossless_decompress(a.data(), a.size(), o) == runs);
}

TEST(unit_lossless_damaged_containers) {
  // Truncations and byte flips anywhere in a chunked file: an Error (or, for a flip the checksums
  // cannot see, such as in a gzip MTIME field, the right output), never a crash.
  auto col = int_columns(4, 20000);
  REQUIRE(!col.empty());
  std::mt19937_64 rng(5);
  const int trials = std::getenv("HPCZ_FLIP_TRIALS") ? std::atoi(std::getenv("HPCZ_FLIP_TRIALS")) : 300;
  for (LosslessCodec c : {LosslessCodec::rle1, LosslessCodec::rle2, LosslessCodec::deflate}) {
#if !HPCZ_TEST_ZLIB
    if (c == LosslessCodec::deflate) continue;
#endif
    LosslessOptions o{c, 4};
    o.backend = hpcz::Backend::cpu;
    o.chunk_bytes = 4096;
    const auto a = hpcz::lossless_compress(col[0].data(), col[0].size(), o);
    int errors = 0, same = 0;
    for (int k = 0; k < trials; ++k) {
      auto b = a;
      if (k % 2) b.resize(rng() % b.size());
      else b[rng() % b.size()] ^= uint8_t(1 + rng() % 255);
      try {
        same += hpcz::lossless_decompress(b.data(), b.size(), o) == col[0];
      } catch (const hpcz::Error& e) {
        CHECK(e.code() == hpcz::ErrorCode::corrupt_archive || e.code() == hpcz::ErrorCode::unsupported);
        ++errors;
      }
    }
    CHECK_MSG(errors + same == trials, "codec " << int(c) << ": a damaged file decoded to different data");
    std::fprintf(stderr, "  codec %d: %d of %d damaged files rejected, %d decoded right\n", int(c), errors, trials, same);
  }
}

// The batched CPU decoder over chunks of `blob` laid out by `refs` into `out` (sized by the caller).
static void decode_chunks_cpu(const LosslessOptions& o, const std::vector<uint8_t>& blob,
                              const std::vector<hpcz::lossless::ChunkRef>& refs, std::vector<uint8_t>& out,
                              std::vector<uint64_t>& sizes, std::vector<LosslessStatus>& status) {
  const size_t n = refs.size();
  std::vector<const uint8_t*> in(n);
  std::vector<uint8_t*> at(n);
  std::vector<uint64_t> in_sizes(n), caps(n);
  for (size_t i = 0; i < n; ++i) {
    in[i] = blob.data() + refs[i].in_offset;
    in_sizes[i] = refs[i].in_size;
    at[i] = out.data() + refs[i].out_offset;
    caps[i] = refs[i].out_capacity;
  }
  sizes.assign(n, 0);
  status.assign(n, LosslessStatus::corrupt);
  hpcz::lossless_decompress_batch(o, in.data(), in_sizes.data(), at.data(), caps.data(), sizes.data(), status.data(), n);
}

TEST(roundtrip_lossless_gpu_matches_cpu) {
  if (!hpcz::gpu_available()) {
    std::fprintf(stderr, "  no GPU: skipped\n");
    return;
  }
  // Every chunk, valid or damaged, decoded by the warp-per-chunk kernels and by the CPU: the same
  // status, size and bytes.
  const char* env = std::getenv("HPCZ_LOSSLESS_CORPUS");  // values per column (smaller under the sanitizers)
  const auto corpus = chunk_corpus(env ? size_t(std::atol(env)) : 200000, true);
  std::map<std::tuple<int, int, bool>, std::vector<const Chunk*>> groups;
  for (const Chunk& c : corpus) groups[{int(c.o.codec), c.o.elem_bytes, c.o.is_signed}].push_back(&c);
  size_t total = 0, ok = 0, mismatches = 0, big = 0;
  for (const Chunk& c : corpus) big += c.o.codec == LosslessCodec::deflate && c.in.size() > (1u << 20);
  for (auto& [key, cs] : groups) {
    const size_t n = cs.size();
    std::vector<uint8_t> blob, gpu_out;
    std::vector<hpcz::lossless::ChunkRef> refs(n);
    uint64_t out_total = 0;
    for (size_t i = 0; i < n; ++i) {
      refs[i] = {blob.size(), cs[i]->in.size(), out_total, cs[i]->cap};
      blob.insert(blob.end(), cs[i]->in.begin(), cs[i]->in.end());
      out_total += cs[i]->cap;
    }
    gpu_out.assign(out_total, 0xAA);
    std::vector<uint64_t> gsizes;
    std::vector<LosslessStatus> gst;
    hpcz::LosslessOptions o = cs[0]->o;
    hpcz::lossless::decode_chunks_gpu(o, blob.data(), blob.size(), refs, gpu_out.data(), gpu_out.size(), gsizes, gst);
    std::vector<uint8_t> cpu_out(out_total, 0x55);
    std::vector<uint64_t> csizes;
    std::vector<LosslessStatus> cst;
    decode_chunks_cpu(o, blob, refs, cpu_out, csizes, cst);
    for (size_t i = 0; i < n; ++i) {
      bool same = gst[i] == cst[i] && gsizes[i] == csizes[i];
      if (same && cst[i] == LosslessStatus::ok)
        same = std::memcmp(gpu_out.data() + refs[i].out_offset, cpu_out.data() + refs[i].out_offset, csizes[i]) == 0;
      if (!same && mismatches < 10)
        std::fprintf(stderr, "  mismatch: codec %d elem %d chunk %zu: gpu status %d size %llu, cpu status %d size %llu\n",
                     int(o.codec), o.elem_bytes, i, int(gst[i]), (unsigned long long)gsizes[i], int(cst[i]),
                     (unsigned long long)csizes[i]);
      mismatches += !same;
      ok += cst[i] == LosslessStatus::ok;
    }
    total += n;
  }
  std::fprintf(stderr, "  %zu chunks (%zu decode, %zu Deflate chunks over 1 MiB), GPU == CPU on %zu\n", total, ok, big,
               total - mismatches);
  CHECK(mismatches == 0);
  CHECK(total > 0);
  const char* big_env = std::getenv("HPCZ_LOSSLESS_BIG");
  CHECK(big > 0 || testutil::real_fields().empty() || (big_env && std::atoi(big_env) == 0));  // the 64-bit path ran
}

TEST(roundtrip_lossless_gpu_largest_first) {
  if (!hpcz::gpu_available()) {
    std::fprintf(stderr, "  no GPU: skipped\n");
    return;
  }
  // Batches big enough to be decoded largest chunk first (valid and damaged chunks of the corpus, of
  // Deflate and of two RLE types, repeated in a shuffled order to 1,536): the same sizes, statuses and
  // bytes as in index order and on the CPU.
  const auto corpus = chunk_corpus(20000, true);
  const size_t n = 1536;
  std::mt19937_64 rng(11);
  for (const auto& [codec, elem, sgn] : {std::tuple{LosslessCodec::deflate, 1, false},
                                         std::tuple{LosslessCodec::rle1, 4, true},
                                         std::tuple{LosslessCodec::rle2, 8, false}}) {
    std::vector<const Chunk*> pool;
    for (const Chunk& c : corpus)
      if (c.o.codec == codec && (codec == LosslessCodec::deflate || (c.o.elem_bytes == elem && c.o.is_signed == sgn)) &&
          c.in.size() <= (1u << 20))
        pool.push_back(&c);
    REQUIRE(!pool.empty());
    const LosslessOptions o = pool[0]->o;
    REQUIRE(hpcz::lossless_decompress_batch_workspace_size(o, n) == n * 4);
    CHECK(hpcz::lossless_decompress_batch_workspace_size(o, 8) == 0);  // small batches: index order, no workspace
    std::vector<uint8_t> blob;
    std::vector<hpcz::lossless::ChunkRef> refs(n);
    uint64_t out_total = 0;
    for (size_t i = 0; i < n; ++i) {
      const Chunk* c = pool[rng() % pool.size()];
      refs[i] = {blob.size(), c->in.size(), out_total, c->cap};
      blob.insert(blob.end(), c->in.begin(), c->in.end());
      out_total += c->cap;
    }
    std::vector<uint8_t> sorted_out(out_total, 0xAA), plain_out(out_total, 0x55);
    std::vector<uint64_t> ssizes, psizes, csizes;
    std::vector<LosslessStatus> sst, pst, cst;
    hpcz::lossless::decode_chunks_gpu(o, blob.data(), blob.size(), refs, sorted_out.data(), out_total, ssizes, sst, true);
    hpcz::lossless::decode_chunks_gpu(o, blob.data(), blob.size(), refs, plain_out.data(), out_total, psizes, pst, false);
    std::vector<uint8_t> cpu_out(out_total, 0x33);
    decode_chunks_cpu(o, blob, refs, cpu_out, csizes, cst);
    size_t ok = 0, same = 0;
    for (size_t i = 0; i < n; ++i) {
      bool eq = sst[i] == cst[i] && pst[i] == cst[i] && ssizes[i] == csizes[i] && psizes[i] == csizes[i];
      if (eq && cst[i] == LosslessStatus::ok) {
        const uint8_t* c = cpu_out.data() + refs[i].out_offset;
        eq = std::memcmp(sorted_out.data() + refs[i].out_offset, c, csizes[i]) == 0 &&
             std::memcmp(plain_out.data() + refs[i].out_offset, c, csizes[i]) == 0;
        ++ok;
      }
      same += eq;
    }
    std::fprintf(stderr, "  codec %d elem %d: %zu chunks (%zu decode), largest first == index order == CPU on %zu\n",
                 int(codec), elem, n, ok, same);
    CHECK(same == n);
    CHECK(ok > 0 && ok < n);  // both valid and damaged chunks were in the batch
  }
}

TEST(unit_lossless_size_claims_are_bounded) {
  // Found by fuzz/run.sh: files whose recorded decoded sizes are huge must be refused before anything
  // is allocated for them (a clean Error, not gigabytes of memory or std::bad_alloc).
  LosslessOptions d{LosslessCodec::deflate};
  d.backend = hpcz::Backend::cpu;
  // Ten gzip members with the HZ size field, each an empty fixed block claiming 4 GiB of output.
  const uint8_t member[30] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 255, 8, 0, 'H', 'Z', 4, 0, 30, 0, 0, 0,
                              3, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
  std::vector<uint8_t> gz;
  for (int k = 0; k < 10; ++k) gz.insert(gz.end(), member, member + 30);
  bool threw = false;
  try { hpcz::lossless_decompress(gz.data(), gz.size(), d); } catch (const hpcz::Error& e) { threw = e.code() == hpcz::ErrorCode::corrupt_archive; }
  CHECK(threw);
  // An HZLC container with valid checksums that claims 2^32 - 1 eight-byte elements in one small chunk.
  LosslessOptions r{LosslessCodec::rle2, 8};
  r.backend = hpcz::Backend::cpu;
  const std::vector<uint8_t> eight(64, 1);
  auto a = hpcz::lossless_compress(eight.data(), eight.size(), r);
  hpcz::detail::store_u32_le(&a[12], 0xffffffffu);           // elements per chunk
  hpcz::detail::store_u64_le(&a[16], 0xffffffffull);         // elements: still one chunk
  hpcz::detail::store_u32_le(&a[44], hpcz::format::checksum(a.data(), 44));
  threw = false;
  try { hpcz::lossless_decompress(a.data(), a.size(), r); } catch (const hpcz::Error& e) { threw = e.code() == hpcz::ErrorCode::corrupt_archive; }
  CHECK(threw);
}

TEST(unit_lossless_gzip_member_groups) {
  // Every member carries its index and the file's member count: a Deflate file cut exactly at a member
  // boundary (a valid, shorter gzip file) is an error, files joined with cat still read, and files
  // written before the count existed (golden, size-only index) still decode.
  auto raw = testutil::read_all(harness::data_dir_bundled() + "/climate-ncar_csm_b003_ts_100x64x128_f32.bin");
  REQUIRE(raw.size() >= 12288);
  const std::vector<uint8_t> first(raw.begin(), raw.begin() + 12288);
  LosslessOptions o{LosslessCodec::deflate, 4};
  o.backend = hpcz::Backend::cpu;
  o.chunk_bytes = 4096;
  auto old = testutil::read_all(std::string(HPCZ_SOURCE_DIR) + "/tests/golden/lossless_deflate_hz_size_only_v1.gz");
  REQUIRE(!old.empty());
  CHECK(hpcz::lossless_decompress(old.data(), old.size(), o) == first);
#if HPCZ_TEST_ZLIB
  const std::vector<uint8_t> part(raw.begin(), raw.begin() + 40000);
  const auto a = hpcz::lossless_compress(part.data(), part.size(), o);
  std::vector<size_t> ends;  // member boundaries, from the members' size fields
  for (size_t at = 0; at < a.size(); at += hpcz::detail::load_u32_le(a.data() + at + 16)) ends.push_back(at);
  CHECK(ends.size() == 10);
  int refused = 0;
  for (size_t k = 1; k < ends.size(); ++k) {
    try {
      hpcz::lossless_decompress(a.data(), ends[k], o);
    } catch (const hpcz::Error& e) {
      refused += e.code() == hpcz::ErrorCode::corrupt_archive;
    }
  }
  CHECK_MSG(refused == int(ends.size()) - 1, refused << " of " << ends.size() - 1 << " cuts at member boundaries refused");
  // Dropping a middle member leaves a gap in the indices.
  std::vector<uint8_t> gap(a.begin(), a.begin() + ends[3]);
  gap.insert(gap.end(), a.begin() + ends[4], a.end());
  bool gap_refused = false;
  try {
    hpcz::lossless_decompress(gap.data(), gap.size(), o);
  } catch (const hpcz::Error& e) {
    gap_refused = e.code() == hpcz::ErrorCode::corrupt_archive;
  }
  CHECK(gap_refused);
  // cat a.gz old.gz: two complete groups (the second of size-only members) read as one stream.
  std::vector<uint8_t> both = a, expect = part;
  both.insert(both.end(), old.begin(), old.end());
  expect.insert(expect.end(), first.begin(), first.end());
  CHECK(hpcz::lossless_decompress(both.data(), both.size(), o) == expect);
  std::vector<uint8_t> twice = a;
  twice.insert(twice.end(), a.begin(), a.end());
  std::vector<uint8_t> expect2 = part;
  expect2.insert(expect2.end(), part.begin(), part.end());
  CHECK(hpcz::lossless_decompress(twice.data(), twice.size(), o) == expect2);
#endif
}
