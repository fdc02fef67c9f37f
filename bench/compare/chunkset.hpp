// Shared input handling for nvcomp_deflate_bench and libdeflate_bench.
//
// Input: a directory holding chunks.bin / chunks.idx [/ expected.bin], or the files
// given explicitly: chunks.bin chunks.idx [expected.bin].
//   chunks.bin   raw Deflate streams (RFC 1951) concatenated
//   chunks.idx   per chunk 3 little-endian uint64: comp offset, comp size, uncomp size
//   expected.bin concatenated uncompressed outputs (optional)
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace cmpbench {

struct Chunk {
  uint64_t comp_off, comp_size, raw_size;
  uint64_t raw_off;  // prefix sum of raw_size, filled by load()
};

struct ChunkSet {
  std::vector<uint8_t> comp;      // chunks.bin
  std::vector<Chunk> chunks;
  std::vector<uint8_t> expected;  // empty if absent
  bool have_expected = false;
  uint64_t comp_total = 0;        // sum of comp_size
  uint64_t raw_total = 0;         // sum of raw_size
  uint64_t max_raw = 0, max_comp = 0;
};

[[noreturn]] inline void die(const std::string& m) {
  std::fprintf(stderr, "error: %s\n", m.c_str());
  std::exit(2);
}

inline bool is_dir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
inline bool is_file(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

inline std::vector<uint8_t> read_all(const std::string& p) {
  FILE* f = std::fopen(p.c_str(), "rb");
  if (!f) die("cannot open " + p);
  std::fseek(f, 0, SEEK_END);
  long long n = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  if (n < 0) die("cannot size " + p);
  std::vector<uint8_t> v((size_t)n);
  if (n && std::fread(v.data(), 1, (size_t)n, f) != (size_t)n) die("short read " + p);
  std::fclose(f);
  return v;
}

inline uint64_t rd_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// paths: either {dir} or {bin, idx} or {bin, idx, expected}
inline ChunkSet load(const std::vector<std::string>& paths, bool want_expected) {
  std::string bin, idx, exp;
  if (paths.size() == 1 && is_dir(paths[0])) {
    bin = paths[0] + "/chunks.bin";
    idx = paths[0] + "/chunks.idx";
    exp = paths[0] + "/expected.bin";
    if (!is_file(exp)) exp.clear();
  } else if (paths.size() == 2 || paths.size() == 3) {
    bin = paths[0];
    idx = paths[1];
    if (paths.size() == 3) exp = paths[2];
  } else {
    die("expected DIR or chunks.bin chunks.idx [expected.bin]");
  }
  ChunkSet cs;
  cs.comp = read_all(bin);
  std::vector<uint8_t> ib = read_all(idx);
  if (ib.size() % 24 != 0) die("chunks.idx size is not a multiple of 24");
  size_t n = ib.size() / 24;
  if (n == 0) die("chunks.idx holds no chunk");
  cs.chunks.resize(n);
  uint64_t roff = 0;
  for (size_t i = 0; i < n; ++i) {
    Chunk& c = cs.chunks[i];
    c.comp_off = rd_le64(&ib[24 * i]);
    c.comp_size = rd_le64(&ib[24 * i + 8]);
    c.raw_size = rd_le64(&ib[24 * i + 16]);
    c.raw_off = roff;
    if (c.comp_off > cs.comp.size() || c.comp_size > cs.comp.size() - c.comp_off)
      die("chunk " + std::to_string(i) + " lies outside chunks.bin");
    roff += c.raw_size;
    cs.comp_total += c.comp_size;
    cs.max_raw = std::max(cs.max_raw, c.raw_size);
    cs.max_comp = std::max(cs.max_comp, c.comp_size);
  }
  cs.raw_total = roff;
  if (want_expected && !exp.empty()) {
    cs.expected = read_all(exp);
    cs.have_expected = true;
    if (cs.expected.size() != cs.raw_total)
      die("expected.bin has " + std::to_string(cs.expected.size()) + " bytes, idx says " +
          std::to_string(cs.raw_total));
  }
  return cs;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Compare one decoded chunk with expected; prints the first few mismatches to stderr.
// Returns true if identical.
inline bool check_chunk(size_t chunk, const uint8_t* got, uint64_t got_size, const uint8_t* want,
                        uint64_t want_size, int& reported, int max_report = 10) {
  if (got_size == want_size && std::memcmp(got, want, want_size) == 0) return true;
  if (reported < max_report) {
    uint64_t first = 0, m = std::min(got_size, want_size);
    while (first < m && got[first] == want[first]) ++first;
    std::fprintf(stderr, "mismatch: chunk %zu size got=%llu want=%llu first_diff_at=%llu\n", chunk,
                 (unsigned long long)got_size, (unsigned long long)want_size, (unsigned long long)first);
  }
  ++reported;
  return false;
}

}  // namespace cmpbench
