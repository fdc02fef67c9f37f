// Host memory through the GPU: the one-shot host calls and the batches, on lanes kept between calls.
//
// A lane is one CUDA stream of one GPU with its pinned staging and device buffers. Lanes live in a pool
// per GPU for the life of the process: a call takes an idle lane (or makes one), and gives it back
// with its buffers, so a call pays no allocation, registration or stream creation once the buffers are
// large enough. Pageable memory moves through the lane's pinned buffers in pieces: the host copies one
// piece (every OpenMP thread) while the copy engine moves the one before. A batch groups its items into
// rounds of up to kRoundBytes, one host-to-device copy a round, the codec's launches for each item,
// and runs rounds on several lanes at once (one host thread each), so that one lane's copies overlap
// another's coding in both directions.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "common/cuda_check.hpp"
#include "gpu/decode_status.hpp"
#include "pipeline/host_copy.hpp"
#include "pipeline/internal.hpp"

namespace hpcz::pipeline {

// Defined in gpu_backend.cu: the device calls' checks and launches, and a decoder status as an Error.
void compress_device_with(const void* d_in, const format::HeaderFields& h, void* d_out, size_t out_capacity,
                          uint64_t* d_size, void* d_ws, size_t ws_size, void* stream);
std::string status_message(uint32_t status);

namespace {

// A batch round's input bytes: large enough that a round's one copy runs at the bus's speed, small
// enough that the pinned memory of a GPU's lanes stays near a quarter GiB.
constexpr size_t kRoundBytes = size_t(32) << 20;
// A round's archive buffer: the round's input plus every item's worst-case growth (headers, tables).
constexpr size_t kRoundOutBytes = kRoundBytes + (kRoundBytes >> 3);
// Pieces of a one-shot copy through the pinned buffer: four in the buffer, so that the host fills
// (or drains) two while the copy engine moves the others.
constexpr size_t kPiece = kRoundBytes / 4;
constexpr int kRing = int(kRoundBytes / kPiece);
// Lanes a batch runs at once on a GPU: both copy engines and the SMs busy while the host copies.
constexpr int kBatchLanes = 4;
// Device memory an idle lane keeps: a 1 GiB array's one-shot buffers, so that repeated calls on arrays
// that large allocate nothing; larger buffers are freed when the call ends.
constexpr size_t kKeepDeviceBytes = (size_t(5) << 30) / 2;
constexpr size_t kAlign = 256;  // item offsets in a round's buffers (the codecs want 16)

size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

bool is_pinned(const void* h) {
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, h) != cudaSuccess) {
    cudaGetLastError();  // pageable memory can report an error on older runtimes: clear it
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

// The calling thread's current GPU, put back when the scope ends (freeing a lane of another GPU must not
// move the caller's).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (cudaGetDevice(&saved_) != cudaSuccess) saved_ = -1;
    if (device != saved_) cudaSetDevice(device);
  }
  ~DeviceGuard() {
    if (saved_ >= 0) cudaSetDevice(saved_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int saved_ = -1;
};

// A buffer that grows to the largest request and keeps its memory (device or pinned host).
template <bool Pinned>
struct KeptBuffer {
  uint8_t* p = nullptr;
  size_t cap = 0;
  uint8_t* get(size_t n) {
    n = std::max<size_t>(n, 16);
    if (n <= cap) return p;
    release();
    if (Pinned) check(cudaHostAlloc(reinterpret_cast<void**>(&p), n, cudaHostAllocDefault), "pinned staging buffer");
    else check(cudaMalloc(reinterpret_cast<void**>(&p), n), "cudaMalloc");
    cap = n;
    return p;
  }
  void release() {
    if (p) (void)(Pinned ? cudaFreeHost(p) : cudaFree(p));
    p = nullptr;
    cap = 0;
  }
};

class Lane {
 public:
  // On the calling thread's current GPU (every caller takes lanes of that GPU).
  explicit Lane(int device) : device_(device) {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    for (auto& e : ring_)
      if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
        release();
        fail(ErrorCode::cuda, "cudaEventCreate");
      }
  }
  ~Lane() { release(); }
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  size_t device_bytes() const { return d_in.cap + d_out.cap + d_ws.cap + d_words.cap; }
  // After a call: buffers beyond the budget go back to the driver.
  void trim() {
    if (device_bytes() <= kKeepDeviceBytes) return;
    DeviceGuard on(device_);
    d_in.release();
    d_out.release();
    d_ws.release();
  }

  // n bytes of host memory h into device memory d, on the lane's stream; returns when h may change.
  void upload(uint8_t* d, const uint8_t* h, size_t n) {
    if (n == 0) return;
    if (is_pinned(h)) {
      check(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, stream_), "copy to device");
      return;
    }
    uint8_t* pin = pin_in.get(kRoundBytes);
    for (size_t k = 0, at = 0; at < n; ++k, at += kPiece) {
      const size_t len = std::min(kPiece, n - at), slot = k % kRing;
      if (k >= size_t(kRing)) check(cudaEventSynchronize(ring_[slot]), "copy to device");  // the slot is free again
      parallel_copy(pin + slot * kPiece, h + at, len);
      check(cudaMemcpyAsync(d + at, pin + slot * kPiece, len, cudaMemcpyHostToDevice, stream_), "copy to device");
      check(cudaEventRecord(ring_[slot], stream_), "copy to device");
    }
    check(cudaStreamSynchronize(stream_), "copy to device");
  }
  // n bytes of device memory d into host memory h, after the work queued on the stream.
  void download(uint8_t* h, const uint8_t* d, size_t n) {
    if (n == 0) return check(cudaStreamSynchronize(stream_), "copy to host");
    if (is_pinned(h)) {
      check(cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, stream_), "copy to host");
      return check(cudaStreamSynchronize(stream_), "copy to host");
    }
    uint8_t* pin = pin_out.get(kRoundOutBytes);
    const size_t pieces = (n + kPiece - 1) / kPiece;
    auto issue = [&](size_t k) {
      const size_t at = k * kPiece, slot = k % kRing;
      check(cudaMemcpyAsync(pin + slot * kPiece, d + at, std::min(kPiece, n - at), cudaMemcpyDeviceToHost, stream_),
            "copy to host");
      check(cudaEventRecord(ring_[slot], stream_), "copy to host");
    };
    // Two pieces ahead of the host: one in flight while the host drains another.
    for (size_t k = 0; k < std::min<size_t>(pieces, kRing - 1); ++k) issue(k);
    for (size_t k = 0; k < pieces; ++k) {
      if (k + kRing - 1 < pieces) issue(k + kRing - 1);  // its slot held piece k - 1, drained already
      check(cudaEventSynchronize(ring_[k % kRing]), "copy to host");
      const size_t at = k * kPiece;
      parallel_copy(h + at, pin + (k % kRing) * kPiece, std::min(kPiece, n - at));
    }
  }
  void sync(const char* what) { check(cudaStreamSynchronize(stream_), what); }

  KeptBuffer<true> pin_in, pin_out, pin_words;
  KeptBuffer<false> d_in, d_out, d_ws, d_words;

 private:
  void release() {
    DeviceGuard on(device_);
    if (stream_) cudaStreamSynchronize(stream_);  // an error may leave a copy in flight from a buffer
    pin_in.release(), pin_out.release(), pin_words.release();
    d_in.release(), d_out.release(), d_ws.release(), d_words.release();
    for (auto& e : ring_)
      if (e) cudaEventDestroy(e);
    if (stream_) cudaStreamDestroy(stream_);
    stream_ = nullptr;
  }

  int device_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ring_[kRing] = {};
};

