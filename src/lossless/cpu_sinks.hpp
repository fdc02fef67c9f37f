// Output sinks of the shared decoders (orc_rle.hpp, inflate.hpp) on the CPU: a caller-sized buffer
// (the batched API, byte for byte what the GPU sinks write) and a growing vector (a whole stream of
// unknown decoded size).
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "lossless/inflate.hpp"
#include "lossless/orc_rle.hpp"

namespace hpcz::lossless {

enum class SinkError { none, overflow, bad_value };

// Integers as little-endian elements of t.bytes. Capacity in elements; grows instead when v is set.
struct IntSink {
  IntType t;
  uint8_t* out;
  uint64_t cap;  // elements
  std::vector<uint8_t>* v = nullptr;
  uint64_t n = 0;
  SinkError err = SinkError::none;

  bool put(int64_t x) {
    if (!t.fits(x)) { err = SinkError::bad_value; return false; }
    if (v) {
      for (int b = 0; b < t.bytes; ++b) v->push_back(uint8_t(uint64_t(x) >> (8 * b)));
    } else {
      if (n >= cap) { err = SinkError::overflow; return false; }
      store(n, x);
    }
    ++n;
    return true;
  }
  template <class R> bool literals(R& r, uint32_t count) { return serial_literals(r, t, *this, count); }
  // Capacity first, then the values: the order the GPU sink checks in. (On a failure what was
  // written does not matter: the chunk is rejected.)
  // Little-endian hosts: the element is the value's low bytes. Fixed-size copies (a copy of t.bytes
  // bytes was a memcpy call per value, the largest cost of the RLE decoders in perf).
  void store(uint64_t i, int64_t x) {
    const uint64_t u = uint64_t(x);
    uint8_t* p = out + i * uint64_t(t.bytes);
    switch (t.bytes) {
      case 1: *p = uint8_t(u); break;
      case 2: { const uint16_t v = uint16_t(u); std::memcpy(p, &v, 2); break; }
      case 4: { const uint32_t v = uint32_t(u); std::memcpy(p, &v, 4); break; }
      default: std::memcpy(p, &u, 8); break;
    }
  }
  template <class F> bool values(uint32_t count, F&& f) {
    if (v) {
      for (uint32_t k = 0; k < count; ++k)
        if (!put(f(k))) return false;
      return true;
    }
    if (count > cap - n) { err = SinkError::overflow; return false; }
    for (uint32_t k = 0; k < count; ++k) {
      const int64_t x = f(k);
      if (!t.fits(x)) { err = SinkError::bad_value; return false; }
      store(n + k, x);
    }
    n += count;
    return true;
  }
  template <class D> bool prefix(uint32_t count, int64_t first, D&& d) {
    if (!v && count > cap - n) { err = SinkError::overflow; return false; }
    uint64_t x = uint64_t(first);
    for (uint32_t k = 0; k < count; ++k) {
      if (k) x += d(k);
      if (!t.fits(int64_t(x))) { err = SinkError::bad_value; return false; }
      if (v) put(int64_t(x));
      else store(n + k, int64_t(x));
    }
    if (!v) n += count;
    return true;
  }
  bool finish() { return true; }
};

// Bytes; capacity in bytes, or a growing vector.
struct ByteSink {
  uint8_t* out;
  uint64_t cap;
  std::vector<uint8_t>* v = nullptr;
  uint64_t n = 0;

  // kChecked = false: the caller knows there is room (inflate_codes' fast zone; see room()).
  template <bool kChecked = true> bool put(uint8_t b) {
    if (v) {
      v->push_back(b);
    } else {
      if (kChecked && n >= cap) return false;
      out[n] = b;
    }
    ++n;
    return true;
  }
  template <bool kChecked = true> bool put2(uint8_t a, uint8_t b) {  // both or neither
    if (kChecked && !v && cap - n < 2) return false;
    put<false>(a);
    put<false>(b);
    return true;
  }
  template <bool kChecked = true> InflateStatus copy(uint32_t dist, uint32_t len) {
    if (dist == 0 || dist > n) return InflateStatus::bad_distance;
    if (v) {
      const size_t from = v->size() - dist;
      for (uint32_t k = 0; k < len; ++k) v->push_back((*v)[from + k]);
    } else {
      if (kChecked && len > cap - n) return InflateStatus::output_full;
      for (uint32_t k = 0; k < len; ++k) out[n + k] = out[n - dist + k];
    }
    n += len;
    return InflateStatus::ok;
  }
  // Bytes that can still be written (a growing vector: unbounded).
  uint64_t room() const { return v ? ~uint64_t(0) : cap - n; }
  void flush() {}
};

}  // namespace hpcz::lossless
