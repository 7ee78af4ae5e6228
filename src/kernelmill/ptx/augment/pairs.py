"""Generated kernels -> checked, refactored (CUDA, PTX, Rolled-PTX) pairs.

One nvcc call compiles a whole batch (one `.cu` with every kernel of the batch,
`extern "C"`, so PTX entry names are the kernel names), and the PTX is split per
`.entry` (ptx/blocks.py). The CUDA side is refactored (cudasrc: index CSE, then
redundant parentheses) for the whole batch at once, and the refactored copies of the
changed kernels are compiled in a second nvcc call (renamed); a
kernel keeps its refactored text only where its PTX is unchanged modulo register
numbering (cudasrc/check.py's normal form), else its original text
(`meta.refactor: "rejected"`; `"unchecked"` where its PTX is too long to check, see
CHECK_MAX_PTX_CHARS). Batch symbols (`NAME_vI`) are renamed back to the
PrimFunc's name in the source and the PTX (a name does not change the code nvcc
generates).
"""

from __future__ import annotations

import hashlib
import re

from ...cudasrc.check import normalize_ptx
from ...cudasrc.cse import extract_index_cse
from ...cudasrc.parens import remove_redundant_parens
from ...records import Pair
from ..blocks import split_kernels, strip_debug
from ..lexer import count_tokens
from ..nvcc import CompileFailed, NvccOptions, nvcc_ptx
from ..parser import parse_module
from ..reroll import RerollConfig, RerollStats, reroll_module
from ..syntax import fmt_module
from .codegen import Lowered

OPTIONS = NvccOptions("sm_90", 3)
# PtxDec's own top-down loop choice: a third of the time of `best` (dp and greedy, keep the
# shorter) on these kernels for 2.6% more Rolled-PTX tokens (60 sampled pairs), and the
# reroll is most of a job's time. No table terms (format 2): on 120 augmented kernels they
# cost 21% more reroll CPU time for no shorter output (14.06% mean reduction without, 13.93% with)
REROLL = RerollConfig(strategy="greedy", tables=False)


def _ptx_by_entry(ptx: str, origin: str) -> dict[str, str]:
    return {name: fmt_module(m) for name, m in split_kernels(strip_debug(parse_module(ptx, origin))).items()}


_RF = "__kmrf"  # suffix of the refactored copy of a kernel in the shared nvcc call
_ERROR_AT = re.compile(r"\.cu\((\d+)\): (?:error|catastrophic error)")


def failing_kernels(low: Lowered, stderr: str) -> set[str]:
    """The kernels of a batch that nvcc's errors point at (`kernel.cu(LINE): error`), for the
    unit `compile_batch` compiles without the refactored copies (prelude, then the kernels
    joined by blank lines). Empty when an error line falls outside every kernel (the prelude)
    or names no line: the caller then cannot tell and splits the batch instead."""
    lines = {int(n) for n in _ERROR_AT.findall(stderr or "")}
    if not lines:
        return set()
    spans, line = [], low.prelude.count("\n") + 1
    for k in low.kernels:
        end = line + k.source.count("\n")
        spans.append((line, end, k.name))
        line = end + 2  # the blank line of the joiner
    bad = {name for n in lines for lo, hi, name in spans if lo <= n <= hi}
    inside = all(any(lo <= n <= hi for lo, hi, _ in spans) for n in lines)
    return bad if inside else set()


def _refactored_defs(low: Lowered) -> dict[str, str]:
    """Kernel name -> its refactored definition (index CSE, then redundant parentheses,
    over the whole batch at once), for the kernels the refactoring changed."""
    from .codegen import _definitions
    body = "\n\n".join(k.source for k in low.kernels)
    new, _ = extract_index_cse(body)
    new, _ = remove_redundant_parens(new)
    if new == body:
        return {}
    defs = _definitions(new)
    return {k.name: defs[k.name] for k in low.kernels if k.name in defs and defs[k.name] != k.source}


_POSITIONAL = re.compile(r"(\$L__BB|__local_depot)\d+")


def _named_back(ptx: str, name: str) -> str:
    """The PTX of `NAME__kmrf` as if the kernel were `NAME`: the entry, its parameters and
    its mangled local statics (`_ZZ<length><name>E...`: shared arrays)."""
    return ptx.replace(f"_ZZ{len(name) + len(_RF)}{name}{_RF}", f"_ZZ{len(name)}{name}").replace(name + _RF, name)


def _unlabelled(ptx: str) -> str:
    """The PTX without the function's position in the unit, which nvcc writes into branch
    labels (`$L__BB<position>_<block>`) and the local-memory array (`__local_depot<position>`):
    a kernel and its refactored copy sit at different positions of one nvcc call."""
    return _POSITIONAL.sub(r"\1_", ptx)


# A kernel whose PTX is longer than this gets no refactoring check: its refactored copy
# would be compiled for as long again, and nvcc's time grows faster than the PTX (on a
# mobilenet batch of 45 kernels one kernel with 292 KB of PTX, a 2,048-float register
# tile unrolled by nvcc, took 10 of the batch's 16 s). It keeps its original CUDA
# (`meta.refactor: "unchecked"`): a change that is not checked is not kept. 40,000
# characters (~10k PTX tokens, beyond a PtxDec sample of 8,192 before the reroll): 7.5% of
# an hour's kernels (1,507 of 20,227), against 1.6% at 100,000.
CHECK_MAX_PTX_CHARS = 40_000