// The idle lanes of every GPU. Never destroyed: at exit the CUDA runtime may already be gone.
class LanePool {
 public:
  std::unique_ptr<Lane> take(int device) {
    {
      std::lock_guard<std::mutex> g(m_);
      auto& v = idle_[device];
      if (!v.empty()) {
        std::unique_ptr<Lane> l = std::move(v.back());
        v.pop_back();
        return l;
      }
    }
    return std::make_unique<Lane>(device);
  }
  void give(std::unique_ptr<Lane> l) {
    l->trim();
    std::lock_guard<std::mutex> g(m_);
    idle_[l->device()].push_back(std::move(l));
  }
  size_t idle_device_bytes(int device) {
    std::lock_guard<std::mutex> g(m_);
    size_t n = 0;
    for (const auto& l : idle_[device]) n += l->device_bytes();
    return n;
  }
  void clear() {
    std::map<int, std::vector<std::unique_ptr<Lane>>> gone;
    {
      std::lock_guard<std::mutex> g(m_);
      gone.swap(idle_);
    }
  }

 private:
  std::mutex m_;
  std::map<int, std::vector<std::unique_ptr<Lane>>> idle_;
};

LanePool& pool() {
  static LanePool* p = new LanePool;
  return *p;
}

// A lane of the current GPU for the scope of a call.
class LaneLease {
 public:
  LaneLease() {
    int dev = 0;
    check(cudaGetDevice(&dev), "cudaGetDevice");
    lane_ = pool().take(dev);
  }
  ~LaneLease() {
    // Copies an error left in flight finish before the buffers serve another call; a lane whose
    // stream failed is dropped, not reused.
    if (lane_ && cudaStreamSynchronize(lane_->stream()) == cudaSuccess) pool().give(std::move(lane_));
    cudaGetLastError();
  }
  Lane* operator->() { return lane_.get(); }

