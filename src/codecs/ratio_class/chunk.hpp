// The ratio-class chunk (the ratio and interp codecs; cuSZ design): prequantization, Lorenzo
// prediction, Huffman coding of the quant codes. One chunk = whole slabs of the working shape (predict/lorenzo.hpp), coded on its own:
//
//   [16-byte chunk header: u32 total_bits, n_outliers, n_exceptions, kind (0 = coded)]
//   [code lengths: nsym nibbles]            nsym = 2 * radius
//   [seq_first: u32 per sequence]           huffman/stream.hpp
//   [gaps: one nibble per subsequence]
//   [bit stream: u32 words]
//   [outlier indices: u32][outlier deltas: u32 (mod 2^32)]
//   [exception indices: u32][exception values: T]
// every section padded with zeros to a multiple of 4 bytes. Indices are chunk-local and increasing.
// A chunk whose coded form would not be smaller than its values is stored raw instead:
//   [16-byte chunk header: 0, 0, 0, kind = 1][count values T]
// so no chunk grows beyond 16 bytes over its input (max_compressed_size covers both codecs). The interp
// codec's interpolation chunks (kind 2, FORMAT 7.7) add 8 header bytes; their parser is here too, since
// the shared decoder (parse_kernel, chunk_stages) reads every kind.
// The CUDA kernels write and read the same bytes (the *_kernels.cuh files); this is the CPU reference.
#pragma once
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "common/scratch_vector.hpp"
#include "huffman/codebook.hpp"
#include "huffman/stream.hpp"
#include "predict/interp.hpp"
#include "predict/lorenzo.hpp"
#include "quant/quantizer.hpp"

