"""The semantic check of a refactoring: same PTX modulo register numbering.

Both sources are compiled with nvcc (host side stripped), each function's
registers are renumbered in order of first appearance per register class, and
`.reg` declarations (whose counts follow the numbering) and comments are
dropped. Equal token streams mean the compiler produced the same program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ptx.lexer import tokenize
from ..ptx.nvcc import CompileFailed, NvccOptions, nvcc_ptx
from .cse import extract_index_cse
from .parens import remove_redundant_parens
from .tsparse import strip_host

_REG = re.compile(r"^%([A-Za-z_]+?)(\d+)$")


def normalize_ptx(ptx: str) -> list[str]:
    out: list[str] = []
    names: dict[str, str] = {}
    per_class: dict[str, int] = {}
    toks = tokenize(ptx, keep_comments=False)
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.text == ".reg":  # skip the declaration up to ';'
            while i < len(toks) and toks[i].text != ";":
                i += 1
            i += 1
            continue
        if t.text in (".entry", ".func"):
            names.clear(), per_class.clear()
        m = _REG.match(t.text) if t.kind == "reg" else None
        if m:
            if t.text not in names:
                per_class[m.group(1)] = per_class.get(m.group(1), 0) + 1
                names[t.text] = f"%{m.group(1)}#{per_class[m.group(1)]}"
            out.append(names[t.text])
        else:
            out.append(t.text)
        i += 1
    return out


@dataclass
class StepResult:
    step: str
    changes: int
    kept: bool
    reason: str = ""


@dataclass
class RefactorResult:
    source: str                 # the refactored source (original where a check failed)
    steps: list[StepResult] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        """Every attempted step passed the PTX check."""
        return all(s.kept for s in self.steps if s.changes)


def same_ptx(a: str, b: str, opts: NvccOptions) -> tuple[bool, str]:
    try:
        pa = nvcc_ptx(strip_host(a), opts)
    except CompileFailed as exc:
        return False, f"original does not compile: {exc}"
    try:
        pb = nvcc_ptx(strip_host(b), opts)
    except CompileFailed as exc:
        return False, f"refactored source does not compile: {exc}"
    na, nb = normalize_ptx(pa), normalize_ptx(pb)
    if na == nb:
        return True, ""
    k = next((i for i, (x, y) in enumerate(zip(na, nb)) if x != y), min(len(na), len(nb)))
    return False, (f"PTX differs at token {k}: {' '.join(na[max(0, k - 3):k + 3])!r} vs "
                   f"{' '.join(nb[max(0, k - 3):k + 3])!r}")


def refactor_cuda(src: str, opts: NvccOptions = NvccOptions(), check: bool = True,
                  cse: bool = True, parens: bool = True) -> RefactorResult:
    """CSE in index expressions, then parenthesis removal; each step is kept
    only when the compiled PTX is unchanged (modulo register numbering)."""
    res = RefactorResult(src)
    steps = []
    if cse:
        steps.append(("cse", extract_index_cse))
    if parens:
        steps.append(("parens", remove_redundant_parens))
    for name, fn in steps:
        new, n = fn(res.source)
        if n == 0 or new == res.source:
            res.steps.append(StepResult(name, 0, True))
            continue
        ok, why = same_ptx(res.source, new, opts) if check else (True, "")
        res.steps.append(StepResult(name, n, ok, why))
        if ok:
            res.source = new
    return res
