# per function a fresh _Known, the module cache shared: tokens equal the printed ones
import glob
from pathlib import Path
from kernelmill.ptx import parse_module
from kernelmill.ptx.reroll import _Known, _tokens
from kernelmill.ptx.syntax import Loop, Block, Function
bad = n = 0
files = glob.glob("/tmp/kernelmill-ptx-reroll-speed/*.ptx") + glob.glob("/tmp/kernelmill-ptx-external/*.ptx") + glob.glob("/tmp/s11_ref/*.ptx")
def walk(body, k):
    global bad, n
    for s in body:
        n += 1; bad += k.tokens(s) != _tokens(s)
        if isinstance(s, (Loop, Block)): walk(s.body, k)
for f in files:
    for it in parse_module(Path(f).read_text()).items:
        if isinstance(it, Function) and it.body: walk(it.body, _Known())
print(n, "statements", bad, "bad")
