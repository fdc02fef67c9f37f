// Unit properties of the fast codec's building blocks.
#include <cmath>
#include <limits>
#include <random>

#include "common.hpp"
#include "codecs/fast/chunk.hpp"
#include "codecs/fast/policy.hpp"
#include "quant/bound.hpp"
#include "quant/range.hpp"

using namespace hpcz::fast;

TEST(unit_within_bound_is_exact) {
  CHECK(within_bound(1.0, 1.5, 0.5));
  CHECK(!within_bound(1.0, 1.5000000000000002, 0.5));
  CHECK(within_bound(0.0, 0.0, 0.0));
  CHECK(!within_bound(0.0, 1e-300, 0.0));
  // 1e16 + 1 is not representable: d = xr - x rounds; the TwoSum term decides.
  double x = 1e16, xr = 1e16 + 2, eb = 2;
  CHECK(within_bound(x, xr, eb));
  CHECK(!within_bound(0.1, 0.1 + 0.2, 0.2));
  CHECK(!within_bound(std::numeric_limits<double>::quiet_NaN(), 0, 1));
}

TEST(unit_step_never_exceeds_twice_the_bound) {
  std::mt19937_64 rng(3);
  for (int k = 0; k < 100000; ++k) {
    double eb = std::ldexp(double(rng() % 1000000 + 1), int(rng() % 200) - 120);
    double mx = std::ldexp(double(rng() % 1000 + 1), int(rng() % 100) - 50);
    double sf = choose_step<float>(eb, true, -mx, mx), sd = choose_step<double>(eb, true, -mx, mx);
    CHECK(sf <= 2 * eb && sd <= 2 * eb);
    CHECK(double(float(sf)) == sf);
    CHECK(sf > 0 && sd > 0);
  }
  CHECK(choose_step<float>(1e300, true, 0, 1) == double(std::numeric_limits<float>::max()));
  CHECK(choose_step<float>(0, true, 3.25, 3.25) == 3.25);  // constant field under a rel bound
}

TEST(unit_margin_removes_midpoint_exceptions) {
  // Values of a real-looking magnitude at a bound ~1e-5 of it: with the margin no value needs storing.
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(265.f, 292.f);
  const double eb = 2.6e-3;
  auto p = make_params<float>(eb, choose_step<float>(eb, true, 265, 292), false, 0);
  int exceptions = 0;
  for (int i = 0; i < 1000000; ++i) {
    int32_t q;
    if (!quantize(u(rng), p, q)) ++exceptions;
  }
  CHECK_MSG(exceptions == 0, exceptions << " exceptions");
}

