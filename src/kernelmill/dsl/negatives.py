"""Negatives that are provably wrong (paper 002, stage 2).

A negative is a correct (trace, kernel) pair with one injected error of one
of the three kinds of SPEC.md section 2:

* `memory_access`   wrong memory-access analysis (shifted or swapped indices);
* `parallelisation` wrong parallelisation (a grid that misses work);
* `execution_model` a misread execution model (guards, write-backs, indices).

Each `Injection` is a source transformation of the kernel plus the flawed
claim it comes from; the claim is written into the trace as one of its steps,
so the trace's reasoning leads to the broken kernel. A negative is kept only
when the verifier confirms that the transformed kernel fails to compile or
computes a wrong result (`CONFIRMING` statuses); everything else is dropped and
counted by kind and reason: the rule did not apply, the kernel came out
unchanged, or the verifier found it still correct (or could not decide).
The base model's own failed attempts are negatives too (`failed_attempts`).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Sequence

from ..records import Sample, Verdict

KINDS = ("memory_access", "parallelisation", "execution_model")
# compile failure or wrong result; a runtime error counts as failing to run
# (TileLang compiles when the kernel is first called, so its compile errors
# surface at run time)
CONFIRMING = ("compile_error", "incorrect", "runtime_error")


@dataclass(frozen=True)
class Injection:
    kind: str
    name: str
    claim: str  # the flawed reasoning step written into the trace
    apply: Callable[[str], str | None]  # kernel source -> broken source, None when it does not apply

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"injection {self.name}: kind must be one of {', '.join(KINDS)}, not {self.kind!r}")


@dataclass
class Negative:
    negative_id: str
    task_id: str
    kind: str  # one of KINDS, or "failed_attempt"
    rule: str
    source_sample_id: str
    code: str
    trace: str
    status: str | None = None  # the verifier's status
    kept: bool = False
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class NegativeReport:
    kept: list[Negative] = field(default_factory=list)
    dropped: list[Negative] = field(default_factory=list)

    def counts(self) -> dict[str, Any]:
        by_kind: dict[str, dict[str, int]] = {}
        for n in self.kept + self.dropped:
            c = by_kind.setdefault(n.kind, {"kept": 0, "dropped": 0})
            c["kept" if n.kept else "dropped"] += 1
        reasons = Counter(n.reason for n in self.dropped)
        return {"kept": len(self.kept), "dropped": len(self.dropped), "by_kind": by_kind,
                "dropped_by_reason": dict(sorted(reasons.items()))}


# -- the transformations --------------------------------------------------------------------------

def _sub_once(pattern: str, repl: str | Callable, code: str, flags: int = re.M) -> str | None:
    new, n = re.subn(pattern, repl, code, count=1, flags=flags)
    return new if n and new != code else None


def _rhs_shift(code: str) -> str | None:
    """`C[idx] = A[idx] + ...` -> `C[idx] = A[idx + 1] + ...` (first store), or
    else the first load into a local, `x = X[bx * BLOCK + i]` -> `X[bx * BLOCK + i + 1]`."""
    m = re.search(r"^(\s*\w+\[[^\]]+\]\s*=\s*)(.*?)(\w+)\[([^\]]+)\]", code, re.M) \
        or re.search(r"^(\s*\w+\s*=\s*)()([A-Z]\w*)\[([^\]]+)\]\s*$", code, re.M)
    if not m:
        return None
    start, end = m.start(3), m.end()
    return code[:start] + f"{m.group(3)}[{m.group(4)} + 1]" + code[end:]


def _swap_copy_offsets(code: str) -> str | None:
    """`T.copy(A[by * M, k * K], A_s)` -> `T.copy(A[k * K, by * M], A_s)`."""
    return _sub_once(r"T\.copy\((\w+)\[([^,\[\]]+),\s*([^\[\]]+)\]", r"T.copy(\1[\3, \2]", code)


def _floor_grid(code: str) -> str | None:
    return _sub_once(r"T\.ceildiv\(([^,()]+),\s*([^()]+?)\)", r"((\1) // (\2))", code)


def _half_grid(code: str) -> str | None:
    return _sub_once(r"T\.Kernel\(\s*([^,=()]+(?:\([^()]*\))?[^,=()]*),", r"T.Kernel(T.ceildiv(\1, 2),", code)


def _drop_guard(code: str) -> str | None:
    """Remove the first bounds guard `if a < b:` and dedent its body."""
    lines = code.splitlines(keepends=True)
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)if\s+[^:]*<[^:]*:\s*$", line)
        if not m:
            continue
        indent = len(m.group(1))
        body = []
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent):
            body.append(lines[j])
            j += 1
        if not body:
            return None
        step = min(len(b) - len(b.lstrip()) for b in body if b.strip()) - indent
        new_body = [b[step:] if b.strip() else b for b in body]
        return "".join(lines[:i] + new_body + lines[j:])
    return None


def _drop_copy_back(code: str) -> str | None:
    """Delete the last `T.copy(local, Global[...])` line (the write-back)."""
    lines = code.splitlines(keepends=True)
    for i in range(len(lines) - 1, -1, -1):
        if re.match(r"^\s*T\.copy\(\s*\w+\s*,\s*\w+\[", lines[i]):
            return "".join(lines[:i] + [re.sub(r"\S.*", "pass", lines[i], count=1)] + lines[i + 1:])
    return None


def _thread_local_index(code: str) -> str | None:
    """`idx = bx * threads + i` -> `idx = i`, or else the first store through an
    inline index, `Y[bx * BLOCK + i] = ...` -> `Y[i] = ...` (the loop index read as global)."""
    return (_sub_once(r"=\s*\w+\s*\*\s*\w+\s*\+\s*(\w+)\s*$", r"= \1", code)
            or _sub_once(r"^(\s*\w+)\[\s*\w+\s*\*\s*\w+\s*\+\s*(\w+)\s*\](\s*=[^=])", r"\1[\2]\3", code))


TILELANG_INJECTIONS = (
    Injection("memory_access", "shifted_index",
              "Memory access: each output element depends on the input element right after it, so the load "
              "index is the output index plus one.", _rhs_shift),
    Injection("memory_access", "swapped_tile_offsets",
              "Memory access: the tile of A for block (by, k) starts at row k * block_K and column by * block_M, "
              "so the copy offsets are (k-offset, row-offset).", _swap_copy_offsets),
    Injection("parallelisation", "floor_grid",
              "Parallelisation: the grid needs n // block blocks; the remainder is covered by the last block.",
              _floor_grid),
    Injection("parallelisation", "half_grid",
              "Parallelisation: each thread block handles two tiles, so half as many blocks are launched.",
              _half_grid),
    Injection("execution_model", "dropped_guard",
              "Execution model: T.Parallel never produces out-of-range indices, so no bounds check is needed.",
              _drop_guard),
    Injection("execution_model", "dropped_copy_back",
              "Execution model: fragments are written back to global memory automatically when the kernel ends, "
              "so the final T.copy is unnecessary.", _drop_copy_back),
    Injection("execution_model", "thread_local_index",
              "Execution model: the T.Parallel loop variable is already the global element index.",
              _thread_local_index),
)


def _forward_insert(code: str, make_line: Callable[[str], str]) -> str | None:
    """Insert a line at the top of `forward`, built from its first tensor argument."""
    m = re.search(r"^(\s*)def forward\(\s*self\s*,\s*(\w+)[^)]*\)[^:]*:\s*\n", code, re.M)
    if not m:
        return None
    rest = code[m.end():]
    body_indent = re.match(r"[ \t]*", rest).group(0)
    doc = re.match(r'[ \t]*("""|\'\'\')[\s\S]*?\1[ \t]*\n', rest)
    at = m.end() + (doc.end() if doc else 0)
    return code[:at] + f"{body_indent}{make_line(m.group(2))}\n" + code[at:]


