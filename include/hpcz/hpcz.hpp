// hpcz: error-bounded lossy compression of float32/float64 arrays on GPUs and CPUs.
//
// Two levels:
//  * convenience calls on host memory (compress / decompress / inspect): pick a backend, allocate,
//    synchronize, throw hpcz::Error on failure;
//  * device calls (compress_device / decompress_device): device pointers, a CUDA stream, a workspace
//    the caller allocates (query its size first); asynchronous, no allocation, no synchronization.
// Every reconstructed value is within the absolute bound recorded in the archive (checked exactly, in
// double); NaN, Inf and the fill value are stored exactly. See docs/FORMAT.md for the archive layout.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hpcz {

// f32, f64: coded as they are. The others are storage types (format version 7; i64, u64: 9): widened
// exactly to the code type (float32: f16, bf16, i8, u8, i16, u16; float64: i32, u32, i64, u64), coded as
// that type under a bound that stays strict once the reconstruction is narrowed back (integers: an
// integer bound, abs 0 lossless). i64 and u64 take the values a float64 holds exactly, |v| <= 2^53; an
// array with another is refused (invalid_argument).
enum class DType : uint8_t {
  f32 = 1, f64 = 2, f16 = 3, bf16 = 4, i8 = 5, u8 = 6, i16 = 7, u16 = 8, i32 = 9, u32 = 10, i64 = 11, u64 = 12
};
// rel: relative to max - min of the finite, non-fill values. abs_and_rel, abs_or_rel (SZ3's ABS_AND_REL,
// ABS_OR_REL): Options::bound is the rel factor and Options::abs_bound the absolute bound; every value
// is within the smaller of the two (and), or the larger (or). pw_rel: pointwise-relative, every value
// within bound x |value| (0 < bound < 1), zero and the sign kept (the fast codec). psnr, nrmse: quality
// targets over the finite, non-fill values, met or exceeded: bound is the PSNR in dB (of the value range)
// or the NRMSE (the RMS error over the range); the archive records the PSNR achieved (ArchiveInfo), and
// every value is also within its eb_abs. Whole arrays only: compress() and compress_stream().
enum class BoundMode : uint8_t { abs = 1, rel = 2, pw_rel = 3, psnr = 4, nrmse = 5, abs_and_rel = 6, abs_or_rel = 7 };
// fast: cuSZp2-class block fixed-length coding (speed). ratio: cuSZ-class Lorenzo prediction and Huffman
// coding (ratio). interp: the ratio mode's coding with the predictor chosen per chunk, Lorenzo or
// SZ3-class interpolation, and masks (the fill value, NaN) at about a symbol a point (both backends, the
// same bytes; slower than ratio on the GPU).
enum class Codec : uint8_t { fast = 1, ratio = 2, interp = 3 };
enum class Backend { automatic, cpu, gpu };

// Bytes of a value of t; throws Error(invalid_argument) naming a value that is no supported dtype.
size_t dtype_size(DType t);

// ---- names: the one vocabulary of codecs, dtypes and bound modes -----------------------------------
// Every front end (CLI, Python, numcodecs, Zarr, HDF5, C) names and parses these through here, so a
// codec, dtype or bound mode added to the library is spelled in one place. A parser returns nullopt
// for a name it does not know (never a default): the caller refuses it, listing the accepted names.
// The numbers are the enums' values, which are also the archive header's, the C API's and the HDF5
// filter's codes.
const char* codec_name(Codec c);                          // the codec registry's name: "fast", "ratio", "interp"
std::optional<Codec> parse_codec(std::string_view name);  // a registered codec's name
std::optional<Codec> codec_of_id(unsigned id);            // a registered codec's number
std::vector<std::string> codec_names();                   // every registered codec, by number
const char* dtype_name(DType t);                          // "float32", "float64", "float16", "bfloat16", "int8", ...
const char* dtype_short_name(DType t);                    // "f32", "f64", "f16", "bf16", "i8", "u8", ... (the CLI's -t)
std::optional<DType> parse_dtype(std::string_view name);  // a name or a short name: "float32" or "f32", "int16" or "i16"
std::optional<DType> dtype_of_id(unsigned id);
std::vector<std::string> dtype_names();                   // every dtype's name, by number
const char* bound_mode_name(BoundMode m);                 // "abs", "rel", "pw_rel", "psnr", "nrmse", "abs_and_rel", ...
std::optional<BoundMode> parse_bound_mode(std::string_view name);  // "abs" or "absolute", "rel" or "relative"
std::optional<BoundMode> bound_mode_of_id(unsigned id);
std::vector<std::string> bound_mode_names();              // every mode's name, by number
// Names for a message: "'fast', 'ratio' or 'interp'" (quote: "'"), "fast, ratio or interp" (quote: "").
std::string names_list(const std::vector<std::string>& names, const char* quote = "'");

