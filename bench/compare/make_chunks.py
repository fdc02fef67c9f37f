#!/usr/bin/env python3
"""Make a chunked raw-Deflate test set for nvcomp_deflate_bench / libdeflate_bench.

Writes into OUTDIR:
  chunks.bin    raw Deflate streams (RFC 1951, no zlib/gzip framing), concatenated
  chunks.idx    per chunk 3 little-endian uint64: compressed offset, compressed size,
                uncompressed size
  expected.bin  the uncompressed chunks, concatenated (i.e. the input, tiled --repeat times)

Each input file is split into --chunk-size pieces (default 64 KiB; the last piece of a
file may be shorter) and each piece is compressed on its own with zlib, wbits=-15.
Standard library only.

  python3 make_chunks.py INPUT [INPUT...] -o OUTDIR [--level 6|9] [--repeat K] [--jobs N]
"""
import argparse
import multiprocessing
import os
import struct
import sys
import zlib


def _compress(args):
    data, level = args
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", help="input file(s); each is chunked separately")
    ap.add_argument("-o", "--outdir", required=True)
    ap.add_argument("-l", "--level", type=int, default=6, help="zlib level 0-9 (default 6; use 9 for max)")
    ap.add_argument("--chunk-size", type=int, default=65536, help="uncompressed chunk size in bytes (default 65536)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="tile each input K times before chunking (for GPU-sized batches; say so next to the numbers)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="compression processes")
    ap.add_argument("--no-expected", action="store_true", help="do not write expected.bin")
    a = ap.parse_args()
    if not 0 <= a.level <= 9:
        ap.error("level must be 0..9")
    if a.chunk_size <= 0 or a.repeat <= 0:
        ap.error("chunk-size and repeat must be > 0")

    os.makedirs(a.outdir, exist_ok=True)
    pieces = []
    for path in a.inputs:
        with open(path, "rb") as f:
            data = f.read() * a.repeat
        for off in range(0, len(data), a.chunk_size):
            pieces.append(data[off:off + a.chunk_size])
    if not pieces:
        sys.exit("no input bytes")

    work = [(p, a.level) for p in pieces]
    if a.jobs > 1 and len(pieces) > 64:
        with multiprocessing.Pool(a.jobs) as pool:
            comp = pool.map(_compress, work, chunksize=64)
    else:
        comp = [_compress(w) for w in work]

    in_total = out_total = 0
    with open(os.path.join(a.outdir, "chunks.bin"), "wb") as fb, \
         open(os.path.join(a.outdir, "chunks.idx"), "wb") as fi:
        for p, c in zip(pieces, comp):
            fi.write(struct.pack("<QQQ", out_total, len(c), len(p)))
            fb.write(c)
            out_total += len(c)
            in_total += len(p)
    if not a.no_expected:
        with open(os.path.join(a.outdir, "expected.bin"), "wb") as fe:
            for p in pieces:
                fe.write(p)
    # self-check a few chunks
    for i in {0, len(pieces) // 2, len(pieces) - 1}:
        assert zlib.decompress(comp[i], -15) == pieces[i]
    print(f"make_chunks chunks={len(pieces)} uncompressed_bytes={in_total} compressed_bytes={out_total} "
          f"ratio={in_total / max(out_total, 1):.4f} level={a.level} chunk_size={a.chunk_size} "
          f"repeat={a.repeat} outdir={a.outdir}")


if __name__ == "__main__":
    main()
