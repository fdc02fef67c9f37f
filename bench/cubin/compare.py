#!/usr/bin/env python3
"""Whether a refactor left the GPU code as it was, without a GPU: compares two cubins of one .cu file
(bench/cubin/build.sh before and after the change, from the same source path: anonymous-namespace
hashes follow the path) section by section. .text.*, .nv.constant* and .nv.shared* byte for byte;
.nv.info* with the symbol indices of their attributes replaced by the symbols' names (so a change of
symbol order alone passes); the symbol tables as sets. OLD=NEW arguments rename demangled names first
(a type moved to another namespace changes only the kernels' mangled names). Exit status 0: identical.
--added-ok: kernels added by the change are listed, not counted (every section of BEFORE must still be
in AFTER, identical; BEFORE's symbols and .nv.info entries a subset of AFTER's).

    python3 bench/cubin/compare.py [--added-ok] BEFORE.cubin AFTER.cubin [OLD=NEW ...]
"""
import re, struct, sys
anon0 = re.compile(r'(_GLOBAL__N__|_INTERNAL_)[0-9a-f]{8}_')
import subprocess
ADDED_OK = '--added-ok' in sys.argv
if ADDED_OK: sys.argv.remove('--added-ok')
MAP = [a.split('=', 1) for a in sys.argv[3:]]
_cache = {}
def _dm(n):
    i = n.find('_Z')
    if i < 0: return n
    if n not in _cache:
        _cache[n] = n[:i] + subprocess.run(['c++filt'], input=n[i:], capture_output=True, text=True).stdout.strip()
    return _cache[n]
# --added-ok: the helpers' local symbols ($__internal_N_$...) are numbered in kernel order, and the
# translation unit's hash in internal names (..._cu_XXXXXXXX) follows its text.
helper_n = re.compile(r'\$__internal_[0-9]+_\$')
tu_hash = re.compile(r'(_cu_)[0-9a-f]{8}')
class _A:
    def sub(self, rep, n):
        if ADDED_OK: n = tu_hash.sub(r'\1X', helper_n.sub('$__internal_N_$', n))
        n = _dm(anon0.sub(rep, n))
        for o, w in MAP: n = n.replace(o, w)
        return n
anon = _A()
def load(path):
    d = open(path, 'rb').read()
    shoff, = struct.unpack_from('<Q', d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3A)
    hdrs = [struct.unpack_from('<IIQQQQIIQQ', d, shoff + i * shentsize) for i in range(shnum)]
    cstr = lambda base, o: d[base + o:d.index(b'\0', base + o)].decode()
    names = [anon.sub(r'\1X_', cstr(hdrs[shstrndx][4], h[0])) for h in hdrs]
    secs = {}
    for i, h in enumerate(hdrs):
        secs[names[i]] = (h[1], h[5], b'' if h[1] == 8 else d[h[4]:h[4] + h[5]], h)
    symtab = next(h for h in hdrs if h[1] == 2)
    strtab = hdrs[symtab[6]][4]
    syms = []
    for k in range(symtab[5] // 24):
        nm, info, other, shndx, val, size = struct.unpack_from('<IBBHQQ', d, symtab[4] + 24 * k)
        syms.append((anon.sub(r'\1X_', cstr(strtab, nm)), info, other,
                     names[shndx] if 0 < shndx < len(names) else shndx, val, size))
    return secs, syms
SYMATTR = {0x0a, 0x2f, 0x11, 0x12, 0x23, 0x1e}  # PARAM_CBANK, REGCOUNT, FRAME_SIZE, MIN/MAX_STACK, CRS_STACK
def info_entries(data, syms):
    out, i = [], 0
    while i + 4 <= len(data):
        fmt, attr, v = data[i], data[i + 1], struct.unpack_from('<H', data, i + 2)[0]
        if fmt == 4:
            body = data[i + 4:i + 4 + v]
            if attr in SYMATTR and len(body) >= 4:
                body = (syms[struct.unpack_from('<I', body)[0]][0], body[4:])
            out.append((fmt, attr, body)); i += 4 + v
        else:
            out.append((fmt, attr, v)); i += 4
    return out
(a, sa), (b, sb) = load(sys.argv[1]), load(sys.argv[2])
bad = 0
strict = lambda n: n.startswith('.text.') or n.startswith('.nv.constant') or n.startswith('.nv.shared')
ks = sorted(set(a) | set(b))
counts = {'strict': 0, 'info': 0}
for n in ks:
    if n not in a or n not in b:
        if ADDED_OK and n in b and (strict(n) or n.startswith('.nv.info')): print('  ADDED', n); continue
        if strict(n) or n.startswith('.nv.info'): print('  ONLY', 'before' if n in a else 'after', n); bad += 1
        continue
    if strict(n):
        counts['strict'] += 1
        if a[n][:3] != b[n][:3]: print('  DIFF', n); bad += 1
    elif n.startswith('.nv.info'):
        counts['info'] += 1
        ea, eb = info_entries(a[n][2], sa), info_entries(b[n][2], sb)
        if n == '.nv.info': ea, eb = sorted(map(repr, ea)), sorted(map(repr, eb))
        if n == '.nv.info' and ADDED_OK:
            from collections import Counter
            if Counter(ea) - Counter(eb): print('  DIFF', n); bad += 1
        elif ea != eb: print('  DIFF', n); bad += 1
symset = lambda s: sorted((x[0], x[1], x[2], x[3], x[4], x[5]) for x in s[1:])
if ADDED_OK:
    # Symbols added: new kernels' own, and every symbol's index may shift (values and sections compared).
    if set(symset(sa)) - set(symset(sb)): print('  DIFF symbol tables (symbols of BEFORE missing in AFTER)'); bad += 1
elif symset(sa) != symset(sb): print('  DIFF symbol tables'); bad += 1
print(f"{sys.argv[2]}: {counts['strict']} .text/.nv.constant/.nv.shared sections, {counts['info']} .nv.info sections, "
      f"symbols {len(sa)}/{len(sb)}: {'IDENTICAL' if not bad else str(bad) + ' differences'}")
sys.exit(1 if bad else 0)
