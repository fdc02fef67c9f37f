// The ratio mode's Huffman layer: codebook properties, the bit stream and gap array, the decoder on
// adversarial streams, and the Lorenzo inverse.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <queue>
#include <random>

#include <chrono>

#include "common.hpp"
#include "codecs/ratio_class/engine_gpu.hpp"
#include "huffman/codebook.hpp"
#include "huffman/stream.hpp"
#include "predict/lorenzo.hpp"
#include "codecs/ratio_class/dual_plan.hpp"
#include "codecs/ratio_class/recon_plan.hpp"
#include "codecs/ratio_class/chunk.hpp"

using namespace hpcz;

namespace {

// Plain (unlimited) Huffman cost, sum count * length, by the textbook two-queue merge on a heap.
uint64_t plain_huffman_bits(const std::vector<uint32_t>& hist) {
  std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<uint64_t>> pq;
  for (uint32_t c : hist)
    if (c) pq.push(c);
  if (pq.size() == 1) return pq.top();
  uint64_t cost = 0;
  while (pq.size() > 1) {
    uint64_t a = pq.top(); pq.pop();
    uint64_t b = pq.top(); pq.pop();
    cost += a + b;
    pq.push(a + b);
  }
  return cost;
}

// Checks a book: lengths within the limit, Kraft sum (exactly 1 with two or more symbols), codes
// prefix-free, and the decode tables give back every symbol. Returns the coded size of hist.
uint64_t check_book(const std::vector<uint32_t>& hist, const ratio::Book& b, const char* what) {
  const uint32_t nsym = uint32_t(hist.size());
  uint64_t kraft = 0, bits = 0;
  int used = 0;
  for (uint32_t s = 0; s < nsym; ++s) {
    CHECK_MSG((hist[s] == 0) == (b.len[s] == 0), what << ": symbol " << s << " count " << hist[s] << " length "
                                                      << int(b.len[s]));
    CHECK_MSG(b.len[s] <= huffman::kMaxLen, what << ": length " << int(b.len[s]));
    if (b.len[s]) {
      kraft += uint64_t(1) << (huffman::kMaxLen - b.len[s]);
      bits += uint64_t(hist[s]) * b.len[s];
      ++used;
    }
  }
  if (used >= 2) CHECK_MSG(kraft == (uint64_t(1) << huffman::kMaxLen), what << ": Kraft sum " << kraft);
  if (used == 1) CHECK_MSG(kraft == (uint64_t(1) << (huffman::kMaxLen - 1)), what << ": one symbol, one bit");
  // Prefix-free: no code is a prefix of another (sorted by left-aligned value, neighbours suffice).
  std::vector<std::pair<uint32_t, uint32_t>> codes;  // (left-aligned code, length)
  for (uint32_t s = 0; s < nsym; ++s)
    if (b.len[s]) codes.push_back({b.code[s] << (huffman::kMaxLen - b.len[s]), b.len[s]});
  std::sort(codes.begin(), codes.end());
  for (size_t k = 1; k < codes.size(); ++k) {
    const uint32_t span = 1u << (huffman::kMaxLen - codes[k - 1].second);
    CHECK_MSG(codes[k].first >= codes[k - 1].first + span, what << ": codes overlap");
  }
  // Decode tables: every codeword, with any bits after it, decodes to its symbol.
  auto t = std::make_unique<huffman::DecodeTables>();
  CHECK(huffman::build_decode_tables(b.len.data(), nsym, *t));
  std::mt19937 rng(1);
  for (uint32_t s = 0; s < nsym; ++s) {
    if (!b.len[s]) continue;
    const uint32_t tail = rng() & ((1u << (huffman::kMaxLen - b.len[s])) - 1);
    const uint32_t e = huffman::decode_entry(t->fast, t->ranges, t->sorted, b.code[s] << (huffman::kMaxLen - b.len[s]) | tail);
    CHECK_MSG(huffman::entry_symbol(e) == s && huffman::entry_length(e) == b.len[s], what << ": symbol " << s);
  }
  // The long codes' table (the GPU decoder's) gives decode_entry's entry for every window.
  const uint32_t base = huffman::long_base(t->ranges), n = huffman::long_windows(t->ranges);
  CHECK(base <= (1u << huffman::kMaxLen) && n <= huffman::kLongCap);
  std::vector<uint16_t> longs(n);
  for (uint32_t i = 0; i < n; ++i) longs[i] = huffman::long_entry(t->ranges, t->sorted, base + i);
  uint32_t mismatches = 0;
  for (uint32_t w = 0; w < (1u << huffman::kMaxLen); ++w)
    mismatches += huffman::decode_entry_long(t->fast, longs.data(), base, n, t->ranges, t->sorted, w) !=
                  huffman::decode_entry(t->fast, t->ranges, t->sorted, w);
  CHECK_MSG(mismatches == 0, what << ": the long table differs from the walk on " << mismatches << " windows");
  return bits;
}

std::vector<uint32_t> fibonacci_hist(uint32_t nsym, uint32_t n) {  // forces depths far past the limit
  std::vector<uint32_t> h(nsym, 0);
  uint64_t a = 1, b = 1;
  for (uint32_t s = 0; s < n && s < nsym; ++s) {
    h[s] = uint32_t(std::min<uint64_t>(a, 1u << 25));
    uint64_t c = a + b;
    a = b;
    b = c;
  }
  return h;
}

// Every coded chunk of the real fields compressed by the CPU ratio mode at rel 1e-2, 1e-3, 1e-4:
// fn(field, rel, chunk bytes, layout, code lengths, decode tables).
template <class F>
void for_each_coded_chunk(F&& fn) {
  for (const auto& f : testutil::real_fields())
    for (double rel : {1e-2, 1e-3, 1e-4}) {
      hpcz::Options o;
      o.mode = hpcz::BoundMode::rel;
      o.bound = rel;
      o.codec = hpcz::Codec::ratio;
      o.backend = hpcz::Backend::cpu;
      const auto a = hpcz::compress(f.bytes.data(), f.dtype, f.dims, o);
      const auto info = hpcz::inspect(a.data(), a.size());
      const uint32_t vb = uint32_t(hpcz::dtype_size(f.dtype)), nsym = 2 * o.radius;
      for (const auto& ch : info.chunks) {
        const uint8_t* c = a.data() + ch.offset;
        if (detail::load_u32_le(c + 12) != ratio::kKindCoded) continue;  // raw chunk
        const ratio::ChunkLayout L = ratio::chunk_layout(nsym, detail::load_u32_le(c), detail::load_u32_le(c + 4),
                                                         detail::load_u32_le(c + 8), vb);
        std::vector<uint8_t> len(nsym);
        auto t = std::make_unique<huffman::DecodeTables>();
        REQUIRE(ratio::chunk_tables(c, L, nsym, len.data(), *t));
        fn(f, rel, c, L, len, *t);
      }
    }
}

}  // namespace

