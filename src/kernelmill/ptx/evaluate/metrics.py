"""The decompilation metrics (SPEC.md section 3, PtxDec's evaluation).

* I/O correctness: for every output tensor the maximum normalised absolute
  error is at most 1e-3. The paper names the rule ("normalized absolute error
  ... maximum deviation ... threshold 0.001") but not the normaliser; we use the
  one kernelmill's verifier uses for decompilation (verify/measure/correctness.py,
  ``max_norm_abs``): ``max|c - r| / max|r|`` over the reference's finite
  values (``max|c - r|`` where the reference is all zero). NaN must meet NaN
  and an infinity the same infinity, else the error is infinite.
* latency deviation: ``(t_decompiled - t_reference) / t_reference`` of the
  median GPU times, signed (0 = same speed, +0.5 = 50% slower);
* global-load efficiency deviation: ``eff_decompiled - eff_reference`` in
  percentage points of ncu's global load efficiency (both are percentages);
  both deviations only for I/O-correct candidates, as in the paper.

Rates are over the evaluated candidates: every sample whose pair has a
configuration and a reference that compiles and runs. Pairs without a
configuration, samples without a pair and pairs whose reference fails are
counted apart. Run metrics that were not measured (a CPU machine, no nvcc) are
reported as null with the reason, never as 0.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from typing import Any, Iterable

IO_TOL = 1e-3

# statuses of one candidate; the first group is evaluated (in the rates)
EVALUATED = ("ok", "incorrect", "runtime_error", "timeout", "compile_error", "not_run")
EXCLUDED = ("no_configuration", "no_pair", "reference_failed")
STATUSES = EVALUATED + EXCLUDED


def normalised_error(ref, cand) -> float:
    """Max normalised absolute error of one output (torch tensors, same shape)."""
    import torch

    if ref.numel() == 0:
        return 0.0
    if ref.dtype == torch.bool:
        ref, cand = ref.to(torch.int8), cand.to(torch.int8)
    r = ref.detach().to(torch.float64).flatten()
    c = cand.detach().to(torch.float64).flatten()
    r_nan, c_nan = torch.isnan(r), torch.isnan(c)
    if not torch.equal(r_nan, c_nan):
        return math.inf
    r_inf, c_inf = torch.isinf(r), torch.isinf(c)
    if bool(((r_inf | c_inf) & (r != c)).any()):
        return math.inf
    finite = ~(r_nan | r_inf)
    if not bool(finite.any()):
        return 0.0
    diff = (c[finite] - r[finite]).abs().max().item()
    scale = r[finite].abs().max().item()
    return diff / scale if scale > 0 else diff


def unwritten(fill, out) -> int:
    """Elements of an output whose bytes are still its fill's (`worker.make_buffers`: NaN with
    torch's payload for a float output the launch must write, -1 for an integer one). A CUDA
    kernel's own NaN has another payload, so where the reference leaves any, its launch did not
    cover the output: a reference run against itself passes with such a launch, as a wrong
    grid or block is deterministic too (session_2026-11-30g: 1x1x1 blocks read I/O correct)."""
    import torch

    if fill is None or out is None or fill.numel() != out.numel() or fill.dtype != out.dtype:
        return 0
    width = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}.get(fill.element_size())
    if width is None or fill.dtype == torch.bool:
        return 0
    return int(torch.count_nonzero(out.detach().flatten().view(width) == fill.detach().flatten().view(width)))


def second_fill(dtype):
    """The fill of an integer output's second reference run (`reference_unwritten`): 0x5A in
    every byte, a value unlike -1 and unlike the small counts and indices kernels write."""
    import torch

    width = torch.empty((), dtype=dtype).element_size()
    value = int.from_bytes(b"\x5a" * width, "little")
    return value if dtype != torch.int8 else 0x5A


def reference_unwritten(params, bufs: list, outs: list, run) -> dict[str, int]:
    """{output name: elements the reference's launch left at their fill} over the outputs the
    launch must write (`init_kind() == "nan"`). A float fill (torch's NaN payload) is no value a
    kernel computes; an integer fill (-1) is: an int8 dot product is -1 now and then (3 of
    `gemm_int8_rowtile<256>`'s 256,000 in session 25). So an integer output with any -1 is run
    again (`run(bufs) -> outputs`) filled with `second_fill`, and counted only where both runs
    left the fill: a written value is the same in both runs."""
    import torch

    out_params = [(i, p) for i, p in enumerate(params) if p.is_output]
    left, again = {}, []
    for (i, p), o in zip(out_params, outs):
        if p.init_kind() != "nan":
            continue
        n = unwritten(bufs[i], o)
        if n and not (bufs[i].dtype.is_floating_point or bufs[i].dtype.is_complex):
            again.append(i)
        if n:
            left[p.name] = n
    if again:
        alt = list(bufs)
        for i in again:
            alt[i] = torch.full_like(bufs[i], second_fill(bufs[i].dtype))
        outs2 = run(alt)
        for (i, p), o1, o2 in zip(out_params, outs, outs2):
            if i in again:
                first = o1.detach().flatten() == bufs[i].detach().flatten()
                second = o2.detach().flatten() == alt[i].detach().flatten()
                left[p.name] = int(torch.count_nonzero(first & second))
    return {k: v for k, v in left.items() if v}


def latency_deviation(ref_ms: float | None, cand_ms: float | None) -> float | None:
    if not ref_ms or cand_ms is None or ref_ms <= 0:
        return None
    return (cand_ms - ref_ms) / ref_ms


def efficiency_deviation(ref_pct: float | None, cand_pct: float | None) -> float | None:
    if ref_pct is None or cand_pct is None:
        return None
    return cand_pct - ref_pct


def _rate(k: int, n: int) -> float | None:
    return k / n if n else None


def _stats(values: list[float]) -> dict[str, Any] | None:
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return None
    vals.sort()
    return {"n": len(vals), "median": statistics.median(vals), "mean": statistics.fmean(vals),
            "min": vals[0], "max": vals[-1], "mean_abs": statistics.fmean(abs(v) for v in vals),
            "within_5pct": sum(abs(v) <= 0.05 for v in vals) / len(vals)}


def summarize(results: Iterable[dict], *, compiled_measured: bool, run_measured: bool,
              not_run_reason: str = "") -> dict[str, Any]:
    """Rates, CodeBLEU means, deviation statistics and counts of a results file."""
    rows = list(results)
    counts = Counter(r["status"] for r in rows)
    ev = [r for r in rows if r["status"] in EVALUATED]
    n = len(ev)
    out: dict[str, Any] = {"samples": len(rows), "evaluated": n, "counts": dict(sorted(counts.items()))}
    out["compilation_rate"] = _rate(sum(bool(r.get("compiled")) for r in ev), n) if compiled_measured else None
    if run_measured:
        out["runtime_correctness_rate"] = _rate(sum(bool(r.get("ran")) for r in ev), n)
        out["io_correctness_rate"] = _rate(sum(bool(r.get("io_correct")) for r in ev), n)
    else:
        out["runtime_correctness_rate"] = out["io_correctness_rate"] = None
    if not (compiled_measured and run_measured):
        out["not_run"] = not_run_reason or "not measured"
    cb = [r["codebleu"] for r in ev if r.get("codebleu")]
    if cb:
        out["codebleu"] = {k: statistics.fmean(c[k] for c in cb) for k in cb[0]}
        out["codebleu"]["n"] = len(cb)
    else:
        out["codebleu"] = None
    ok = [r for r in ev if r.get("io_correct")]
    out["latency_deviation"] = _stats([r.get("latency_dev") for r in ok])
    out["gld_efficiency_deviation"] = _stats([r.get("gld_eff_dev") for r in ok])
    # JSON has no infinity: a stored error may be the string "inf" (or "nan")
    errs = [float(r["max_norm_err"]) for r in ev if r.get("ran") and r.get("max_norm_err") is not None]
    errs = [e for e in errs if e == e]  # NaN has no place in a median
    out["io_errors_found"] = sum(1 for r in ev if r["status"] == "incorrect")
    out["max_norm_err_median"] = statistics.median(errs) if errs else None
    # launches whose reference left part of an output unwritten (`unwritten`): a configuration to check
    out["ref_unwritten"] = sum(1 for r in ev if r.get("ref_unwritten"))
    return out