namespace hpcz::ratio {

using namespace hpcz::detail;
using predict::ChunkShape;

constexpr uint32_t kDefaultRadius = 512;
constexpr uint32_t kMaxRadius = huffman::kMaxSymbols / 2;
constexpr uint32_t kPwRelRadius = kMaxRadius;  // pw_rel's default (plan): docs/EXPERIMENTS.md
constexpr uint32_t kChunkHeaderBytes = 16;
// Header bytes 128..135 for this codec: the longest codeword and the predictor (1 = Lorenzo).
constexpr uint64_t kCodecParams = uint64_t(huffman::kMaxLen) | uint64_t(1) << 8;
constexpr uint32_t kKindCoded = 0, kKindRaw = 1;
// An interpolation chunk (the interp codec, FORMAT 7.7): a coded chunk whose header has 8 more bytes.
constexpr uint32_t kKindInterp = 2;
constexpr uint32_t kInterpExtraBytes = 8;

HPCZ_HD uint64_t raw_chunk_bytes(uint64_t count, uint32_t vb) { return kChunkHeaderBytes + count * vb; }

// The raw form of n values: header words 0, 0, 0, kKindRaw, then the values.
template <class T> void write_raw_chunk(const T* in, uint32_t n, std::vector<uint8_t>& dst) {
  dst.assign(raw_chunk_bytes(n, sizeof(T)), 0);
  store_u32_le(dst.data() + 12, kKindRaw);
  for (uint32_t k = 0; k < n; ++k) store_value_le<T>(dst.data() + kChunkHeaderBytes + sizeof(T) * k, in[k]);
}
template <class T> void read_raw_chunk(const uint8_t* src, uint32_t n, T* out) {
  for (uint32_t i = 0; i < n; ++i) out[i] = load_value_le<T>(src + kChunkHeaderBytes + sizeof(T) * i);
}

HPCZ_HD uint32_t align4(uint32_t b) { return (b + 3) & ~3u; }

// Byte offsets of a chunk's sections, from its header's counts.
struct ChunkLayout {
  uint32_t total_bits, n_out, n_exc;
  uint32_t lengths, seq_first, gaps, bits, out_idx, out_delta, exc_idx, exc_val, size;
  uint64_t size64;  // the same, before the 32-bit check
};

HPCZ_HD ChunkLayout chunk_layout(uint32_t nsym, uint32_t total_bits, uint32_t n_out, uint32_t n_exc, uint32_t vb,
                                 uint32_t header_bytes = kChunkHeaderBytes) {
  ChunkLayout L;
  L.total_bits = total_bits; L.n_out = n_out; L.n_exc = n_exc;
  uint64_t at = header_bytes;
  L.lengths = uint32_t(at); at += align4(nsym / 2);
  L.seq_first = uint32_t(at); at += 4ull * huffman::n_sequences(total_bits);
  L.gaps = uint32_t(at); at += align4((huffman::n_subsequences(total_bits) + 1) / 2);
  L.bits = uint32_t(at); at += 4ull * huffman::n_words(total_bits);
  L.out_idx = uint32_t(at); at += 4ull * n_out;
  L.out_delta = uint32_t(at); at += 4ull * n_out;
  L.exc_idx = uint32_t(at); at += 4ull * n_exc;
  L.exc_val = uint32_t(at); at += align4(uint32_t(uint64_t(vb) * n_exc));
  L.size64 = at;
  L.size = uint32_t(at);
  return L;
}

// Largest chunk a writer produces for count values: the raw form (coded chunks are smaller).
HPCZ_HD uint64_t max_chunk_bytes(uint64_t count, uint32_t vb) { return raw_chunk_bytes(count, vb); }
// Smallest chunk a reader accepts for count values: coded at a bit a value (total_bits >= count), with no
// outlier or exception (interpolation chunks' header is 8 bytes longer), or raw.
HPCZ_HD uint64_t min_chunk_bytes(uint64_t count, uint32_t nsym, uint32_t vb) {
  const uint64_t coded = chunk_layout(nsym, uint32_t(count), 0, 0, vb).size64, raw = raw_chunk_bytes(count, vb);
  return coded < raw ? coded : raw;
}

struct Book {
  std::vector<uint8_t> len;
  std::vector<uint32_t> code;
};

// The codebook of a histogram (nsym entries), exactly as the GPU builds it.
inline Book build_book(const uint32_t* hist, uint32_t nsym) {
  std::vector<uint64_t> keys;
  for (uint32_t s = 0; s < nsym; ++s)
    if (hist[s]) keys.push_back(huffman::order_key(hist[s], s));
  std::sort(keys.begin(), keys.end());
  Book b;
  b.len.assign(nsym, 0);
  b.code.assign(nsym, 0);
  if (keys.empty()) return b;
  std::vector<uint32_t> work(keys.size());
  huffman::lengths_from_sorted(keys.data(), uint32_t(keys.size()), work.data(), b.len.data());
  uint32_t first[huffman::kMaxLen + 2];
  huffman::canonical_first_codes(b.len.data(), nsym, first);
  huffman::assign_codes(b.len.data(), nsym, first, b.code.data());
  return b;
}

// One thread's share of a chunk being encoded: its lists (in index order) and counts, concatenated
// in span order afterwards, so any number of spans gives the same bytes.
template <class T>
struct EncodeSpan {
  std::vector<uint32_t> exc_idx, out_idx, out_delta, hist, words;
  std::vector<T> exc_val;
  uint64_t bits = 0;
};

template <class T>
struct EncodeScratch {
  ScratchVector<uint32_t> q, sym;  // written in full by the chunk's (parallel) passes
  std::vector<uint32_t> zero_row, hist;  // hist: the last chunk's symbol counts
  std::vector<uint8_t> gap;
  std::vector<EncodeSpan<T>> spans;
};

template <class T>
void write_coded_chunk(const T* in, uint32_t n, uint32_t radius, EncodeScratch<T>& s, std::vector<uint8_t>& dst,
                       int threads, uint32_t kind, const uint8_t* extra, uint32_t extra_bytes);

// Encodes one chunk (values in memory order) into dst, which is resized. Returns nothing: dst.size()
// is the chunk's size. threads > 1 (a chunk encoded alone, when there are fewer chunks than threads)
// splits every pass into that many spans of values; the bytes do not depend on it.
template <class T>
void encode_chunk(const T* in, const ChunkShape& c, const quant::QuantParams<T>& p, uint32_t radius,
                  EncodeScratch<T>& s, std::vector<uint8_t>& dst, int threads = 1) {
  const uint32_t n = c.count(), nsym = 2 * radius;
  const int64_t nspan = std::max(1, threads);
  auto value_span = [&](int64_t t, int64_t k) { return uint32_t(uint64_t(n) * uint64_t(t + k) / uint64_t(nspan)); };
  s.q.resize(n);
  s.sym.resize(n);
  s.zero_row.assign(c.cx, 0);
  s.spans.resize(size_t(nspan));
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t t = 0; t < nspan; ++t) {
    EncodeSpan<T>& sp = s.spans[t];
    sp.exc_idx.clear(); sp.exc_val.clear(); sp.out_idx.clear(); sp.out_delta.clear();
    sp.hist.assign(nsym, 0);
    for (uint32_t i = value_span(t, 0); i < value_span(t, 1); ++i) {
      int32_t q;
      if (quant::quantize(in[i], p, q)) {
        s.q[i] = uint32_t(q);
      } else {
        s.q[i] = 0;
        sp.exc_idx.push_back(i);
        sp.exc_val.push_back(in[i]);
      }
    }
  }
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t t = 0; t < nspan; ++t) {
    EncodeSpan<T>& sp = s.spans[t];
    predict::lorenzo_values(c, s.q.data(), s.zero_row.data(), value_span(t, 0), value_span(t, 1), [&](uint32_t i, uint32_t d) {
      const uint32_t sym = predict::quant_symbol(d, radius);
      if (!sym) { sp.out_idx.push_back(i); sp.out_delta.push_back(d); }
      s.sym[i] = sym;
      ++sp.hist[sym];
    });
  }
  write_coded_chunk(in, n, radius, s, dst, threads, kKindCoded, nullptr, 0);
}