enum class ErrorCode {
  invalid_argument = 1,   // the caller's request is wrong (bad dims, bound, buffer too small)
  corrupt_archive = 2,    // the archive is truncated, damaged or not an hpcz archive
  unsupported = 3,        // a valid archive of a newer format version or unknown codec
  backend_unavailable = 4,// GPU requested but none usable
  cuda = 5,               // a CUDA runtime error
  internal = 7,           // a bug in hpcz (an archive it wrote did not read back): please report it
  io = 8,                 // reading a streaming call's input or writing its output failed
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode c, const std::string& msg) : std::runtime_error(msg), code_(c) {}
  ErrorCode code() const noexcept { return code_; }
 private:
  ErrorCode code_;
};

struct Options {
  BoundMode mode = BoundMode::rel;
  double bound = 1e-3;  // abs: the bound; rel, abs_and_rel, abs_or_rel: the factor of the range; pw_rel: of |x|
  double abs_bound = 0;  // abs_and_rel, abs_or_rel: the absolute bound (else unused)
  Codec codec = Codec::fast;
  std::optional<double> fill;  // values equal to it are excluded from the range and kept exactly
  Backend backend = Backend::automatic;
  uint32_t radius = 512;  // ratio mode: quant codes cover |delta| < radius (1..2048); others are outliers (pw_rel: 512 means 2048)
  // A lossless pass over each encoded chunk, the better of Deflate and ORC RLE v2 or none per chunk
  // (format version 2). Host API only: compress_device refuses it, decompress_device refuses such
  // archives; decompress() unwraps them (on the GPU with the lossless framework when present).
  bool second_stage = false;
};

struct ChunkEntry {
  uint64_t offset;   // from the start of the archive
  uint32_t size;     // bytes
  uint32_t checksum; // HPCZ-SUM of the chunk's bytes
};

// Everything the header says, validated.
struct ArchiveInfo {
  uint16_t version = 0;
  DType dtype = DType::f32;
  std::vector<uint64_t> dims;  // slowest to fastest
  uint64_t n_values = 0;
  BoundMode mode = BoundMode::abs;
  double bound = 0;       // as requested (abs_and_rel, abs_or_rel: the rel factor)
  double eb_abs = 0;      // the absolute bound every value satisfies
  bool range_valid = false;
  double range_min = 0, range_max = 0;  // over finite, non-fill input values
  std::optional<double> fill;
  double step = 0;        // quantization step
  Codec codec = Codec::fast;
  uint32_t chunk_values = 0;
  uint32_t block_values = 0;  // fast: values per block (32); ratio: the quant-code radius
  uint64_t n_chunks = 0;
  uint64_t archive_size = 0;
  uint64_t data_offset = 0;  // where chunk data starts
  uint32_t table_checksum = 0;
  bool second_stage = false;  // chunks carry the lossless second stage (version 2)
  std::optional<double> psnr_achieved;  // modes psnr and nrmse: the PSNR (dB) achieved, rounded down to
                                        // 0.01 dB (infinity: every value exact)
  std::vector<ChunkEntry> chunks;  // filled by inspect() when the table is available
};

// Where a ratio-mode archive's bytes go (all chunks summed); zeros for the fast mode.
struct StageSizes {
  uint64_t header_and_table = 0;
  uint64_t codebook = 0;      // code lengths (and chunk headers)
  uint64_t gap_metadata = 0;  // gap array and per-sequence symbol offsets
  uint64_t codes = 0;         // the Huffman bit stream of the quant codes
  uint64_t outliers = 0;      // indices and deltas of codes outside the radius
  uint64_t exceptions = 0;    // indices and values stored exactly (NaN, Inf, fill, unquantizable)
  uint64_t raw_chunks = 0;    // chunks stored verbatim because coding would not shrink them
  int64_t second_stage_saved = 0;  // bytes the lossless second stage took off (0 without it)
};
// Splits the archive's size by stage (what `hpcz info` prints): validates the header and chunk table as
// inspect() does, then reads only each chunk's first bytes (its lossless-stage header, and under that
// stage the first bytes of its first piece), so its time and memory stay small whatever the archive
// declares. It verifies no chunk checksum and decodes no chunk: decompress() does.
StageSizes stage_sizes(const uint8_t* archive, size_t size);

