// The interpolation predictor (predict/interp.hpp): its traversal, and the residuals' inverse.
#include <cmath>
#include <cstring>
#include <vector>

#include "codecs/interp/interp_chunk.hpp"
#include "common.hpp"
#include "predict/interp.hpp"
#include "quant/quantizer.hpp"

using hpcz::predict::ChunkShape;
using hpcz::predict::InterpParams;

namespace {
// Every point owned once (visited again only as another tile's face), each prediction reading only
// points visited before it, and each tile alone reading only its own box and the anchors.
void check_traversal(const ChunkShape& c, InterpParams ip) {
  std::vector<int> seen(c.count(), 0), visited(c.count(), 0);
  uint64_t bad_reads = 0;
  hpcz::predict::interp_traverse<int64_t>(
      c, ip, [&](uint64_t j) -> int64_t { bad_reads += j >= seen.size() || !visited[j]; return 0; },
      [&](uint64_t i, int64_t, bool owned) { seen[i] += owned; visited[i] = 1; });
  // A tile on its own, after the anchors only: its reads stay in what it visits itself.
  const hpcz::predict::InterpGeometry g = hpcz::predict::interp_geometry(c);
  for (uint64_t t = 0; t < g.tile_count(); t += 1 + g.tile_count() / 7) {
    std::vector<int> mine(c.count(), 0);
    hpcz::predict::interp_anchors<int64_t>(g, [](uint64_t) { return int64_t(0); }, [&](uint64_t i, int64_t) { mine[i] = 1; });
    hpcz::predict::interp_tile<int64_t>(
        g, ip, t, [&](uint64_t j) -> int64_t { bad_reads += j >= mine.size() || !mine[j]; return 0; },
        [&](uint64_t i, int64_t, bool) { mine[i] = 1; });
  }
  uint64_t not_once = 0;
  for (int s : seen) not_once += s != 1;
  CHECK_MSG(not_once == 0 && bad_reads == 0, c.cz << "x" << c.cy << "x" << c.cx << " params " << int(ip.bits) << ": "
                                                 << not_once << " points not visited once, " << bad_reads
                                                 << " reads of unvisited points");
}
}  // namespace

TEST(unit_interp_visits_every_point_once_after_its_predictors) {
  const ChunkShape shapes[] = {{1, 1, 1}, {1, 1, 2}, {1, 1, 4097}, {1, 1, 10000}, {1, 3, 5},    {1, 65, 129},
                               {1, 200, 1}, {2, 2, 2}, {5, 17, 33}, {16, 16, 16}, {17, 1, 40}, {33, 20, 7}};
  for (const ChunkShape& c : shapes)
    for (uint8_t b = 0; b < hpcz::predict::kInterpParamsCount; ++b) check_traversal(c, InterpParams{b});
}

// The residuals of prequantized integers invert exactly, for every parameter set, on real fields and on
// extreme q (the int64 arithmetic and the mod 2^32 residuals).
TEST(unit_interp_integer_residuals_invert_exactly) {
  for (const auto& f : testutil::real_fields()) {
    const uint64_t n = std::min<uint64_t>(f.n(), 1 << 20);
    const ChunkShape c = f.dims.size() >= 3 ? ChunkShape{uint32_t(n / (f.dims[f.dims.size() - 1] * f.dims[f.dims.size() - 2])),
                                                         uint32_t(f.dims[f.dims.size() - 2]), uint32_t(f.dims.back())}
                                            : ChunkShape{1, 1, uint32_t(n)};
    std::vector<uint32_t> q(c.count()), d(c.count());
    for (uint64_t i = 0; i < c.count(); ++i) {
      const double x = f.dtype == hpcz::DType::f64 ? reinterpret_cast<const double*>(f.bytes.data())[i]
                                                   : reinterpret_cast<const float*>(f.bytes.data())[i];
      q[i] = std::isfinite(x) ? uint32_t(int32_t(std::fmod(x * 1000.0, double(hpcz::quant::kQLimit - 1)))) : 0u;
    }
    for (uint8_t b = 0; b < hpcz::predict::kInterpParamsCount; ++b) {
      hpcz::predict::interp_residuals(c, InterpParams{b}, q.data(), d.data());
      std::vector<uint32_t> back(d.size());
      hpcz::predict::inverse_interp(c, InterpParams{b}, d.data(), back.data());
      CHECK_MSG(back == q, f.name << " params " << int(b));
    }
  }
  const ChunkShape c{9, 10, 11};
  std::vector<uint32_t> q(c.count()), d(c.count());
  for (uint64_t i = 0; i < q.size(); ++i)
    q[i] = uint32_t(i % 3 == 0 ? hpcz::quant::kQLimit - 1 : (i % 3 == 1 ? 1 - hpcz::quant::kQLimit : 0));
  for (uint8_t b = 0; b < hpcz::predict::kInterpParamsCount; ++b) {
    hpcz::predict::interp_residuals(c, InterpParams{b}, q.data(), d.data());
    std::vector<uint32_t> back(d.size());
    hpcz::predict::inverse_interp(c, InterpParams{b}, d.data(), back.data());
    CHECK(back == q);
  }
}