// The coded chunk from its symbols (s.sym, n of them) and each span's counts and lists (s.spans, in
// index order; spans' value ranges split n evenly, as encode_chunk's passes do), or its raw form where
// that would not be larger. kind: the header's fourth word; extra: bytes written after the 16-byte
// header (extra_bytes, a multiple of 4), before the code lengths.
template <class T>
void write_coded_chunk(const T* in, uint32_t n, uint32_t radius, EncodeScratch<T>& s, std::vector<uint8_t>& dst,
                       int threads, uint32_t kind, const uint8_t* extra, uint32_t extra_bytes) {
  const uint32_t nsym = 2 * radius;
  const int64_t nspan = int64_t(s.spans.size());
  auto value_span = [&](int64_t t, int64_t k) { return uint32_t(uint64_t(n) * uint64_t(t + k) / uint64_t(nspan)); };
  std::vector<uint32_t>& hist = s.hist;
  hist.assign(nsym, 0);
  uint32_t n_out = 0, n_exc = 0;
  for (const auto& sp : s.spans) {
    for (uint32_t k = 0; k < nsym; ++k) hist[k] += sp.hist[k];
    n_out += uint32_t(sp.out_idx.size());
    n_exc += uint32_t(sp.exc_idx.size());
  }
  const Book book = build_book(hist.data(), nsym);
  uint64_t bits64 = 0;
  for (uint32_t k = 0; k < nsym; ++k) bits64 += uint64_t(hist[k]) * book.len[k];
  const uint32_t total_bits = uint32_t(bits64);  // n <= 2^26 values of <= 12 bits
  const ChunkLayout L = chunk_layout(nsym, total_bits, n_out, n_exc, sizeof(T), kChunkHeaderBytes + extra_bytes);
  if (L.size64 >= raw_chunk_bytes(n, sizeof(T))) {
    write_raw_chunk(in, n, dst);
    return;
  }
  dst.assign(L.size, 0);
  uint8_t* d = dst.data();
  store_u32_le(d, total_bits);
  store_u32_le(d + 4, L.n_out);
  store_u32_le(d + 8, L.n_exc);
  store_u32_le(d + 12, kind);
  for (uint32_t k = 0; k < extra_bytes; ++k) d[kChunkHeaderBytes + k] = extra[k];
  for (uint32_t k = 0; k < nsym; ++k) d[L.lengths + k / 2] |= uint8_t(book.len[k] << ((k & 1) * 4));
  // Bit stream, gaps and sequence starts: each span's first bit from the bit counts of the spans
  // before it; its codewords go to words of its own, OR-ed into the stream after (neighbouring spans
  // share a word at their boundary). A subsequence's gap and a sequence's first symbol are written by
  // the span in which that codeword starts.
  const uint32_t nw = huffman::n_words(total_bits), nsub = huffman::n_subsequences(total_bits);
  s.gap.assign(nsub, uint8_t(huffman::kNoStart));
  if (nspan == 1) {
    s.spans[0].bits = total_bits;
  } else {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t t = 0; t < nspan; ++t) {
      uint64_t b = 0;
      for (uint32_t k = value_span(t, 0); k < value_span(t, 1); ++k) b += book.len[s.sym[k]];
      s.spans[t].bits = b;
    }
  }
  uint64_t start = 0;
  std::vector<uint64_t> first_bit(static_cast<size_t>(nspan));
  for (int64_t t = 0; t < nspan; ++t) {
    first_bit[t] = start;
    start += s.spans[t].bits;
  }
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t t = 0; t < nspan; ++t) {
    EncodeSpan<T>& sp = s.spans[t];
    const uint32_t k0 = value_span(t, 0), k1 = value_span(t, 1);
    uint32_t pos = uint32_t(first_bit[t]);
    const uint32_t w0 = pos >> 5;
    sp.words.assign(((pos + uint32_t(sp.bits)) >> 5) - w0 + 2, 0);
    // The subsequence of the codeword before this span's first one (none for the chunk's first).
    int64_t last_sub = k0 ? int64_t((pos - book.len[s.sym[k0 - 1]]) / huffman::kSubBits) : -1;
    for (uint32_t k = k0; k < k1; ++k) {
      const uint32_t sub = pos / huffman::kSubBits;
      if (int64_t(sub) != last_sub) {
        s.gap[sub] = uint8_t(pos - sub * huffman::kSubBits);
        if (sub % huffman::kSeqSubs == 0) store_u32_le(d + L.seq_first + 4 * (sub / huffman::kSeqSubs), k);
        last_sub = sub;
      }
      uint32_t hi, lo;
      const uint32_t len = book.len[s.sym[k]];
      huffman::code_bits(book.code[s.sym[k]], len, pos, hi, lo);
      sp.words[(pos >> 5) - w0] |= hi;
      sp.words[(pos >> 5) - w0 + 1] |= lo;
      pos += len;
    }
  }
  // One span's words are the stream (it starts at bit 0 and holds >= nw words); several are OR-ed.
  std::vector<uint32_t> merged;
  const std::vector<uint32_t>& words = nspan == 1 ? s.spans[0].words : merged;
  if (nspan > 1) {
    merged.assign(nw + 1, 0);
    for (int64_t t = 0; t < nspan; ++t) {
      const uint32_t w0 = uint32_t(first_bit[t] >> 5);
      const std::vector<uint32_t>& sw = s.spans[t].words;
      for (size_t j = 0; j < sw.size() && w0 + j < merged.size(); ++j) merged[w0 + j] |= sw[j];
    }
  }
  for (uint32_t k = 0; k < nsub; ++k) d[L.gaps + k / 2] |= uint8_t(s.gap[k] << ((k & 1) * 4));
  for (uint32_t k = 0; k < nw; ++k) store_u32_le(d + L.bits + 4 * k, words[k]);
  uint32_t at_out = 0, at_exc = 0;
  for (const auto& sp : s.spans) {
    for (size_t k = 0; k < sp.out_idx.size(); ++k, ++at_out) {
      store_u32_le(d + L.out_idx + 4 * at_out, sp.out_idx[k]);
      store_u32_le(d + L.out_delta + 4 * at_out, sp.out_delta[k]);
    }
    for (size_t k = 0; k < sp.exc_idx.size(); ++k, ++at_exc) {
      store_u32_le(d + L.exc_idx + 4 * at_exc, sp.exc_idx[k]);
      store_value_le<T>(d + L.exc_val + sizeof(T) * at_exc, sp.exc_val[k]);
    }
  }
}