TEST(unit_plan_and_payload_size_agree) {
  // Every code the planner emits has the size block_payload_bytes() says, decoding restores the
  // values, and block_chain() predicts the q that ends the block.
  std::mt19937 rng(5);
  auto p = make_params<float>(0.5, 1.0, false, 0);  // step 1: q = value
  int two_level_blocks = 0, lane_blocks = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    float v[32];
    int shape = trial % 7;
    int32_t base = int32_t(rng() % 2000000) - 1000000;
    int32_t prev = trial % 3 == 0 ? 0 : base + int32_t(rng() % 64) - 32;
    for (int i = 0; i < 32; ++i) {
      int32_t d = shape == 0 ? 0 : shape == 1 ? int32_t(rng() % 3) - 1 : shape == 2 ? int32_t(rng() % 1000) - 500
                : shape == 3 ? int32_t(rng() % (1 << 22)) - (1 << 21) : i;
      v[i] = float(base + d);
    }
    // Two levels, prev and prev + D (D of one byte or more, either sign), in random lanes.
    const int32_t two_d = trial % 2 ? int32_t(rng() % 200) - 100 : int32_t(rng() % (1 << 21)) - (1 << 20);
    if (shape >= 5)
      for (int i = 0; i < 32; ++i) v[i] = float(prev + ((rng() >> 7) & 1 ? two_d : 0));
    // A sparse field's edge: zeros with a few nonzero lanes (runs or scattered, either sign, small or
    // wide), the chain sometimes entering at a nonzero prev.
    const bool sparse = shape < 5 && trial % 5 == 1;
    if (sparse) {
      const int32_t amp = int32_t(1) << (rng() % 24);
      const int run0 = int(rng() % 32), run1 = run0 + int(rng() % 12);
      for (int i = 0; i < 32; ++i) {
        const bool on = trial % 10 == 1 ? (i >= run0 && i < run1) : rng() % 4 == 0;
        v[i] = on ? float(int32_t(rng() % uint32_t(2 * amp)) - amp) : 0.f;
      }
      if (trial % 3 == 0) v[0] = float(prev);
    }
    if (trial % 7 == 0) v[rng() % 32] = std::numeric_limits<float>::quiet_NaN();
    if (trial % 13 == 0) v[0] = std::numeric_limits<float>::infinity();
    if (trial % 17 == 0)
      for (int i = 0; i < 32; ++i) v[i] = std::numeric_limits<float>::quiet_NaN();
    int count = trial % 11 == 0 ? int(rng() % 32) + 1 : 32;
    int32_t q[32];
    int32_t tail;
    bool has;
    uint32_t invalid = quantize_lanes(v, count, p, q, tail, has);
    chain_fill(q, invalid, prev);
    const int32_t q31 = q[31];
    const BlockDeltas bd = block_deltas(q, prev);
    BlockPlan bp = plan_block(bd, invalid & lanes_below(count), 4, uniform_bits(v, count));
    uint8_t desc[kLanesDescBytes] = {};
    if (bp.code == kCodeLanes) {
      write_lanes_desc(bd, desc);
      ++lane_blocks;
      CHECK(load_u32_le(desc) == bd.nonzero && bd.nonzero != ~0u && !(invalid & lanes_below(count)));
      // at least a quarter smaller than the code the planner would choose without it, descriptor counted
      BlockDeltas dense = bd;
      dense.nonzero = ~0u;
      const BlockPlan other = plan_block(dense, 0, 4, uniform_bits(v, count));
      CHECK(other.code != kCodeLanes && 4 * (bp.payload + kLanesDescBytes) <= 3 * other.payload);
    }
    CHECK(block_payload_bytes(bp.code, desc, 4) == int(bp.payload));
    const bool two_level = (bp.code & 0x7f) == kCodeTwoLevel1 || (bp.code & 0x7f) == kCodeTwoLevel4;
    two_level_blocks += two_level;
    if (shape >= 5 && two_d != 0 && !invalid && count == 32 && !uniform_bits(v, count)) {
      CHECK_MSG(bd.two_d == uint32_t(two_d), "trial " << trial << ": two levels not found");
      CHECK_MSG(two_level, "trial " << trial << ": a two-level block coded as " << int(bp.code));
    }
    uint8_t buf[256];
    float exc[32];
    write_block<float>(bp, [&](int i) { return v[i]; }, count, q, bd, buf, [&](int j, float x) { exc[j] = x; });
    float out[32];
    int32_t last = decode_block<float>(bp.code, buf, desc, prev, p, [&](int j) { return exc[j]; }, out);
    if (!holds_values(bp.code)) {
      CHECK(last == q31);
      Chain ch = block_chain(bp.code, buf, desc);
      CHECK(int32_t(ch.absolute ? ch.value : uint32_t(prev) + ch.value) == q31);
    }
    for (int i = 0; i < count; ++i) {
      bool same = std::memcmp(&v[i], &out[i], 4) == 0 || std::fabs(double(v[i]) - out[i]) <= 0.5;
      CHECK_MSG(same, "trial " << trial << " lane " << i << " code " << int(bp.code));
      if (!same) return;
    }
  }
  CHECK_MSG(two_level_blocks > 2000, two_level_blocks << " two-level blocks");
  CHECK_MSG(lane_blocks > 1000, lane_blocks << " lane blocks");
}