// Cubic interpolation reproduces cubic polynomials exactly in the chunk's interior, linear and natural
// cubic interpolation linear ones (the weights are right), on reconstructed (floating-point) values.
TEST(unit_interp_reproduces_polynomials) {
  const ChunkShape c{1, 1, 200};
  for (uint8_t params : {uint8_t(0), uint8_t(1), uint8_t(12)}) {  // linear, cubic, natural cubic
    const bool cubic = params == 1;
    std::vector<double> v(c.count());
    for (uint32_t i = 0; i < c.count(); ++i) {
      const double x = i;
      v[i] = cubic ? 0.5 + 0.25 * x - 0.125 * x * x / 16 + x * x * x / 4096 : 3.0 - 0.5 * x;
    }
    uint64_t exact = 0, interior = 0;
    hpcz::predict::interp_traverse<double>(
        c, InterpParams{params}, [&](uint64_t j) { return v[j]; },
        [&](uint64_t i, double p, bool) {
          // interior points of the finest levels: all four (two) neighbours inside
          if (i % 2 == 1 && i % 4096 >= 3 && i % 4096 + 3 < 4096 && i + 3 < c.count()) {
            ++interior;
            exact += std::fabs(p - v[i]) <= 1e-9 * std::fabs(v[i]);
          }
        });
    CHECK_MSG(interior > 90 && exact == interior, "params " << int(params) << ": " << exact << " of " << interior);
  }
}

// The stream positions the GPU computes in closed form (anchor k at k; a tile's owned points at the
// anchors' count + tile_stream_offset + the owned points of its earlier passes + the point's rank in
// its pass's owned grid) are the places interp_order gives.
TEST(unit_interp_stream_positions_in_closed_form) {
  const ChunkShape shapes[] = {{1, 1, 1}, {1, 1, 2}, {1, 1, 4097}, {1, 1, 10000}, {1, 3, 5}, {1, 65, 129}, {1, 200, 1},
                               {2, 2, 2}, {5, 17, 33}, {16, 16, 16}, {17, 1, 40}, {33, 20, 7}, {40, 50, 35}};
  for (const ChunkShape& c : shapes)
    for (uint8_t b : {uint8_t(0), uint8_t(3), uint8_t(9), uint8_t(14)}) {
      const InterpParams ip{b};
      std::vector<uint64_t> pos(c.count(), ~0ull);
      uint64_t k = 0;
      hpcz::predict::interp_order(c, ip, [&](uint64_t i) { pos[i] = k++; });
      const hpcz::predict::InterpGeometry g = hpcz::predict::interp_geometry(c);
      const uint64_t na = hpcz::predict::anchor_total(g);
      uint64_t wrong = k != c.count();
      for (uint64_t a = 0; a < na; ++a) wrong += pos[hpcz::predict::anchor_index(g, a)] != a;
      int order[3];
      ip.axis_order(order);
      for (uint64_t t = 0; t < g.tile_count(); ++t) {
        const hpcz::predict::TileBox box = hpcz::predict::tile_box(g, t);
        uint64_t at = na + hpcz::predict::tile_stream_offset(g, t);
        for (int l = g.level; l >= 1; --l)
          for (int kk = 0; kk < 3; ++kk) {
            hpcz::predict::InterpPass p;
            if (!hpcz::predict::interp_pass(box, l, kk, order, p)) continue;
            for (uint32_t mz = 0; mz < p.own[0]; ++mz)
              for (uint32_t my = 0; my < p.own[1]; ++my)
                for (uint32_t mx = 0; mx < p.own[2]; ++mx) {
                  const uint64_t i = box.base + (p.from[0] + mz * p.step[0]) * box.stride[0] +
                                     (p.from[1] + my * p.step[1]) * box.stride[1] + p.from[2] + mx * p.step[2];
                  wrong += pos[i] != at + (uint64_t(mz) * p.own[1] + my) * p.own[2] + mx;
                }
            at += p.owned();
          }
      }
      CHECK_MSG(wrong == 0, c.cz << "x" << c.cy << "x" << c.cx << " params " << int(b) << ": " << wrong << " misplaced");
    }
}

