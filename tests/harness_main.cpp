#include <sys/stat.h>

#include <chrono>
#include <cstring>

#include "harness.hpp"

namespace harness {
static bool exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}
std::string data_dir_bundled() { return std::string(HPCZ_SOURCE_DIR) + "/data"; }
std::string data_dir_shared() {
  if (const char* e = std::getenv("HPCZ_SHARED_DATA")) return exists(e) ? e : "";
  for (const char* rel : {"/../shared/data", "/.data"}) {
    std::string p = std::string(HPCZ_SOURCE_DIR) + rel;
    if (exists(p + "/MANIFEST.tsv") || exists(p)) return p;
  }
  return "";
}
}  // namespace harness

// usage: hpcz_tests [substring ...]  (runs the cases whose names contain any substring)
//        hpcz_tests --every-test-in group ...  (fails, naming them, if some case is in none of the groups
//        ctest runs, so that CI runs every case)
int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--every-test-in") == 0) {
    int outside = 0;
    for (auto& c : harness::cases()) {
      bool in = false;
      for (int i = 2; i < argc; ++i) in |= c.name.find(argv[i]) != std::string::npos;
      if (!in) std::fprintf(stderr, "%s is in no group ctest runs\n", c.name.c_str()), ++outside;
    }
    std::printf("%zu cases, %d in no group\n", harness::cases().size(), outside);
    return outside ? 1 : 0;
  }
  int passed = 0, failed = 0;
  for (auto& c : harness::cases()) {
    bool pick = argc < 2;
    for (int i = 1; i < argc; ++i) pick |= c.name.find(argv[i]) != std::string::npos;
    if (!pick) continue;
    const int before = harness::failures();
    auto t0 = std::chrono::steady_clock::now();
    std::fprintf(stderr, "[ RUN  ] %s\n", c.name.c_str());
    try {
      c.fn();
    } catch (const harness::Abort&) {
    } catch (const std::exception& e) {
      ++harness::failures();
      std::fprintf(stderr, "  unexpected exception: %s\n", e.what());
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    bool ok = harness::failures() == before;
    std::fprintf(stderr, "[ %s ] %s (%.2f s)\n", ok ? " OK " : "FAIL", c.name.c_str(), s);
    (ok ? passed : failed)++;
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
