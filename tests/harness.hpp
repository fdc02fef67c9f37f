// A minimal test harness (no dependency, so the same binary builds on the GPU machine, which has no
// GoogleTest). TEST registers a case; CHECK records a failure and goes on; REQUIRE stops the case.
// The run ends with the line "N passed, N failed".
#pragma once
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace harness {
struct Case {
  std::string name;
  std::function<void()> fn;
};
inline std::vector<Case>& cases() {
  static std::vector<Case> c;
  return c;
}
inline int& failures() {
  static int f = 0;
  return f;
}
struct Register {
  Register(const char* n, std::function<void()> f) { cases().push_back({n, std::move(f)}); }
};
struct Abort {};
std::string data_dir_bundled();
std::string data_dir_shared();  // "" when ../shared/data is absent
}  // namespace harness

#define HZ_CAT2(a, b) a##b
#define HZ_CAT(a, b) HZ_CAT2(a, b)
#define TEST(name)                                                         \
  static void name();                                                      \
  static harness::Register HZ_CAT(reg_, name)(#name, name);                \
  static void name()

#define CHECK(cond)                                                                        \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      ++harness::failures();                                                               \
      std::fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);      \
    }                                                                                      \
  } while (0)
#define CHECK_MSG(cond, msg)                                                                              \
  do {                                                                                                    \
    if (!(cond)) {                                                                                        \
      ++harness::failures();                                                                              \
      std::ostringstream os_;                                                                             \
      os_ << msg;                                                                                         \
      std::fprintf(stderr, "  %s:%d: CHECK failed: %s (%s)\n", __FILE__, __LINE__, #cond, os_.str().c_str()); \
    }                                                                                                     \
  } while (0)
#define REQUIRE(cond)                                                                      \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      ++harness::failures();                                                               \
      std::fprintf(stderr, "  %s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond);    \
      throw harness::Abort{};                                                              \
    }                                                                                      \
  } while (0)