TEST(unit_huffman_codebook_properties) {
  std::mt19937 rng(5);
  // Degenerate: one symbol, two symbols.
  for (uint32_t only : {0u, 7u, 1023u}) {
    std::vector<uint32_t> h(1024, 0);
    h[only] = 1000;
    auto b = ratio::build_book(h.data(), 1024);
    check_book(h, b, "one symbol");
    CHECK(b.len[only] == 1);
  }
  {
    std::vector<uint32_t> h(1024, 0);
    h[3] = 1;
    h[900] = 1000000;
    auto b = ratio::build_book(h.data(), 1024);
    check_book(h, b, "two symbols");
    CHECK(b.len[3] == 1 && b.len[900] == 1);
  }
  // Unlimited Huffman is optimal; when its depth stays within the limit the book must match its cost.
  for (int trial = 0; trial < 50; ++trial) {
    const uint32_t nsym = trial % 2 ? 1024 : 4096;
    std::vector<uint32_t> h(nsym, 0);
    std::geometric_distribution<int> geo(0.05 + 0.01 * (trial % 10));
    for (int k = 0; k < 100000; ++k) {  // a two-sided geometric law around the centre, like quant codes
      const int d = geo(rng) * (rng() % 2 ? 1 : -1);
      const int s = int(nsym / 2) + d;
      if (s > 0 && s < int(nsym)) ++h[s];
    }
    auto b = ratio::build_book(h.data(), nsym);
    const uint64_t bits = check_book(h, b, "geometric");
    const uint64_t plain = plain_huffman_bits(h);
    CHECK(bits >= plain);
    int maxlen = 0;
    for (auto l : b.len) maxlen = std::max(maxlen, int(l));
    if (maxlen < huffman::kMaxLen) CHECK_MSG(bits == plain, "book costs " << bits << " bits, Huffman " << plain);
    else CHECK(double(bits) <= double(plain) * 1.01);
  }
  // Lengths forced past the limit (Fibonacci counts), and every symbol of a 4096 alphabet used.
  for (uint32_t n : {20u, 40u, 64u}) {
    auto h = fibonacci_hist(1024, n);
    auto b = ratio::build_book(h.data(), 1024);
    check_book(h, b, "fibonacci");
    CHECK(*std::max_element(b.len.begin(), b.len.end()) <= huffman::kMaxLen);
  }
  {
    std::vector<uint32_t> h(4096);
    for (auto& c : h) c = 1 + rng() % 3;
    auto b = ratio::build_book(h.data(), 4096);
    check_book(h, b, "4096 used symbols");
    CHECK(*std::max_element(b.len.begin(), b.len.end()) <= huffman::kMaxLen);
  }
  // Deterministic ties: equal counts get lengths by symbol order, the same on every run.
  std::vector<uint32_t> h(1024, 0);
  for (int s = 100; s < 160; ++s) h[s] = 7;
  auto b1 = ratio::build_book(h.data(), 1024), b2 = ratio::build_book(h.data(), 1024);
  CHECK(b1.len == b2.len && b1.code == b2.code);
}