def compile_batch(low: Lowered, origin: str, refactor: bool = True
                  ) -> tuple[dict[str, str], dict[str, str], str, set[str]]:
    """(PTX by kernel name, refactored definitions whose PTX is unchanged modulo register
    numbering, note, names whose refactoring was not checked). The batch goes to nvcc in
    one call (raises CompileFailed where it fails); then the refactored copies of its
    changed kernels, renamed `NAME__kmrf` and named back in their PTX before the
    comparison, in a second call, except those whose PTX is longer than
    CHECK_MAX_PTX_CHARS. The PTX of an `extern "C"` kernel does not depend on the other
    kernels of its unit. Where the copies do not compile, no refactoring is kept, with a note."""
    body = "\n\n".join(k.source for k in low.kernels)
    ptx = _ptx_by_entry(nvcc_ptx(low.prelude + body, OPTIONS), origin)
    changed = _refactored_defs(low) if refactor else {}
    unchecked = {n for n in changed if n in ptx and len(ptx[n]) > CHECK_MAX_PTX_CHARS}
    changed = {n: d for n, d in changed.items() if n in ptx and n not in unchecked}
    if not changed:
        return ptx, {}, "", unchecked
    copies = "\n\n".join(d.replace(f" {name}(", f" {name}{_RF}(", 1) for name, d in changed.items())
    try:
        after_all = _ptx_by_entry(nvcc_ptx(low.prelude + copies, OPTIONS), origin)
    except CompileFailed as exc:
        return ptx, {}, f"refactored batch does not compile: {str(exc).splitlines()[0]}", unchecked
    kept = {}
    for name, d in changed.items():
        after = after_all.get(name + _RF)
        if after is not None and \
                normalize_ptx(_unlabelled(_named_back(after, name))) == normalize_ptx(_unlabelled(ptx[name])):
            kept[name] = d
    return ptx, kept, "", unchecked


def batch_pairs(low: Lowered, variants: list[dict], origin: str, refactor: bool = True,
                reroll: bool = True, seen: set[str] | None = None,
                keys: dict[str, str] | None = None) -> list[Pair]:
    """Pairs of every kernel of a lowered batch; `variants[i]` is the meta of the batch's
    i-th PrimFunc (subgraph, pipeline, schedule, ...). A kernel whose (CUDA, PTX) digest is
    in `seen` (an identical kernel of the same job: two schedules, or two subgraphs that
    differ only in name, can generate the same code) is skipped before its reroll; new
    digests are added. `keys[kernel name]` (the run's claim key of the kernel, runner.py) is
    kept in `meta.kernel_key`, so a resumed run knows the kernels already paired. Raises
    CompileFailed when nvcc rejects the batch."""
    ptx, refactored, note, unchecked = compile_batch(low, origin, refactor)
    prelude_sha = hashlib.sha1(low.prelude.encode()).hexdigest()[:16]
    pairs = []
    for k in low.kernels:
        if k.name not in ptx:
            continue
        v = variants[k.index]
        # the kernel's own parameters: a PrimFunc lowered to two kernels passes an
        # intermediate buffer from one to the other, and each kernel is tested alone
        params = [{kk: p[kk] for kk in ("name", "dtype", "shape", "role")} for p in k.params]
        src = k.rename(refactored.get(k.name, k.source))
        plain = k.rename(ptx[k.name])
        name = k.rename(k.name)
        digest = hashlib.sha1((src + "\0" + plain).encode()).hexdigest()[:16]
        if seen is not None:
            if digest in seen:
                continue
            seen.add(digest)
        meta = {"status": "ok", "unit_id": v["unit_id"], "ptx_entry": name, "ptx_tokens": count_tokens(plain),
                "pipeline": v["pipeline"], "model_family": v["model_family"], "subgraph": v["subgraph"],
                "subgraph_name": v["subgraph_name"], "partition": v["partition"], "schedule": v["schedule"],
                "model": v["model"],
                "refactor": ("kept" if k.name in refactored else "unchecked" if k.name in unchecked
                             else "rejected" if refactor else "off"),
                "config": {"inputs": [q for q in params if q["role"] == "in"],
                           "outputs": [q for q in params if q["role"] == "out"],
                           "params": params, "grid": k.grid, "block": k.block, "shared_mem": 0,
                           "prelude": prelude_sha},
                "subgraph_buffers": v["buffers"],
                "provenance": v["provenance"]}
        if note:
            meta["refactor_note"] = note
        if keys and k.name in keys:
            meta["kernel_key"] = keys[k.name]
        rolled = None
        if reroll:
            st = RerollStats()
            rolled = fmt_module(reroll_module(parse_module(plain, origin), REROLL, stats=st))
            meta.update(rolled_tokens=count_tokens(rolled), loops=st.loops, roundtrip_ok=st.failed == 0)
        launch = {"grid": k.grid, "block": k.block, "shared_mem": 0,
                  "args": [p["name"] for p in k.params]}
        pairs.append(Pair(f"{v['unit_id']}:{name}:{digest}", name, "cuda", src, plain, rolled, OPTIONS.arch,
                          OPTIONS.label(), launch, origin, meta))
    return pairs
