// OpenMP's thread counts where the build has OpenMP (HPCZ_OPENMP), and one thread where it has none
// (Apple's clang): the CPU backend's pragmas are then ignored and its loops run on the calling thread.
// No loop's result depends on its thread count, so both builds write the same bytes (golden tests).
#pragma once
#ifdef _OPENMP
#include <omp.h>
#endif

namespace hpcz {
#ifdef _OPENMP
inline int max_threads() { return omp_get_max_threads(); }
inline int thread_num() { return omp_get_thread_num(); }
inline int omp_team_size() { return omp_get_num_threads(); }
inline bool in_active_parallel() { return omp_get_active_level() > 0; }
// The threads the calling thread's next regions (and max_threads()) take.
inline void set_max_threads(int n) { omp_set_num_threads(n); }
// Parallel regions nested one level inside the current one take their own threads (max-active-levels
// is a data-environment setting since OpenMP 5.0: the calling thread's own, not the process's).
inline void enable_nested_teams() {
  if (omp_get_max_active_levels() < omp_get_active_level() + 1) omp_set_max_active_levels(omp_get_active_level() + 1);
}
#else
inline int max_threads() { return 1; }
inline int thread_num() { return 0; }
inline int omp_team_size() { return 1; }
inline bool in_active_parallel() { return false; }
inline void set_max_threads(int) {}
inline void enable_nested_teams() {}
#endif
}  // namespace hpcz