TEST(unit_huffman_corrupt_books_rejected) {
  auto t = std::make_unique<huffman::DecodeTables>();
  std::vector<uint8_t> len(1024, 0);
  CHECK(!huffman::build_decode_tables(len.data(), 1024, *t));  // no symbol
  len[0] = len[1] = len[2] = 1;                                 // oversubscribed
  CHECK(!huffman::build_decode_tables(len.data(), 1024, *t));
  len.assign(1024, 0);
  len[5] = 15;  // too long
  CHECK(!huffman::build_decode_tables(len.data(), 1024, *t));
  len.assign(1024, 0);
  len[5] = 1;  // incomplete but valid: the other half of the code space decodes to nothing
  CHECK(huffman::build_decode_tables(len.data(), 1024, *t));
  CHECK(huffman::entry_length(huffman::decode_entry(t->fast, t->ranges, t->sorted, 0)) == 1);
  CHECK(huffman::decode_entry(t->fast, t->ranges, t->sorted, 1u << (huffman::kMaxLen - 1)) == 0);
}

TEST(unit_huffman_stream_from_every_subsequence) {
  // A chunk coded by the CPU encoder: decoding from each subsequence's gap lands exactly on the next
  // subsequence's start and, chained, gives back every symbol. Maximal-length codes included.
  std::mt19937 rng(11);
  for (int kind = 0; kind < 3; ++kind) {
    std::vector<float> v(300000);
    for (size_t i = 0; i < v.size(); ++i) {
      if (kind == 0) v[i] = float(std::sin(i * 0.001) * 100 + (rng() % 1000) * 1e-3);  // smooth + noise
      if (kind == 1) v[i] = float(int(rng() % 7) - 3);                                // few symbols
      if (kind == 2) {  // residual k with probability 2^-(k+1): code lengths grow to the limit
        int k = 0;
        while (k < 40 && (rng() & 1)) ++k;
        const float prev = i ? v[i - 1] : 0.f;
        v[i] = prev + float(rng() % 2 ? k : -k);
        if (std::fabs(v[i]) > 1e6f) v[i] = 0;
      }
    }
    hpcz::Options o;
    o.mode = hpcz::BoundMode::abs;
    o.bound = 0.5;
    o.codec = hpcz::Codec::ratio;
    o.backend = hpcz::Backend::cpu;
    auto a = hpcz::compress(v.data(), hpcz::DType::f32, {v.size()}, o);
    auto info = hpcz::inspect(a.data(), a.size());
    const uint8_t* c = a.data() + info.chunks[0].offset;
    ratio::ChunkLayout L;
    if (ratio::is_raw_chunk(c, info.chunks[0].size, uint32_t(v.size()), 4)) continue;
    REQUIRE(ratio::parse_chunk(c, info.chunks[0].size, uint32_t(v.size()), 1024, 4, L));
    std::vector<uint8_t> len(1024);
    auto t = std::make_unique<huffman::DecodeTables>();
    REQUIRE(ratio::chunk_tables(c, L, 1024, len.data(), *t));
    const uint32_t nw = huffman::n_words(L.total_bits), nsub = huffman::n_subsequences(L.total_bits);
    auto word = [&](uint32_t k) { return k < nw ? detail::load_u32_le(c + L.bits + 4 * k) : 0u; };
    uint64_t symbols = 0, count_total = 0;
    int maxlen = *std::max_element(len.begin(), len.end());
    for (uint32_t s = 0; s < nsub; ++s) {
      const uint32_t from = huffman::subsequence_start(c + L.gaps, s, L.total_bits);
      const uint32_t limit = std::min<uint64_t>(uint64_t(s + 1) * huffman::kSubBits, L.total_bits);
      const uint32_t end = huffman::decode_run(word, L.total_bits, t->fast, t->ranges, t->sorted, from, limit,
                                               [&](uint32_t) { ++symbols; });
      const uint32_t next = s + 1 < nsub ? huffman::subsequence_start(c + L.gaps, s + 1, L.total_bits) : L.total_bits;
      uint32_t counted = 0;
      const uint32_t end2 = huffman::count_run(word, L.total_bits, t->fast, t->multi, t->ranges, t->sorted, from, limit,
                                               counted);
      CHECK_MSG(end2 == end, "count_run ends at " << end2 << ", decode_run at " << end);
      count_total += counted;
      CHECK_MSG(end == next, "subsequence " << s << " ends at " << end << ", next starts at " << next);
    }
    CHECK(symbols == v.size());
    CHECK(count_total == v.size());
    std::fprintf(stderr, "  stream kind %d: %u subsequences, longest code %d bits\n", kind, nsub, maxlen);
    if (kind == 2) CHECK(maxlen >= 12);
  }
}

