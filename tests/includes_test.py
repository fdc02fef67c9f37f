#!/usr/bin/env python3
"""The include rule (docs/DESIGN.md, Layers): the lower layers include neither src/codecs/ nor
src/pipeline/; a codec folder includes no other codec's folder (only codecs/codec.hpp and the shared
engines, SHARED below); a shared engine includes no codec folder.

Usage: includes_test.py SRC_DIR
"""
import os
import re
import sys

LOWER = {"common", "format", "quant", "predict", "huffman", "lossless", "gpu", "metrics"}
SHARED = {"ratio_class"}  # what the ratio and interp codecs share (src/codecs/ratio_class/)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    src = sys.argv[1]
    bad = []
    for root, _, files in os.walk(src):
        rel = os.path.relpath(root, src).split(os.sep)
        for f in files:
            path = os.path.join(root, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                includes = INCLUDE.findall(fh.read())
            for inc in includes:
                parts = inc.split("/")
                if rel[0] in LOWER and parts[0] in ("codecs", "pipeline"):
                    bad.append((path, inc, "a lower layer includes " + parts[0] + "/"))
                elif rel[0] == "codecs" and len(rel) > 1:
                    if parts[0] == "pipeline":
                        bad.append((path, inc, "a codec includes pipeline/"))
                    elif parts[0] == "codecs" and len(parts) > 2 and parts[1] != rel[1]:
                        if rel[1] in SHARED:
                            bad.append((path, inc, "shared folder " + rel[1] + " includes " + parts[1]))
                        elif parts[1] not in SHARED:
                            bad.append((path, inc, "codec folder " + rel[1] + " includes codec folder " + parts[1]))
    for path, inc, why in bad:
        print(f"includes: {os.path.relpath(path, src)}: \"{inc}\": {why}")
    if not bad:
        print("includes: the include rule holds")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
