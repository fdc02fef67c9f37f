// A child forked after the parent used hpcz (issue 51): the CPU backend finishes there with the parent's
// bytes (GNU libgomp hangs such a child unless hpcz releases its pool before the fork), the automatic
// backend runs on the CPU, and where the parent started CUDA, Backend::gpu is refused with the reason.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "harness.hpp"
#include "hpcz/hpcz.hpp"

namespace {

// 4 MiB of a random walk: above the size at which the CPU backend takes every thread.
std::vector<float> walk() {
  std::mt19937 rng(51);
  std::normal_distribution<float> step;
  std::vector<float> v(size_t(1) << 20);
  float x = 0;
  for (float& y : v) y = x += step(rng);
  return v;
}

struct Case {
  hpcz::Codec codec;
  bool second_stage;
};
const Case kCases[] = {{hpcz::Codec::fast, false}, {hpcz::Codec::ratio, false}, {hpcz::Codec::interp, false},
                       {hpcz::Codec::fast, true}};
const std::vector<uint64_t> kDims = {1024, 1024};

hpcz::Options options(const Case& c, hpcz::Backend b) {
  hpcz::Options o;
  o.mode = hpcz::BoundMode::abs;
  o.bound = 1e-3;
  o.codec = c.codec;
  o.second_stage = c.second_stage;
  o.backend = b;
  return o;
}

bool within_bound(const std::vector<float>& a, const std::vector<uint8_t>& archive) {
  std::vector<uint8_t> out;
  hpcz::decompress(archive.data(), archive.size(), out, hpcz::Backend::automatic);
  const float* b = reinterpret_cast<const float*>(out.data());
  if (out.size() != a.size() * sizeof(float)) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(std::fabs(double(b[i]) - double(a[i])) <= 1e-3)) return false;
  return true;
}

// What the child checks; its exit status (0: all good). SIGALRM ends a child that hangs.
int child(const std::vector<float>& a, const std::vector<std::vector<uint8_t>>& parent, bool parent_on_gpu) {
  alarm(60);
  try {
    for (size_t k = 0; k < std::size(kCases); ++k) {
      if (hpcz::compress(a.data(), hpcz::DType::f32, kDims, options(kCases[k], hpcz::Backend::cpu)) != parent[k]) return 1;
      if (!within_bound(a, parent[k])) return 2;
      if (!within_bound(a, hpcz::compress(a.data(), hpcz::DType::f32, kDims, options(kCases[k], hpcz::Backend::automatic))))
        return 3;
    }
    std::vector<std::vector<uint8_t>> batch;
    const std::vector<hpcz::ArrayRef> arrays(3, hpcz::ArrayRef{a.data(), hpcz::DType::f32, kDims});
    for (const auto& s : hpcz::compress_batch(arrays, options(kCases[1], hpcz::Backend::automatic), batch))
      if (!s.ok()) return 4;
    if (parent_on_gpu) {
      if (hpcz::gpu_available()) return 5;
      try {
        hpcz::compress(a.data(), hpcz::DType::f32, kDims, options(kCases[0], hpcz::Backend::gpu));
        return 6;
      } catch (const hpcz::Error& e) {
        const std::string m = e.what();
        if (e.code() != hpcz::ErrorCode::backend_unavailable || m.find("fork") == std::string::npos ||
            m.find("spawn") == std::string::npos)
          return 7;
      }
    }
  } catch (...) {
    return 8;
  }
  return 0;
}

void fork_and_check(bool use_gpu) {
  const std::vector<float> a = walk();
  std::vector<std::vector<uint8_t>> parent;
  for (const Case& c : kCases) {  // every CPU path once: OpenMP's threads now exist in the parent
    parent.push_back(hpcz::compress(a.data(), hpcz::DType::f32, kDims, options(c, hpcz::Backend::cpu)));
    std::vector<uint8_t> out;
    hpcz::decompress(parent.back().data(), parent.back().size(), out, hpcz::Backend::cpu);
  }
  if (use_gpu) hpcz::compress(a.data(), hpcz::DType::f32, kDims, options(kCases[0], hpcz::Backend::gpu));
  for (int round = 0; round < 2; ++round) {  // the parent again between forks: its threads come back
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) _exit(child(a, parent, use_gpu));
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(!WIFSIGNALED(status), "the forked child was killed by signal "
                                         << WTERMSIG(status) << (WTERMSIG(status) == SIGALRM ? " (it hung)" : ""));
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the forked child failed check " << WEXITSTATUS(status));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return;  // one round tells
    CHECK(hpcz::compress(a.data(), hpcz::DType::f32, kDims, options(kCases[1], hpcz::Backend::cpu)) == parent[1]);
  }
}

}  // namespace

TEST(roundtrip_fork_child_cpu) { fork_and_check(false); }

// Runs where a GPU is (the CPU-only build and CI skip it).
TEST(roundtrip_fork_child_after_cuda) {
  if (!hpcz::gpu_available()) return;
  fork_and_check(true);
}