// Parses and checks a coded chunk's header against its size. False if malformed.
HPCZ_HD bool parse_chunk(const uint8_t* src, uint32_t size, uint32_t count, uint32_t nsym, uint32_t vb, ChunkLayout& L) {
  if (size < kChunkHeaderBytes) return false;
  const uint32_t bits = load_u32_le(src), n_out = load_u32_le(src + 4), n_exc = load_u32_le(src + 8);
  if (load_u32_le(src + 12) != kKindCoded) return false;
  if (uint64_t(bits) > uint64_t(count) * huffman::kMaxLen || bits < count || n_out > count || n_exc > count)
    return false;
  L = chunk_layout(nsym, bits, n_out, n_exc, vb);
  return L.size64 == size;
}

// A raw chunk: header words 0, 0, 0, kKindRaw and exactly count values.
HPCZ_HD bool is_raw_chunk(const uint8_t* src, uint32_t size, uint32_t count, uint32_t vb) {
  return size >= kChunkHeaderBytes && load_u32_le(src + 12) == kKindRaw && load_u32_le(src) == 0 &&
         load_u32_le(src + 4) == 0 && load_u32_le(src + 8) == 0 && uint64_t(size) == raw_chunk_bytes(count, vb);
}

// The decode tables of a chunk's code lengths. False for a corrupt codebook.
HPCZ_HD bool chunk_tables(const uint8_t* src, const ChunkLayout& L, uint32_t nsym, uint8_t* len,
                          huffman::DecodeTables& t) {
  for (uint32_t k = 0; k < nsym; ++k) len[k] = uint8_t(huffman::get_nibble(src + L.lengths, k));
  return huffman::build_decode_tables(len, nsym, t);
}