// Stand-in anchors whose Lorenzo prediction lies beyond the clamp: a ramp that passes 2^30 steps (the
// points above it are exceptions) with a quadratic term that interpolation predicts and Lorenzo does
// not, so the chunk is an interpolation chunk; an anchor with a + b + c = 4 (in anchor units) is an
// exception whose prediction is about 2^30 steps and is clamped, which the GPU decoder's parallel
// inverse cannot express: it must fall back to the CPU's order. Both backends decode the CPU's
// archive alike and the GPU writes the same archive.
TEST(unit_interp_clamped_stand_in_anchor) {
  const uint64_t n = 33;
  std::vector<double> v(n * n * n);
  for (uint64_t z = 0; z < n; ++z)
    for (uint64_t y = 0; y < n; ++y)
      for (uint64_t x = 0; x < n; ++x) v[(z * n + y) * n + x] = double(x + y + z) * 16777216.0 + double(x * x) * 64.0;
  hpcz::Options o;
  o.mode = hpcz::BoundMode::abs;
  o.bound = 0.5;  // a step of about 1
  o.codec = hpcz::Codec::interp;
  o.backend = hpcz::Backend::cpu;
  const auto a = hpcz::compress(v.data(), hpcz::DType::f64, {n, n, n}, o);
  std::vector<uint8_t> back;
  const auto info = hpcz::decompress(a.data(), a.size(), back, hpcz::Backend::cpu);
  const double* r = reinterpret_cast<const double*>(back.data());
  uint64_t bad = 0;
  for (uint64_t i = 0; i < v.size(); ++i)
    bad += !(std::fabs(r[i] - v[i]) <= info.eb_abs);
  CHECK_MSG(bad == 0, bad << " values wrong");
  CHECK_MSG((a[info.chunks[0].offset + 12] & 0xff) == 2, "not an interpolation chunk");
  if (hpcz::gpu_available()) {
    std::vector<uint8_t> bg;
    hpcz::decompress(a.data(), a.size(), bg, hpcz::Backend::gpu);
    CHECK_MSG(bg == back, "GPU decode differs");
    o.backend = hpcz::Backend::gpu;
    CHECK_MSG(hpcz::compress(v.data(), hpcz::DType::f64, {n, n, n}, o) == a, "GPU archive differs");
  }
}

