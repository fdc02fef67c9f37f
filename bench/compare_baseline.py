#!/usr/bin/env python3
"""Compare a new `hpcz bench` output with the baseline of the same mode and device.

usage: bench/compare_baseline.py BASELINE NEW [--threshold PCT] [--quiet]

BASELINE is a kept result (bench/results/<device-kind>-<mode>.md), NEW the `--out` file of a new
`hpcz bench` run of the same mode (fast, ratio, lossless or codebook). Rows are matched by their key
columns (field and bound; dataset, codec and elem; histogram and symbols), whatever their order.

Printed: per row and per metric the baseline, the new value and the change; then the means over the
matched rows (arithmetic, as `hpcz bench` prints them; for the lossless datasets the geometric mean
per codec). Flagged:
  - a throughput (GB/s: compression, decompression, GPU decode, second-stage removal) more than PCT
    (default 2) percent lower, or a time (codebook us) more than PCT percent higher: on a row only
    when the change is also larger than the printed resolution (CPU rows print 0.1 GB/s), on a mean
    always;
  - any change of a CR column (CR, CR + 2nd stage);
  - cpu==gpu / gpu==cpu / same book not "yes" in NEW (a "-" is reported, not flagged: --quick runs
    leave it out), a CPU decode marked WRONG, violations above 0.
Reported, not flagged: PSNR and max err/eb changes, host-to-host and (on GPU runs) CPU columns, rows
or tables present in only one file, a different device, thread count, reps or size.

exit status: 0 nothing flagged, 1 something flagged, 2 the files cannot be compared (unreadable,
not `hpcz bench` output, different modes).
Standard library only.
"""
import math
import re
import signal
import sys

KEY_COLUMNS = ("field", "bound", "dataset", "codec", "elem", "histogram", "symbols")
CR_COLUMNS = ("CR", "CR + 2nd stage")
NOTE_COLUMNS = ("PSNR dB", "max err/eb", "used")
IDENTITY_COLUMNS = ("cpu==gpu", "gpu==cpu", "same book")


class Bench:
    """One `hpcz bench` output: its settings line, tables and summary lines."""

    def __init__(self, path):
        self.path = path
        self.mode = None
        self.device = None
        self.threads = None
        self.reps = None
        self.size = None
        self.tables = []  # (header list, rows: list of cell lists)
        self.summary = []  # the "mean throughput ..." and "geometric mean ..." lines
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError as e:
            raise SystemExit(f"compare_baseline: cannot read {path}: {e.strerror}") from None
        seen_title = False
        i = 0
        while i < len(lines):
            line = lines[i].strip()
            if line.startswith("# hpcz bench") and not seen_title:
                seen_title = True
                if "--mode lossless" in line:
                    self.mode = "lossless"
            elif line.startswith("mode: ") and self.device is None:
                self.parse_settings(line)
            elif line.startswith("device: ") and self.device is None and seen_title:
                self.parse_settings(line)  # lossless, and fast before the ratio mode existed (no "mode:")
            elif line.startswith("|") and i + 1 < len(lines) and lines[i + 1].strip().startswith("|---"):
                header = cells(line)
                rows = []
                i += 2
                while i < len(lines) and lines[i].strip().startswith("|"):
                    rows.append(cells(lines[i]))
                    i += 1
                self.tables.append((header, rows))
                continue
            elif line.startswith("mean throughput") or line.startswith("geometric mean"):
                self.summary.append(line)
                while line.startswith("geometric mean CR") and i + 1 < len(lines) and lines[i + 1].startswith("- "):
                    i += 1
                    self.summary.append("  " + lines[i].strip())
            i += 1
        if not seen_title or not self.tables:
            raise SystemExit(f"compare_baseline: {path} is not `hpcz bench` output (no title or no table)")
        if self.mode is None:
            self.mode = "fast"  # the first outputs, before --mode existed

    def parse_settings(self, line):
        # "mode: fast, device: NVIDIA H200, threads: 16, reps: 10, fields tiled ... to >= 512 MiB"
        # "device: NVIDIA H200, CPU threads: 16, reps: 10, decoded size per dataset >= 512 MiB ..."
        for part in line.split(", "):
            k, _, v = part.partition(": ")
            if k == "mode":
                self.mode = v.strip()
            elif k == "device":
                self.device = v.strip()
            elif k in ("threads", "CPU threads"):
                self.threads = v.strip()
            elif k == "reps":
                self.reps = v.split()[0] if v.split() else v
        m = re.search(r">= ([0-9.]+) MiB", line)
        if m:
            self.size = m.group(1)

    @property
    def gpu(self):
        d = (self.device or "").lower()
        return bool(d) and d != "cpu" and not d.startswith("none")

    def describe(self):
        parts = [f"mode {self.mode}", f"device {self.device}"]
        parts += [f"{what} {v}" for what, v in (("threads", self.threads), ("reps", self.reps)) if v]
        return ", ".join(parts + ([f">= {self.size} MiB"] if self.size else []))


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def number(cell, threads):
    """(value, resolution) of a printed number; a CPU cell "0.2 (0.10/core)" gives the per-core figure
    times the thread count (more digits). None when there is no number ("-", text)."""
    m = re.search(r"\(([0-9.]+)/core\)", cell)
    scale = 1.0
    if m and threads and threads.isdigit():
        text, scale = m.group(1), float(threads)
    else:
        m = re.match(r"^[+-]?[0-9]+(\.[0-9]+)?", cell)
        if not m:
            return None
        text = m.group(0)
    digits = len(text.split(".")[1]) if "." in text else 0
    return float(text) * scale, 10.0 ** -digits * scale