// The inverse prediction and dequantization with `threads` threads (a chunk decoded alone, when
// there are fewer chunks than threads), in two passes over v where inverse_lorenzo_rows makes one:
// first the prefix sums inside each plane (3-D: along x and y) or row (2-D: along x), planes split
// across threads; then the sums along the slowest axis fused with dequantization, each thread taking
// a range of columns through all planes. A 1-D chunk is one row: per-range sums, their scan, then
// each range's scan.
template <class T>
void inverse_and_dequantize_parallel(const ChunkShape& c, uint32_t* v, T step, T* out, int threads) {
  const int64_t cx = c.cx, cy = c.cy, cz = c.cz;
  if (cz == 1 && cy == 1) {
    const int64_t span = std::max<int64_t>(4096, (cx + threads - 1) / threads), spans = (cx + span - 1) / span;
    std::vector<uint32_t> carry(size_t(spans) + 1, 0);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t b = 0; b < spans; ++b) {
      uint32_t acc = 0;
      for (int64_t i = b * span; i < std::min(cx, (b + 1) * span); ++i) acc += v[i];
      carry[b + 1] = acc;
    }
    for (int64_t b = 0; b < spans; ++b) carry[b + 1] += carry[b];
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t b = 0; b < spans; ++b) {
      uint32_t acc = carry[b];
      for (int64_t i = b * span; i < std::min(cx, (b + 1) * span); ++i) out[i] = quant::dequantize<T>(int32_t(acc += v[i]), step);
    }
    return;
  }
  // The slowest axis: planes of a 3-D chunk, else the rows of its one plane (a 2-D chunk).
  const bool planes = cz > 1;
  const int64_t np = planes ? cz : cy, P = planes ? cy * cx : cx;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t z = 0; z < np; ++z)  // a plane (or row) on its own: the inverse of a one-plane chunk
    predict::inverse_lorenzo(ChunkShape{1, planes ? uint32_t(cy) : 1u, uint32_t(cx)}, v + z * P);
  const int64_t span = std::max<int64_t>(16, (P + threads - 1) / threads), spans = (P + span - 1) / span;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t b = 0; b < spans; ++b) {
    const int64_t i0 = b * span, i1 = std::min(P, i0 + span);
    for (int64_t z = 0; z < np; ++z) {
      uint32_t* pz = v + z * P;
      if (z)
        for (int64_t i = i0; i < i1; ++i) pz[i] += pz[i - P];
      for (int64_t i = i0; i < i1; ++i) out[z * P + i] = quant::dequantize<T>(int32_t(pz[i]), step);
    }
  }
}

