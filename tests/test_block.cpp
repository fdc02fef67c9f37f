// Unit properties of the fast codec's building blocks.
#include <limits>
#include <random>

#include "common.hpp"
#include "fle/fast_chunk.hpp"

using namespace hpcz::fle;

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
    auto pf = make_params<float>(eb, false, 0);
    auto pd = make_params<double>(eb, false, 0);
    CHECK(double(pf.step) <= 2 * eb);
    CHECK(pd.step <= 2 * eb);
    CHECK(pf.step >= 0 && pd.step > 0);
  }
  CHECK(make_params<float>(1e300, false, 0).step == std::numeric_limits<float>::max());
}

TEST(unit_plan_and_payload_size_agree) {
  // Every code the planner emits has the size payload_size() says, and decoding restores the values.
  std::mt19937 rng(5);
  auto p = make_params<float>(0.5, false, 0);  // step 1: q = value
  for (int trial = 0; trial < 20000; ++trial) {
    float v[32];
    int shape = trial % 5;
    int32_t base = int32_t(rng() % 2000000) - 1000000;
    for (int i = 0; i < 32; ++i) {
      int32_t d = shape == 0 ? 0 : shape == 1 ? int32_t(rng() % 3) - 1 : shape == 2 ? int32_t(rng() % 1000) - 500
                : shape == 3 ? int32_t(rng() % (1 << 22)) - (1 << 21) : i;
      v[i] = float(base + d);
    }
    if (trial % 7 == 0) v[rng() % 32] = std::numeric_limits<float>::quiet_NaN();
    int count = trial % 11 == 0 ? int(rng() % 32) + 1 : 32;
    int32_t q[32];
    BlockPlan bp = plan_block(v, count, p, q);
    CHECK(payload_size(bp.code, 4) == int(bp.payload));
    uint8_t buf[256];
    float exc[32];
    write_block(bp, v, count, q, buf, [&](int j, float x) { exc[j] = x; });
    float out[32];
    decode_block<float>(bp.code, buf, p.step, [&](int j) { return exc[j]; }, out);
    for (int i = 0; i < count; ++i) {
      bool same = std::memcmp(&v[i], &out[i], 4) == 0 || std::fabs(double(v[i]) - out[i]) <= 0.5;
      CHECK_MSG(same, "trial " << trial << " lane " << i << " code " << int(bp.code));
      if (!same) return;
    }
  }
}

TEST(unit_code_table_is_closed) {
  // Codes 124..126 and raw-with-exceptions are never written; the decoder rejects them.
  for (int c = 0; c < 256; ++c) {
    int s = payload_size(uint8_t(c), 4);
    bool reserved = (c & 0x7f) >= 124 && (c & 0x7f) <= 126;
    bool raw_exc = c == 0xff;
    CHECK((s < 0) == (reserved || raw_exc));
  }
}

TEST(unit_widest_deltas) {
  // Alternating +-(2^30 - 1): deltas of 2^31 - 2 need 31 bits.
  auto p = make_params<double>(0.5, false, 0);
  double v[32];
  for (int i = 0; i < 32; ++i) v[i] = (i % 2 ? 1 : -1) * double((1 << 30) - 1);
  int32_t q[32];
  BlockPlan bp = plan_block(v, 32, p, q);
  CHECK(bp.mask == 0);
  CHECK(bp.code == 31);
  uint8_t buf[300];
  write_block(bp, v, 32, q, buf, [](int, double) {});
  double out[32];
  decode_block<double>(bp.code, buf, p.step, [](int) { return 0.0; }, out);
  for (int i = 0; i < 32; ++i) CHECK(out[i] == v[i]);
  v[3] = double(1 << 30);  // beyond the quantizer's range: an exception
  bp = plan_block(v, 32, p, q);
  CHECK(bp.mask == (1u << 3));
}