TEST(unit_code_table_is_closed) {
  // Raw and uniform blocks with an exception mask are never written; the decoder rejects them. Every
  // other code has a size (two-level ones: the levels word and one or four bytes of D).
  for (int c = 0; c < 256; ++c) {
    int s = payload_size(uint8_t(c), 4);
    bool values_exc = c == 0xff || c == 0xfc;  // raw or uniform with an exception mask
    CHECK((s < 0) == values_exc);
  }
  CHECK(payload_size(kCodeTwoLevel1, 4) == 5 && payload_size(kCodeTwoLevel4 | kExcFlag, 8) == 12);
  // 0xfc is the lane block: its size comes from its descriptor (lane mask, width <= 32).
  const uint8_t d7[kLanesDescBytes] = {0x0f, 0x00, 0x01, 0x80, 7};  // 6 lanes of 7 bits: 42 bits
  const uint8_t d33[kLanesDescBytes] = {0xff, 0xff, 0xff, 0xff, 33};
  CHECK(block_payload_bytes(kCodeLanes, d7, 4) == 6 && block_payload_bytes(kCodeLanes, d33, 8) < 0);
  CHECK(!has_exceptions(kCodeLanes) && has_exceptions(0x80));
}

TEST(unit_widest_deltas) {
  // Alternating +-(2^30 - 1): deltas of 2^31 - 2 need 31 bits.
  auto p = make_params<double>(0.5, 1.0, false, 0);
  double v[32];
  for (int i = 0; i < 32; ++i) v[i] = (i % 2 ? 1 : -1) * double((1 << 30) - 1);
  int32_t q[32];
  int32_t tail;
  bool has;
  uint32_t mask = quantize_lanes(v, 32, p, q, tail, has);
  const BlockDeltas bd = block_deltas(q, 0);
  BlockPlan bp = plan_block(bd, mask, 8);
  CHECK(bp.mask == 0);
  CHECK(bp.code == 31);
  uint8_t buf[300];
  write_block<double>(bp, [&](int i) { return v[i]; }, 32, q, bd, buf, [](int, double) {});
  double out[32];
  decode_block<double>(bp.code, buf, nullptr, 0, p, [](int) { return 0.0; }, out);
  for (int i = 0; i < 32; ++i) CHECK(out[i] == v[i]);
  v[3] = double(1 << 30);  // beyond the quantizer's range: an exception
  CHECK(quantize_lanes(v, 32, p, q, tail, has) == (1u << 3));
}

TEST(unit_bit_planes_match_naive_transpose) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 2000; ++trial) {
    uint32_t w[32];
    const int width = trial % 32;  // values of `width` bits, as the encoder's magnitudes
    for (int i = 0; i < 32; ++i) w[i] = width ? uint32_t(rng()) >> (32 - width) : 0u;
    uint8_t buf[4 * 32] = {};
    store_planes<0>(w, 32, buf);
    store_planes<1>(w, 32, buf);
    store_planes<2>(w, 32, buf);
    store_planes<3>(w, 32, buf);
    for (int j = 0; j < 32; ++j) {
      uint32_t plane = 0;
      for (int i = 0; i < 32; ++i) plane |= (w[i] >> j & 1u) << i;
      CHECK(load_u32_le(buf + 4 * j) == plane);
    }
    uint32_t back[32] = {};
    for (int b = 0; b < 4; ++b) {
      load_plane_rows<0>(buf, width, b, back + 8 * b);
      load_plane_rows<1>(buf, width, b, back + 8 * b);
      load_plane_rows<2>(buf, width, b, back + 8 * b);
      load_plane_rows<3>(buf, width, b, back + 8 * b);
    }
    for (int i = 0; i < 32; ++i) CHECK(back[i] == w[i]);
  }
}

// The exact three-candidate search that quantize() short-cuts: the fast path must never change q.
template <class T> static bool quantize_exact(T x, const QuantParams<T>& p, int32_t& q) {
  if (p.has_fill && x == p.fill) return false;
  T s = x * p.recip;
  if (!(s > -T(kQLimit) && s < T(kQLimit))) return false;
  int32_t q0 = int32_t(round_half_even(s));
  for (int k = 0; k < 3; ++k) {
    int32_t c = q0 + (k == 0 ? 0 : (k == 1 ? -1 : 1));
    if (c <= -kQLimit || c >= kQLimit) continue;
    if (within_bound(double(x), double(dequantize(c, p.step)), p.eb)) { q = c; return true; }
  }
  return false;
}