// The encoder runs one predictor alone where its estimate on the sampled points is more than 1/16 below
// the other's (predictors_to_run). On every real field's first chunk and bound (levitus with its fill
// value), the predictor so chosen codes the chunk no larger than the other would, and on some chunks
// one predictor runs alone (the rule saves work).
namespace {
template <class T>
void check_predictor_choice(const testutil::Field& f, double rel, int& alone, int& total) {
  namespace r = hpcz::ratio;
  const T* x = reinterpret_cast<const T*>(f.bytes.data());
  const bool has_fill = f.name.find("levitus") != std::string::npos;
  const double fill = -1e10;
  double mn = INFINITY, mx = -INFINITY;
  for (uint64_t i = 0; i < f.n(); ++i)
    if (std::isfinite(double(x[i])) && !(has_fill && x[i] == T(fill))) mn = std::min(mn, double(x[i])), mx = std::max(mx, double(x[i]));
  const double eb = rel * (mx - mn);
  const hpcz::quant::QuantParams<T> p =
      hpcz::quant::make_params<T>(eb, hpcz::quant::choose_step<T>(eb, true, mn, mx), has_fill, fill);
  const hpcz::predict::Shape shape = hpcz::predict::working_shape(f.dims.data(), int(f.dims.size()));
  const ChunkShape c = hpcz::predict::chunk_shape(shape, 0);
  const uint32_t radius = r::kDefaultRadius;
  const hpcz::predict::InterpGeometry g = hpcz::predict::interp_geometry(c);
  r::InterpScratch<T> s;
  r::EncodeScratch<T> e;
  s.xr.resize(c.count());
  s.delta.assign(c.count(), 0);
  s.cls.assign(c.count(), r::kPointCoded);
  const r::ChunkMask<T> mask = r::chunk_mask(x, c.count(), p);
  r::encode_anchors(x, g, p, mask, s);
  uint64_t interp_est = 0;
  const InterpParams ip = r::choose_interp_params(x, g, p, radius, mask, s, 2, interp_est);
  const uint32_t run = r::predictors_to_run(r::lorenzo_sampled_bytes(x, g, p, radius, 2), interp_est);
  std::vector<uint8_t> lorenzo, interp;
  r::encode_chunk(x, c, p, radius, e, lorenzo, 2);
  r::encode_interp_chunk(x, c, p, radius, ip, mask, s, e, interp, 2);
  ++total;
  if (run == (r::kRunLorenzo | r::kRunInterp)) return;
  ++alone;
  const bool interp_alone = run == r::kRunInterp;
  CHECK_MSG(interp_alone ? interp.size() <= lorenzo.size() : lorenzo.size() <= interp.size(),
            f.name << " rel " << rel << ": " << (interp_alone ? "interpolation" : "Lorenzo") << " alone, chunks "
                   << interp.size() << " (interpolation) and " << lorenzo.size() << " (Lorenzo)");
}
}  // namespace

TEST(unit_interp_one_predictor_where_its_estimate_is_clearly_smaller) {
  int alone = 0, total = 0;
  for (const testutil::Field& f : testutil::real_fields())
    for (double rel : {1e-2, 1e-3, 1e-4}) {
      if (f.dtype == hpcz::DType::f32) check_predictor_choice<float>(f, rel, alone, total);
      else check_predictor_choice<double>(f, rel, alone, total);
    }
  std::fprintf(stderr, "  %d of %d chunks ran one predictor\n", alone, total);
  CHECK(total > 0 && alone > 0);
}