// The symbols of a coded chunk (layout L, n of them) as deltas into v (symbol_delta: symbol 0, an
// outlier's place, gives -radius); zeros counts them. False if the bit stream is malformed.
inline bool decode_symbols(const uint8_t* src, const ChunkLayout& L, uint32_t n, uint32_t radius, uint32_t* v,
                           uint32_t& zeros, int threads) {
  const uint32_t nsym = 2 * radius;
  std::vector<uint8_t> len(nsym);
  auto tables = std::make_unique<huffman::DecodeTables>();
  if (!chunk_tables(src, L, nsym, len.data(), *tables)) return false;
  const uint32_t nw = huffman::n_words(L.total_bits), nsub = huffman::n_subsequences(L.total_bits);
  const uint32_t nseq = huffman::n_sequences(L.total_bits);
  std::vector<uint32_t> words(nw);
  for (uint32_t k = 0; k < nw; ++k) words[k] = load_u32_le(src + L.bits + 4 * k);
  // Sequence j's symbols are [first(j), first(j + 1)): checked to start at 0 and never decrease, so
  // the ranges are disjoint and each sequence can be decoded on its own. Subsequence by subsequence,
  // as the GPU does, checking that each run ends where the next begins and that each sequence fills
  // exactly its range.
  auto first = [&](uint32_t j) { return huffman::sequence_first(src + L.seq_first, src + L.gaps, j, L.total_bits, n); };
  if (huffman::subsequence_start(src + L.gaps, 0, L.total_bits) != 0 || first(0) != 0) return false;
  for (uint32_t j = 0; j < nseq; ++j)
    if (first(j + 1) < first(j)) return false;
  auto word = [&](uint32_t k) { return k < nw ? words[k] : 0u; };
  zeros = 0;
  uint32_t zero_count = 0;
  int ok = 1;
#pragma omp parallel for schedule(dynamic) reduction(+ : zero_count) reduction(min : ok) num_threads(threads) if (threads > 1)
  for (int64_t j = 0; j < int64_t(nseq); ++j) {
    uint32_t produced = first(uint32_t(j));
    const uint32_t stop = first(uint32_t(j) + 1);
    bool good = true;
    const uint32_t sub_end = std::min<uint32_t>(nsub, uint32_t(j + 1) * huffman::kSeqSubs);
    for (uint32_t sub = uint32_t(j) * huffman::kSeqSubs; sub < sub_end && good; ++sub) {
      const uint32_t from = huffman::subsequence_start(src + L.gaps, sub, L.total_bits);
      const uint64_t lim64 = uint64_t(sub + 1) * huffman::kSubBits;
      const uint32_t limit = lim64 < L.total_bits ? uint32_t(lim64) : L.total_bits;
      const uint32_t end = huffman::decode_run(word, L.total_bits, tables->fast, tables->ranges, tables->sorted, from, limit,
                                               [&](uint32_t sym) {
                                                 if (produced < stop) v[produced] = predict::symbol_delta(sym, radius);
                                                 zero_count += sym == 0;
                                                 ++produced;
                                               });
      const uint32_t next = sub + 1 < nsub ? huffman::subsequence_start(src + L.gaps, sub + 1, L.total_bits) : L.total_bits;
      good = end == next;
    }
    if (!good || produced != stop) ok = 0;
  }
  zeros = zero_count;
  return ok != 0;
}

