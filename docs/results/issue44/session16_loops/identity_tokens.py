import sys
from pathlib import Path
from kernelmill.ptx import count_tokens, expand_text, fmt_module, parse_module
inp, a, b = map(Path, sys.argv[1:4])
diff = longer = same = 0; ta = tb = 0; bad = []
for f in sorted(b.iterdir()):
    x, y = (a / f.name).read_text(), f.read_text()
    if x == y:
        continue
    diff += 1
    nx, ny = count_tokens(x), count_tokens(y)
    ta += nx; tb += ny
    longer += ny > nx
    same += ny == nx
    plain = fmt_module(parse_module((inp / f.name).read_text()))
    if not (expand_text(y) == expand_text(x) == plain):
        bad.append(f.name)
    print(f"{nx:7} -> {ny:7}  {f.name}")
print(f"{diff} differ: {longer} longer, {same} as long (other text), {diff - longer - same} shorter; tokens {ta} -> {tb} "
      f"over them; expansions equal to each other and to the canonical plain text: {diff - len(bad)} of {diff} {bad}")