// ---- sizes ------------------------------------------------------------------------------------------
size_t max_compressed_size(uint64_t n_values, DType dtype);
constexpr size_t kHeaderSize = 144;
// Bytes of header + chunk table; the first read a streaming reader makes.
size_t archive_prefix_size(const uint8_t* header, size_t available);

// ---- convenience API (host memory) ------------------------------------------------------------------
std::vector<uint8_t> compress(const void* data, DType dtype, const std::vector<uint64_t>& dims,
                              const Options& opt);
// The same archive into a caller's buffer of out_capacity bytes (at least max_compressed_size(n_values,
// dtype), else Error(invalid_argument)); returns its size. On the GPU path (no second stage) the archive
// is copied from the device straight into out.
size_t compress(const void* data, DType dtype, const std::vector<uint64_t>& dims, const Options& opt, void* out,
                size_t out_capacity);
// What a decoding call may cost, for archives from untrusted sources (docs/SECURITY.md). Every size the
// decoder allocates from is first checked against the bytes that are there (a chunk's values against its
// bytes, a lossless piece's output against its length), so a small archive can only declare what its
// bytes could decode to; but a genuine archive of a constant field may decode to up to about 65,000
// times its size. max_output refuses, before anything is allocated, an archive whose array (n_values *
// dtype size) is larger: Error(invalid_argument), "... above the max_output limit ...". 0: no limit.
struct DecodeLimits {
  uint64_t max_output = 0;
};
// Decodes into out (resized to n_values * dtype size).
ArchiveInfo decompress(const uint8_t* archive, size_t size, std::vector<uint8_t>& out,
                       Backend backend = Backend::automatic, const DecodeLimits& limits = {});
// Decodes into a caller's buffer of out_capacity bytes (at least n_values * dtype size, from
// inspect_header; else Error(invalid_argument)), with no copy and no zero-filling in between.
ArchiveInfo decompress(const uint8_t* archive, size_t size, void* out, size_t out_capacity,
                       Backend backend = Backend::automatic, const DecodeLimits& limits = {});
// Parses and validates header and chunk table (checksums of header and table included).
ArchiveInfo inspect(const uint8_t* archive, size_t size);
// Parses and validates the header alone (the first kHeaderSize bytes are enough): what a reader needs
// before it has the whole archive, e.g. to size buffers for decompress_device. chunks stays empty.
ArchiveInfo inspect_header(const uint8_t* archive, size_t available);

// ---- batches: many arrays or archives in one call ---------------------------------------------------
// What front ends that meet data a chunk at a time (Zarr, HDF5, numcodecs) call: one call codes every
// item, on the GPU through buffers kept between calls (pinned staging, device buffers, streams), several
// items a copy and several copies in flight, or on every CPU core (one item a core when there are
// enough items). Each archive is byte for byte what compress() writes for that item; each decoded array
// what decompress() gives. A bad item gets its own status and every other item is coded all the same.
struct ArrayRef {
  const void* data = nullptr;
  DType dtype = DType::f32;
  std::vector<uint64_t> dims;  // slowest to fastest
};
struct ArchiveRef {
  const uint8_t* data = nullptr;
  size_t size = 0;
};
struct OutputRef {
  void* data = nullptr;
  size_t capacity = 0;  // bytes; at least the archive's n_values * dtype size
};
// One item's outcome: code 0 when it succeeded, else the ErrorCode's value and its message.
struct ItemStatus {
  int code = 0;
  std::string message;
  bool ok() const { return code == 0; }
};
// Archive i goes to place(i, size): a buffer of size bytes the caller owns. place is called one item
// at a time (never concurrently), in any order of i, and only for items that succeeded.
using PlaceArchive = std::function<uint8_t*(size_t index, size_t size)>;
std::vector<ItemStatus> compress_batch(const std::vector<ArrayRef>& arrays, const Options& opt, const PlaceArchive& place);
// The same into vectors (archives[i] is left empty for an item that failed).
std::vector<ItemStatus> compress_batch(const std::vector<ArrayRef>& arrays, const Options& opt,
                                       std::vector<std::vector<uint8_t>>& archives);
