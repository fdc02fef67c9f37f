// A std::vector whose resize leaves new elements uninitialized (trivial types): for large scratch that
// a parallel pass writes in full, so that the pages are first touched, and faulted in, by that pass on
// every thread instead of zeroed by the calling thread alone.
#pragma once
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

namespace hpcz {

template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  static_assert(std::is_trivially_default_constructible_v<T>);
  template <class U> struct rebind { using other = DefaultInitAllocator<U>; };
  DefaultInitAllocator() = default;
  template <class U> DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
  template <class U> void construct(U* p) noexcept { ::new (static_cast<void*>(p)) U; }
  template <class U, class... Args> void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

template <class T> using ScratchVector = std::vector<T, DefaultInitAllocator<T>>;

// v as n copies of value, written (and its new pages first touched) by `threads` threads.
template <class T>
void parallel_fill(ScratchVector<T>& v, uint64_t n, T value, [[maybe_unused]] int threads) {
  v.resize(n);
  T* d = v.data();
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t i = 0; i < int64_t(n); ++i) d[i] = value;
}

}  // namespace hpcz
