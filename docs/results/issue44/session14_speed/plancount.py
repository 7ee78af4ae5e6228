import sys, time, collections, glob
from kernelmill.ptx import reroll_text, reroll
C = collections.Counter()
orw = reroll._reroll_with
def rw(stmts, cfg, st, strategy, *a):
    key = f"{strategy}-t{int(cfg.tables)}-p{int(cfg.presence)}"
    t = time.process_time(); r = orw(stmts, cfg, st, strategy, *a); C[key+"_s"] += time.process_time() - t
    C[key] += 1
    return r
reroll._reroll_with = rw
files = sorted(glob.glob(sys.argv[1] + "/*"))
t = time.process_time()
for f in files: reroll_text(open(f).read())
print(f"total {time.process_time() - t:.2f}")
for k, v in sorted(C.items()): print(k, round(v, 3))