 private:
  std::unique_ptr<Lane> lane_;
};

int current_device() {
  int dev = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  return dev;
}

}  // namespace

GpuRoom current_gpu_room() {
  GpuRoom room;
  room.device = current_device();
  size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  // A tenth left for the context's own needs and other streams; what idle lanes keep is the call's too.
  room.bytes = free / 10 * 9 + pool().idle_device_bytes(room.device);
  return room;
}

void release_gpu_buffers() { pool().clear(); }

namespace {
// compress_gpu_host on a lane the caller holds.
size_t compress_on_lane(Lane* lane, const void* in, const format::HeaderFields& h,
                        const std::function<uint8_t*(size_t)>& place) {
  const size_t in_bytes = h.n_values * dtype_size(format::array_dtype(h)), cap = max_compressed_size(h.n_values, h.dtype);
  const size_t ws_bytes = device_compress_workspace(h);
  uint8_t* d_in = lane->d_in.get(in_bytes);
  uint8_t* d_out = lane->d_out.get(cap);
  uint8_t* d_ws = lane->d_ws.get(ws_bytes);
  auto* d_size = reinterpret_cast<uint64_t*>(lane->d_words.get(16));
  auto* h_size = reinterpret_cast<uint64_t*>(lane->pin_words.get(16));
  lane->upload(d_in, static_cast<const uint8_t*>(in), in_bytes);
  compress_device_with(d_in, h, d_out, cap, d_size, d_ws, ws_bytes, lane->stream());
  check(cudaMemcpyAsync(h_size, d_size, 8, cudaMemcpyDeviceToHost, lane->stream()), "compress");
  lane->sync("compress");
  const uint64_t size = *h_size;
  if (size > cap) fail(ErrorCode::internal, "internal error: an archive beyond its bound");
  lane->download(place(size), d_out, size);
  return size;
}
}  // namespace

size_t compress_gpu_host(const void* in, const format::HeaderFields& h, const std::function<uint8_t*(size_t)>& place) {
  LaneLease lane;
  return compress_on_lane(lane.operator->(), in, h, place);
}

void decompress_gpu_host(const uint8_t* archive, const ArchiveInfo& info, void* out) {
  const size_t out_bytes = info.n_values * dtype_size(info.dtype);
  const size_t ws_bytes = decompress_device_workspace_size(info);
  LaneLease lane;
  uint8_t* d_a = lane->d_in.get(info.archive_size);
  uint8_t* d_out = lane->d_out.get(out_bytes);
  uint8_t* d_ws = lane->d_ws.get(ws_bytes);
  auto* d_status = reinterpret_cast<uint32_t*>(lane->d_words.get(16));
  auto* h_status = reinterpret_cast<uint32_t*>(lane->pin_words.get(16));
  lane->upload(d_a, archive, info.archive_size);
  decompress_device(info, d_a, d_out, d_status, d_ws, ws_bytes, lane->stream());
  check(cudaMemcpyAsync(h_status, d_status, 4, cudaMemcpyDeviceToHost, lane->stream()), "decompress");
  // The values go out behind the decoder on the same stream: no wait for the status in between. A
  // damaged archive's values reach out, and the call then throws.
  lane->download(static_cast<uint8_t*>(out), d_out, out_bytes);
  if (*h_status) fail(ErrorCode::corrupt_archive, status_message(*h_status));
}

