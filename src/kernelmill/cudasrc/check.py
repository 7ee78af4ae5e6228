"""The semantic check of a refactoring: same PTX modulo register numbering.

Both sources are compiled with nvcc as the pair builder compiles them (what needs
torch removed, template kernels instantiated from their launch sites, the
source's include paths). Each function's registers are renumbered in order of
first appearance per register class, `.reg` declarations (whose counts follow
the numbering) and comments are dropped, and the per-compile hash in the names
of internal symbols (anonymous namespaces, statics: `_GLOBAL__N__<hash>_...`) is
blanked. Equal token streams mean the compiler produced the same program. When
they differ, `ptx_equiv.equivalent_ptx` may still accept the PTX: the same
instructions under one register bijection, reordered only where no register,
memory or collective dependence forbids it (its docstring states the
normalisation; tests/ptx/test_refactor_must_reject.py holds what it must reject).

The check is sound only for code that reaches the PTX, so the steps change
nothing else: only the functions whose code is in the PTX (the kernels in it and
the device functions they call) are edited, and a PTX without any function
(a file of templates nobody instantiates) checks nothing: the step is not kept.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from ..ptx.lexer import PtxSyntaxError, tokenize
from ..ptx.nvcc import CompileFailed, NvccOptions, demangle, demangle_full, nvcc_ptx
from ..ptx.parser import parse_module
from .cse import extract_index_cse
from .device import device_unit
from .parens import remove_redundant_parens
from .ptx_equiv import equivalent_ptx
from .symbols import normalize_symbol
from .tsparse import functions
from .value_cse import extract_value_cse

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
        if t.kind == "ident" and ("_GLOBAL__N_" in t.text or "_INTERNAL_" in t.text):
            out.append(normalize_symbol(t.text))
        elif m:
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
    checked: bool = True  # False: kept without the PTX check (check=False)
    reordered: bool = False  # kept: the PTX is the original's only up to a reordering
    source: str = field(default="", repr=False)  # the step's output when kept
    left: tuple = ()  # PTX names of the functions the step was kept without (their PTX differed)


@dataclass
class RefactorResult:
    source: str                 # the refactored source (original where a check failed)
    steps: list[StepResult] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        """Every attempted step passed the PTX check."""
        return all(s.kept for s in self.steps if s.changes)


def compile_checked(src: str, opts: NvccOptions, instantiate: bool = True) -> tuple[str, list[str]]:
    """PTX of the source as the check sees it, and its functions' names; CompileFailed
    if nvcc rejects it or the PTX holds no function (nothing could be compared).
    `instantiate`: with the template instances device_unit adds from launch sites."""
    unit = device_unit(src, instantiate=instantiate)
    o = NvccOptions(opts.arch, opts.opt, opts.unroll, opts.extra + unit.flags, opts.include)
    ptx = nvcc_ptx(unit.source, o)
    try:
        names = [f.name for f in parse_module(ptx).functions if f.body is not None]
    except PtxSyntaxError as exc:
        raise CompileFailed(f"the PTX cannot be read: {exc}") from None
    if not names:
        raise CompileFailed("the PTX holds no function: nothing to compare (template kernels "
                            "that are never instantiated?)")
    return ptx, names


def checked_ranges(src: str, ptx_names: list[str]) -> list[tuple[int, int]]:
    """Byte ranges of the functions whose code is in the PTX: the kernels (and
    device functions) named there and the device functions they call."""
    bare = set(demangle(ptx_names).values())
    full = list(demangle_full(ptx_names).values())
    fns = functions(src)
    by_name: dict[str, list] = {}
    for f in fns:
        by_name.setdefault(f.name, []).append(f)
    # a template counts only with an instance in the PTX (`k<float>`), not by its name alone
    todo = [f for f in fns if f.name in bare and (f.is_kernel or f.is_device)
            and (f.template is None or any(re.search(rf"\b{re.escape(f.name)}<", d) for d in full))]
    seen: dict[int, object] = {}
    while todo:
        f = todo.pop()
        if f.start in seen:
            continue
        seen[f.start] = f
        for name in set(re.findall(r"\b([A-Za-z_]\w*)\s*(?:<[^<>;]*>)?\s*\(", f.text)):
            todo += [g for g in by_name.get(name, []) if g.is_device and not g.is_kernel]
    return sorted((f.start, f.end) for f in seen.values())


def compile_original(src: str, opts: NvccOptions) -> tuple[str, list[str], bool]:
    """`compile_checked` of an original source, and whether its added template instances
    are in: when they do not compile (a template argument that is a host-local constexpr),
    the file is checked without them rather than given up (issue 44: 11 files were lost so);
    the refactored source is then compiled the same way."""
    try:
        return (*compile_checked(src, opts), True)
    except CompileFailed:
        if not device_unit(src).instances:
            raise
        return (*compile_checked(src, opts, instantiate=False), False)


def same_ptx(a: str, b: str, opts: NvccOptions, reorder: bool = True) -> tuple[bool, str]:
    """Whether b compiles to a's PTX: token-equal up to register numbering, or with
    `reorder`, equal under `ptx_equiv`'s normalisation (a dependence-preserving
    reordering within segments, one register bijection per function)."""
    try:
        pa, _, inst = compile_original(a, opts)
    except CompileFailed as exc:
        return False, f"original cannot be checked: {exc}"
    ok, why, _ = _same_as(pa, b, opts, inst, reorder)
    return ok, why


def _same_as(pa: str, b: str, opts: NvccOptions, instantiate: bool = True,
             reorder: bool = True) -> tuple[bool, str, bool]:
    """(same, why not, kept only thanks to the reordering normalisation)."""
    try:
        pb, _ = compile_checked(b, opts, instantiate)
    except CompileFailed as exc:
        return False, f"refactored source cannot be checked: {exc}", False
    na, nb = normalize_ptx(pa), normalize_ptx(pb)
    if na == nb:
        return True, "", False
    k = next((i for i, (x, y) in enumerate(zip(na, nb)) if x != y), min(len(na), len(nb)))
    why = (f"PTX differs at token {k}: {' '.join(na[max(0, k - 3):k + 3])!r} vs "
           f"{' '.join(nb[max(0, k - 3):k + 3])!r}")
    if not reorder:
        return False, why, False
    ok, why_not = equivalent_ptx(pa, pb)
    if ok:
        return True, "same PTX up to a dependence-preserving reordering", True
    return False, f"{why}; {why_not}", False


def refactor_cuda(src: str, opts: NvccOptions = NvccOptions(), check: bool = True,
                  cse: bool = True, parens: bool = True, reorder: bool = True,
                  vcse: bool = True) -> RefactorResult:
    """CSE in index expressions, CSE in value expressions (`vcse`), then parenthesis
    removal, each only inside the
    functions whose code is in the PTX, and each kept only when the compiled PTX
    is unchanged (modulo register numbering and symbol hashes; with `reorder`, also
    up to a dependence-preserving reordering, see `same_ptx`). `opts.include`:
    the source's header directories. With check=False nothing is compiled and
    every function may change (not checked, as the result says)."""
    res = RefactorResult(src)
    steps = []
    if cse:
        steps.append(("cse", functools.partial(extract_index_cse, loop_vars=True, gain=True)))
    if vcse:
        steps.append(("vcse", extract_value_cse))
    if parens:
        steps.append(("parens", remove_redundant_parens))
    ptx, why, inst, names = None, "", True, []
    if check:
        try:
            ptx, names, inst = compile_original(src, opts)
        except CompileFailed as exc:
            why = f"original cannot be checked: {exc}"
    for name, fn in steps:
        if check and ptx is None:  # nothing can be checked: nothing is changed
            new, n = fn(res.source)
            res.steps.append(StepResult(name, n if new != res.source else 0, False, why))
            continue
        res.steps.append(_step(res.source, name, fn, ptx, names, opts, inst, reorder, check))
        if res.steps[-1].kept and res.steps[-1].changes:
            res.source = res.steps[-1].source
    return res


_RETRIES = 4  # functions a step may leave out before it is given up (one nvcc call each)


def _step(src: str, name: str, fn, ptx, names, opts, inst, reorder, check) -> StepResult:
    """One refactoring step, checked. When the reordering check names the function whose
    PTX differs, the step is tried again without changing that function (a multi-kernel
    file keeps the step in its other kernels), up to _RETRIES functions."""
    left: list[str] = []
    first_reason, first_n = "", 0
    for _ in range(_RETRIES + 1):
        live = [x for x in names if x not in left] if check else []
        if check and not live:
            break
        new, n = fn(src, within=checked_ranges(src, live) if check else None)
        if n == 0 or new == src:
            break
        ok, reason, moved = _same_as(ptx, new, opts, inst, reorder) if check else (True, "not checked", False)
        if ok:
            note = f"{reason}; left unchanged: {', '.join(left)} ({first_reason})" if left else reason
            return StepResult(name, n, True, note, checked=check, reordered=moved, source=new, left=tuple(left))
        first_reason, first_n = first_reason or reason, first_n or n
        m = re.search(r"; function (\S+): ", reason)
        bad = [x for x in live if m and normalize_symbol(x) == m.group(1)]
        if not bad:
            return StepResult(name, n, False, first_reason, checked=check)
        left.append(bad[0])
    if first_reason:
        return StepResult(name, first_n, False, first_reason, checked=check)
    return StepResult(name, 0, True)