TEST(unit_quantize_fast_path_agrees_with_exact_search) {
  std::mt19937_64 rng(21);
  long checked = 0;
  for (int k = 0; k < 400; ++k) {
    // Bounds from far above to far below the values' ulp, including eb not representable in float.
    const double mx = std::ldexp(1.0 + double(rng() % 1000) / 1000, int(rng() % 60) - 30);
    const double eb = mx * std::ldexp(1.0 + double(rng() % 997) / 991, -int(rng() % 40));
    auto pf = make_params<float>(eb, choose_step<float>(eb, true, -mx, mx), false, 0);
    auto pd = make_params<double>(eb, choose_step<double>(eb, true, -mx, mx), false, 0);
    CHECK(double(pf.eb_below) <= eb && double(pd.eb_below) <= eb);
    for (int i = 0; i < 2000; ++i) {
      double x = (double(rng() % 2000001) / 1000000 - 1) * mx;
      if (i % 7 == 0) x = double(int64_t(rng() % 64) - 32) * double(pf.step) * 0.5;  // near the midpoints
      int32_t a = 7, b = 7;
      bool fa = quantize(float(x), pf, a), fb = quantize_exact(float(x), pf, b);
      CHECK(fa == fb && (!fa || a == b));
      bool da = quantize(x, pd, a), db = quantize_exact(x, pd, b);
      CHECK(da == db && (!da || a == b));
      ++checked;
    }
  }
  CHECK(checked == 800000);
}

// The encoder's whole-block path accepts a lane with quantize_quick only; it must accept exactly the
// lanes quantize_fast calls kQuantOk, with the same q (else the archive would change). Edges: the
// quantizer's range (doubles whose rint reaches 2^30), NaN, Inf, the fill value, tiny steps.
template <class T> static long quick_agrees(std::mt19937_64& rng, double eb, double mx, bool fill, long& accepted) {
  auto p = make_params<T>(eb, choose_step<T>(eb, true, -mx, mx), fill, -999.0);
  long bad = 0;
  const double lim = double(kQLimit) * double(p.step);
  for (int i = 0; i < 4000; ++i) {
    double x;
    switch (i % 8) {
      case 0: x = (double(rng() % 2000001) / 1000000 - 1) * mx; break;
      case 1: x = (double(kQLimit) - 0.5 + double(int(rng() % 5) - 2) * 0.25) * double(p.step); break;  // rint near 2^30
      case 2: x = lim * (1 + double(int(rng() % 2001) - 1000) * 1e-9); break;
      case 3: x = i % 3 ? NAN : (i % 2 ? INFINITY : -INFINITY); break;
      case 4: x = -999.0; break;
      case 5: x = double(int64_t(rng() % 64) - 32) * double(p.step) * 0.5; break;  // midpoints
      case 6: x = -lim * (1 + double(int(rng() % 2001) - 1000) * 1e-7); break;
      default: x = std::ldexp(double(rng() % 1000), int(rng() % 80) - 60); break;
    }
    const T xt = T(x);
    int32_t qa = 7, qb = 7;
    const bool a = quantize_quick(xt, p, qa);
    const bool b = quantize_fast(xt, p, qb) == kQuantOk;
    if (a != b || (a && qa != qb)) ++bad;
    accepted += a;
  }
  return bad;
}

TEST(unit_quantize_quick_equals_fast_ok) {
  std::mt19937_64 rng(5);
  long bad = 0, accepted = 0;
  for (int k = 0; k < 300; ++k) {
    const double mx = std::ldexp(1.0 + double(rng() % 1000) / 1000, int(rng() % 60) - 30);
    const double eb = mx * std::ldexp(1.0 + double(rng() % 997) / 991, -int(rng() % 40));
    bad += quick_agrees<float>(rng, eb, mx, k % 2, accepted);
    bad += quick_agrees<double>(rng, eb, mx, k % 2, accepted);
  }
  CHECK_MSG(bad == 0, bad << " lanes where the quick path and quantize_fast disagree");
  CHECK(accepted > 300 * 2 * 4000 / 4);  // the cases above are not all rejected
}

namespace {
// Whether eb <= e * r exactly, and (tight) the next double above eb is above e * r: e, r > 0 doubles,
// eb finite. Scaled so that e * r lies in [1, 4), where fma's error term is exact.
bool rounded_toward_zero(double eb, double e, double r) {
  int se, sr;
  const double e1 = std::frexp(e, &se) * 2, r1 = std::frexp(r, &sr) * 2;  // in [1, 2)
  const double p = e1 * r1, lo = std::fma(e1, r1, -p);                    // e1 * r1 == p + lo exactly
  const int s = se + sr - 2;
  auto at_most = [&](double x) {  // x <= e * r
    const double x1 = std::ldexp(x, -s);  // exact: x1 is near [1, 4)
    return x1 < p || (x1 == p && lo >= 0);
  };
  return at_most(eb) && !at_most(std::nextafter(eb, INFINITY));
}
}  // namespace