// Decodes archives[i] into outputs[i]; infos, when given, receives each archive's header. limits applies
// to each item (an item above it gets invalid_argument, the others are decoded).
std::vector<ItemStatus> decompress_batch(const std::vector<ArchiveRef>& archives, const std::vector<OutputRef>& outputs,
                                         Backend backend = Backend::automatic,
                                         std::vector<ArchiveInfo>* infos = nullptr, const DecodeLimits& limits = {});
// Host calls (compress, decompress, the batches) keep each GPU's pinned and device buffers between
// calls, up to a fixed budget a GPU; this frees every buffer not in use now.
void release_cached_buffers();

// ---- backends -------------------------------------------------------------------------------------
bool gpu_available();       // a CUDA device is present and this build has CUDA (the first call starts it: its context);
                            // false in a child forked after CUDA was started (CUDA cannot be used there)
std::string gpu_name();     // "" if none
Backend resolve_backend(Backend b);  // automatic -> gpu or cpu; throws if gpu is requested but absent
// The same for one codec: automatic -> cpu where the codec has no GPU implementation (every codec has one
// now; a codec added CPU-first resolves here).
Backend resolve_backend(Backend b, Codec codec);
// And for one bound mode in that codec: every pair runs on both backends now (pw_rel in the ratio and
// interp codecs ran on the CPU only before), so this is the codec's answer; a pair added CPU-first
// resolves here.
Backend resolve_backend(Backend b, Codec codec, BoundMode mode);

// ---- device API (requires a CUDA build; throws backend_unavailable otherwise) ---------------------
// stream is a cudaStream_t. All pointers are device pointers. No allocation, no synchronization.
// Workspace for compress_device with these dims and options (the ratio mode needs dims and radius).
size_t compress_device_workspace_size(DType dtype, const std::vector<uint64_t>& dims, const Options& opt);
// The fast mode's workspace, which depends only on the value count.
size_t compress_device_workspace_size(uint64_t n_values, DType dtype);
// Writes the archive to d_out (capacity >= max_compressed_size) and its size to *d_size (device u64).
// d_in, d_out and the workspace must be 16-byte aligned (cudaMalloc's are). A storage type's values are
// widened into the workspace first (it holds them: n_values code values more), and decoded there before
// they are narrowed into d_out (decompress_device): the same bytes as the host calls.
void compress_device(const void* d_in, DType dtype, const std::vector<uint64_t>& dims, const Options& opt,
                     void* d_out, size_t out_capacity, uint64_t* d_size, void* d_workspace,
                     size_t workspace_size, void* stream);
size_t decompress_device_workspace_size(const ArchiveInfo& info);
// info from inspect_header() (the kernels read the chunk table from d_archive and check it).
// *d_status (device u32) receives 0 on success, else a nonzero error mask (bit 0: a chunk checksum
// mismatch, bit 1: a malformed chunk or chunk table entry, bit 2: chunk table checksum mismatch).
// Device pointers must be 16-byte aligned (cudaMalloc's are).
void decompress_device(const ArchiveInfo& info, const void* d_archive, void* d_out, uint32_t* d_status,
                       void* d_workspace, size_t workspace_size, void* stream);
// A device batch: arrays whose values (ArrayRef::data) are device pointers, coded with the same options
// in one set of launches where the codec has them (the fast and ratio modes), otherwise one array after another
// on a few streams of the library's, forked from `stream` and joined back to it (work queued on
// `stream` before the call comes first, work queued after it waits for the batch).
// Archive i goes to d_outs[i] (capacity out_capacities[i] >= max_compressed_size), its size to
// d_sizes[i] (a device array of u64, one per array), byte for byte what compress_device writes. The
// call copies the batch's tables from host memory into the workspace, a copy that may wait for the
// stream's earlier work.
size_t compress_device_batch_workspace_size(const std::vector<ArrayRef>& arrays, const Options& opt);
void compress_device_batch(const std::vector<ArrayRef>& arrays, const Options& opt, void* const* d_outs,
                           const size_t* out_capacities, uint64_t* d_sizes, void* d_workspace, size_t workspace_size,
                           void* stream);
