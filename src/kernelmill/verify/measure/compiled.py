"""The second baseline: the reference under ``torch.compile``.

KernelBench reports a candidate's speedup over PyTorch eager and over the
reference compiled with ``torch.compile`` (its defaults: the inductor backend,
mode "default", dynamo's caches reset first). Here the compiled reference is
measured once per task in a verify run, in the run process that times the
eager reference, with the same timing utility (`timing.compare`): eager and
compiled reference alternate round by round on the same refilled inputs, which
gives the compiled reference's speedup over eager, `speedup_over_eager` (the
median of per-round ratios, with its 95% interval). Compilation happens on the
first call, which is timed on its own (`compile_s`) and left out of the
figures; warm-up follows it as for any side.

Each verdict of the task then carries ``ref_compiled_runtime_ms =
ref_runtime_ms / speedup_over_eager`` (its own run's eager reference time,
scaled by the task's compiled-over-eager ratio, so that both baselines share
the reference timing of the candidate's own comparison) and ``speedup_compiled
= ref_compiled_runtime_ms / runtime_ms`` (`attach`).

A task whose reference does not compile, or does not finish compiling within
its time limit, never fails a candidate:
the verdict carries the flag ``compiled_baseline_failed`` and the reason in
``measurement["compiled_reference"]["error"]``.
"""

from __future__ import annotations

import dataclasses
import random
import threading
import time
from contextlib import AbstractContextManager, nullcontext
from typing import Callable

import torch

from .timing import Bench, TimingConfig, compare

FAILED_FLAG = "compiled_baseline_failed"
DEFAULT_MODE = "default"  # KernelBench's torch_compile_options default
DEFAULT_BACKEND = "inductor"  # KernelBench's torch_compile_backend default


def _first_call(fn: Callable[[], object], timeout_s: float) -> tuple[object, float]:
    """Run `fn` once (the compile) in a thread, waiting at most `timeout_s`.
    A compile still running then is abandoned: the run process exits with
    `os._exit` once its result is written, which ends the thread too."""
    box: dict = {}

    def target() -> None:
        try:
            with torch.no_grad():  # grad mode is per thread
                box["out"] = fn()
        except BaseException as exc:  # noqa: BLE001 - reported as the baseline's failure
            box["error"] = exc

    t0 = time.perf_counter()
    th = threading.Thread(target=target, name="kernelmill-compile-reference", daemon=True)
    th.start()
    th.join(timeout_s)
    took = time.perf_counter() - t0
    if th.is_alive():
        raise TimeoutError(f"torch.compile did not finish within {timeout_s:g} s")
    if "error" in box:
        raise box["error"]
    return box["out"], took


def _max_diff(a: object, b: object) -> float:
    from .correctness import flatten_outputs

    worst = 0.0
    for (_, x), (_, y) in zip(flatten_outputs(a), flatten_outputs(b)):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.numel():
            worst = max(worst, float((x.double() - y.double()).abs().max()))
    return worst


def measure(ref: torch.nn.Module, timing_sets: list, device: torch.device, config: TimingConfig, *,
            mode: str = DEFAULT_MODE, backend: str = DEFAULT_BACKEND, timeout_s: float = 600.0,
            timed_section: Callable[[], AbstractContextManager] | None = None) -> dict:
    """Compile `ref`, then time it against itself in eager mode (same inputs,
    same rounds). Returns the record `attach` reads; never raises for the
    task's own failures (they go into ``error``)."""
    out: dict = {"mode": mode, "backend": backend, "error": None}
    try:
        torch._dynamo.reset()  # nothing of an earlier compile in this process carries over
        compiled = torch.compile(ref, mode=mode, backend=backend)
        rng = random.Random(0)
        eager_in = [x.clone() if isinstance(x, torch.Tensor) else x for x in timing_sets[0]]
        comp_in = [x.clone() if isinstance(x, torch.Tensor) else x for x in timing_sets[0]]
        got, out["compile_s"] = _first_call(lambda: compiled(*comp_in), timeout_s)
        with torch.no_grad():
            want = ref(*[x.clone() if isinstance(x, torch.Tensor) else x for x in timing_sets[0]])
        if device.type == "cuda":
            torch.cuda.synchronize()
        # recorded, not judged: a task with random ops (dropout in training mode) differs by design
        out["max_abs_diff"] = _max_diff(want, got)

        def prep(dst: list) -> Callable[[int], None]:
            from .inputs import Factors, refill

            factors = Factors()
            return lambda i: refill(dst, timing_sets[i % len(timing_sets)], rng.uniform(0.5, 1.5), factors)

        eager = Bench(lambda: ref(*eager_in), device, config, prepare=prep(eager_in))
        fast = Bench(lambda: compiled(*comp_in), device, config, prepare=prep(comp_in))
        with torch.no_grad(), (timed_section() if timed_section else nullcontext()):
            # eager against compiled: no KernelBench-convention figure is reported for it
            c = compare(eager, fast, dataclasses.replace(config, kb_trials=0))
        if c.speedup is None:
            raise ValueError("the timing of the compiled reference gave no ratio")
        out.update(speedup_over_eager=c.speedup, speedup_over_eager_ci=c.speedup_ci,
                   compiled_ms=c.candidate.median_ms, eager_ms=c.reference.median_ms, rounds=c.rounds,
                   stopped=c.stopped)
    except BaseException as exc:  # noqa: BLE001 - the task's compile failed; never the candidate's
        if isinstance(exc, KeyboardInterrupt):
            raise
        text = f"{type(exc).__name__}: {exc}".strip()
        out["error"] = text.splitlines()[0][:400] if text else type(exc).__name__
    return out


def attach(verdict: dict, baseline: dict | None, measured_here: bool) -> None:
    """Put the compiled baseline into a verdict's fields (a dict of Verdict
    fields): only a correct verdict with a measured runtime gets numbers."""
    if not baseline:
        return
    record = {k: baseline.get(k) for k in ("mode", "backend", "compile_s", "speedup_over_eager",
                                           "speedup_over_eager_ci", "compiled_ms", "eager_ms", "rounds",
                                           "max_abs_diff", "error")
              if baseline.get(k) is not None or k == "error"}
    record["measured"] = "in this candidate's run" if measured_here else "in an earlier run of this task"
    measurement = verdict.get("measurement")
    if isinstance(measurement, dict):
        measurement["compiled_reference"] = record
    else:
        verdict["measurement"] = {"compiled_reference": record}
    if verdict.get("status") != "ok" or not verdict.get("runtime_ms") or not verdict.get("ref_runtime_ms"):
        return
    ratio = baseline.get("speedup_over_eager")
    if baseline.get("error") or not ratio:
        verdict["flags"] = list(verdict.get("flags") or []) + [FAILED_FLAG]
        return
    verdict["ref_compiled_runtime_ms"] = verdict["ref_runtime_ms"] / ratio
    verdict["speedup_compiled"] = verdict["ref_compiled_runtime_ms"] / verdict["runtime_ms"]


__all__ = ["DEFAULT_BACKEND", "DEFAULT_MODE", "FAILED_FLAG", "attach", "measure"]