// rel -> abs: eb_abs = bound * (max - min) rounded toward zero, never above it (rounding to nearest
// gave one subnormal ulp more, e.g. 0.7 * 2^-1074 -> 2^-1074).
TEST(unit_rel_bound_rounds_toward_zero) {
  using hpcz::BoundMode;
  using hpcz::quant::absolute_bound;
  const double tiny = std::numeric_limits<double>::denorm_min();
  std::mt19937_64 rng(51);
  int checked = 0;
  for (int k = 0; k < 200000; ++k) {
    const double e = std::ldexp(double(rng() >> 11) + 1, -53 - int(rng() % 12));  // (0, 1)
    double mn, mx;
    switch (k % 3) {
      case 0:  // a subnormal range, from subnormal values of either sign
        mn = -double(rng() % 1000) * tiny;
        mx = mn + double(rng() % (uint64_t(1) << (1 + rng() % 52)) + 1) * tiny;
        break;
      case 1:  // near the subnormals' top, normal and not
        mn = std::ldexp(double(rng() % 4096), -1034);
        mx = mn + std::ldexp(double(rng() % 4096 + 1), -1034 - int(rng() % 30));
        break;
      default:  // ordinary magnitudes, max - min a double
        mn = 0;
        mx = std::ldexp(double(rng() >> 11) + 1, int(rng() % 200) - 100);
    }
    const double r = mx - mn;
    REQUIRE(r > 0 && r + mn == mx && mx - r == mn);  // the range is exact in double here
    const double eb = rel_bound(e, true, mn, mx);
    CHECK_MSG(rounded_toward_zero(eb, e, r),
              std::hexfloat << "rel " << e << " of [" << mn << ", " << mx << "] -> " << eb);
    ++checked;
  }
  CHECK(checked == 200000);
  CHECK(rel_bound(0.7, true, 0.0, tiny) == 0.0);
  CHECK(rel_bound(0.5, true, -tiny, 2 * tiny) == tiny);  // 1.5 ulp -> 1
  // max - min not a double: 1 + 2^-53 + 2^-60 rounds up to 1 + 2^-52; the range is rounded down to 1.
  CHECK(rel_bound(0.5, true, -(0x1p-53 + 0x1p-60), 1.0) == 0.5);
  // max - min overflows: halves.
  const double big = std::numeric_limits<double>::max();
  CHECK(rel_bound(0.25, true, -big, big) == big / 2);
  CHECK(rel_bound(1.0, true, -big, big) == big);
  CHECK(rel_bound(1e-3, true, 1.0, 1.0) == 0.0);
  CHECK(absolute_bound(BoundMode::abs, 2.5, 0.0, true, 1.0, 1.0) == 2.5);
}

