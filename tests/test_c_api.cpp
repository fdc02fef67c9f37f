// The C API (for bindings): round trips in both codecs, status codes, the out-of-space protocol, the device calls.
#include <cstring>
#include <vector>

#include "common.hpp"
#include "codecs/codec.hpp"
#include "format/header.hpp"
#include "hpcz/hpcz.h"
#ifdef HPCZ_HAS_CUDA
#include <cuda_runtime.h>
#endif

TEST(unit_c_api_round_trip_and_status) {
  std::vector<float> v(50000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(std::sin(i * 0.01) * 10);
  const uint64_t dims[2] = {250, 200};
  for (int codec : {0, int(HPCZ_FAST), int(HPCZ_RATIO)}) {
    hpcz_options o;
    std::memset(&o, 0, sizeof o);
    o.mode = HPCZ_ABS;
    o.bound = 1e-3;
    o.backend = HPCZ_CPU;
    o.codec = codec;
    std::vector<uint8_t> out(hpcz_max_compressed_size(v.size(), HPCZ_F32));
    size_t size = 0;
    // Too small a buffer: HPCZ_OUT_OF_SPACE and the size needed.
    CHECK(hpcz_compress(v.data(), HPCZ_F32, dims, 2, &o, out.data(), 10, &size) == HPCZ_OUT_OF_SPACE);
    CHECK(size > 10);
    REQUIRE(hpcz_compress(v.data(), HPCZ_F32, dims, 2, &o, out.data(), out.size(), &size) == HPCZ_OK);
    int dtype = 0, ndims = 0;
    uint64_t d[4] = {0, 0, 0, 0}, n = 0;
    CHECK(hpcz_inspect(out.data(), size, &dtype, &ndims, d, &n) == HPCZ_OK);
    CHECK(dtype == HPCZ_F32 && ndims == 2 && d[0] == 250 && d[1] == 200 && n == v.size());
    std::vector<float> back(v.size());
    CHECK(hpcz_decompress(out.data(), size, back.data(), back.size() * 4 - 1, HPCZ_CPU) == HPCZ_OUT_OF_SPACE);
    CHECK(hpcz_decompress(out.data(), size, back.data(), back.size() * 4, HPCZ_CPU) == HPCZ_OK);
    auto c = testutil::strict_check(v.data(), back.data(), v.size(), 1e-3, std::nullopt);
    CHECK(c.violations == 0);
    out[size / 2] ^= 0x40;  // damaged: a status, never a crash
    CHECK(hpcz_decompress(out.data(), size, back.data(), back.size() * 4, HPCZ_CPU) == HPCZ_CORRUPT_ARCHIVE);
    CHECK(std::strlen(hpcz_last_error()) > 0);
  }
  hpcz_options bad;
  std::memset(&bad, 0, sizeof bad);
  bad.mode = HPCZ_REL;
  bad.bound = 1e-3;
  bad.codec = 7;
  std::vector<uint8_t> out(hpcz_max_compressed_size(v.size(), HPCZ_F32));
  size_t size = 0;
  CHECK(hpcz_compress(v.data(), HPCZ_F32, dims, 2, &bad, out.data(), out.size(), &size) == HPCZ_INVALID_ARGUMENT);
  bad.codec = HPCZ_RATIO;
  bad.radius = 5000;
  CHECK(hpcz_compress(v.data(), HPCZ_F32, dims, 2, &bad, out.data(), out.size(), &size) == HPCZ_INVALID_ARGUMENT);
}

// The device calls: argument and header checks on any machine; on a GPU, the archive written from
// device memory on a stream equals the host API's byte for byte, and decodes back in device memory.
TEST(unit_c_api_device_calls) {
  std::vector<double> v(70007);  // several fast-mode chunks, and a partial block at the end
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(i * 0.003) * 50 + std::cos(i * 0.0007);
  const uint64_t dims[2] = {7, 10001};  // 70,007 values
  hpcz_options o;
  std::memset(&o, 0, sizeof o);
  o.mode = HPCZ_REL;
  o.bound = 1e-4;
  size_t ws = 0;
  CHECK(hpcz_compress_device_workspace_size(HPCZ_F64, dims, 2, nullptr, &ws) == HPCZ_INVALID_ARGUMENT);
  CHECK(hpcz_compress_device_workspace_size(HPCZ_F64, dims, 5, &o, &ws) == HPCZ_INVALID_ARGUMENT);
  const uint8_t junk[144] = {'H', 'P', 'C', 'Z'};
  CHECK(hpcz_decompress_device_workspace_size(junk, sizeof junk, &ws) == HPCZ_CORRUPT_ARCHIVE);
  CHECK(hpcz_decompress_device_workspace_size(junk, 10, &ws) == HPCZ_CORRUPT_ARCHIVE);
  if (!hpcz::gpu_available()) {
    // No GPU (or no CUDA in this build): a status and a message, never a crash.
    CHECK(hpcz_compress_device(v.data(), HPCZ_F64, dims, 2, &o, nullptr, 0, nullptr, nullptr, 0, nullptr) ==
          HPCZ_BACKEND_UNAVAILABLE);
    CHECK(std::strlen(hpcz_last_error()) > 0);
    std::fprintf(stderr, "  no GPU: device round trip skipped\n");
    return;
  }
#ifdef HPCZ_HAS_CUDA
  for (int codec : {int(HPCZ_FAST), int(HPCZ_RATIO)}) {
    o.codec = codec;
    o.backend = HPCZ_CPU;
    const size_t cap = hpcz_max_compressed_size(v.size(), HPCZ_F64);
    std::vector<uint8_t> host(cap);
    size_t host_size = 0;
    REQUIRE(hpcz_compress(v.data(), HPCZ_F64, dims, 2, &o, host.data(), cap, &host_size) == HPCZ_OK);
    host.resize(host_size);

    REQUIRE(hpcz_compress_device_workspace_size(HPCZ_F64, dims, 2, &o, &ws) == HPCZ_OK);
    void *d_in = nullptr, *d_out = nullptr, *d_ws = nullptr, *d_back = nullptr, *d_dws = nullptr;
    uint64_t* d_size = nullptr;
    uint32_t* d_status = nullptr;
    cudaStream_t s;
    REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
    REQUIRE(cudaMalloc(&d_in, v.size() * 8) == cudaSuccess && cudaMalloc(&d_out, cap) == cudaSuccess &&
            cudaMalloc(&d_ws, ws ? ws : 1) == cudaSuccess && cudaMalloc(&d_back, v.size() * 8) == cudaSuccess &&
            cudaMalloc(&d_size, 8) == cudaSuccess && cudaMalloc(&d_status, 4) == cudaSuccess);
    cudaMemcpy(d_in, v.data(), v.size() * 8, cudaMemcpyHostToDevice);
    CHECK(hpcz_compress_device(d_in, HPCZ_F64, dims, 2, &o, d_out, cap, d_size, d_ws, ws, s) == HPCZ_OK);
    uint64_t size = 0;
    cudaMemcpyAsync(&size, d_size, 8, cudaMemcpyDeviceToHost, s);
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    std::vector<uint8_t> dev(size);
    cudaMemcpy(dev.data(), d_out, size, cudaMemcpyDeviceToHost);
    CHECK_MSG(dev == host, "codec " << codec << ": device archive differs from the host API's");

    size_t dws = 0;
    REQUIRE(hpcz_decompress_device_workspace_size(host.data(), 144, &dws) == HPCZ_OK);
    REQUIRE(cudaMalloc(&d_dws, dws ? dws : 1) == cudaSuccess);
    CHECK(hpcz_decompress_device(host.data(), 144, d_out, d_back, d_status, d_dws, dws, s) == HPCZ_OK);
    uint32_t status = 7;
    std::vector<double> back(v.size());
    cudaMemcpyAsync(&status, d_status, 4, cudaMemcpyDeviceToHost, s);
    cudaMemcpyAsync(back.data(), d_back, v.size() * 8, cudaMemcpyDeviceToHost, s);
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    CHECK(status == 0);
    std::vector<double> ref(v.size());
    REQUIRE(hpcz_decompress(host.data(), host.size(), ref.data(), ref.size() * 8, HPCZ_CPU) == HPCZ_OK);
    CHECK_MSG(std::memcmp(back.data(), ref.data(), v.size() * 8) == 0, "codec " << codec << ": device decode differs");
    // A damaged chunk: a nonzero status mask, not garbage reported as success.
    const uint8_t flip = uint8_t(dev[dev.size() - 9] ^ 0x10);
    cudaMemcpy(static_cast<uint8_t*>(d_out) + dev.size() - 9, &flip, 1, cudaMemcpyHostToDevice);
    CHECK(hpcz_decompress_device(host.data(), 144, d_out, d_back, d_status, d_dws, dws, s) == HPCZ_OK);
    cudaMemcpyAsync(&status, d_status, 4, cudaMemcpyDeviceToHost, s);
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    CHECK(status != 0);
    for (void* p : {d_in, d_out, d_ws, d_back, d_dws, static_cast<void*>(d_size), static_cast<void*>(d_status)}) cudaFree(p);
    cudaStreamDestroy(s);
  }
#endif
}

// The C device batch: each archive is hpcz_compress's, each decodes as hpcz_decompress does.
TEST(unit_c_api_device_batch) {
#ifdef HPCZ_HAS_CUDA
  if (!hpcz::gpu_available()) return;
  const auto fields = testutil::real_fields();
  REQUIRE(!fields.empty());
  const testutil::Field& f = fields.front();
  const uint64_t n = std::min<uint64_t>(f.n(), 300000);
  std::vector<std::vector<uint8_t>> values(3);
  values[0].assign(f.bytes.begin(), f.bytes.begin() + n * hpcz::dtype_size(f.dtype));
  values[1].assign(f.bytes.begin(), f.bytes.begin() + (n / 7) * hpcz::dtype_size(f.dtype));
  values[2].assign(f.bytes.begin(), f.bytes.begin() + 3 * hpcz::dtype_size(f.dtype));
  const int dtype = f.dtype == hpcz::DType::f64 ? HPCZ_F64 : HPCZ_F32;
  const size_t vs = hpcz::dtype_size(f.dtype);
  const int dtypes[3] = {dtype, dtype, dtype}, ndims[3] = {1, 1, 1};
  const uint64_t dims[12] = {n, 0, 0, 0, n / 7, 0, 0, 0, 3, 0, 0, 0};
  hpcz_options o{};
  o.mode = HPCZ_REL;
  o.bound = 1e-3;
  o.codec = HPCZ_FAST;
  o.backend = HPCZ_CPU;
  std::vector<void*> d_in(3), d_out(3), d_back(3);
  std::vector<size_t> caps(3);
  std::vector<std::vector<uint8_t>> host(3);
  for (int i = 0; i < 3; ++i) {
    const uint64_t count = values[i].size() / vs;
    caps[i] = hpcz_max_compressed_size(count, dtype);
    host[i].resize(caps[i]);
    size_t size = 0;
    REQUIRE(hpcz_compress(values[i].data(), dtype, dims + 4 * i, 1, &o, host[i].data(), caps[i], &size) == HPCZ_OK);
    host[i].resize(size);
    REQUIRE(cudaMalloc(&d_in[i], values[i].size()) == cudaSuccess && cudaMalloc(&d_out[i], caps[i]) == cudaSuccess &&
            cudaMalloc(&d_back[i], values[i].size()) == cudaSuccess);
    cudaMemcpy(d_in[i], values[i].data(), values[i].size(), cudaMemcpyHostToDevice);
  }
  size_t ws = 0;
  REQUIRE(hpcz_compress_device_batch_workspace_size(3, dtypes, dims, ndims, &o, &ws) == HPCZ_OK);
  void *d_ws = nullptr, *d_sizes = nullptr, *d_status = nullptr;
  REQUIRE(cudaMalloc(&d_ws, ws) == cudaSuccess && cudaMalloc(&d_sizes, 24) == cudaSuccess &&
          cudaMalloc(&d_status, 12) == cudaSuccess);
  CHECK(hpcz_compress_device_batch(3, d_in.data(), dtypes, dims, ndims, &o, d_out.data(), caps.data(),
                                   static_cast<uint64_t*>(d_sizes), d_ws, ws, nullptr) == HPCZ_OK);
  uint64_t sizes[3] = {};
  REQUIRE(cudaMemcpy(sizes, d_sizes, 24, cudaMemcpyDeviceToHost) == cudaSuccess);
  std::vector<uint8_t> headers(3 * 144);
  for (int i = 0; i < 3; ++i) {
    std::vector<uint8_t> dev(std::min<uint64_t>(sizes[i], caps[i]));
    cudaMemcpy(dev.data(), d_out[i], dev.size(), cudaMemcpyDeviceToHost);
    CHECK_MSG(dev == host[i], "array " << i << ": the device batch archive differs from hpcz_compress's");
    std::memcpy(headers.data() + 144 * i, host[i].data(), 144);
  }
  size_t dws = 0;
  REQUIRE(hpcz_decompress_device_batch_workspace_size(3, headers.data(), 144, &dws) == HPCZ_OK);
  void* d_dws = nullptr;
  REQUIRE(cudaMalloc(&d_dws, dws) == cudaSuccess);
  CHECK(hpcz_decompress_device_batch(3, headers.data(), 144, d_out.data(), d_back.data(),
                                     static_cast<uint32_t*>(d_status), d_dws, dws, nullptr) == HPCZ_OK);
  uint32_t status[3] = {7, 7, 7};
  REQUIRE(cudaMemcpy(status, d_status, 12, cudaMemcpyDeviceToHost) == cudaSuccess);
  for (int i = 0; i < 3; ++i) {
    CHECK(status[i] == 0);
    std::vector<uint8_t> back(values[i].size()), ref(values[i].size());
    cudaMemcpy(back.data(), d_back[i], back.size(), cudaMemcpyDeviceToHost);
    REQUIRE(hpcz_decompress(host[i].data(), host[i].size(), ref.data(), ref.size(), HPCZ_CPU) == HPCZ_OK);
    CHECK_MSG(back == ref, "array " << i << ": the device batch decode differs from hpcz_decompress's");
  }
  for (int i = 0; i < 3; ++i) cudaFree(d_in[i]), cudaFree(d_out[i]), cudaFree(d_back[i]);
  for (void* p : {d_ws, d_sizes, d_status, d_dws}) cudaFree(p);
#endif
}

// The version string names the format versions the code writes and reads (format::archive_version,
// format::kVersion), so that `hpcz --version` cannot drift from them.
TEST(unit_version_names_the_format_versions) {
  const std::string v = hpcz_version();
  const std::string reads = "reads 1 to " + std::to_string(hpcz::format::kVersion) + ")";
  CHECK_MSG(v.find(reads) != std::string::npos, v << ": no '" << reads << "'");
  const std::string fast = "writes format " + std::to_string(hpcz::format::archive_version(hpcz::Codec::fast, false, hpcz::BoundMode::abs));
  CHECK_MSG(v.find(fast) != std::string::npos, v << ": no '" << fast << "'");
  CHECK_MSG(v.rfind("hpcz ", 0) == 0, v);
}

// The one vocabulary (hpcz.hpp, "names"): every registered codec by its registry name, both ways; the
// dtype and bound mode spellings the front ends take (hdf5plugin's absolute/relative among them); and
// an unknown name or number refused, never mapped to a default.
TEST(unit_names_parse_and_refuse) {
  std::vector<std::string> registry;
  for (unsigned id = 0; id < 256; ++id)
    for (const hpcz::codecs::CodecOps* c : hpcz::codecs::all())
      if (unsigned(c->id) == id) registry.push_back(c->name);
  CHECK(hpcz::codec_names() == registry);
  CHECK((hpcz::codec_names() == std::vector<std::string>{"fast", "ratio", "interp"}));  // the contract's ids
  for (const hpcz::codecs::CodecOps* c : hpcz::codecs::all()) {
    CHECK(std::string(hpcz::codec_name(c->id)) == c->name);
    CHECK(hpcz::parse_codec(c->name) == c->id);
    CHECK(hpcz::codec_of_id(unsigned(c->id)) == c->id);
    CHECK(std::string(hpcz_codec_name(int(c->id))) == c->name);
    CHECK(hpcz_parse_codec(c->name) == int(c->id));
  }
  for (const char* bad : {"", "Fast", "lorenzo", "fast "}) {
    CHECK(!hpcz::parse_codec(bad));
    CHECK(hpcz_parse_codec(bad) == 0);
  }
  CHECK(hpcz_parse_codec(nullptr) == 0);
  CHECK(!hpcz::codec_of_id(0) && !hpcz::codec_of_id(4));
  CHECK(hpcz_codec_name(0) == nullptr && hpcz_codec_name(4) == nullptr && hpcz_codec_name(-1) == nullptr);

  CHECK(hpcz::parse_dtype("f32") == hpcz::DType::f32 && hpcz::parse_dtype("float32") == hpcz::DType::f32);
  CHECK(hpcz::parse_dtype("f64") == hpcz::DType::f64 && hpcz::parse_dtype("float64") == hpcz::DType::f64);
  CHECK(hpcz::parse_dtype("f16") == hpcz::DType::f16 && hpcz::parse_dtype("bfloat16") == hpcz::DType::bf16);
  CHECK(hpcz::parse_dtype("int32") == hpcz::DType::i32 && hpcz::parse_dtype("u8") == hpcz::DType::u8);
  for (const char* bad : {"", "F32", "double", "int128", "u65", "half"}) CHECK(!hpcz::parse_dtype(bad));
  CHECK(std::string(hpcz::dtype_name(hpcz::DType::f64)) == "float64");
  CHECK(std::string(hpcz::dtype_short_name(hpcz::DType::f32)) == "f32");
  CHECK((hpcz::dtype_names() == std::vector<std::string>{"float32", "float64", "float16", "bfloat16", "int8", "uint8",
                                                         "int16", "uint16", "int32", "uint32", "int64", "uint64"}));
  CHECK(hpcz::dtype_of_id(HPCZ_F64) == hpcz::DType::f64 && !hpcz::dtype_of_id(0) && !hpcz::dtype_of_id(13));
  CHECK(hpcz::parse_dtype("int64") == hpcz::DType::i64 && hpcz::parse_dtype("u64") == hpcz::DType::u64 &&
        hpcz::dtype_of_id(HPCZ_U64) == hpcz::DType::u64);
  CHECK(hpcz::dtype_of_id(HPCZ_BF16) == hpcz::DType::bf16 && hpcz::dtype_of_id(HPCZ_U32) == hpcz::DType::u32);

  CHECK(hpcz::parse_bound_mode("abs") == hpcz::BoundMode::abs && hpcz::parse_bound_mode("absolute") == hpcz::BoundMode::abs);
  CHECK(hpcz::parse_bound_mode("rel") == hpcz::BoundMode::rel && hpcz::parse_bound_mode("relative") == hpcz::BoundMode::rel);
  for (const char* bad : {"", "pwrel", "Rel", "PSNR", "ssim"}) CHECK(!hpcz::parse_bound_mode(bad));
  CHECK(hpcz::parse_bound_mode("pw_rel") == hpcz::BoundMode::pw_rel &&
        hpcz::parse_bound_mode("abs_and_rel") == hpcz::BoundMode::abs_and_rel);
  CHECK(std::string(hpcz::bound_mode_name(hpcz::BoundMode::rel)) == "rel");
  CHECK(hpcz::bound_mode_of_id(HPCZ_ABS) == hpcz::BoundMode::abs && !hpcz::bound_mode_of_id(8) &&
        hpcz::bound_mode_of_id(HPCZ_PW_REL) == hpcz::BoundMode::pw_rel);

  CHECK(hpcz::names_list(hpcz::codec_names()) == "'fast', 'ratio' or 'interp'");
  CHECK(hpcz::names_list({"abs", "rel"}, "") == "abs or rel");
  CHECK(hpcz::names_list({"one"}, "") == "one");

  // The C API refuses numbers outside the enums (a codec, dtype or bound mode the library lacks).
  std::vector<float> v(100, 1.0f);
  std::vector<uint8_t> out(hpcz_max_compressed_size(v.size(), HPCZ_F32));
  const uint64_t dims[1] = {v.size()};
  size_t size = 0;
  for (int which = 0; which < 3; ++which) {
    hpcz_options o{};
    o.mode = which == 0 ? 8 : HPCZ_REL;
    o.bound = 1e-3;
    o.codec = which == 1 ? 4 : HPCZ_FAST;
    const int dtype = which == 2 ? 13 : HPCZ_F32;
    CHECK(hpcz_compress(v.data(), dtype, dims, 1, &o, out.data(), out.size(), &size) == HPCZ_INVALID_ARGUMENT);
  }
  CHECK(hpcz_max_compressed_size(100, 13) == 0);
}