namespace {

// A unit of a batch's work: a round of small items (one copy each way), or one large item alone.
struct Round {
  size_t first = 0, count = 0;  // items [first, first + count)
  bool alone = false;           // a large item: the one-shot path
};

template <class InBytes, class OutBytes>
std::vector<Round> plan_rounds(size_t n, const InBytes& in_bytes, const OutBytes& out_bytes) {
  std::vector<Round> rounds;
  size_t in = 0, out = 0;
  for (size_t k = 0; k < n; ++k) {
    const size_t a = align_up(in_bytes(k)), b = align_up(out_bytes(k));
    if (a > kRoundBytes || b > kRoundOutBytes) {
      rounds.push_back({k, 1, true});
      in = out = 0;
      continue;
    }
    if (rounds.empty() || rounds.back().alone || in + a > kRoundBytes || out + b > kRoundOutBytes) {
      rounds.push_back({k, 0, false});
      in = out = 0;
    }
    rounds.back().count++;
    in += a;
    out += b;
  }
  return rounds;
}

// Runs work(round) for every round on up to kBatchLanes threads of the current GPU (the caller's
// thread alone for one round). A round's exception goes to fail_round.
template <class Work, class Fail>
void run_rounds(const std::vector<Round>& rounds, const Work& work, const Fail& fail_round) {
  const int device = current_device();
  std::atomic<size_t> next{0};
  auto worker = [&] {
    try {
      check(cudaSetDevice(device), "cudaSetDevice");
    } catch (const Error& e) {
      for (size_t r; (r = next++) < rounds.size();) fail_round(rounds[r], e);
      return;
    }
    for (size_t r; (r = next++) < rounds.size();) {
      try {
        work(rounds[r]);
      } catch (const Error& e) {
        fail_round(rounds[r], e);
      } catch (const std::exception& e) {
        fail_round(rounds[r], Error(ErrorCode::internal, e.what()));
      }
    }
  };
  const size_t threads = std::min<size_t>(kBatchLanes, rounds.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

void set_status(ItemStatus& s, const Error& e) {
  s.code = int(e.code());
  s.message = e.what();
}

}  // namespace

void compress_batch_gpu(const std::vector<BatchCompressItem>& items, const PlaceBatchArchive& place,
                        std::vector<ItemStatus>& status) {
  const auto in_bytes = [&](size_t k) { return items[k].h.n_values * dtype_size(format::array_dtype(items[k].h)); };
  const auto cap = [&](size_t k) { return max_compressed_size(items[k].h.n_values, items[k].h.dtype); };
  const auto ws_bytes = [&](size_t k) {
    return align_up(device_compress_workspace(items[k].h));
  };
  const std::vector<Round> rounds = plan_rounds(items.size(), in_bytes, cap);
  auto work = [&](const Round& r) {
    if (r.alone) {  // its own buffers, copied in pieces
      // The archive comes back into the lane's pinned buffer where it fits (one copy from the device,
      // no new memory to fault in), else into a vector.
      LaneLease lane;
      std::vector<uint8_t> a;
      uint8_t* staged = nullptr;
      const size_t size = compress_on_lane(lane.operator->(), items[r.first].data, items[r.first].h, [&](size_t n) {
        if (n <= kRoundOutBytes) {
          staged = lane->pin_out.get(kRoundOutBytes);
        } else {
          a.resize(n);
          staged = a.data();
        }
        return staged;
      });
      if (uint8_t* dst = place(r.first, staged, size)) parallel_copy(dst, staged, size);
      return;
    }
    LaneLease lane;
    size_t ws_total = 0;
    for (size_t k = r.first; k < r.first + r.count; ++k) ws_total += ws_bytes(k);
    uint8_t* pin_in = lane->pin_in.get(kRoundBytes);
    uint8_t* pin_out = lane->pin_out.get(kRoundOutBytes);
    auto* h_sizes = reinterpret_cast<uint64_t*>(lane->pin_words.get(8 * r.count));
    uint8_t* d_in = lane->d_in.get(kRoundBytes);
    uint8_t* d_out = lane->d_out.get(kRoundOutBytes);
    uint8_t* d_ws = lane->d_ws.get(ws_total);
    auto* d_sizes = reinterpret_cast<uint64_t*>(lane->d_words.get(8 * r.count));
    std::vector<CopySegment> copies;
    size_t at = 0;
    for (size_t k = r.first; k < r.first + r.count; ++k) {
      copies.push_back({pin_in + at, static_cast<const uint8_t*>(items[k].data), in_bytes(k)});
      at += align_up(in_bytes(k));
    }
    parallel_copy(copies);
    check(cudaMemcpyAsync(d_in, pin_in, at, cudaMemcpyHostToDevice, lane->stream()), "copy to device");
    size_t in_at = 0, out_at = 0, ws_at = 0;
    for (size_t k = r.first, j = 0; k < r.first + r.count; ++k, ++j) {
      compress_device_with(d_in + in_at, items[k].h, d_out + out_at, cap(k), d_sizes + j, d_ws + ws_at, ws_bytes(k),
                           lane->stream());
      in_at += align_up(in_bytes(k)), out_at += align_up(cap(k)), ws_at += ws_bytes(k);
    }
    check(cudaMemcpyAsync(h_sizes, d_sizes, 8 * r.count, cudaMemcpyDeviceToHost, lane->stream()), "compress");
    lane->sync("compress");
    out_at = 0;
    for (size_t k = r.first, j = 0; k < r.first + r.count; ++k, ++j) {
      if (h_sizes[j] > cap(k)) fail(ErrorCode::internal, "internal error: an archive beyond its bound");
      check(cudaMemcpyAsync(pin_out + out_at, d_out + out_at, h_sizes[j], cudaMemcpyDeviceToHost, lane->stream()),
            "copy to host");
      out_at += align_up(cap(k));
    }
    lane->sync("copy to host");
    copies.clear();
    out_at = 0;
    for (size_t k = r.first, j = 0; k < r.first + r.count; ++k, ++j) {
      if (uint8_t* dst = place(k, pin_out + out_at, h_sizes[j])) copies.push_back({dst, pin_out + out_at, h_sizes[j]});
      out_at += align_up(cap(k));
    }
    parallel_copy(copies);
  };
  auto fail_round = [&](const Round& r, const Error& e) {
    for (size_t k = r.first; k < r.first + r.count; ++k)
      if (status[items[k].index].ok()) set_status(status[items[k].index], e);
  };
  run_rounds(rounds, work, fail_round);
}

void decompress_batch_gpu(const std::vector<BatchDecodeItem>& items, std::vector<ItemStatus>& status) {
  const auto in_bytes = [&](size_t k) { return size_t(items[k].info.archive_size); };
  const auto out_bytes = [&](size_t k) { return items[k].info.n_values * dtype_size(items[k].info.dtype); };
  const auto ws_bytes = [&](size_t k) { return align_up(decompress_device_workspace_size(items[k].info)); };
  const std::vector<Round> rounds = plan_rounds(items.size(), in_bytes, out_bytes);
  auto work = [&](const Round& r) {
    if (r.alone) {
      decompress_gpu_host(items[r.first].archive, items[r.first].info, items[r.first].out);
      return;
    }
    LaneLease lane;
    size_t ws_total = 0;
    for (size_t k = r.first; k < r.first + r.count; ++k) ws_total += ws_bytes(k);
    uint8_t* pin_in = lane->pin_in.get(kRoundBytes);
    uint8_t* pin_out = lane->pin_out.get(kRoundOutBytes);
    auto* h_status = reinterpret_cast<uint32_t*>(lane->pin_words.get(4 * r.count));
    uint8_t* d_in = lane->d_in.get(kRoundBytes);
    uint8_t* d_out = lane->d_out.get(kRoundOutBytes);
    uint8_t* d_ws = lane->d_ws.get(ws_total);
    auto* d_status = reinterpret_cast<uint32_t*>(lane->d_words.get(4 * r.count));
    std::vector<CopySegment> copies;
    size_t at = 0;
    for (size_t k = r.first; k < r.first + r.count; ++k) {
      copies.push_back({pin_in + at, items[k].archive, in_bytes(k)});
      at += align_up(in_bytes(k));
    }
    parallel_copy(copies);
    check(cudaMemcpyAsync(d_in, pin_in, at, cudaMemcpyHostToDevice, lane->stream()), "copy to device");
    size_t in_at = 0, out_at = 0, ws_at = 0;
    for (size_t k = r.first, j = 0; k < r.first + r.count; ++k, ++j) {
      decompress_device(items[k].info, d_in + in_at, d_out + out_at, d_status + j, d_ws + ws_at, ws_bytes(k),
                        lane->stream());
      in_at += align_up(in_bytes(k)), out_at += align_up(out_bytes(k)), ws_at += ws_bytes(k);
    }
    check(cudaMemcpyAsync(h_status, d_status, 4 * r.count, cudaMemcpyDeviceToHost, lane->stream()), "decompress");
    // The round's values come back in one copy (their sizes are known): no wait for the statuses.
    check(cudaMemcpyAsync(pin_out, d_out, out_at, cudaMemcpyDeviceToHost, lane->stream()), "copy to host");
    lane->sync("decompress");
    copies.clear();
    out_at = 0;
    for (size_t k = r.first, j = 0; k < r.first + r.count; ++k, ++j) {
      if (h_status[j]) set_status(status[items[k].index], Error(ErrorCode::corrupt_archive, status_message(h_status[j])));
      else copies.push_back({static_cast<uint8_t*>(items[k].out), pin_out + out_at, out_bytes(k)});
      out_at += align_up(out_bytes(k));
    }
    parallel_copy(copies);
  };
  auto fail_round = [&](const Round& r, const Error& e) {
    for (size_t k = r.first; k < r.first + r.count; ++k)
      if (status[items[k].index].ok()) set_status(status[items[k].index], e);
  };
  run_rounds(rounds, work, fail_round);
}

}  // namespace hpcz::pipeline