TEST(unit_lorenzo_inverse_is_exact) {
  // delta = (1 - Sx)(1 - Sy)(1 - Sz) q and three prefix sums give q back, mod 2^32, in every rank.
  std::mt19937 rng(2);
  for (auto dims : {std::vector<uint64_t>{1000}, std::vector<uint64_t>{37, 53}, std::vector<uint64_t>{9, 11, 13},
                    std::vector<uint64_t>{3, 4, 5, 6}}) {
    auto shape = predict::working_shape(dims.data(), int(dims.size()));
    auto c = predict::chunk_shape(shape, 0);
    const uint32_t n = c.count(), cx = c.cx, plane = c.cx * c.cy;
    std::vector<uint32_t> q(n), d(n);
    for (auto& x : q) x = rng();
    uint32_t i = 0;
    auto back = [&](uint32_t dz, uint32_t dy, uint32_t dx) { return q[i - dz * plane - dy * cx - dx]; };
    for (uint32_t z = 0; z < c.cz; ++z)
      for (uint32_t y = 0; y < c.cy; ++y)
        for (uint32_t x = 0; x < c.cx; ++x, ++i) d[i] = predict::lorenzo_delta(z > 0, y > 0, x > 0, back);
    // The encoder's row-by-row form gives the same residuals.
    std::vector<uint32_t> rows(n, 0), zero(cx, 0), seen;
    predict::lorenzo_rows(c, q.data(), zero.data(), [&](uint32_t k, uint32_t v) { rows[k] = v; seen.push_back(k); });
    CHECK(rows == d);
    CHECK(seen.size() == n && std::is_sorted(seen.begin(), seen.end()));
    predict::inverse_lorenzo(c, d.data());
    CHECK(d == q);
  }
}

TEST(unit_ratio_dual_plan_covers_the_prediction) {
  // The fused GPU kernel keeps the last `ring` row differences and starts each block `history` values
  // early; a prediction reads a plane and a row back (lorenzo_yz), and the row difference one more.
  // Its plan must cover that, hold a step on top, and tile every chunk; shapes it cannot hold fall
  // back to the two-kernel path.
  using hpcz::ratio::kDualStep;
  using hpcz::ratio::kDualMaxRing;
  for (auto dims : {std::vector<uint64_t>{5000000}, std::vector<uint64_t>{384, 384}, std::vector<uint64_t>{7, 100000},
                    std::vector<uint64_t>{744, 33, 49}, std::vector<uint64_t>{132, 73, 144},
                    std::vector<uint64_t>{20, 180, 360}, std::vector<uint64_t>{91, 91, 91},
                    std::vector<uint64_t>{4, 14, 48, 48}, std::vector<uint64_t>{3, 1, 1}}) {
    const auto shape = predict::working_shape(dims.data(), int(dims.size()));
    const uint64_t n_chunks = hpcz::detail::div_ceil(shape.slabs, shape.chunk_slabs);
    const auto full = predict::chunk_shape(shape, 0);
    const auto plan = hpcz::ratio::dual_plan(full, n_chunks);
    const uint64_t plane = uint64_t(full.cy) * full.cx;
    const uint64_t reach = (full.cz > 1 ? plane + full.cx : full.cy > 1 ? full.cx : 0) + 1;
    uint64_t need = 1;
    while (need < reach + kDualStep) need *= 2;
    CHECK_MSG((plan.history != 0) == (need <= kDualMaxRing), "fused exactly when the ring fits: " << dims.size() << "-D");
    if (!plan.history) continue;
    CHECK(plan.history >= reach);
    CHECK((plan.ring & (plan.ring - 1)) == 0 && plan.ring >= plan.history + kDualStep && plan.ring <= kDualMaxRing);
    CHECK(plan.range % kDualStep == 0 && plan.range >= 8 * uint64_t(plan.history));
    for (uint64_t c : {uint64_t(0), n_chunks - 1}) {  // every chunk, the short last one too, is tiled
      const uint64_t count = predict::chunk_shape(shape, c).count();
      CHECK(uint64_t(plan.blocks_per_chunk) * plan.range >= count);
    }
  }
  // Levitus' planes (180 x 360) are too large for the ring; era5's (33 x 49) are not.
  const uint64_t lev[] = {20, 180, 360}, era5[] = {744, 33, 49};
  CHECK(hpcz::ratio::dual_plan(predict::chunk_shape(predict::working_shape(lev, 3), 0), 1).history == 0);
  CHECK(hpcz::ratio::dual_plan(predict::chunk_shape(predict::working_shape(era5, 3), 0), 1).history != 0);
}

