"""Candidate sets made from the pairs themselves, to check the evaluator:

* ``reference``: each pair's own CUDA source as its candidate (every metric
  must come out perfect: compiled, ran, I/O-correct, CodeBLEU 1.0, deviations
  about 0);
* ``perturbed``: the source with every store to an output parameter changed
  (``out[i] = e`` -> ``out[i] = (e) * 1.5 + 1``, typed for the element type),
  which compiles and runs but must be caught as an I/O error.

Written as `Sample` records with ``task_id`` = the pair id, as `generate`
writes decompiled candidates, so `evaluate` reads all three the same way.
"""

from __future__ import annotations

from pathlib import Path

from ...records import Pair, Sample, read_jsonl, write_jsonl
from .config import ConfigError, pair_config

KINDS = ("reference", "perturbed")


class NoStore(ValueError):
    pass


def _wrap(expr: str, dtype: str) -> str:
    if dtype == "float16":
        return f"__float2half(__half2float({expr}) * 1.5f + 1.0f)"
    if dtype == "bfloat16":
        return f"__float2bfloat16(__bfloat162float({expr}) * 1.5f + 1.0f)"
    if dtype in ("float32", "float64"):
        return f"(({expr}) * 1.5f + 1.0f)"
    if dtype == "bool":
        return f"(!({expr}))"
    return f"(({expr}) * 3 + 1)"


def perturb(source: str, kernel: str, outputs: dict[str, str]) -> str:
    """`source` with the right side of every store to an output (name -> dtype) of `kernel` changed."""
    from ...cudasrc.tsparse import functions
    from .codebleu import _target

    fns = [f for f in functions(source) if f.name == kernel and f.is_kernel]
    if not fns:
        raise NoStore(f"no kernel {kernel!r}")
    data = source.encode()
    edits = []
    stack = [fns[0].node]
    while stack:
        n = stack.pop()
        if n.type == "assignment_expression":
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            tgt = _target(left)
            if left.type in ("subscript_expression", "pointer_expression") and tgt is not None \
                    and tgt.text.decode() in outputs:
                edits.append((right.start_byte, right.end_byte, outputs[tgt.text.decode()]))
        stack.extend(n.children)
    if not edits:
        raise NoStore(f"no store to an output ({', '.join(outputs)}) in {kernel!r}")
    out, pos = [], 0
    for a, b, dt in sorted(edits):
        if a < pos:
            continue  # nested in an edit already made
        out += [data[pos:a].decode(), _wrap(data[a:b].decode(), dt)]
        pos = b
    return "".join(out) + data[pos:].decode()


def make_candidates(pairs_path: Path, out: Path, kind: str) -> tuple[int, dict[str, int]]:
    """Write one Sample per usable pair; (written, skipped by reason)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    samples, skipped = [], {}
    for p in read_jsonl(pairs_path, Pair):
        if not (p.source or "").strip() or p.source_language != "cuda":
            skipped["no CUDA source"] = skipped.get("no CUDA source", 0) + 1
            continue
        code = p.source
        if kind == "perturbed":
            try:
                cfg = pair_config(p)
                code = perturb(p.source, cfg.kernel, {q.name: q.dtype for q in cfg.outputs})
            except (ConfigError, NoStore) as exc:
                why = "no configuration" if isinstance(exc, ConfigError) else "no store to an output"
                skipped[why] = skipped.get(why, 0) + 1
                continue
        samples.append(Sample(f"{p.pair_id}#{kind}", p.pair_id, "cuda", code, model=f"kernelmill:{kind}",
                              meta={"sample_index": 0, "template": "ptx2cuda", "candidates": kind}))
    write_jsonl(out, samples)
    return len(samples), skipped
