// The archive passes for a batch of arrays coded in one set of launches: each kernel takes every
// array of the batch (gpu::EncodeTarget, in device memory), a grid's y index (or its blocks) an array.
#pragma once
#include "gpu/archive_passes.cuh"

namespace hpcz::gpu {

// Every array's state reset, all look-back descriptors (one run for the batch) and the chunk counter
// zeroed.
static __global__ void init_batch_kernel(CompressState* states, unsigned n_items, RangeKeys keys,
                                         unsigned long long* desc, unsigned long long n_desc, unsigned int* counter) {
  let_dependents_launch();
  const unsigned long long first = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x,
                           stride = (unsigned long long)gridDim.x * blockDim.x;
  if (first == 0) *counter = 0;
  for (unsigned long long i = first; i < n_items; i += stride) reset_state(states + i, keys);
  for (unsigned long long i = first; i < n_desc; i += stride) desc[i] = 0;
}

// The step's samples: blockIdx.x as in sample_kernel (launched with the largest array's grid), y the array.
template <class T>
static __global__ void __launch_bounds__(kPassThreads) sample_batch_kernel(const EncodeTarget<T>* items, unsigned n_items,
                                                                int has_fill, T fill) {
  for (unsigned i = blockIdx.y; i < n_items; i += gridDim.y) {
    const EncodeTarget<T> t = items[i];
    sample_block(t.in, t.n, has_fill, fill, t.st, blockIdx.x);
    __syncthreads();  // its shared words are the next array's
  }
  wait_for_prior_grid();
}

// The range pass: gridDim.x blocks share an array, y the array.
template <class T>
static __global__ void __launch_bounds__(kPassThreads) range_batch_kernel(const EncodeTarget<T>* items, unsigned n_items,
                                                               int has_fill, T fill) {
  NoNaNHook none;
  for (unsigned i = blockIdx.y; i < n_items; i += gridDim.y) {
    const EncodeTarget<T> t = items[i];
    range_blocks(t.in, t.n, has_fill, fill, t.st, none, true, blockIdx.x, gridDim.x);
    __syncthreads();  // the reduction's shared storage is the next array's
  }
}

// Every array's header, a warp an array.
template <class T>
static __global__ void seal_batch_kernel(const format::HeaderFields* headers, const EncodeTarget<T>* items,
                                         unsigned n_items) {
  wait_for_prior_grid();  // the encoder's states and tables
  for (unsigned i = blockIdx.x; i < n_items; i += gridDim.x) {
    seal_archive(headers[i], items[i].st, items[i].out, items[i].size);
    __syncwarp();  // the header's shared bytes are the next array's
  }
}

}  // namespace hpcz::gpu
