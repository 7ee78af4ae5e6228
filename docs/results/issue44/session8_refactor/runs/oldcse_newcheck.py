"""Old refactorings (index CSE without loop variables or gain rule, parens; no value CSE)
under the new check: how many of the old CSE rejections were reorderings."""
import pathlib, statistics, sys
sys.path.insert(0, "/work/main/benchmarks")
from cuda_refactor import c_tokens
from kernelmill.cudasrc import check
from kernelmill.cudasrc.cse import extract_index_cse
check.extract_index_cse = lambda src, within=None, loop_vars=False, gain=False: extract_index_cse(src, within=within)
reorder = sys.argv[1] == "reorder"
red, tried, kept, moved, partial = [], 0, 0, 0, 0
for p in sorted(pathlib.Path("/tmp/hpctrans_tvm").rglob("*.cu")):
    src = p.read_text()
    res = check.refactor_cuda(src, vcse=False, reorder=reorder)
    for s in res.steps:
        if s.step == "cse" and s.changes:
            tried += 1; kept += s.kept; moved += s.reordered; partial += bool(s.kept and s.left)
    red.append(1 - c_tokens(res.source) / c_tokens(src))
print(f"reorder={reorder}: tokens mean {100*statistics.mean(red):.1f}% median {100*statistics.median(red):.1f}%; "
      f"cse kept {kept}/{tried}, {moved} only up to a reordering, {partial} without a function")
