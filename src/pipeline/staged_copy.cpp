// Pageable memory reaches the device through pinned staging buffers: cudaMemcpy from pageable memory
// stages it too, but through one thread and small buffers (0.19-0.22 s of a 539 MB file-to-file
// compression on an H200 went to copies and allocations). Here the host side of each piece is copied
// by all OpenMP threads, and the next piece is filled while the copy engine moves the last one.
#include "common/cuda_check.hpp"
#include "pipeline/staged_copy.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "hpcz/hpcz.hpp"

namespace hpcz::pipeline {
namespace {

constexpr size_t kPiece = size_t(32) << 20;  // two in flight; 64 MiB of pinned memory for a large copy


void parallel_memcpy(uint8_t* dst, const uint8_t* src, size_t n) {
  constexpr size_t kSlice = size_t(1) << 20;
  const long long slices = (long long)((n + kSlice - 1) / kSlice);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < slices; ++i) {
    const size_t at = size_t(i) * kSlice;
    std::memcpy(dst + at, src + at, std::min(kSlice, n - at));
  }
}

bool is_pinned(const void* h) {
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, h) != cudaSuccess) {
    cudaGetLastError();  // pageable memory can report an error on older runtimes: clear it
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

// The pinned buffers, a stream and an event per buffer, released on every path out.
struct Staging {
  uint8_t* pin = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t done[2] = {nullptr, nullptr};
  Staging() {
    check(cudaMallocHost(&pin, 2 * kPiece), "cudaMallocHost staging");
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "staging stream");
    for (auto& e : done) check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "staging event");
  }
  ~Staging() {
    if (stream) cudaStreamSynchronize(stream);  // an error may leave a copy in flight from pin
    for (auto e : done)
      if (e) cudaEventDestroy(e);
    if (stream) cudaStreamDestroy(stream);
    if (pin) cudaFreeHost(pin);
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  uint8_t* buffer(size_t k) { return pin + (k & 1) * kPiece; }
};

}  // namespace

void copy_to_device(void* d_dst, const void* h_src, size_t n) {
  if (n < 2 * kPiece || is_pinned(h_src)) {
    check(cudaMemcpy(d_dst, h_src, n, cudaMemcpyHostToDevice), "copy to device");
    return;
  }
  Staging st;
  auto* d = static_cast<uint8_t*>(d_dst);
  auto* h = static_cast<const uint8_t*>(h_src);
  for (size_t k = 0, at = 0; at < n; ++k, at += kPiece) {
    const size_t len = std::min(kPiece, n - at);
    if (k >= 2) check(cudaEventSynchronize(st.done[k & 1]), "copy to device");  // the buffer is free again
    parallel_memcpy(st.buffer(k), h + at, len);
    check(cudaMemcpyAsync(d + at, st.buffer(k), len, cudaMemcpyHostToDevice, st.stream), "copy to device");
    check(cudaEventRecord(st.done[k & 1], st.stream), "copy to device");
  }
  check(cudaStreamSynchronize(st.stream), "copy to device");
}

void copy_to_host(void* h_dst, const void* d_src, size_t n) {
  if (n < 2 * kPiece || is_pinned(h_dst)) {
    check(cudaMemcpy(h_dst, d_src, n, cudaMemcpyDeviceToHost), "copy to host");
    return;
  }
  Staging st;
  auto* d = static_cast<const uint8_t*>(d_src);
  auto* h = static_cast<uint8_t*>(h_dst);
  const size_t pieces = (n + kPiece - 1) / kPiece;
  auto issue = [&](size_t k) {  // piece k into buffer k & 1, whose last piece (k - 2) was drained already
    const size_t at = k * kPiece, len = std::min(kPiece, n - at);
    check(cudaMemcpyAsync(st.buffer(k), d + at, len, cudaMemcpyDeviceToHost, st.stream), "copy to host");
    check(cudaEventRecord(st.done[k & 1], st.stream), "copy to host");
  };
  issue(0);
  for (size_t k = 0; k < pieces; ++k) {
    if (k + 1 < pieces) issue(k + 1);
    check(cudaEventSynchronize(st.done[k & 1]), "copy to host");
    const size_t at = k * kPiece;
    parallel_memcpy(h + at, st.buffer(k), std::min(kPiece, n - at));
  }
}

}  // namespace hpcz::pipeline