TEST(unit_ratio_recon_plan_tiles_the_chunks) {
  // The fused reconstruction with look-back: a block holds `planes` whole planes (kReconMinPlanes at
  // least, within its shared memory), segments tile every chunk's planes, the short last chunk's too,
  // and a segment index maps back to its chunk as the kernel computes it. 1-D arrays and planes too
  // large or too small fall back to the stripes or the multi-pass kernels. The default capacity, and the others HPCZ_RATIO_RECON_VALUES may
  // ask for.
  using hpcz::ratio::kReconMinPlane;
  int fused = 0, multi_chunk = 0;
  for (uint32_t kReconValues : {hpcz::ratio::kReconValues, 8192u, 12288u, hpcz::ratio::kReconMaxValues})
  for (auto dims : {std::vector<uint64_t>{5000000}, std::vector<uint64_t>{384, 384}, std::vector<uint64_t>{30000, 384},
                    std::vector<uint64_t>{7, 100000}, std::vector<uint64_t>{2976, 33, 49}, std::vector<uint64_t>{132, 73, 144},
                    std::vector<uint64_t>{20, 180, 360}, std::vector<uint64_t>{91, 91, 91}, std::vector<uint64_t>{4, 14, 48, 48},
                    std::vector<uint64_t>{1000, 100, 100}, std::vector<uint64_t>{3000, 60, 80}, std::vector<uint64_t>{100000, 8, 8},
                    std::vector<uint64_t>{3, 1, 1}}) {
    const auto shape = predict::working_shape(dims.data(), int(dims.size()));
    const uint64_t n_chunks = hpcz::detail::div_ceil(shape.slabs, shape.chunk_slabs);
    const auto full = predict::chunk_shape(shape, 0), last = predict::chunk_shape(shape, n_chunks - 1);
    const auto p = hpcz::ratio::recon_plan(shape.rank, full, last, n_chunks, hpcz::ratio::kReconMinPlanes, kReconValues);
    const uint64_t plane = shape.rank == 3 ? uint64_t(full.cy) * full.cx : full.cx;
    const bool expect = shape.rank >= 2 && plane >= kReconMinPlane && hpcz::ratio::kReconMinPlanes * plane <= kReconValues;
    CHECK_MSG((p.planes != 0) == expect, "fused exactly for 2-D and 3-D planes that fit kReconMinPlanes times: " << dims[0]);
    if (!p.planes) continue;
    ++fused;
    CHECK(p.plane() == plane && p.planes >= hpcz::ratio::kReconMinPlanes && uint64_t(p.planes) * plane <= kReconValues);
    // A full chunk's values plane by plane, and the kernel's chunk stride when there are several.
    CHECK(uint64_t(p.nz_full) * plane == full.count() && (n_chunks == 1 || full.count() == shape.chunk_values()));
    for (uint64_t c : {uint64_t(0), n_chunks - 1}) {
      const uint32_t nz = c + 1 == n_chunks ? p.nz_last : p.nz_full;
      const uint32_t segs = c + 1 == n_chunks ? p.segs_last : p.segs_full;
      CHECK(uint64_t(nz) * plane == predict::chunk_shape(shape, c).count());
      CHECK(uint64_t(segs) * p.planes >= nz && uint64_t(segs - 1) * p.planes < nz);  // tiled, none empty
      for (uint32_t sg : {0u, segs - 1}) {  // the kernel's mapping from a segment index back
        const uint64_t s = c * p.segs_full + sg;
        CHECK(s < p.n_segments && s / p.segs_full == c && s - (s / p.segs_full) * p.segs_full == sg);
      }
    }
    CHECK(p.segs_last <= p.segs_full);
    // Tickets: every segment exactly once, each after its predecessor in the chunk.
    std::vector<uint64_t> ticket_of(p.n_segments, UINT64_MAX);
    for (uint64_t t = 0; t < p.n_segments; ++t) {
      uint64_t c;
      uint32_t sg;
      p.segment_of_ticket(t, c, sg);
      const bool in_range = c < n_chunks && sg < (c + 1 == n_chunks ? p.segs_last : p.segs_full);
      CHECK(in_range);
      if (!in_range) break;
      CHECK(ticket_of[c * p.segs_full + sg] == UINT64_MAX);
      ticket_of[c * p.segs_full + sg] = t;
    }
    for (uint64_t c = 0; c < n_chunks; ++c)
      for (uint32_t sg = 1; sg < (c + 1 == n_chunks ? p.segs_last : p.segs_full); ++sg)
        CHECK(ticket_of[c * p.segs_full + sg] != UINT64_MAX &&
              ticket_of[c * p.segs_full + sg - 1] < ticket_of[c * p.segs_full + sg]);
    multi_chunk += n_chunks > 1;
  }
  CHECK(fused >= 11 && multi_chunk >= 6);  // 3, 2, 2 and 4 shapes fused at the four capacities
}