TORCH_INJECTIONS = (
    Injection("memory_access", "shifted_read",
              "Memory access: the input is read one element along its last dimension.",
              lambda c: _forward_insert(c, lambda x: f"{x} = {x}.roll(1, -1)")),
    Injection("parallelisation", "half_batch",
              "Parallelisation: the batch is split over two workers; this worker's half is the whole job.",
              lambda c: _forward_insert(c, lambda x: f"{x} = {x}[: max(1, {x}.shape[0] // 2)]")),
    Injection("execution_model", "zeroed_result",
              "Execution model: the result tensor is filled after forward returns, so returning a fresh buffer "
              "of the right shape is enough.",
              lambda c: _sub_once(r"^(\s*)return\s+(?!torch\.zeros_like)(.+?)\s*$", r"\1return torch.zeros_like(\2)", c)),
    Injection("execution_model", "half_precision",
              "Execution model: intermediate values are kept in half precision without loss.",
              lambda c: _forward_insert(c, lambda x: f"{x} = {x}.half().float()")),
)


# -- building and confirming ---------------------------------------------------------------------

def inject_trace(trace: str, claim: str) -> str:
    """The trace with the flawed claim as one of its steps (before its last
    paragraph, where the plan turns into code)."""
    paras = [p for p in re.split(r"\n\s*\n", trace.strip()) if p.strip()]
    if len(paras) <= 1:
        return (trace.strip() + "\n\n" + claim).strip()
    return "\n\n".join(paras[:-1] + [claim, paras[-1]])


