#include "common/parallel.hpp"

#include <pthread.h>

namespace hpcz {

bool register_fork_handlers() {
  // Idempotent; one registration a process. The kind is ignored by libgomp (it always ends the pool's
  // threads); LLVM's libomp re-initialises itself in the child on its own.
#ifdef _OPENMP
  static const bool done = pthread_atfork([] { omp_pause_resource_all(omp_pause_hard); }, nullptr, nullptr) == 0;
  return done;
#else
  return true;  // no OpenMP pool to release
#endif
}

}  // namespace hpcz