// The f32 encoder's staging by GPU (policy.hpp, choose_staging), on the shared memory of each generation
// (CUDA Programming Guide, "Technical Specifications per Compute Capability": opt-in bytes a block, bytes
// an SM; 1 KB reserved a block on all of them). Block bytes: ptxas -v's static shared memory of the f32
// encode kernels (up to 4,224 bytes on sm_80-sm_120) plus the dynamic bytes of encode_smem_bytes: the 66,096-byte
// stage, and the 32 KiB round buffer after it.
TEST(unit_fast_staging_by_gpu) {
  const SmemLimits hopper{227 * 1024, 228 * 1024, 1024};     // sm_90 (H100, H200); sm_100 (B200) the same
  const SmemLimits a100{163 * 1024, 164 * 1024, 1024};       // sm_80
  const SmemLimits ada{99 * 1024, 100 * 1024, 1024};         // sm_86, sm_89, sm_120 (RTX 30/40/50, A40, L40S)
  const uint32_t stage = 66096, with_buffer = stage + 32768;
  for (uint32_t stat : {4016u, 4224u}) {
    // Two blocks an SM with the round buffer on Hopper and Blackwell: the measured configuration, unchanged.
    CHECK(choose_staging(with_buffer + stat, FastPolicy<float>::encode_min_blocks, hopper) == EncodeStaging::round_buffer);
    // An A100 holds one such block an SM; without the buffer it holds two.
    CHECK(choose_staging(with_buffer + stat, FastPolicy<float>::encode_min_blocks, a100) == EncodeStaging::registers);
    CHECK(choose_staging(stage + stat, FastPolicy<float>::encode_min_blocks, a100) == EncodeStaging::round_buffer);
    // 99 KB parts: the buffer does not fit a block at all; without it, one block an SM.
    CHECK(choose_staging(with_buffer + stat, 1, ada) == EncodeStaging::registers);
    CHECK(choose_staging(stage + stat, 1, ada) == EncodeStaging::round_buffer);
  }
  // Exactly at the limits: fits; a byte over either: does not.
  CHECK(choose_staging(1000, 2, SmemLimits{1000, 4000, 1000}) == EncodeStaging::round_buffer);
  CHECK(choose_staging(1001, 2, SmemLimits{1000, 4000, 1000}) == EncodeStaging::registers);
  CHECK(choose_staging(1000, 2, SmemLimits{1000, 3999, 1000}) == EncodeStaging::registers);
}

// The bound layer: settle gives the range, eb and step of the keys and sample; store and bound_of carry
// a settled bound through the header unchanged; no value (min key > max key) leaves no range.
TEST(unit_bound_settles_and_round_trips_the_header) {
  using hpcz::BoundMode;
  namespace quant = hpcz::quant;
  hpcz::format::HeaderFields h{};
  h.dtype = hpcz::DType::f32;
  h.mode = BoundMode::rel;
  h.bound = 1e-3;
  h.flags = hpcz::format::kFlagFill;
  h.fill = -999.0;
  const quant::Bound asked = quant::bound_of(h);
  CHECK(asked.has_fill && asked.fill == -999.0 && !asked.range_valid && asked.transform == quant::Transform::identity);
  const quant::Bound b = quant::settle(asked, quant::range_key(-2.0), quant::range_key(6.0), 0.0);
  CHECK(b.range_valid && b.range_min == -2.0 && b.range_max == 6.0);
  CHECK(b.eb_abs == quant::rel_bound(1e-3, true, -2.0, 6.0));
  CHECK(b.step == quant::choose_step<float>(b.eb_abs, true, -2.0, 6.0));
  quant::store(h, b);
  CHECK(h.flags == (hpcz::format::kFlagFill | hpcz::format::kFlagRangeValid) && h.eb_abs == b.eb_abs && h.step == b.step);
  const quant::Bound back = quant::bound_of(h);
  CHECK(back.range_valid && back.range_min == b.range_min && back.range_max == b.range_max && back.eb_abs == b.eb_abs &&
        back.step == b.step && back.mode == b.mode && back.bound == b.bound && back.has_fill && back.fill == b.fill);
  // An abs bound takes the step's margin from the sample, not the range.
  quant::Bound a = asked;
  a.mode = BoundMode::abs;
  a.bound = 0.5;
  const quant::Bound s = quant::settle(a, quant::range_key(-2.0), quant::range_key(6.0), 1e6);
  CHECK(quant::settle_as<float>(a, quant::range_key(-2.0), quant::range_key(6.0), 1e6).step == s.step);
  CHECK(s.eb_abs == 0.5 && s.step == quant::choose_step<float>(0.5, true, -2.0, 6.0, 1e6));
  const quant::Bound none = quant::settle(asked, ~uint64_t(0), 0, 0.0);
  CHECK(!none.range_valid && none.range_min == 0.0 && none.range_max == 0.0 && none.eb_abs == 0.0 && none.step == 0.0);
  quant::store(h, none);
  CHECK(h.flags == hpcz::format::kFlagFill);
  CHECK(quant::mode_known(BoundMode::abs) && quant::mode_known(BoundMode::rel) && quant::mode_known(BoundMode::abs_and_rel) &&
        quant::mode_known(BoundMode::abs_or_rel) && quant::mode_known(BoundMode::pw_rel) && quant::mode_known(BoundMode::psnr) && !quant::mode_known(BoundMode(0)) &&
        !quant::mode_known(BoundMode(8)));
}
