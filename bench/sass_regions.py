#!/usr/bin/env python3
# Where a kernel's instructions and stall samples go, from ncu's source page as CSV (bench/ncu_sass.sh):
# the mix by pipe and opcode, then runs of consecutive SASS instructions with about the same execution
# count (a basic block or an unrolled loop body), heaviest first. usage: sass_regions.py FILE.csv [N]
import csv, sys, re, collections
rows = list(csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')))
hdr = rows[1]; col = {n: i for i, n in enumerate(hdr)}
ins = []
for r in rows[2:]:
    if len(r) != len(hdr): continue
    src = r[col["Source"]].strip()
    n = int(r[col["Instructions Executed"]].replace(",", "") or 0)
    s = int(r[col["Warp Stall Sampling (All Samples)"]].replace(",", "") or 0)
    ins.append((int(r[col["Address"]], 16), src, n, s))
base = ins[0][0]
tot = sum(x[2] for x in ins); tots = sum(x[3] for x in ins)
print("total warp instructions", tot, "samples", tots)
def op(src):
    s = re.sub(r"^@!?U?P\w+\s+", "", src)
    return s.split()[0].split(".")[0] if s else "?"
ALU = set("LOP3 ISETP FSETP SEL FSEL SHF PRMT IABS FLO POPC BREV P2R R2P PLOP3 MOV IADD3 LEA LEA.HI VIADD IMNMX FMNMX VIMNMX CS2R ISCADD LOP BMSK SGXT".split())
FMA = set("FMUL FADD FFMA IMAD DADD DMUL DFMA DSETP HFMA2 IDP".split())
XU = set("F2I I2F I2FP F2F FRND MUFU F2FP".split())
pipe = collections.Counter(); opc = collections.Counter()
for a, s, n, st in ins:
    o = op(s); opc[o] += n
    p = "alu" if o in ALU else "fma" if o in FMA else "xu" if o in XU else "other"
    pipe[p] += n
print({k: f"{v/tot*100:.1f}%" for k, v in pipe.items()})
print("top opcodes:", ", ".join(f"{o} {n/tot*100:.1f}%" for o, n in opc.most_common(25)))
# regions: consecutive instructions grouped into windows of similar execution counts
out = []
cur = None
for a, s, n, st in ins:
    if cur and abs(n - cur["n0"]) <= 0.02 * max(n, cur["n0"], 1):
        cur["end"] = a; cur["sum"] += n; cur["st"] += st; cur["cnt"] += 1; cur["ops"][op(s)] += 1
    else:
        if cur: out.append(cur)
        cur = {"start": a, "end": a, "n0": n, "sum": n, "st": st, "cnt": 1, "ops": collections.Counter([op(s)])}
out.append(cur)
out.sort(key=lambda c: -c["sum"])
print("\nheaviest runs (offset, #instr, exec per instr, share of instr, share of samples, mix):")
for c in out[:int(sys.argv[2]) if len(sys.argv) > 2 else 40]:
    print(f"{c['start']-base:6x}-{c['end']-base:6x} n={c['cnt']:4d} x{c['n0']:>9d} {c['sum']/tot*100:5.1f}% st {c['st']/max(tots,1)*100:5.1f}%  " + " ".join(f"{o}:{k}" for o, k in c["ops"].most_common(6)))