TEST(unit_ratio_stripe_plan_tiles_the_chunks) {
  // The stripe reconstruction: a stripe is `planes` consecutive planes of one chunk (a whole number of
  // segments of seg_planes, which fit the block's shared memory), stripes tile every chunk's planes,
  // the short last chunk's too, none empty, and the stripe index maps back to its chunk as the kernels
  // compute it. A thread holds the sums along z of at most kStripeCols columns, so planes larger than
  // kStripeCols x 256 values (levitus' 180 x 360), 1-D arrays and planes too small take other passes.
  using hpcz::ratio::kReconMinPlane;
  using hpcz::ratio::kStripeCols;
  int striped = 0, multi_stripe = 0;
  for (uint32_t stripe_values : {hpcz::ratio::kStripeValues, 1u, 65536u, 1u << 20})
  for (uint32_t seg_values : {hpcz::ratio::kReconValues, 12288u})
  for (auto dims : {std::vector<uint64_t>{5000000}, std::vector<uint64_t>{384, 384}, std::vector<uint64_t>{30000, 384},
                    std::vector<uint64_t>{2976, 33, 49}, std::vector<uint64_t>{132 * 40, 73, 144},
                    std::vector<uint64_t>{20, 180, 360}, std::vector<uint64_t>{91 * 60, 91, 91}, std::vector<uint64_t>{4, 14, 48, 48},
                    std::vector<uint64_t>{100 * 70, 64, 128}, std::vector<uint64_t>{3000, 60, 80}, std::vector<uint64_t>{100000, 8, 8},
                    std::vector<uint64_t>{3, 1, 1}}) {
    const auto shape = predict::working_shape(dims.data(), int(dims.size()));
    const uint64_t n_chunks = hpcz::detail::div_ceil(shape.slabs, shape.chunk_slabs);
    const auto full = predict::chunk_shape(shape, 0), last = predict::chunk_shape(shape, n_chunks - 1);
    const auto p = hpcz::ratio::stripe_plan(shape.rank, full, last, n_chunks, seg_values, stripe_values);
    const uint64_t plane = shape.rank == 3 ? uint64_t(full.cy) * full.cx : full.cx;
    const bool expect = shape.rank >= 2 && plane >= kReconMinPlane && plane <= uint64_t(kStripeCols) * 256 && plane <= seg_values;
    CHECK_MSG((p.seg_planes != 0) == expect, "stripes exactly for planes a block can carry: " << dims[0] << " " << seg_values);
    if (!p.seg_planes) continue;
    ++striped;
    CHECK(p.plane() == plane && uint64_t(p.seg_planes) * plane <= seg_values && p.planes % p.seg_planes == 0);
    CHECK(p.planes >= p.seg_planes && (p.planes == p.seg_planes || uint64_t(p.planes) * plane <= stripe_values));
    for (uint64_t c : {uint64_t(0), n_chunks - 1}) {
      const uint32_t nz = p.nz(c), n = p.stripes(c);
      CHECK(uint64_t(nz) * plane == predict::chunk_shape(shape, c).count());
      CHECK(uint64_t(n) * p.planes >= nz && uint64_t(n - 1) * p.planes < nz);  // tiled, none empty
      for (uint32_t st : {0u, n - 1}) {
        const uint64_t s = c * p.stripes_full + st;
        CHECK(s < p.n_stripes && s / p.stripes_full == c && s - (s / p.stripes_full) * p.stripes_full == st);
      }
    }
    CHECK(p.stripes_last <= p.stripes_full && p.n_stripes == (n_chunks - 1) * p.stripes_full + p.stripes_last);
    multi_stripe += p.stripes_full > 1;
  }
  CHECK(striped >= 40 && multi_stripe >= 20);
}