def _nid(*parts: str) -> str:
    return hashlib.sha1("\x00".join(parts).encode()).hexdigest()[:12]


def make_negatives(positives: Iterable[dict[str, Any]], injections: Sequence[Injection],
                   kinds: Sequence[str] = KINDS) -> tuple[list[Negative], list[Negative]]:
    """Apply every injection of the chosen kinds to every positive
    ({sample_id, task_id, code, trace}). Returns (candidates to verify,
    dropped ones: the rule did not apply or changed nothing)."""
    todo, dropped = [], []
    for p in positives:
        for inj in injections:
            if inj.kind not in kinds:
                continue
            new = inj.apply(p["code"])
            neg = Negative(f"neg-{_nid(p['sample_id'], inj.name)}", p["task_id"], inj.kind, inj.name,
                           p["sample_id"], new or "", inject_trace(p.get("trace") or "", inj.claim))
            if new is None:
                neg.reason = "rule does not apply"
                dropped.append(neg)
            elif new.strip() == p["code"].strip():
                neg.reason = "kernel unchanged"
                dropped.append(neg)
            else:
                todo.append(neg)
    return todo, dropped


def as_samples(negatives: Sequence[Negative], language: str) -> list[Sample]:
    return [Sample(n.negative_id, n.task_id, language, n.code, reasoning=n.trace, model="injected",
                   meta={"negative_kind": n.kind, "rule": n.rule, "source_sample_id": n.source_sample_id})
            for n in negatives]


def confirm(negatives: Sequence[Negative], verdicts: Sequence[Verdict], pre_dropped: Sequence[Negative] = (),
            confirming: Sequence[str] = CONFIRMING) -> NegativeReport:
    """Keep a negative only when its verdict confirms a failure."""
    by_id = {v.sample_id: v for v in verdicts}
    rep = NegativeReport(dropped=list(pre_dropped))
    for n in negatives:
        v = by_id.get(n.negative_id)
        if v is None:
            n.reason = "not verified"
            rep.dropped.append(n)
            continue
        n.status = v.status
        if v.status in confirming:
            n.kept, n.reason = True, f"verifier: {v.status}"
            rep.kept.append(n)
        else:
            n.reason = f"verifier: {v.status} (not a confirmed failure)"
            rep.dropped.append(n)
    return rep


def failed_attempts(samples: Sequence[Sample], verdicts: Sequence[Verdict],
                    confirming: Sequence[str] = CONFIRMING) -> list[Negative]:
    """The base model's own attempts that the verifier failed, as negatives."""
    by_id = {v.sample_id: v for v in verdicts}
    out = []
    for s in samples:
        v = by_id.get(s.sample_id)
        if v is not None and v.status in confirming and s.code.strip():
            out.append(Negative(f"att-{_nid(s.sample_id)}", s.task_id, "failed_attempt", "base_model",
                                s.sample_id, s.code, s.reasoning or "", v.status, True, f"verifier: {v.status}"))
    return out


def negatives_pipeline(positives: Sequence[dict[str, Any]], injections: Sequence[Injection], tasks, language: str,
                       verify: Callable[[Any, list[Sample]], list[Verdict]],
                       confirming: Sequence[str] = CONFIRMING) -> NegativeReport:
    """Inject, verify (`verify(tasks, samples) -> verdicts`, e.g. a partial of
    `kernelmill.verify.verify_samples`), confirm."""
    todo, dropped = make_negatives(positives, injections)
    missing = sorted({n.task_id for n in todo} - {t.task_id for t in tasks})
    if missing:  # the verifier would fail them for want of a task: a failure that proves nothing
        raise ValueError(f"negatives for tasks not given to the verifier: {', '.join(missing[:5])}")
    verdicts = verify(tasks, as_samples(todo, language)) if todo else []
    return confirm(todo, verdicts, dropped, confirming)
