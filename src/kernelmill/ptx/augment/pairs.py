"""Generated kernels -> checked, refactored (CUDA, PTX, Rolled-PTX) pairs.

One nvcc call compiles a whole batch (one `.cu` with every kernel of the batch,
`extern "C"`, so PTX entry names are the kernel names), and the PTX is split per
`.entry` (ptx/blocks.py). The CUDA side is refactored (cudasrc: index CSE, then
redundant parentheses) for the whole batch at once and compiled once more; a
kernel keeps its refactored text only where its PTX is unchanged modulo register
numbering (cudasrc/check.py's normal form), else its original text
(`meta.refactor: "rejected"`). Batch symbols (`NAME_vI`) are renamed back to the
PrimFunc's name in the source and the PTX (a name does not change the code nvcc
generates).
"""

from __future__ import annotations

import hashlib

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
# reroll is most of a job's time
REROLL = RerollConfig(strategy="greedy")


def _ptx_by_entry(ptx: str, origin: str) -> dict[str, str]:
    return {name: fmt_module(m) for name, m in split_kernels(strip_debug(parse_module(ptx, origin))).items()}


def refactor_batch(low: Lowered, ptx: dict[str, str], origin: str) -> tuple[dict[str, str], str]:
    """Kernel name -> refactored definition, for the kernels whose PTX it keeps; and
    a note when the refactored batch could not be compiled at all."""
    body = "\n\n".join(k.source for k in low.kernels)
    new, _ = extract_index_cse(body)
    new, _ = remove_redundant_parens(new)
    if new == body:
        return {}, ""
    from .codegen import _definitions
    defs = _definitions(new)
    try:
        after = _ptx_by_entry(nvcc_ptx(low.prelude + new, OPTIONS), origin)
    except CompileFailed as exc:
        return {}, f"refactored batch does not compile: {str(exc).splitlines()[0]}"
    kept = {}
    for k in low.kernels:
        if k.name in defs and k.name in after and k.name in ptx and defs[k.name] != k.source \
                and normalize_ptx(after[k.name]) == normalize_ptx(ptx[k.name]):
            kept[k.name] = defs[k.name]
    return kept, ""


def batch_pairs(low: Lowered, variants: list[dict], origin: str, refactor: bool = True,
                reroll: bool = True, seen: set[str] | None = None) -> list[Pair]:
    """Pairs of every kernel of a lowered batch; `variants[i]` is the meta of the batch's
    i-th PrimFunc (subgraph, pipeline, schedule, ...). A kernel whose (CUDA, PTX) digest is
    in `seen` (an identical kernel of the same job: two schedules, or two subgraphs that
    differ only in name, can generate the same code) is skipped before its reroll; new
    digests are added. Raises CompileFailed when nvcc rejects the batch."""
    ptx = _ptx_by_entry(nvcc_ptx(low.prelude + "\n\n".join(k.source for k in low.kernels), OPTIONS), origin)
    refactored, note = refactor_batch(low, ptx, origin) if refactor else ({}, "")
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
                "refactor": ("kept" if k.name in refactored else "rejected" if refactor else "off"),
                "config": {"inputs": [q for q in params if q["role"] == "in"],
                           "outputs": [q for q in params if q["role"] == "out"],
                           "params": params, "grid": k.grid, "block": k.block, "shared_mem": 0,
                           "prelude": prelude_sha},
                "subgraph_buffers": v["buffers"],
                "provenance": v["provenance"]}
        if note:
            meta["refactor_note"] = note
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