def key_indices(header):
    keys = [i for i, c in enumerate(header) if c in KEY_COLUMNS]
    return keys or [0]


def metric_kind(name, gpu_run):
    """'speed' (higher is better), 'time' (lower is better), or None (not compared for speed)."""
    if name.startswith("h2h"):
        return None  # host-to-host: file system and PCIe, reported
    cpu_side = "CPU" in name and gpu_run  # the GPU machine's CPU figures: reported
    if "GB/s" in name:
        return "info-speed" if cpu_side else "speed"
    if re.search(r"\bus\b", name) and "ms" not in name:
        return "info-time" if cpu_side else "time"
    return None


def pct(base, new):
    return 100.0 * (new - base) / base if base else float("inf")


def fmt_pct(d, thr):
    """A change in percent, with two decimals where one would round onto the threshold."""
    return f"{d:+.2f}%" if abs(abs(d) - thr) < 0.05 else f"{d:+.1f}%"


def fmt_val(v):
    if v is None:
        return "-"
    return f"{v:.2f}" if abs(v) < 10 else f"{v:.1f}"


def compare_table(bh, brows, nh, nrows, base, new, thr, quiet, out):
    """Compare one table; returns the counts of (slower rows, slower means, CR changes, failures)."""
    bkeys, nkeys = key_indices(bh), key_indices(nh)
    key_names = [bh[i] for i in bkeys]
    bidx = {c: i for i, c in enumerate(bh)}
    nidx = {c: i for i, c in enumerate(nh)}
    common = [c for c in bh if c in nidx]
    metrics = [(c, metric_kind(c, new.gpu or base.gpu)) for c in common]
    metrics = [(c, k) for c, k in metrics if k]
    flagged_metrics = [c for c, k in metrics if k in ("speed", "time")]

    def rowkey(row, ks):
        return tuple(row[i] if i < len(row) else "" for i in ks)

    bmap = {rowkey(r, bkeys): r for r in brows if len(r) == len(bh)}
    nmap = {rowkey(r, nkeys): r for r in nrows if len(r) == len(nh)}
    matched = [k for k in bmap if k in nmap]
    only_base = [k for k in bmap if k not in nmap]
    only_new = [k for k in nmap if k not in bmap]
    short = [r for r in nrows if len(r) != len(nh)]

    out.append(f"\ntable: {' | '.join(key_names)} ({len(matched)} rows matched)")
    if not matched:
        out.append("  no common rows")
    kw = max([len(" ".join(k)) for k in matched] + [10])
    cols = "  ".join(f"{c[:30]:>30}" for c, _ in metrics)
    if not quiet:
        out.append(f"  {'row':<{kw}}  {cols}")
    slower_rows = cr_changes = failures = 0
    series = {c: [] for c, _ in metrics}  # (group, base, new) per matched row with both numbers
    lossless_rows = base.mode == "lossless" and "dataset" in bidx and "codec" in bidx
    for k in matched:
        br, nr = bmap[k], nmap[k]
        flags, notes, parts = [], [], []
        group = br[bidx["codec"]] if lossless_rows else "all"
        for c, kind in metrics:
            b = number(br[bidx[c]], base.threads)
            n = number(nr[nidx[c]], new.threads)
            if b is None or n is None:
                parts.append(f"{fmt_val(b[0] if b else None) + ' -> ' + fmt_val(n[0] if n else None):>30}")
                continue
            series[c].append((group, b[0], n[0]))
            d = pct(b[0], n[0])
            mark = ""
            res = max(b[1], n[1]) * (1 + 1e-9)  # rounding of the two printed values
            if kind == "speed" and n[0] < b[0] * (1 - thr / 100) and b[0] - n[0] > res:
                mark = " SLOWER"
            elif kind == "time" and n[0] > b[0] * (1 + thr / 100) and n[0] - b[0] > res:
                mark = " SLOWER"
            if mark:
                flags.append(f"{c} {fmt_pct(d, thr)}")
            parts.append(f"{fmt_val(b[0]) + ' -> ' + fmt_val(n[0]) + ' ' + fmt_pct(d, thr) + mark:>30}")
        slower_rows += bool(flags)  # so far only the speed flags
        for c in CR_COLUMNS:
            if c in bidx and c in nidx and br[bidx[c]] != nr[nidx[c]]:
                flags.append(f"{c} changed {br[bidx[c]]} -> {nr[nidx[c]]}")
                cr_changes += 1
        for c in IDENTITY_COLUMNS:
            if c in nidx:
                v = nr[nidx[c]]
                if v not in ("yes", "-"):
                    flags.append(f"{c} {v}")
                    failures += 1
                elif v == "-" and c in bidx and br[bidx[c]] == "yes":
                    notes.append(f"{c} not checked")
        if "violations" in nidx:
            v = number(nr[nidx["violations"]], None)
            if v is not None and v[0] > 0:
                flags.append(f"violations {nr[nidx['violations']]}")
                failures += 1
        if any("WRONG" in cell for cell in nr):
            flags.append("a decode marked WRONG")
            failures += 1
        for c in NOTE_COLUMNS:
            if c in bidx and c in nidx and br[bidx[c]] != nr[nidx[c]]:
                notes.append(f"{c} {br[bidx[c]]} -> {nr[nidx[c]]}")
        tail = ""
        if flags:
            tail += "  FLAG: " + "; ".join(flags)
        if notes:
            tail += "  note: " + "; ".join(notes)
        if not quiet or flags:
            out.append(f"  {' '.join(k):<{kw}}  {'  '.join(parts)}{tail}")

    # Means over the matched rows.
    slower_means = 0
    groups = sorted({g for c in series for g, _, _ in series[c]}, key=lambda g: (g != "all", g))
    for g in groups:
        parts, flags = [], []
        nrows_g = 0
        for c, kind in metrics:
            vals = [(b, n) for gg, b, n in series[c] if gg == g]
            if not vals:
                parts.append(f"{'-':>30}")
                continue
            nrows_g = max(nrows_g, len(vals))
            if lossless_rows:
                mb = math.exp(sum(math.log(b) for b, _ in vals) / len(vals)) if all(b > 0 for b, _ in vals) else 0
                mn = math.exp(sum(math.log(n) for _, n in vals) / len(vals)) if all(n > 0 for _, n in vals) else 0
            else:
                mb = sum(b for b, _ in vals) / len(vals)
                mn = sum(n for _, n in vals) / len(vals)
            d = pct(mb, mn)
            mark = ""
            if kind == "speed" and mn < mb * (1 - thr / 100):
                mark = " SLOWER"
            elif kind == "time" and mn > mb * (1 + thr / 100):
                mark = " SLOWER"
            if mark:
                flags.append(f"{c} {fmt_pct(d, thr)}")
            parts.append(f"{fmt_val(mb) + ' -> ' + fmt_val(mn) + ' ' + fmt_pct(d, thr) + mark:>30}")
        if not any(series[c] for c in flagged_metrics if c in series):
            continue
        label = ("geomean " if lossless_rows else "mean ") + (g if g != "all" else f"({nrows_g} rows)")
        tail = "  FLAG: " + "; ".join(flags) if flags else ""
        slower_means += bool(flags)
        out.append(f"  {label:<{kw}}  {'  '.join(parts)}{tail}")

    for k in only_base:
        out.append(f"  only in the baseline: {' '.join(k)}")
    for k in only_new:
        out.append(f"  only in the new run: {' '.join(k)}")
    for r in short:
        out.append(f"  new run's row not compared: {' | '.join(r)}")
    return slower_rows, slower_means, cr_changes, failures


