// The edges of a storage type's array (common/storage.hpp): its values widened to the code type before
// coding, and the decoded code values narrowed back into the caller's buffer. Host, on all cores.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>

#include "common/parallel.hpp"
#include "common/storage.hpp"
#include "pipeline/internal.hpp"

namespace hpcz::pipeline {

namespace {
constexpr uint64_t kPiece = uint64_t(1) << 16;  // values a task: a few hundred KiB of code values

template <class S, class F> void by_pieces(uint64_t n, F&& f) {
  const int64_t pieces = int64_t((n + kPiece - 1) / kPiece);
  for_each_index(pieces, threads_for(n * sizeof(S)), 1, [&](int64_t p) {
    const uint64_t at = uint64_t(p) * kPiece;
    f(at, std::min(kPiece, n - at));
  });
}
}  // namespace

void check_widens_exactly(const void* in, DType storage, uint64_t n) {
  detail::dispatch_storage(storage, [&](auto tr) {
    using Tr = decltype(tr);
    if constexpr (Tr::may_round) {
      using S = typename Tr::storage_type;
      const S* v = static_cast<const S*>(in);
      std::atomic<uint64_t> first{n};  // the smallest index found beyond +-2^53
      by_pieces<S>(n, [&](uint64_t at, uint64_t count) {
        bool exact = true;  // a plain scan of the piece (vectorizable); the rare refusal is found after
        for (uint64_t i = at; i < at + count; ++i) exact &= Tr::widens_exactly(v[i]);
        if (exact) return;
        uint64_t i = at;
        while (Tr::widens_exactly(v[i])) ++i;
        uint64_t seen = first.load();
        while (i < seen && !first.compare_exchange_weak(seen, i)) {
        }
      });
      const uint64_t i = first.load();
      if (i < n)
        fail(ErrorCode::invalid_argument, std::string(Tr::name) + " value " + std::to_string(v[i]) + " at index " +
                                              std::to_string(i) +
                                              " is beyond +-2^53, the integers float64 code values hold exactly "
                                              "(subtract an offset first)");
    }
  });
}

// Buffers are left uninitialized and first touched by the pass that fills them, on all cores: a zeroed
// vector cost a single-threaded memset and page faults a call (host calls of float16 ran at 0.5 GB/s).
std::unique_ptr<uint8_t[]> widen_values(const void* in, DType storage, uint64_t n) {
  return detail::dispatch_storage(storage, [&](auto tr) {
    using Tr = decltype(tr);
    using S = typename Tr::storage_type;
    using C = typename Tr::code_type;
    std::unique_ptr<uint8_t[]> out(new uint8_t[n * sizeof(C) + 1]);
    const S* src = static_cast<const S*>(in);
    C* dst = reinterpret_cast<C*>(out.get());
    by_pieces<S>(n, [&](uint64_t at, uint64_t count) {
      for (uint64_t i = at; i < at + count; ++i) dst[i] = Tr::widen(src[i]);
    });
    return out;
  });
}

void narrow_values(const void* in, DType storage, uint64_t n, void* out) {
  detail::dispatch_storage(storage, [&](auto tr) {
    using Tr = decltype(tr);
    using S = typename Tr::storage_type;
    using C = typename Tr::code_type;
    const C* src = static_cast<const C*>(in);
    S* dst = static_cast<S*>(out);
    by_pieces<S>(n, [&](uint64_t at, uint64_t count) {
      for (uint64_t i = at; i < at + count; ++i) dst[i] = Tr::narrow(src[i]);
    });
  });
}

std::unique_ptr<uint8_t[]> code_buffer(DType storage, uint64_t n) {
  const size_t w = dtype_size(detail::code_dtype(storage));
  std::unique_ptr<uint8_t[]> out(new uint8_t[n * w + 1]);
  uint8_t* p = out.get();
  by_pieces<uint8_t>(n * w, [&](uint64_t at, uint64_t count) { std::memset(p + at, 0, count); });
  return out;
}

ArchiveInfo code_info(ArchiveInfo info) {
  info.dtype = detail::code_dtype(info.dtype);
  return info;
}

}  // namespace hpcz::pipeline