// The first sampling stage's axis order by estimate (order_estimate_hists: the original values, one pass
// for all six orders) against the exact trials it replaces on chunks without a mask: on each real 2-D
// and 3-D field's first chunk in every axis permutation, as it is and stacked along its slowest axis to
// a whole chunk (the benchmark's tiling: a sampled tile every 25th), at the three bounds, the order it
// picks codes the sampled tiles within 0.5% of the trials' best (on the shared fields, the same order
// every time).
namespace {
template <class T>
void check_order_estimate(const std::string& name, const std::vector<T>& x, const ChunkShape& c, double rel, int& same,
                          int& total) {
  namespace r = hpcz::ratio;
  double mn = INFINITY, mx = -INFINITY;
  for (uint64_t i = 0; i < c.count(); ++i)
    if (std::isfinite(double(x[i]))) mn = std::min(mn, double(x[i])), mx = std::max(mx, double(x[i]));
  const double eb = rel * (mx - mn);
  const hpcz::quant::QuantParams<T> p = hpcz::quant::make_params<T>(eb, hpcz::quant::choose_step<T>(eb, true, mn, mx), false, 0.0);
  const uint32_t radius = r::kDefaultRadius;
  const hpcz::predict::InterpGeometry g = hpcz::predict::interp_geometry(c);
  r::InterpScratch<T> s;
  s.xr.resize(c.count());
  s.delta.assign(c.count(), 0);
  s.cls.assign(c.count(), r::kPointCoded);
  const r::ChunkMask<T> mask = r::chunk_mask(x.data(), uint32_t(c.count()), p);
  if (mask.on) return;
  r::encode_anchors(x.data(), g, p, mask, s);
  uint64_t est = 0;
  const int picked = r::choose_interp_params(x.data(), g, p, radius, mask, s, 2, est).axis_order_index();
  const uint64_t every = r::interp_sample_every(g.tile_count(), r::kInterpOrderSampleTiles);
  uint64_t trial[6] = {}, best = UINT64_MAX;
  int best_order = 0;
  for (uint8_t order = 0; order < 6; ++order) {
    const uint8_t b = r::interp_stage_params(0, order);
    if (r::same_as_earlier_params(g, b)) continue;
    std::vector<uint32_t> hist(2 * radius, 0);
    r::TileScratch<T> ts;
    for (uint64_t t = 0; t < g.tile_count(); t += every)
      r::encode_tile(x.data(), g, InterpParams{b}, t, p, mask, s, ts, &hist, radius);
    trial[order] = r::estimated_bytes(hist);
    if (trial[order] < best) best = trial[order], best_order = order;
  }
  ++total;
  same += picked == best_order;
  CHECK_MSG(double(trial[picked]) <= 1.005 * double(best), name << " rel " << rel << ": order " << picked << " codes "
                                                                 << trial[picked] << " bytes, order " << best_order << " "
                                                                 << best);
}

// The field x (working extents n, z slowest) with its axes permuted (axis j of the result is axis
// perm[j] of x), repeated `copies` times along its slowest axis of extent > 1.
template <class T>
std::vector<T> permuted_stack(const T* x, const uint64_t* n, const int* perm, uint64_t copies, uint64_t* m) {
  for (int j = 0; j < 3; ++j) m[j] = n[perm[j]];
  const uint64_t stride[3] = {n[1] * n[2], n[2], 1}, count = n[0] * n[1] * n[2];
  std::vector<T> y;
  y.reserve(count * copies);
  for (uint64_t k = 0; k < copies; ++k)
    for (uint64_t a = 0; a < m[0]; ++a)
      for (uint64_t b = 0; b < m[1]; ++b)
        for (uint64_t d = 0; d < m[2]; ++d) y.push_back(x[a * stride[perm[0]] + b * stride[perm[1]] + d * stride[perm[2]]]);
  m[m[0] > 1 ? 0 : 1] *= copies;
  return y;
}

template <class T>
void check_order_estimates(const testutil::Field& f, int& same, int& total) {
  const hpcz::predict::Shape shape = hpcz::predict::working_shape(f.dims.data(), int(f.dims.size()));
  if (shape.rank < 2) return;
  const uint64_t n[3] = {shape.nz, shape.ny, shape.nx};
  for (const auto& perm : hpcz::predict::kAxisOrders) {
    if (shape.rank == 2 && perm[0] != 0) continue;  // the unit axis stays first
    for (uint64_t copies : {uint64_t(1), (hpcz::predict::kTargetChunkValues + f.n() - 1) / f.n()}) {
      uint64_t m[3];
      const std::vector<T> y = permuted_stack(reinterpret_cast<const T*>(f.bytes.data()), n, perm, copies, m);
      const hpcz::predict::Shape ps = hpcz::predict::working_shape(m, 3);
      for (double rel : {1e-2, 1e-3, 1e-4})
        check_order_estimate<T>(f.name, y, hpcz::predict::chunk_shape(ps, 0), rel, same, total);
    }
  }
}
}  // namespace

TEST(unit_interp_order_estimate_matches_trials) {
  int same = 0, total = 0;
  for (const testutil::Field& f : testutil::real_fields()) {
    if (f.name.find("levitus") != std::string::npos) continue;  // a fill value: a mask, its order by trials
    if (f.dtype == hpcz::DType::f32) check_order_estimates<float>(f, same, total);
    else check_order_estimates<double>(f, same, total);
  }
  std::fprintf(stderr, "  the estimate's order is the trials' on %d of %d chunks\n", same, total);
  CHECK(total > 0);
}