def main(argv):
    thr, quiet, files = 2.0, False, []
    it = iter(argv)
    for a in it:
        if a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        if a == "--threshold":
            try:
                thr = float(next(it))
            except (StopIteration, ValueError):
                print("compare_baseline: --threshold needs a number (percent)", file=sys.stderr)
                return 2
        elif a.startswith("--threshold="):
            thr = float(a.split("=", 1)[1])
        elif a == "--quiet":
            quiet = True
        elif a.startswith("-") and a != "-":
            print(f"compare_baseline: unknown option {a}", file=sys.stderr)
            return 2
        else:
            files.append(a)
    if len(files) != 2:
        print("usage: compare_baseline.py BASELINE NEW [--threshold PCT] [--quiet]", file=sys.stderr)
        return 2
    try:
        base, new = Bench(files[0]), Bench(files[1])
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 2
    if base.mode != new.mode:
        print(f"compare_baseline: different modes: {base.mode} (baseline) and {new.mode} (new)", file=sys.stderr)
        return 2
    out = [f"baseline: {base.path} ({base.describe()})", f"new:      {new.path} ({new.describe()})",
           f"flagged: throughput more than {thr:g}% lower (rows: also beyond the printed resolution), "
           "any CR change, cpu==gpu / gpu==cpu not yes, violations"]
    for what in ("device", "threads", "reps", "size"):
        if getattr(base, what) != getattr(new, what):
            out.append(f"WARNING: {what} differs: {getattr(base, what)} (baseline) and {getattr(new, what)} (new)")
    totals = [0, 0, 0, 0]
    used = set()
    for nh, nrows in new.tables:
        match = next((t for j, t in enumerate(base.tables) if j not in used and t[0] == nh), None)
        if match is None:  # same key columns, other columns changed
            match = next((t for j, t in enumerate(base.tables)
                          if j not in used and [t[0][i] for i in key_indices(t[0])] == [nh[i] for i in key_indices(nh)]), None)
        if match is None:
            out.append(f"\ntable only in the new run: {' | '.join(nh)}")
            continue
        used.add(base.tables.index(match))
        counts = compare_table(match[0], match[1], nh, nrows, base, new, thr, quiet, out)
        totals = [a + b for a, b in zip(totals, counts)]
    for j, (bh, _) in enumerate(base.tables):
        if j not in used:
            out.append(f"\ntable only in the baseline: {' | '.join(bh)}")
    if base.summary or new.summary:
        out.append("\nas printed (all rows of each run):")
        out += [f"  baseline: {s}" for s in base.summary]
        out += [f"  new:      {s}" for s in new.summary]
    slower_rows, slower_means, cr_changes, failures = totals
    bad = slower_rows or slower_means or cr_changes or failures
    out.append(f"\nresult: {'FLAGGED' if bad else 'OK'}: {slower_rows} rows and {slower_means} means more than "
               f"{thr:g}% slower, {cr_changes} CR changes, {failures} identity/bound failures")
    print("\n".join(out))
    return 1 if bad else 0


if __name__ == "__main__":
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under | head
    sys.exit(main(sys.argv[1:]))
