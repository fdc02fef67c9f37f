#!/usr/bin/env python3
"""Writes the hostile archives of tests/hostile/ (issue 51), from docs/FORMAT.md alone: well-formed up
to the lossless second stage (or the chunk data), every checksum valid, but declaring far more than
their bytes can hold. A reader must refuse each as corrupt, without allocating what it declares.

  stage_bomb_ratio.hpcz   ratio f64 2x8192x8192 (2 chunks of 2^26 values), second stage: each stored
                          chunk claims the largest plain size (16 + 2^26 * 8 bytes) in 33 empty Deflate
                          pieces of 2^24 bytes. 584 bytes declaring 1 GiB of plain chunks and 1 GiB of
                          values (it took 790 MB to 4 GB of memory before the checks).
  stage_bomb_padded.hpcz  the same, its first piece padded (a stored Deflate block) so that the chunk
                          table alone cannot refuse it: the pieces' own sizes must.
  stage_bomb_fast.hpcz    fast f32, 64 chunks each claiming its largest plain size in one empty piece.
  values_bomb_ratio.hpcz  ratio f64 2x8192x8192 without the stage: two 16-byte chunks for 2^27 values.
  stage_zeros_ratio.hpcz  ratio f64 2x8192x8192, second stage: each chunk one genuine Deflate piece (zlib,
                          level 9) of the least plain size such a chunk can have, all zeros: about 16 KB
                          that the chunk table and the pieces justify, and that a decoder must decode before
                          it finds the plain chunks malformed. What it may cost: a plain chunk (8 MB) at a
                          time, and the 1 GiB array it declares (as a genuine archive of a constant field
                          this size would): hence max_output.

Usage: make_hostile.py OUTDIR   (the files in tests/hostile/ are its output; cli_test.sh checks that)
"""
import os
import struct
import sys
import zlib

M64 = (1 << 64) - 1
M32 = (1 << 32) - 1


def words(b):
    b = b + b"\0" * (-len(b) % 4)
    return struct.unpack("<%dI" % (len(b) // 4), b)


def mix64(z):  # FORMAT.md 5
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def hpcz_sum(b):  # HPCZ-SUM (5): header, table, and chunks before version 5
    s = 0
    for i, w in enumerate(words(b)):
        s = (s + mix64(((i << 32) & M64) | w)) & M64
    return (s ^ (s >> 32)) & M32


def mix32(z):
    z = ((z ^ (z >> 16)) * 0x85EBCA6B) & M32
    z = ((z ^ (z >> 15)) * 0xC2B2AE35) & M32
    return z


def hpcz_sum32(b):  # HPCZ-SUM32 (5.1): chunks from version 5 on
    s = 0
    for i, w in enumerate(words(b)):
        s = (s + mix32((w + i * 0x9E3779B9) & M32)) & M32
    return s


def archive(version, dtype, dims, codec, flags, chunk_values, block_values, codec_params, chunks):
    """Header (3), chunk table (4) and chunks, every checksum valid."""
    n = 1
    for d in dims:
        n *= d
    table_bytes = 16 * len(chunks)
    size = 144 + table_bytes + sum(len(c) for c in chunks)
    chunk_sum = hpcz_sum32 if version >= 5 else hpcz_sum
    table = b""
    at = 144 + table_bytes
    for c in chunks:
        table += struct.pack("<QII", at, len(c), chunk_sum(c))
        at += len(c)
    h = b"HPCZ" + struct.pack("<HH", version, 144)
    h += bytes([dtype, len(dims), 1, codec, flags, 0, 0, 0])  # mode abs
    h += struct.pack("<4Q", *(list(dims) + [0] * (4 - len(dims))))
    h += struct.pack("<Q", n)
    h += struct.pack("<8d", 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0)[:48]  # bound, eb, range, fill, step
    h += struct.pack("<IIQQQ", chunk_values, block_values, len(chunks), size, codec_params)
    h += struct.pack("<I", hpcz_sum(table))
    assert len(h) == 140
    h += struct.pack("<I", hpcz_sum(h))
    return h + table + b"".join(chunks)


EMPTY_DEFLATE = b"\x03\x00"  # one final fixed-Huffman block holding only end-of-block


def stored_deflate(n):  # one final stored block of n zero bytes
    return b"\x01" + struct.pack("<HH", n, n ^ 0xFFFF) + b"\0" * n


def staged(plain, log2, pieces):
    """A stored chunk (13): Deflate tag, piece size 2^log2, plain size, piece sizes, pieces."""
    count = -(-plain // (1 << log2))
    assert len(pieces) == count
    return (bytes([1, log2]) + struct.pack("<I", plain) + struct.pack("<%dI" % count, *map(len, pieces))
            + b"".join(pieces))


def ratio_f64(chunks, flags, version):
    # 2x8192x8192: slabs are planes of 2^26 values, one a chunk (7.1); radius 512; params 0x010E.
    return archive(version, 2, [2, 8192, 8192], 2, flags, 1 << 26, 512, 0x010E, chunks)


def main(out):
    os.makedirs(out, exist_ok=True)
    files = {}
    plain = 16 + (1 << 26) * 8  # the ratio codec's largest chunk of 2^26 f64 values: raw
    n_pieces = -(-plain // (1 << 24))
    bomb = staged(plain, 24, [EMPTY_DEFLATE] * n_pieces)
    files["stage_bomb_ratio.hpcz"] = ratio_f64([bomb, bomb], 0x04, 2)
    padded = staged(plain, 24, [stored_deflate(9000)] + [EMPTY_DEFLATE] * (n_pieces - 1))
    files["stage_bomb_padded.hpcz"] = ratio_f64([padded, padded], 0x04, 2)
    fast_plain = 512 + 512 * 32 * 4  # 16384 f32 values, every block raw (6.1)
    fast = staged(fast_plain, 24, [EMPTY_DEFLATE])
    files["stage_bomb_fast.hpcz"] = archive(5, 1, [64 * 16384], 1, 0x04, 16384, 32, 0, [fast] * 64)
    coded_head = struct.pack("<IIII", 1 << 26, 0, 0, 0)  # 2^26 bits, no outliers or exceptions, coded
    files["values_bomb_ratio.hpcz"] = ratio_f64([coded_head, coded_head], 0, 1)
    # The least plain chunk of 2^26 f64 values (7.3): 16-byte header, 512 nibbles of code lengths, a bit a
    # value (2^26 bits: 65536 subsequences, 512 sequences), no outliers or exceptions.
    least = 16 + 512 + 4 * 512 + 65536 // 2 + (1 << 26) // 8
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = staged(least, 24, [z.compress(bytes(least)) + z.flush()])
    files["stage_zeros_ratio.hpcz"] = ratio_f64([zeros, zeros], 0x04, 2)
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        print("%s: %d bytes" % (name, len(data)))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