TEST(unit_huffman_gpu_books_match_cpu) {
  // The GPU codebook kernel against the CPU build on recorded histograms (the first chunk of every
  // real field at rel 1e-3 and 1e-5) and constructed ones; timings for one book at 1024 and 4096.
  if (!hpcz::gpu_available()) {
    std::fprintf(stderr, "  no GPU: skipped\n");
    return;
  }
  std::vector<std::pair<std::string, std::vector<uint32_t>>> hists;
  for (const auto& f : testutil::real_fields()) {
    if (f.dtype != hpcz::DType::f32) continue;
    for (double rel : {1e-3, 1e-5}) {
      const float* x = reinterpret_cast<const float*>(f.bytes.data());
      float mn = 1e30f, mx = -1e30f;
      for (uint64_t i = 0; i < f.n(); ++i) if (std::isfinite(x[i])) { mn = std::min(mn, x[i]); mx = std::max(mx, x[i]); }
      const double eb = rel * (double(mx) - double(mn));
      auto p = quant::make_params<float>(eb, quant::choose_step<float>(eb, true, mn, mx), false, 0);
      auto shape = predict::working_shape(f.dims.data(), int(f.dims.size()));
      ratio::EncodeScratch<float> sc;
      std::vector<uint8_t> chunk;
      ratio::encode_chunk(x, predict::chunk_shape(shape, 0), p, 512, sc, chunk);
      hists.push_back({f.name + (rel == 1e-3 ? " 1e-3" : " 1e-5"), sc.hist});
    }
  }
  std::vector<uint32_t> one(1024, 0), two(1024, 0);
  one[512] = 99;
  two[1] = 1; two[1000] = 5;
  hists.push_back({"one symbol", one});
  hists.push_back({"no symbol", std::vector<uint32_t>(1024, 0)});  // a predictor left out of a chunk
  hists.push_back({"two symbols", two});
  hists.push_back({"fibonacci", fibonacci_hist(1024, 64)});
  // Ties everywhere: the parallel rounds must break them as the sequential construction does.
  std::mt19937 trng(77);
  for (int k = 0; k < 300; ++k) {
    std::vector<uint32_t> h(1024, 0);
    const int kind = k % 5;
    const int used = 2 + int(trng() % 1022);
    for (int u = 0; u < used; ++u) {
      const uint32_t s = trng() % 1024;
      if (kind == 0) h[s] = 5;                                   // all equal
      if (kind == 1) h[s] = 1 + trng() % 3;                      // small counts, many ties
      if (kind == 2) h[s] = 1u << (trng() % 12);                 // powers of two: sums tie with leaves
      if (kind == 3) h[s] = 1 + uint32_t(1e6 / (1 + std::pow(double(u), 1.5)));  // power law
      if (kind == 4) h[s] = 1 + trng() % 100000;
    }
    hists.push_back({"random kind " + std::to_string(kind), h});
  }
  for (const auto& [name, h] : hists) {
    const auto cpu = ratio::build_book(h.data(), 1024);
    double ms = 0;
    const auto gpu = ratio::gpu_build_books(h, 1024, &ms);
    CHECK_MSG(gpu == cpu.len, name << ": GPU and CPU code lengths differ");
  }
  // Every alphabet size the kernel is sized for: the 4-key book up to 1,024 symbols, the 16-key one above.
  size_t sized = 0;
  for (uint32_t nsym : {2u, 4u, 32u, 1022u, 1024u, 1026u, 2048u, 4096u}) {
    std::mt19937 srng(nsym);
    for (int k = 0; k < 20; ++k) {
      std::vector<uint32_t> h(nsym, 0);
      const uint32_t used = 1 + srng() % nsym;
      for (uint32_t u = 0; u < used; ++u) h[srng() % nsym] = k % 2 ? 1 + srng() % 7 : 1 + uint32_t(1e6 / (1 + u * u));
      const auto cpu = ratio::build_book(h.data(), nsym);
      CHECK_MSG(ratio::gpu_build_books(h, nsym, nullptr) == cpu.len, nsym << " symbols, case " << k << ": GPU and CPU code lengths differ");
      ++sized;
    }
  }
  std::fprintf(stderr, "  %zu histograms at 1,024 symbols and %zu from 2 to 4,096: GPU and CPU books compared\n", hists.size(), sized);
  for (uint32_t nsym : {1024u, 4096u}) {
    std::mt19937 rng(nsym);
    std::vector<uint32_t> h(nsym);
    std::geometric_distribution<int> geo(0.02);
    for (auto& c : h) c = 0;
    for (int k = 0; k < 4000000; ++k) {
      const int s = int(nsym / 2) + geo(rng) * (rng() % 2 ? 1 : -1);
      if (s > 0 && s < int(nsym)) ++h[s];
    }
    uint32_t used = 0;
    for (auto c : h) used += c != 0;
    double ms = 0;
    const auto gpu = ratio::gpu_build_books(h, nsym, &ms);
    auto t0 = std::chrono::steady_clock::now();
    const auto cpu = ratio::build_book(h.data(), nsym);
    const double cpu_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    CHECK(gpu == cpu.len);
    std::fprintf(stderr, "  codebook, %u symbols (%u used): GPU kernel %.3f ms, CPU %.3f ms (one core)\n", nsym, used,
                 ms, cpu_ms);
  }
}