// Archive i (infos[i] from inspect_header) at d_archives[i] to d_outs[i], its status word (as
// decompress_device's) to d_status[i] (a device array of u32, one per archive). Fast-mode archives, and
// ratio-mode ones whose reconstruction is the fused one, are decoded in one set of launches (one per
// dtype); others one after another on the library's streams, as compress_device_batch's.
// The first kHeaderSize bytes of each of n device archives (sizes[i] bytes at d_archives[i]; of one
// shorter than that its bytes, then zeros) into h_headers (n * kHeaderSize bytes of host memory), in
// one gather on the stream and one copy back: what a batch reader inspects (inspect_header) to size
// its outputs. Returns when the bytes are there (it waits for the stream).
size_t read_device_headers_workspace_size(size_t n);
void read_device_headers(const void* const* d_archives, const size_t* sizes, size_t n, uint8_t* h_headers,
                         void* d_workspace, size_t workspace_size, void* stream);
size_t decompress_device_batch_workspace_size(const std::vector<ArchiveInfo>& infos);
void decompress_device_batch(const std::vector<ArchiveInfo>& infos, const void* const* d_archives, void* const* d_outs,
                             uint32_t* d_status, void* d_workspace, size_t workspace_size, void* stream);

// ---- streaming: arrays of any size, host to host through bounded buffers ---------------------------
// The same archives as compress() and decompress(), for arrays larger than host or GPU memory: the
// array flows in slabs of whole chunks through a few buffers per lane (a lane: a CUDA stream of one GPU
// with its pinned and device buffers, or the CPU), several lanes at once on every GPU in use, so that
// reading, copying in, coding, copying out and writing overlap. Compression reads its input twice:
// the value range first (the bound and the quantization step depend on it), then the slabs.
//
// Where a streaming call reads: read() fills dst with bytes [offset, offset + size); it is called from
// several threads at once and throws Error(io) when it fails.
class Source {
 public:
  virtual ~Source() = default;
  virtual uint64_t size() const = 0;
  virtual void read(uint64_t offset, void* dst, size_t size) = 0;
  virtual const uint8_t* data() const { return nullptr; }  // the bytes, when they are in memory
};
// Where it writes: write() of any range, from several threads at once (each byte once), unless
// sequential(): then the calls come one at a time, each starting where the last one ended (a pipe).
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void write(uint64_t offset, const void* src, size_t size) = 0;
  virtual bool sequential() const { return false; }
  // Before the first write: the output will hold at most max_size bytes. After the last: it holds size.
  virtual void reserve(uint64_t max_size) { (void)max_size; }
  virtual void finish(uint64_t size) { (void)size; }
};
// A file descriptor (pread; a sequential sink uses write; a regular file is written through a shared
// mapping by several threads at once, each range's pages allocated with MADV_POPULATE_WRITE so that a
// full disk is an Error(io), never a SIGBUS; pwrite where that is unavailable), a buffer in memory.
std::unique_ptr<Source> fd_source(int fd, uint64_t size);
std::unique_ptr<Sink> fd_sink(int fd, bool sequential = false);
std::unique_ptr<Source> memory_source(const void* data, uint64_t size);

// Where a streaming call's time went (seconds; read, code and write summed over the lanes).
struct StreamStats {
  double total = 0;
  double range = 0;  // compression's first pass, while the lanes start
  double setup = 0;  // the slowest lane's start-up: its buffers (pinned memory), a GPU's context
  double read = 0, code = 0, write = 0;
  int lanes = 0;
  uint64_t slabs = 0, slab_bytes = 0;
};

struct StreamOptions {
  std::vector<int> devices;                   // the GPUs the slabs go to (empty: every visible GPU)
  size_t device_memory = size_t(4) << 30;     // the most each GPU lends the call (buffers, workspace)
  size_t host_memory = size_t(1) << 30;       // the most the call's buffers take on the host
  size_t slab_bytes = 0;                      // array bytes per slab, rounded to whole chunks (0: from the budgets)
  int lanes_per_device = 3;                   // lanes per GPU: a lane reads or writes while another codes
  std::function<void(uint64_t done, uint64_t total)> progress;  // array bytes done, after each slab
  StreamStats* stats = nullptr;               // filled in when given
};

// Compresses the array `in` holds (dims and dtype as compress(); opt.backend picks the GPUs or the CPU)
// into out: the bytes compress() returns. Returns the archive's header (as inspect_header gives it).
// The header and chunk table are written last, at offset 0: a sequential sink is refused (compress
// into a file, then copy it).
ArchiveInfo compress_stream(Source& in, DType dtype, const std::vector<uint64_t>& dims, const Options& opt, Sink& out,
                         const StreamOptions& so = {});