// Decodes one chunk; false if its bytes are not a well-formed chunk. Never reads outside src.
// threads > 1: the chunk's sequences (their output places are in seq_first) and the inverse
// prediction run in parallel; the result is the same.
template <class T>
bool decode_chunk(const uint8_t* src, uint32_t size, const ChunkShape& c, const quant::QuantParams<T>& p,
                  uint32_t radius, T* out, int threads = 1) {
  const uint32_t n = c.count(), nsym = 2 * radius;
  if (is_raw_chunk(src, size, n, sizeof(T))) {
    read_raw_chunk(src, n, out);
    return true;
  }
  ChunkLayout L;
  if (!parse_chunk(src, size, n, nsym, sizeof(T), L)) return false;
  std::vector<uint32_t> v(n);
  uint32_t zeros = 0;
  if (!decode_symbols(src, L, n, radius, v.data(), zeros, threads) || zeros != L.n_out) return false;
  for (uint32_t k = 0; k < L.n_out; ++k) {
    const uint32_t i = load_u32_le(src + L.out_idx + 4 * k);
    if (i >= n || (k && i <= load_u32_le(src + L.out_idx + 4 * k - 4))) return false;
    if (v[i] != predict::symbol_delta(0, radius)) return false;  // not a position coded as an outlier
    v[i] = load_u32_le(src + L.out_delta + 4 * k);
  }
  if (threads > 1) {
    inverse_and_dequantize_parallel<T>(c, v.data(), p.step, out, threads);
  } else {
    predict::inverse_lorenzo_rows(c, v.data(), [&](uint64_t i0, const uint32_t* row, uint64_t len) {
      for (uint64_t x = 0; x < len; ++x) out[i0 + x] = quant::dequantize<T>(int32_t(row[x]), p.step);
    });
  }
  for (uint32_t k = 0; k < L.n_exc; ++k) {
    const uint32_t i = load_u32_le(src + L.exc_idx + 4 * k);
    if (i >= n || (k && i <= load_u32_le(src + L.exc_idx + 4 * k - 4))) return false;
    out[i] = load_value_le<T>(src + L.exc_val + sizeof(T) * k);
  }
  return true;
}

// An interpolation chunk's header, checked against its size (FORMAT 7.7's rules on the header words).
struct InterpChunkHead {
  ChunkLayout L;
  uint8_t params = 0;
  bool masked = false;
  uint64_t mask_bits = 0;
};
HPCZ_HD bool parse_interp_chunk(const uint8_t* src, uint32_t size, uint32_t n, uint32_t radius, uint32_t vb,
                                InterpChunkHead& h) {
  const uint32_t head = kChunkHeaderBytes + kInterpExtraBytes;
  if (size < head || radius < 2) return false;
  const uint32_t bits = load_u32_le(src), n_out = load_u32_le(src + 4), n_exc = load_u32_le(src + 8);
  const uint32_t kind = load_u32_le(src + 12);
  h.params = uint8_t(kind >> 8);
  h.masked = (kind >> 16) & 1;
  if ((kind & 0xff) != kKindInterp || h.params >= predict::kInterpParamsCount || (kind >> 17) != 0) return false;
  if (uint64_t(bits) > uint64_t(n) * huffman::kMaxLen || bits < n || n_out > n || n_exc > n) return false;
  h.L = chunk_layout(2 * radius, bits, n_out, n_exc, vb, head);
  if (h.L.size64 != size) return false;
  h.mask_bits = 0;
  for (int k = 0; k < 8; ++k) h.mask_bits |= uint64_t(src[kChunkHeaderBytes + k]) << (8 * k);
  if (vb == 4 && (h.mask_bits >> 32) != 0) return false;
  return h.masked || h.mask_bits == 0;
}

}  // namespace hpcz::ratio