// limit_depths computes JPEG's (Annex K.3) length limiting in closed form, depth by depth; it must give
// exactly the loop's per-length counts, or books (and archives) would change. The loop is kept here as
// the reference. Complete codes: random trees grown from {2 leaves at depth 1} by splitting leaves,
// half the splits at the deepest level (skewed, deep codes), and the caterpillar of depths 1..63.
static void jpeg_limit_reference(uint32_t* bits) {
  for (int i = huffman::kDepthCap; i > huffman::kMaxLen; --i) {
    while (bits[i] >= 2) {
      int j = i - 2;
      while (j > 1 && bits[j] == 0) --j;
      bits[i] -= 2;
      bits[i - 1] += 1;
      bits[j + 1] += 2;
      bits[j] -= 1;
    }
    if (bits[i]) { bits[i - 1] += bits[i]; bits[i] = 0; }
  }
}

TEST(unit_huffman_limit_depths_matches_jpeg) {
  constexpr int kD = huffman::kDepthCap;
  std::mt19937_64 rng(11);
  int differ = 0, deep = 0;
  auto check = [&](const uint32_t* a) {
    uint32_t x[kD + 1], y[kD + 1];
    std::memcpy(x, a, sizeof x);
    std::memcpy(y, a, sizeof y);
    jpeg_limit_reference(x);
    huffman::limit_depths(y);
    differ += std::memcmp(x, y, sizeof x) != 0;
    bool past_limit = false;  // a tree deeper than the limit: one the adjustment changes
    for (int l = huffman::kMaxLen + 1; l <= kD; ++l) past_limit |= a[l] != 0;
    deep += past_limit;
  };
  for (int t = 0; t < 30000; ++t) {
    uint32_t a[kD + 1] = {};
    a[1] = 2;
    int deepest = 1;
    const int splits = int(rng() % (t % 10 == 0 ? 6000 : 1500));
    for (int s = 0; s < splits; ++s) {
      int l = rng() % 2 ? deepest : 1 + int(rng() % uint64_t(deepest));
      while (l > 1 && a[l] == 0) --l;
      if (a[l] == 0 || l >= kD) continue;
      a[l]--;
      a[l + 1] += 2;
      deepest = std::max(deepest, l + 1);
    }
    check(a);
  }
  uint32_t cat[kD + 1] = {};
  for (int l = 1; l < kD - 1; ++l) cat[l] = 1;
  cat[kD - 1] = 2;
  check(cat);
  CHECK_MSG(differ == 0, differ << " depth histograms limited differently from JPEG's loop");
  CHECK(deep > 1000);  // the trees reach past the limit
}
