# holes.split (one walk) against the repr-based split it replaced: same partition and holes on all statements
# of the speed corpus, the external-style set and their Rolled-PTX (/tmp/s11_ref: same_output.py write)

import glob
from pathlib import Path
from kernelmill.ptx import parse_module
from kernelmill.ptx.holes import split, map_stmt, hole_value, shape, REGNUM, _symnum, SYM_KINDS
from kernelmill.ptx.syntax import Reg, Sym, Imm, Instr, Loop, Label, Block, Function

def old_split(s):
    vals, kinds, shapes = [], [], []
    def rec(kind, node):
        vals.append(hole_value(node)); kinds.append(kind); shapes.append(shape(node))
        if kind == "reg": return Reg(REGNUM.match(node.name).group(1) + "#")
        if kind in SYM_KINDS: return Sym(_symnum(node.name).group(1) + "#")
        if kind == "vreg": return Reg(f"{node.prefix}#{shape(node)}")
        if kind in ("off", "off0"): return Imm(f"#o{shape(node)}")
        if kind == "fimm": return Sym("#" + node.text[:2])
        return Sym(f"#i{shape(node)}")
    skel = repr(map_stmt(s, rec)) if isinstance(s, (Instr, Loop, Label, Block)) else repr(s)
    return skel, tuple(vals), tuple(kinds), tuple(shapes)

stmts = []
def walk(body):
    for s in body:
        stmts.append(s)
        if isinstance(s, (Loop, Block)): walk(s.body)
files = glob.glob("/tmp/kernelmill-ptx-reroll-speed/*.ptx") + glob.glob("/tmp/kernelmill-ptx-external/*.ptx") + glob.glob("/tmp/s11_ref/*.ptx")
for f in files:
    for it in parse_module(Path(f).read_text()).items:
        if isinstance(it, Function) and it.body: walk(it.body)
o2n, n2o = {}, {}
bad = 0
for s in stmts:
    a, b = old_split(s), split(s)
    if a[1:] != b[1:]: bad += 1; print("holes differ", s); continue
    if o2n.setdefault(a[0], b[0]) != b[0] or n2o.setdefault(b[0], a[0]) != a[0]:
        bad += 1; print("partition differs", s)
print(len(stmts), "statements,", len(o2n), "skeletons,", bad, "bad")