// Decodes the archive `in` holds (of exactly in.size() bytes) into out: n_values values. limits is
// checked once the header is read, before the chunk table is.
ArchiveInfo decompress_stream(Source& in, Sink& out, Backend backend = Backend::automatic,
                              const StreamOptions& so = {}, const DecodeLimits& limits = {});
// GPUs visible to this process (0 without CUDA).
int gpu_count();

// ---- metrics (qcat / Z-checker definitions) ---------------------------------------------------------
struct Metrics {
  uint64_t n = 0;
  uint64_t nonfinite_mismatch = 0;  // positions where either value is NaN/Inf and the bits differ
  double value_range = 0;           // of the original's finite values
  double max_abs_error = 0;
  double max_rel_error = 0;         // max_abs_error / value_range
  double mse = 0, psnr = 0, nrmse = 0;
};
Metrics compare(const void* original, const void* reconstructed, DType dtype, uint64_t n,
                std::optional<double> fill = std::nullopt);

// ---- lossless codecs ---------------------------------------------------------------------------------
// rle1 / rle2: Apache ORC integer run-length encodings over little-endian integer elements of
// elem_bytes (1, 2, 4, 8), signed (zigzag) or unsigned. deflate: RFC 1951.
// lossless_compress cuts the input into independently decodable chunks of chunk_bytes (so a GPU decodes
// them one warp each): rle1/rle2 write an "HZLC" container (docs/FORMAT.md, section 8) of ORC streams;
// deflate writes gzip members, each with an "HZ" extra field giving its size (any gzip reads the file).
// lossless_decompress also reads what other tools write: a raw ORC stream (rle1/rle2), gzip with any
// number of members, zlib or raw Deflate; those have no chunk index and decode on the CPU.
enum class LosslessCodec { rle1, rle2, deflate };
struct LosslessOptions {
  LosslessCodec codec = LosslessCodec::rle2;
  int elem_bytes = 1;
  bool is_signed = false;
  Backend backend = Backend::automatic;  // decompression of chunked input: GPU when present
  uint32_t chunk_bytes = 65536;          // compression: decoded bytes per chunk (a multiple of elem_bytes)
};
std::vector<uint8_t> lossless_compress(const uint8_t* data, size_t size, const LosslessOptions& opt);
// Throws Error(corrupt_archive) for a damaged or truncated stream.
std::vector<uint8_t> lossless_decompress(const uint8_t* data, size_t size, const LosslessOptions& opt);

// Batched decoding of independent chunks, in the spirit of nvCOMP's low-level API. Chunk i is in[i]
// (in_sizes[i] bytes): an ORC RLE stream of opt.elem_bytes integers, or a raw Deflate stream (no
// framing). It decodes into out[i] (out_capacity[i] bytes); out_sizes[i] gets the decoded bytes and
// status[i] the outcome. A bad chunk never makes the decoder read or write outside its buffers.
enum class LosslessStatus : int32_t {
  ok = 0,
  corrupt = 1,          // malformed or truncated stream (or an RLE value outside the element type)
  output_overflow = 2,  // the decoded data does not fit out_capacity[i]
};
// On the CPU (host pointers; OpenMP over chunks).
void lossless_decompress_batch(const LosslessOptions& opt, const uint8_t* const* in, const uint64_t* in_sizes,
                               uint8_t* const* out, const uint64_t* out_capacity, uint64_t* out_sizes,
                               LosslessStatus* status, size_t n_chunks);
// On the GPU (requires a CUDA build; throws backend_unavailable otherwise): every array and buffer is
// device memory, one warp decodes one chunk, asynchronously on `stream` (a cudaStream_t), in a
// workspace of the queried size (may be 0). Writes the same bytes and statuses as the CPU call.
// Batches of 512 chunks or more use the workspace (4 bytes a chunk) to decode the largest chunks first;
// given less (or none) they decode in index order, with the same results, often slower.
size_t lossless_decompress_batch_workspace_size(const LosslessOptions& opt, size_t n_chunks);
void lossless_decompress_batch_device(const LosslessOptions& opt, const uint8_t* const* d_in,
                                      const uint64_t* d_in_sizes, uint8_t* const* d_out,
                                      const uint64_t* d_out_capacity, uint64_t* d_out_sizes,
                                      LosslessStatus* d_status, size_t n_chunks, void* d_workspace,
                                      size_t workspace_size, void* stream);

const char* version_string();

}  // namespace hpcz