// The encoder's reconstruction of an interpolation chunk (interp_reconstruction, what pw_rel's check
// reads instead of decoding its chunk) is bit for bit what decode_best_chunk writes: on every real
// field's first chunk at three bounds, levitus with its fill value masked, and on an array with NaN
// (masked), Inf and values beyond the quantizer's reach (exceptions), in float32 and float64.
namespace {
template <class T>
void check_reconstruction(const T* x, const ChunkShape& c, double eb, bool has_fill, double fill, const std::string& what,
                          int& checked) {
  namespace r = hpcz::ratio;
  double mn = INFINITY, mx = -INFINITY;
  for (uint64_t i = 0; i < c.count(); ++i)
    if (std::isfinite(double(x[i])) && !(has_fill && x[i] == T(fill))) mn = std::min(mn, double(x[i])), mx = std::max(mx, double(x[i]));
  const hpcz::quant::QuantParams<T> p =
      hpcz::quant::make_params<T>(eb, hpcz::quant::choose_step<T>(eb, true, mn, mx), has_fill, fill);
  const hpcz::predict::InterpGeometry g = hpcz::predict::interp_geometry(c);
  for (int threads : {1, 3}) {
    r::InterpScratch<T> s;
    r::EncodeScratch<T> e;
    s.keep_recon = true;
    hpcz::parallel_fill(s.xr, c.count(), T(0), threads);
    hpcz::parallel_fill(s.delta, c.count(), uint32_t(0), threads);
    hpcz::parallel_fill(s.cls, c.count(), uint8_t(r::kPointCoded), threads);
    const r::ChunkMask<T> mask = r::chunk_mask(x, c.count(), p);
    r::encode_anchors(x, g, p, mask, s);
    uint64_t est = 0;
    const InterpParams ip = r::choose_interp_params(x, g, p, r::kDefaultRadius, mask, s, threads, est);
    std::vector<uint8_t> bytes;
    r::encode_interp_chunk(x, c, p, r::kDefaultRadius, ip, mask, s, e, bytes, threads);
    std::vector<T> recon(c.count()), decoded(c.count());
    // A chunk no smaller than its values is written raw (not an interpolation chunk): none to compare.
    if (!r::interp_reconstruction(x, c.count(), bytes, s, recon.data(), threads)) {
      CHECK_MSG(bytes.size() >= c.count() * sizeof(T), what << " eb " << eb << ": no reconstruction of a coded chunk");
      continue;
    }
    REQUIRE(r::decode_best_chunk(bytes.data(), uint32_t(bytes.size()), c, p, r::kDefaultRadius, decoded.data(), threads));
    CHECK_MSG(std::memcmp(recon.data(), decoded.data(), c.count() * sizeof(T)) == 0,
              what << " eb " << eb << ", " << threads << " threads: the reconstruction is not the decoder's");
    ++checked;
  }
}
}  // namespace

TEST(unit_interp_reconstruction_is_the_decoders) {
  int checked = 0;
  for (const testutil::Field& f : testutil::real_fields()) {
    const hpcz::predict::Shape shape = hpcz::predict::working_shape(f.dims.data(), int(f.dims.size()));
    const ChunkShape c = hpcz::predict::chunk_shape(shape, 0);
    const bool has_fill = f.name.find("levitus") != std::string::npos;
    for (double eb : {1e-1, 1e-3, 1e-5}) {
      if (f.dtype == hpcz::DType::f32)
        check_reconstruction(reinterpret_cast<const float*>(f.bytes.data()), c, eb, has_fill, -1e10, f.name, checked);
      else
        check_reconstruction(reinterpret_cast<const double*>(f.bytes.data()), c, eb, has_fill, -1e10, f.name, checked);
    }
  }
  // NaN (the mask), Inf and huge values (exceptions) in a smooth 2-D field.
  const uint64_t ny = 150, nx = 200;
  std::vector<double> v(ny * nx);
  std::vector<float> vf(ny * nx);
  for (uint64_t i = 0; i < v.size(); ++i) {
    v[i] = std::sin(double(i % nx) * 0.05) * std::cos(double(i / nx) * 0.03) * 100.0;
    if (i % 97 == 5) v[i] = NAN;
    if (i % 211 == 7) v[i] = (i & 1) ? INFINITY : -INFINITY;
    if (i % 389 == 11) v[i] = 1e30;
    vf[i] = float(v[i]);
  }
  const ChunkShape c = hpcz::predict::chunk_shape(hpcz::predict::working_shape(std::vector<uint64_t>{ny, nx}.data(), 2), 0);
  check_reconstruction(v.data(), c, 1e-2, false, 0, "adversarial f64", checked);
  check_reconstruction(vf.data(), c, 1e-2, false, 0, "adversarial f32", checked);
  CHECK(checked >= 8);
}
