// The ratio codec's GPU parts that tests and benchmarks call directly (ratio_gpu.cu).
#pragma once
#include <cstdint>
#include <vector>

namespace hpcz::ratio {

// The codebook kernel on its own (tests and the codebook benchmark): one book per histogram of nsym
// counts, a thread block each; returns the code lengths (nsym per book); *ms gets the median kernel
// time of reps launches after a warm-up.
std::vector<uint8_t> gpu_build_books(const std::vector<uint32_t>& hists, uint32_t nsym, double* ms, int reps = 1);

}  // namespace hpcz::ratio
