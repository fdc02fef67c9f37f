// Batches (compress_batch / decompress_batch, and the C calls): each item's archive is the one-item
// call's, byte for byte, on either backend; a bad item gets its status and leaves the others whole.
#include "common.hpp"
#include "codecs/fast/policy.hpp"
#include "hpcz/hpcz.h"
#include "format/header.hpp"
#include "gpu/decode_status.hpp"
#include "pipeline/host_copy.hpp"

#include <memory>
#include <thread>
#ifdef HPCZ_HAS_CUDA
#include <cuda_runtime.h>
#endif

using namespace testutil;

namespace {

// Pieces of the real fields in mixed shapes, both dtypes (f64: the f32 values widened and perturbed in
// their low bits, so that f64 coding has bits to keep), a few empty and single-value pieces, and (with
// `large`) one piece above a GPU batch round (32 MiB) that takes the one-shot path.
struct Piece {
  hpcz::DType dtype;
  std::vector<uint64_t> dims;
  std::vector<uint8_t> bytes;
};

std::vector<Piece> pieces(bool large) {
  std::vector<Piece> out;
  const auto fields = real_fields();
  REQUIRE(!fields.empty());
  const uint64_t sizes[] = {1, 100, 4096, 16411, 65536, 262144 + 17, 1u << 20};
  size_t s = 0, f32_fields = 0;
  for (const Field& f : fields) f32_fields += f.dtype == hpcz::DType::f32;
  // Every size at least once, also from the bundled field alone (a clone without the shared fields).
  const int reps = f32_fields >= 3 ? 3 : 7;
  for (const Field& f : fields) {
    if (f.dtype != hpcz::DType::f32) continue;
    const float* v = reinterpret_cast<const float*>(f.bytes.data());
    for (int rep = 0; rep < reps; ++rep, ++s) {
      const uint64_t n = std::min<uint64_t>(sizes[s % 7], f.n());
      const uint64_t at = (f.n() - n) / reps * rep;
      Piece p;
      p.dtype = (s % 3 == 2) ? hpcz::DType::f64 : hpcz::DType::f32;
      p.dims = (n % 64 == 0 && n >= 4096) ? std::vector<uint64_t>{n / 64, 8, 8} : std::vector<uint64_t>{n};
      if (p.dtype == hpcz::DType::f32) {
        p.bytes.assign(f.bytes.begin() + at * 4, f.bytes.begin() + (at + n) * 4);
      } else {
        std::vector<double> d(n);
        for (uint64_t i = 0; i < n; ++i) d[i] = double(v[at + i]) * (1.0 + 1e-9 * double(i % 7));
        p.bytes = as_bytes(d);
      }
      out.push_back(std::move(p));
    }
  }
  out.push_back({hpcz::DType::f32, {0}, {}});
  out.push_back({hpcz::DType::f64, {3, 0, 5}, {}});
  if (large) {  // 40 MiB of the largest f32 field, repeated
    const Field* src = nullptr;
    for (const Field& f : fields)
      if (f.dtype == hpcz::DType::f32 && (!src || f.n() > src->n())) src = &f;
    Piece p{hpcz::DType::f32, {10u << 20}, {}};
    p.bytes.resize(size_t(40) << 20);
    for (size_t i = 0; i < p.bytes.size(); i += src->bytes.size())
      std::memcpy(p.bytes.data() + i, src->bytes.data(), std::min(src->bytes.size(), p.bytes.size() - i));
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<hpcz::ArrayRef> refs(const std::vector<Piece>& ps) {
  std::vector<hpcz::ArrayRef> r;
  for (const Piece& p : ps) r.push_back({p.bytes.data(), p.dtype, p.dims});
  return r;
}

// compress_batch on `backend` against compress() on the CPU for each item, then decompress_batch.
void batch_matches_one_item_calls(hpcz::Backend backend, hpcz::Codec codec, bool large) {
  const std::vector<Piece> ps = pieces(large);
  for (const auto& [mode, bound] : {std::pair{hpcz::BoundMode::rel, 1e-3}, std::pair{hpcz::BoundMode::abs, 1e-2}}) {
    hpcz::Options o;
    o.mode = mode;
    o.bound = bound;
    o.codec = codec;
    o.backend = backend;
    std::vector<std::vector<uint8_t>> archives;
    const auto st = hpcz::compress_batch(refs(ps), o, archives);
    REQUIRE(st.size() == ps.size() && archives.size() == ps.size());
    hpcz::Options one = o;
    one.backend = hpcz::Backend::cpu;
    size_t same = 0;
    for (size_t i = 0; i < ps.size(); ++i) {
      CHECK_MSG(st[i].ok(), "item " << i << ": " << st[i].message);
      const auto a = hpcz::compress(ps[i].bytes.data(), ps[i].dtype, ps[i].dims, one);
      CHECK_MSG(a == archives[i], "item " << i << " (" << ps[i].bytes.size() << " bytes): the batch archive differs from compress()'s");
      same += a == archives[i];
    }
    std::vector<hpcz::ArchiveRef> in;
    std::vector<std::vector<uint8_t>> values(ps.size());
    std::vector<hpcz::OutputRef> out;
    for (size_t i = 0; i < ps.size(); ++i) {
      in.push_back({archives[i].data(), archives[i].size()});
      values[i].assign(ps[i].bytes.size(), 0xA5);  // poisoned: every byte must be written
      out.push_back({values[i].data(), values[i].size()});
    }
    std::vector<hpcz::ArchiveInfo> infos;
    const auto dst = hpcz::decompress_batch(in, out, backend, &infos);
    for (size_t i = 0; i < ps.size(); ++i) {
      CHECK_MSG(dst[i].ok(), "item " << i << ": " << dst[i].message);
      std::vector<uint8_t> ref;
      hpcz::decompress(archives[i].data(), archives[i].size(), ref, hpcz::Backend::cpu);
      CHECK_MSG(ref == values[i], "item " << i << ": the batch decode differs from decompress()'s");
      const Check c = strict_check(ps[i].bytes, values[i], ps[i].dtype, infos[i].eb_abs);
      CHECK_MSG(c.violations == 0, "item " << i << ": " << c.violations << " values outside the bound");
    }
    std::fprintf(stderr, "  %s %g: %zu items, %zu archives identical to compress()'s\n",
                 mode == hpcz::BoundMode::rel ? "rel" : "abs", bound, ps.size(), same);
  }
}

bool no_gpu() {
  if (hpcz::gpu_available()) return false;
  std::fprintf(stderr, "  no GPU: skipped\n");
  return true;
}

}  // namespace

TEST(roundtrip_batch_cpu_matches_one_item_calls) {
  batch_matches_one_item_calls(hpcz::Backend::cpu, hpcz::Codec::fast, false);
  batch_matches_one_item_calls(hpcz::Backend::cpu, hpcz::Codec::ratio, false);
}
TEST(roundtrip_batch_gpu_matches_one_item_calls) {
  if (no_gpu()) return;
  for (hpcz::Codec c : {hpcz::Codec::fast, hpcz::Codec::ratio, hpcz::Codec::interp})
    batch_matches_one_item_calls(hpcz::Backend::gpu, c, true);
}

// Many small items: many rounds on several lanes at once.
TEST(roundtrip_batch_gpu_many_rounds) {
  if (no_gpu()) return;
  const auto fields = real_fields();
  const Field& f = fields.front();
  const uint64_t n = std::min<uint64_t>(f.n(), 1u << 20);
  std::vector<hpcz::ArrayRef> arrays(300, hpcz::ArrayRef{f.bytes.data(), f.dtype, {n}});
  hpcz::Options o;
  o.backend = hpcz::Backend::gpu;
  std::vector<std::vector<uint8_t>> archives;
  const auto st = hpcz::compress_batch(arrays, o, archives);
  o.backend = hpcz::Backend::cpu;
  const auto ref = hpcz::compress(f.bytes.data(), f.dtype, {n}, o);
  size_t same = 0;
  for (size_t i = 0; i < arrays.size(); ++i) same += st[i].ok() && archives[i] == ref;
  CHECK_MSG(same == arrays.size(), same << " of " << arrays.size() << " archives as compress()'s");
}

TEST(roundtrip_batch_bad_items_keep_the_rest) {
  for (hpcz::Backend b : {hpcz::Backend::cpu, hpcz::Backend::gpu}) {
    if (b == hpcz::Backend::gpu && no_gpu()) continue;
    const std::vector<Piece> ps = pieces(false);
    std::vector<hpcz::ArrayRef> arrays = refs(ps);
    arrays.insert(arrays.begin() + 2, hpcz::ArrayRef{ps[0].bytes.data(), hpcz::DType::f32, {}});  // rank 0
    arrays.insert(arrays.begin() + 4, hpcz::ArrayRef{nullptr, hpcz::DType::f32, {100}});        // no data
    hpcz::Options o;
    o.backend = b;
    std::vector<std::vector<uint8_t>> archives;
    const auto st = hpcz::compress_batch(arrays, o, archives);
    CHECK(st[2].code == int(hpcz::ErrorCode::invalid_argument) && archives[2].empty());
    CHECK(st[4].code == int(hpcz::ErrorCode::invalid_argument));
    size_t ok = 0;
    for (size_t i = 0; i < st.size(); ++i) ok += st[i].ok();
    CHECK_MSG(ok == arrays.size() - 2, ok << " items coded");
    // Decoding: one archive damaged in its data, one truncated, one with a small buffer.
    std::vector<hpcz::ArchiveRef> in;
    std::vector<std::vector<uint8_t>> values;
    std::vector<size_t> which;
    for (size_t i = 0; i < arrays.size(); ++i)
      if (st[i].ok() && archives[i].size() > 1000) which.push_back(i);
    REQUIRE(which.size() >= 4);
    archives[which[0]][archives[which[0]].size() - 10] ^= 0x40;
    for (size_t i : which) {
      in.push_back({archives[i].data(), i == which[1] ? archives[i].size() / 2 : archives[i].size()});
      values.emplace_back(hpcz::inspect_header(archives[i].data(), archives[i].size()).n_values *
                          hpcz::dtype_size(arrays[i].dtype));
    }
    std::vector<hpcz::OutputRef> out;
    for (size_t k = 0; k < which.size(); ++k) out.push_back({values[k].data(), values[k].size() - (k == 2 ? 1 : 0)});
    const auto dst = hpcz::decompress_batch(in, out, b);
    CHECK_MSG(dst[0].code == int(hpcz::ErrorCode::corrupt_archive), dst[0].message);
    CHECK_MSG(dst[1].code == int(hpcz::ErrorCode::corrupt_archive), dst[1].message);
    CHECK_MSG(dst[2].code == int(hpcz::ErrorCode::invalid_argument), dst[2].message);
    for (size_t k = 3; k < which.size(); ++k) {
      CHECK_MSG(dst[k].ok(), "item " << k << ": " << dst[k].message);
      std::vector<uint8_t> ref;
      hpcz::decompress(archives[which[k]].data(), archives[which[k]].size(), ref, hpcz::Backend::cpu);
      CHECK(ref == values[k]);
    }
  }
}

TEST(roundtrip_batch_empty) {
  std::vector<std::vector<uint8_t>> archives;
  CHECK(hpcz::compress_batch({}, hpcz::Options{}, archives).empty() && archives.empty());
  CHECK(hpcz::decompress_batch({}, {}).empty());
  bool threw = false;
  try {
    hpcz::decompress_batch({hpcz::ArchiveRef{}}, {});
  } catch (const hpcz::Error& e) {
    threw = e.code() == hpcz::ErrorCode::invalid_argument;
  }
  CHECK(threw);
}

TEST(roundtrip_batch_second_stage) {
  const std::vector<Piece> ps = pieces(false);
  hpcz::Options o;
  o.second_stage = true;
  o.backend = hpcz::gpu_available() ? hpcz::Backend::gpu : hpcz::Backend::cpu;
  std::vector<std::vector<uint8_t>> archives;
  const auto st = hpcz::compress_batch(refs(ps), o, archives);
  o.backend = hpcz::Backend::cpu;
  for (size_t i = 0; i < ps.size(); ++i) {
    CHECK_MSG(st[i].ok(), st[i].message);
    CHECK_MSG(archives[i] == hpcz::compress(ps[i].bytes.data(), ps[i].dtype, ps[i].dims, o), "item " << i);
  }
}

TEST(unit_c_api_batch) {
  const std::vector<Piece> ps = pieces(false);
  const size_t n = ps.size();
  std::vector<const void*> data(n);
  std::vector<int> dtypes(n), ndims(n), statuses(n, -1);
  std::vector<uint64_t> dims(4 * n, 0);
  std::vector<std::vector<uint8_t>> outs(n);
  std::vector<void*> out_ptrs(n);
  std::vector<size_t> caps(n), sizes(n);
  for (size_t i = 0; i < n; ++i) {
    data[i] = ps[i].bytes.data();
    dtypes[i] = ps[i].dtype == hpcz::DType::f64 ? HPCZ_F64 : HPCZ_F32;
    ndims[i] = int(ps[i].dims.size());
    for (size_t d = 0; d < ps[i].dims.size(); ++d) dims[4 * i + d] = ps[i].dims[d];
    uint64_t nv = ps[i].bytes.size() / hpcz::dtype_size(ps[i].dtype);
    caps[i] = i == 1 ? 10 : hpcz_max_compressed_size(nv, dtypes[i]);  // item 1: too small a buffer
    outs[i].resize(caps[i]);
    out_ptrs[i] = outs[i].data();
  }
  hpcz_options opt{};
  opt.mode = HPCZ_REL;
  opt.bound = 1e-3;
  opt.backend = HPCZ_CPU;
  const int rc = hpcz_compress_batch(n, data.data(), dtypes.data(), dims.data(), ndims.data(), &opt, out_ptrs.data(),
                                     caps.data(), sizes.data(), statuses.data());
  CHECK(rc == HPCZ_OUT_OF_SPACE && statuses[1] == HPCZ_OUT_OF_SPACE && sizes[1] > 10);
  CHECK(std::string(hpcz_last_error()).find("item 1") == 0);
  hpcz::Options o;
  o.backend = hpcz::Backend::cpu;
  std::vector<const void*> a_ptrs;
  std::vector<size_t> a_sizes;
  std::vector<std::vector<uint8_t>> values;
  std::vector<void*> v_ptrs;
  std::vector<size_t> v_caps;
  for (size_t i = 0; i < n; ++i) {
    if (i == 1) continue;
    CHECK(statuses[i] == HPCZ_OK);
    const auto ref = hpcz::compress(ps[i].bytes.data(), ps[i].dtype, ps[i].dims, o);
    CHECK(sizes[i] == ref.size() && std::memcmp(ref.data(), outs[i].data(), ref.size()) == 0);
    a_ptrs.push_back(outs[i].data());
    a_sizes.push_back(sizes[i]);
    values.emplace_back(ps[i].bytes.size());
  }
  for (auto& v : values) v_ptrs.push_back(v.data()), v_caps.push_back(v.size());
  std::vector<int> dst(a_ptrs.size(), -1);
  CHECK(hpcz_decompress_batch(a_ptrs.size(), a_ptrs.data(), a_sizes.data(), v_ptrs.data(), v_caps.data(), HPCZ_AUTO,
                              dst.data()) == HPCZ_OK);
  for (size_t k = 0, i = 0; i < n; ++i) {
    if (i == 1) continue;
    CHECK(dst[k] == HPCZ_OK);
    const auto info = hpcz::inspect(outs[i].data(), sizes[i]);
    CHECK(strict_check(ps[i].bytes, values[k], ps[i].dtype, info.eb_abs).violations == 0);
    ++k;
  }
}

// The staging copies' pool: every byte of every segment, from several threads at once.
TEST(unit_parallel_copy) {
  std::vector<uint8_t> src(size_t(9) << 20), dst(src.size(), 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 2654435761u >> 13);
  auto copy_part = [&](size_t first, size_t last) {
    std::vector<hpcz::pipeline::CopySegment> segs;
    for (size_t at = first; at < last;) {  // uneven segments: 1 byte to a few MiB
      const size_t n = std::min(last - at, size_t(1) + (at * 7919) % (size_t(3) << 20));
      segs.push_back({dst.data() + at, src.data() + at, n});
      at += n;
    }
    hpcz::pipeline::parallel_copy(segs);
  };
  std::vector<std::thread> ts;
  const size_t quarter = src.size() / 4;
  for (int t = 0; t < 4; ++t) ts.emplace_back(copy_part, t * quarter, t == 3 ? src.size() : (t + 1) * quarter);
  for (auto& t : ts) t.join();
  CHECK(dst == src);
  std::vector<uint8_t> small(100, 0);
  hpcz::pipeline::parallel_copy(small.data(), src.data(), small.size());
  CHECK(std::memcmp(small.data(), src.data(), small.size()) == 0);
}

#ifdef HPCZ_HAS_CUDA
namespace {

// Device memory freed at scope end.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { REQUIRE(cudaMalloc(&p, bytes ? bytes : 1) == cudaSuccess); }
  ~DeviceBuffer() { cudaFree(p); }
  uint8_t* get() const { return static_cast<uint8_t*>(p); }
};

// compress_device_batch against compress() on the CPU for each array (ps repeated `copies` times,
// so that persistent encoder blocks cross from array to array), then decompress_device_batch.
// The compression runs on a stream of the test's own, its inputs copied there just before and its sizes
// read there just after (the batch must follow the first and precede the second); the decoding on the
// legacy default stream.
void device_batch_matches_one_item_calls(const std::vector<Piece>& ps, int copies, const hpcz::Options& o) {
  std::vector<hpcz::ArrayRef> arrays;
  std::vector<std::unique_ptr<DeviceBuffer>> values, archives, back;
  std::vector<void*> outs, backs;
  std::vector<size_t> caps;
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  struct StreamEnd { cudaStream_t s; ~StreamEnd() { cudaStreamDestroy(s); } } stream_end{stream};
  for (int c = 0; c < copies; ++c) {
    for (const Piece& p : ps) {
      values.push_back(std::make_unique<DeviceBuffer>(p.bytes.size()));
      REQUIRE(cudaMemsetAsync(values.back()->p, 0, p.bytes.size(), stream) == cudaSuccess);
      REQUIRE(cudaMemcpyAsync(values.back()->p, p.bytes.data(), p.bytes.size(), cudaMemcpyHostToDevice, stream) ==
              cudaSuccess);
      arrays.push_back({values.back()->p, p.dtype, p.dims});
      const uint64_t n = p.bytes.size() / hpcz::dtype_size(p.dtype);
      caps.push_back(hpcz::max_compressed_size(n, p.dtype));
      archives.push_back(std::make_unique<DeviceBuffer>(caps.back()));
      outs.push_back(archives.back()->p);
      back.push_back(std::make_unique<DeviceBuffer>(p.bytes.size()));
      backs.push_back(back.back()->p);
    }
  }
  const size_t n = arrays.size();
  const size_t ws_size = hpcz::compress_device_batch_workspace_size(arrays, o);
  DeviceBuffer ws(ws_size), sizes(8 * n), status(4 * n);
  REQUIRE(cudaMemsetAsync(sizes.p, 0xFF, 8 * n, stream) == cudaSuccess);
  hpcz::compress_device_batch(arrays, o, outs.data(), caps.data(), reinterpret_cast<uint64_t*>(sizes.p), ws.p, ws_size,
                              stream);
  std::vector<uint64_t> got(n);
  REQUIRE(cudaMemcpyAsync(got.data(), sizes.p, 8 * n, cudaMemcpyDeviceToHost, stream) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  hpcz::Options one = o;
  one.backend = hpcz::Backend::cpu;
  size_t same = 0;
  std::vector<hpcz::ArchiveInfo> infos;
  std::vector<const void*> in;
  for (size_t i = 0; i < n; ++i) {
    const Piece& p = ps[i % ps.size()];
    const auto ref = hpcz::compress(p.bytes.data(), p.dtype, p.dims, one);
    std::vector<uint8_t> a(std::min<uint64_t>(got[i], caps[i]));
    REQUIRE(cudaMemcpy(a.data(), outs[i], a.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK_MSG(a == ref, "array " << i << " (" << p.bytes.size() << " bytes): " << got[i] << " bytes, compress() "
                                  << ref.size() << ": the device batch archive differs");
    same += a == ref;
    infos.push_back(hpcz::inspect_header(ref.data(), ref.size()));
    in.push_back(outs[i]);
  }
  const size_t dws = hpcz::decompress_device_batch_workspace_size(infos);
  DeviceBuffer dw(dws);
  hpcz::decompress_device_batch(infos, in.data(), backs.data(), static_cast<uint32_t*>(status.p), dw.p, dws, nullptr);
  std::vector<uint32_t> st(n);
  REQUIRE(cudaMemcpy(st.data(), status.p, 4 * n, cudaMemcpyDeviceToHost) == cudaSuccess);
  for (size_t i = 0; i < n; ++i) {
    const Piece& p = ps[i % ps.size()];
    std::vector<uint8_t> v(p.bytes.size());
    if (!v.empty()) REQUIRE(cudaMemcpy(v.data(), backs[i], v.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK_MSG(st[i] == 0 || infos[i].n_values == 0, "array " << i << ": status " << st[i]);
    const Check c = strict_check(p.bytes, v, p.dtype, infos[i].eb_abs, o.fill);
    CHECK_MSG(c.violations == 0, "array " << i << ": " << c.violations << " values outside the bound");
    std::vector<uint8_t> cpu;
    std::vector<uint8_t> a(infos[i].archive_size);
    REQUIRE(cudaMemcpy(a.data(), outs[i], a.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
    hpcz::decompress(a.data(), a.size(), cpu, hpcz::Backend::cpu);
    CHECK_MSG(v == cpu, "array " << i << ": the batch decoder's values differ from the CPU decoder's");
  }
  std::fprintf(stderr, "  %s %s %g%s: %zu arrays, %zu archives identical to compress()'s\n",
               hpcz::codec_name(o.codec), o.mode == hpcz::BoundMode::rel ? "rel" : "abs", o.bound,
               o.fill ? " fill" : "", n, same);
}

}  // namespace

// Pieces whose chunk planes or rows are too wide for the ratio-class fused pass (dual_plan.hpp): they
// take prequant_kernel and lorenzo_kernel, beside the others' fused pass in the same batch.
std::vector<Piece> wide_pieces() {
  const auto fields = real_fields();
  const Field* src = nullptr;
  for (const Field& f : fields)
    if (f.dtype == hpcz::DType::f32 && (!src || f.n() > src->n())) src = &f;
  REQUIRE(src && src->n() >= 81920);
  std::vector<Piece> out;
  for (const std::vector<uint64_t>& dims : {std::vector<uint64_t>{4, 128, 160}, std::vector<uint64_t>{3, 20001}}) {
    Piece p{hpcz::DType::f32, dims, {}};
    const uint64_t n = dims.size() == 3 ? dims[0] * dims[1] * dims[2] : dims[0] * dims[1];
    p.bytes.assign(src->bytes.begin(), src->bytes.begin() + n * 4);
    out.push_back(std::move(p));
  }
  return out;
}

// Pieces whose ratio-codec archives take the fused reconstruction (recon_plan.hpp): planes of 16 x 16
// in f32 and f64 (the batched decoder's), and 9000 x 1000 (three chunks, above the batch's size: lanes).
std::vector<Piece> fused_pieces() {
  const auto fields = real_fields();
  const Field* src = nullptr;
  for (const Field& f : fields)
    if (f.dtype == hpcz::DType::f32 && (!src || f.n() > src->n())) src = &f;
  REQUIRE(src && src->n() >= 256000);
  const float* v = reinterpret_cast<const float*>(src->bytes.data());
  std::vector<Piece> out;
  for (const std::vector<uint64_t>& dims : {std::vector<uint64_t>{1000, 16, 16}, std::vector<uint64_t>{9000, 1000}}) {
    uint64_t n = 1;
    for (uint64_t d : dims) n *= d;
    for (hpcz::DType t : {hpcz::DType::f32, hpcz::DType::f64}) {
      if (n > 256000 && t == hpcz::DType::f64) continue;  // one large piece is enough
      std::vector<double> d(n);
      for (uint64_t i = 0; i < n; ++i) d[i] = double(v[i % src->n()]) * (1.0 + 1e-9 * double(i % 7));
      Piece p{t, dims, {}};
      if (t == hpcz::DType::f64) {
        p.bytes = as_bytes(d);
      } else {
        std::vector<float> f(n);
        for (uint64_t i = 0; i < n; ++i) f[i] = v[i % src->n()];
        p.bytes = as_bytes(f);
      }
      out.push_back(std::move(p));
    }
  }
  return out;
}

TEST(roundtrip_device_batch_matches_one_item_calls) {
  if (no_gpu()) return;
  std::vector<Piece> ps = pieces(false);
  for (Piece& p : wide_pieces()) ps.push_back(std::move(p));
  // The ratio codec codes a batch in one set of launches (ratio_class/batch_gpu.cu), the interp codec
  // in lanes of the library's (gpu_backend.cu): twice the pieces, so that lanes wrap around and reuse
  // their workspace.
  for (hpcz::Codec codec : {hpcz::Codec::fast, hpcz::Codec::ratio, hpcz::Codec::interp}) {
    for (const auto& [mode, bound] : {std::pair{hpcz::BoundMode::rel, 1e-3}, std::pair{hpcz::BoundMode::abs, 1e-2}}) {
      hpcz::Options o;
      o.mode = mode;
      o.bound = bound;
      o.codec = codec;
      device_batch_matches_one_item_calls(ps, codec == hpcz::Codec::fast ? 3 : 2, o);
    }
  }
  hpcz::Options o;  // a fill value that occurs in the data: each array's first value
  o.fill = double(reinterpret_cast<const float*>(ps[0].bytes.data())[0]);
  device_batch_matches_one_item_calls(ps, 2, o);
  // A 40 MiB array among small ones: the ratio codec's batch takes the small ones, the lanes the large.
  hpcz::Options large;
  large.codec = hpcz::Codec::ratio;
  large.bound = 1e-3;
  device_batch_matches_one_item_calls(pieces(true), 1, large);
}

// A ratio-codec device batch of more arrays than one set of launches takes (65535, grid z): it is coded
// in slices one after another in one workspace; archives on both sides of the cut, and a sample of the
// rest, are compress()'s.
TEST(roundtrip_device_batch_ratio_slices) {
  if (no_gpu()) return;
  const auto fields = real_fields();
  const Field& f = fields.front();
  REQUIRE(f.dtype == hpcz::DType::f32 || f.dtype == hpcz::DType::f64);
  const size_t n = 65537, each = 4, vbytes = each * 4;
  std::vector<float> values(n * each);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = f.dtype == hpcz::DType::f32 ? reinterpret_cast<const float*>(f.bytes.data())[(i * 7) % f.n()]
                                            : float(reinterpret_cast<const double*>(f.bytes.data())[(i * 7) % f.n()]);
  const size_t cap = (hpcz::max_compressed_size(each, hpcz::DType::f32) + 15) & ~size_t(15);
  DeviceBuffer d_values(values.size() * 4), d_out(n * cap), d_sizes(8 * n);
  REQUIRE(cudaMemcpy(d_values.p, values.data(), values.size() * 4, cudaMemcpyHostToDevice) == cudaSuccess);
  std::vector<hpcz::ArrayRef> arrays;
  std::vector<void*> outs;
  std::vector<size_t> caps(n, cap);
  for (size_t i = 0; i < n; ++i) {
    arrays.push_back({d_values.get() + i * vbytes, hpcz::DType::f32, {each}});
    outs.push_back(d_out.get() + i * cap);
  }
  hpcz::Options o;
  o.codec = hpcz::Codec::ratio;
  o.bound = 1e-3;
  const size_t ws_size = hpcz::compress_device_batch_workspace_size(arrays, o);
  DeviceBuffer ws(ws_size);
  hpcz::compress_device_batch(arrays, o, outs.data(), caps.data(), reinterpret_cast<uint64_t*>(d_sizes.p), ws.p, ws_size,
                              nullptr);
  std::vector<uint64_t> got(n);
  REQUIRE(cudaMemcpy(got.data(), d_sizes.p, 8 * n, cudaMemcpyDeviceToHost) == cudaSuccess);
  std::vector<uint8_t> all(n * cap);
  REQUIRE(cudaMemcpy(all.data(), d_out.p, all.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
  hpcz::Options one = o;
  one.backend = hpcz::Backend::cpu;
  size_t checked = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!(i < 3 || (i >= 65532 && i < 65537) || i % 997 == 0)) continue;
    const auto ref = hpcz::compress(values.data() + i * each, hpcz::DType::f32, {each}, one);
    CHECK_MSG(got[i] == ref.size() && std::memcmp(all.data() + i * cap, ref.data(), ref.size()) == 0,
              "array " << i << " of " << n << ": the sliced batch's archive differs from compress()'s");
    ++checked;
  }
  std::fprintf(stderr, "  %zu arrays in slices, %zu archives checked\n", n, checked);
}

// The batch encoder with and without the f32 round buffer (codecs/fast/policy.hpp; forced, so that one
// GPU checks both): compress()'s archives either way, blocks crossing from array to array.
TEST(roundtrip_device_batch_stagings_match) {
  if (no_gpu()) return;
  const std::vector<Piece> ps = pieces(false);
  for (auto s : {hpcz::fast::EncodeStaging::registers, hpcz::fast::EncodeStaging::round_buffer}) {
    hpcz::fast::force_encode_staging(s);
    try {
      for (const auto& [mode, bound] : {std::pair{hpcz::BoundMode::rel, 1e-3}, std::pair{hpcz::BoundMode::abs, 1e-2}}) {
        hpcz::Options o;
        o.mode = mode;
        o.bound = bound;
        device_batch_matches_one_item_calls(ps, 3, o);
      }
    } catch (...) {
      hpcz::fast::force_encode_staging(hpcz::fast::EncodeStaging::automatic);
      throw;
    }
    hpcz::fast::force_encode_staging(hpcz::fast::EncodeStaging::automatic);
  }
}

// decompress_device_batch over archives of every kind at once: f32 and f64, fast-mode versions 1 to 5
// (both chunk checksums), the ratio and interp codecs, empty arrays, and damaged archives (a chunk's
// byte, a table entry's size, the table checksum): each damaged one gets its status, and every other
// one decodes to the CPU decoder's values, bit for bit.
TEST(roundtrip_device_batch_decode_mixed_and_damaged) {
  if (no_gpu()) return;
  std::vector<std::vector<uint8_t>> archives;
  for (const char* g : {"ncar_ts_20x64x128_rel1e-3_v1.hpcz", "ncar_ts_20x64x128_f64_abs1e-2_v1.hpcz",
                        "ncar_ts_20x64x128_rel1e-2_v3.hpcz", "ncar_ts_20x64x128_abs5_v3.hpcz",
                        "ncar_ts_20x64x128_above295_abs5e-2_v4.hpcz", "ncar_ts_20x64x128_f64_abs1e-2_v4.hpcz",
                        "ncar_ts_20x64x128_rel1e-2_v5.hpcz", "ncar_ts_20x64x128_f64_abs1e-2_v5.hpcz",
                        "small_32x128_ratio_rel1e-3_v1.hpcz", "small_32x128_interp_rel1e-3_v1.hpcz",
                        "small_4096_rel1e-3_v5.hpcz"}) {
    archives.push_back(read_all(std::string(HPCZ_SOURCE_DIR) + "/tests/golden/" + g));
    REQUIRE(!archives.back().empty());
  }
  hpcz::Options cpu;
  cpu.backend = hpcz::Backend::cpu;
  for (const Piece& p : pieces(false)) archives.push_back(hpcz::compress(p.bytes.data(), p.dtype, p.dims, cpu));
  // The ratio codec's: its batched decoder takes those whose reconstruction is the fused one
  // and a size below BatchSlicePolicy::batched_below (fused_pieces: several segments a chunk, f32 and
  // f64, two radii), the pipeline's lanes the others (1-D, small or wide planes, three chunks).
  hpcz::Options ratio = cpu;
  ratio.codec = hpcz::Codec::ratio;
  std::vector<Piece> ratio_pieces = pieces(false);
  for (Piece& p : wide_pieces()) ratio_pieces.push_back(std::move(p));
  for (const Piece& p : ratio_pieces) archives.push_back(hpcz::compress(p.bytes.data(), p.dtype, p.dims, ratio));
  for (uint32_t radius : {512u, 64u}) {
    ratio.radius = radius;
    for (const Piece& p : fused_pieces()) archives.push_back(hpcz::compress(p.bytes.data(), p.dtype, p.dims, ratio));
  }
  // Damaged copies of today's fast and ratio archives of several chunks: a chunk's last byte, a
  // chunk's size in the table (the next chunk's offset then disagrees), the table checksum.
  std::vector<size_t> damaged;
  std::vector<std::vector<uint8_t>> bases(2);
  for (const auto& a : archives) {
    const hpcz::ArchiveInfo info = hpcz::inspect_header(a.data(), a.size());
    if (info.n_chunks < 3 || info.second_stage) continue;
    if (info.codec == hpcz::Codec::fast && info.version >= 5) bases[0] = a;
    if (info.codec == hpcz::Codec::ratio && info.dims.size() >= 2) bases[1] = a;
  }
  REQUIRE(!bases[0].empty() && !bases[1].empty());
  for (const std::vector<uint8_t>& base : bases)
  for (int kind = 0; kind < 3; ++kind) {
    const hpcz::ArchiveInfo bi = hpcz::inspect_header(base.data(), base.size());
    std::vector<uint8_t> a = base;
    const size_t entry = hpcz::format::kHeaderBytes + hpcz::format::kChunkEntryBytes;  // chunk 1's
    if (kind == 0) a[bi.archive_size - 1] ^= 0x5A;
    if (kind == 1) a[entry + 8] ^= 1;
    if (kind == 2) {  // the header's table checksum, and its header checksum made to match
      a[hpcz::format::kOffTableChecksum] ^= 1;
      const uint32_t h = hpcz::format::header_checksum(a.data());
      for (int b = 0; b < 4; ++b) a[hpcz::format::kOffHeaderChecksum + b] = uint8_t(h >> (8 * b));
    }
    damaged.push_back(archives.size());
    archives.push_back(std::move(a));
  }
  const size_t n = archives.size();
  std::vector<hpcz::ArchiveInfo> infos;
  std::vector<std::unique_ptr<DeviceBuffer>> dev_in, dev_out;
  std::vector<const void*> ins;
  std::vector<void*> outs;
  for (const auto& a : archives) {
    infos.push_back(hpcz::inspect_header(a.data(), a.size()));
    dev_in.push_back(std::make_unique<DeviceBuffer>(a.size()));
    REQUIRE(cudaMemcpy(dev_in.back()->p, a.data(), a.size(), cudaMemcpyHostToDevice) == cudaSuccess);
    dev_out.push_back(std::make_unique<DeviceBuffer>(infos.back().n_values * hpcz::dtype_size(infos.back().dtype) + 16));
    ins.push_back(dev_in.back()->p);
    outs.push_back(dev_out.back()->p);
  }
  // The headers read back in one gather: each archive's first kHeaderSize bytes; of one declared
  // shorter (the last), its bytes then zeros.
  {
    std::vector<size_t> sizes;
    for (const auto& a : archives) sizes.push_back(a.size());
    sizes.back() = 100;
    const size_t hws = hpcz::read_device_headers_workspace_size(n);
    DeviceBuffer hw(hws);
    std::vector<uint8_t> heads(n * hpcz::kHeaderSize, 0xEE);
    hpcz::read_device_headers(ins.data(), sizes.data(), n, heads.data(), hw.p, hws, nullptr);
    for (size_t i = 0; i < n; ++i) {
      std::vector<uint8_t> want(archives[i].begin(), archives[i].begin() + std::min<size_t>(sizes[i], hpcz::kHeaderSize));
      want.resize(hpcz::kHeaderSize, 0);
      CHECK_MSG(std::equal(want.begin(), want.end(), heads.begin() + i * hpcz::kHeaderSize),
                "archive " << i << ": the header read from the device differs");
    }
  }
  const size_t ws = hpcz::decompress_device_batch_workspace_size(infos);
  DeviceBuffer w(ws), status(4 * n);
  REQUIRE(cudaMemset(status.p, 0xFF, 4 * n) == cudaSuccess);
  hpcz::decompress_device_batch(infos, ins.data(), outs.data(), static_cast<uint32_t*>(status.p), w.p, ws, nullptr);
  std::vector<uint32_t> st(n);
  REQUIRE(cudaMemcpy(st.data(), status.p, 4 * n, cudaMemcpyDeviceToHost) == cudaSuccess);
  size_t same = 0;
  for (size_t i = 0; i < n; ++i) {
    const bool bad = std::find(damaged.begin(), damaged.end(), i) != damaged.end();
    if (bad) {
      CHECK_MSG(st[i] != 0, "damaged archive " << i << " decoded with status 0");
      continue;
    }
    CHECK_MSG(st[i] == 0, "archive " << i << ": status " << st[i]);
    std::vector<uint8_t> want, got(infos[i].n_values * hpcz::dtype_size(infos[i].dtype));
    hpcz::decompress(archives[i].data(), archives[i].size(), want, hpcz::Backend::cpu);
    if (!got.empty()) REQUIRE(cudaMemcpy(got.data(), outs[i], got.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK_MSG(got == want, "archive " << i << " (version " << infos[i].version << "): values differ from the CPU decoder's");
    same += got == want;
  }
  CHECK_MSG(st[damaged[2]] == hpcz::gpu::kBadTable, "table checksum damage: status " << st[damaged[2]]);
  std::fprintf(stderr, "  %zu archives decoded in one batch, %zu identical to the CPU decoder, %zu damaged refused\n", n,
               same, damaged.size());
}

// An empty device batch enqueues nothing; a bad capacity is refused before anything is enqueued.
TEST(roundtrip_device_batch_empty_and_bad) {
  if (no_gpu()) return;
  hpcz::Options o;
  hpcz::compress_device_batch({}, o, nullptr, nullptr, nullptr, nullptr, 0, nullptr);
  DeviceBuffer v(4096), out(8192), sizes(8);
  const std::vector<hpcz::ArrayRef> one{{v.p, hpcz::DType::f32, {1024}}};
  void* outs[] = {out.p};
  const size_t small[] = {100};
  const size_t ws_size = hpcz::compress_device_batch_workspace_size(one, o);
  DeviceBuffer ws(ws_size);
  bool refused = false;
  try {
    hpcz::compress_device_batch(one, o, outs, small, static_cast<uint64_t*>(sizes.p), ws.p, ws_size, nullptr);
  } catch (const hpcz::Error& e) {
    refused = e.code() == hpcz::ErrorCode::invalid_argument;
  }
  CHECK_MSG(refused, "a capacity below max_compressed_size was not refused");
}
#endif
