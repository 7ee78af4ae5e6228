"""Check the builtin suite against itself, in-process, on the CPU.

This is a maintainer's tool for the shipped files, not the harness: it runs
each task's reference in a chosen size profile, and checks example candidates
against the verdict their file name promises (ok -> values match,
incorrect -> they do not, runtime_error -> forward raises). It has no
sandbox and no timeouts, so `timeout` candidates are never run here, and CUDA
candidates only where CUDA exists. Triton candidates run on the CPU under
``TRITON_INTERPRET=1`` (set before triton is imported; the CLI entry point
does that).

The semantics are the harness's (KernelBench's): the reference and the
candidate are each built under the same seed, in the state a fresh module is
in (training mode: no ``.eval()``), and the candidate's parameters are its
own (nothing is copied from the reference), so an `ok` candidate must create
and initialise its parameters as the reference does.

    python -m kernelmill.tasks.builtin.selfcheck --language torch --language triton
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
import types
from dataclasses import asdict, dataclass
from typing import Any

from ...records import Sample, Task

# rtol = atol per dtype, as in the harness defaults
TOLERANCES = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-2}


@dataclass
class CheckResult:
    sample_id: str
    expect: str
    status: str  # ok | incorrect | compile_error | runtime_error | skipped
    max_abs_err: float | None = None
    message: str = ""
    seconds: float = 0.0

    @property
    def as_expected(self) -> bool:
        return self.status == self.expect


def load_program(code: str, name: str, overrides: dict[str, Any] | None = None) -> types.ModuleType:
    """Execute a task or candidate file as a fresh module; apply size overrides."""
    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    exec(compile(code, module.__file__, "exec"), module.__dict__)
    for key, value in (overrides or {}).items():
        if key not in module.__dict__:
            raise KeyError(f"{name}: size profile sets {key!r}, which the program does not define")
        setattr(module, key, value)
    return module


def profile_overrides(task: Task, profile: str) -> dict[str, Any]:
    if profile == "full":
        return {}
    if profile not in task.sizes:
        raise KeyError(f"{task.task_id}: no size profile {profile!r} (has {sorted(task.sizes)})")
    return task.sizes[profile]


def build_reference(task: Task, profile: str = "small", seed: int = 0):
    """(module, model, init_inputs) with weights drawn under `seed`."""
    import torch

    module = load_program(task.code, "reference", profile_overrides(task, profile))
    torch.manual_seed(seed)
    init_inputs = module.get_init_inputs() if hasattr(module, "get_init_inputs") else []
    torch.manual_seed(seed)
    return module, module.Model(*init_inputs), init_inputs


def compare(ref_out, cand_out) -> tuple[bool, float | None, str]:
    import torch

    if not isinstance(cand_out, torch.Tensor):
        return False, None, f"output is {type(cand_out).__name__}, not a tensor"
    if cand_out.shape != ref_out.shape:
        return False, None, f"shape {tuple(cand_out.shape)} != {tuple(ref_out.shape)}"
    if cand_out.dtype != ref_out.dtype:
        return False, None, f"dtype {cand_out.dtype} != {ref_out.dtype}"
    if not ref_out.is_floating_point():
        same = bool(torch.equal(cand_out.cpu(), ref_out.cpu()))
        return same, 0.0 if same else None, "" if same else "integer outputs differ"
    tol = TOLERANCES.get(str(ref_out.dtype).removeprefix("torch."), 1e-4)
    a, b = cand_out.detach().float().cpu(), ref_out.detach().float().cpu()
    err = float((a - b).abs().nan_to_num(float("inf")).max()) if a.numel() else 0.0
    close = bool(torch.allclose(a, b, atol=tol, rtol=tol))
    return close, err, "" if close else f"max abs error {err:.3g} over tolerance {tol:g}"


def check_candidate(task: Task, sample: Sample, profile: str = "small", device: str = "cpu",
                    trials: int = 2, seed: int = 0) -> CheckResult:
    """Run one candidate against its reference and classify the outcome."""
    import torch

    expect = sample.meta.get("expect", "")
    t0 = time.perf_counter()
    result = CheckResult(sample.sample_id, expect, "ok")
    try:
        module, ref, init_inputs = build_reference(task, profile, seed)
    except Exception as exc:  # a broken task is our bug: say so loudly
        raise RuntimeError(f"{task.task_id}: reference failed: {exc}") from exc
    try:
        cand_module = load_program(sample.code, "candidate")
    except Exception as exc:  # build or import failure
        result.status, result.message = "compile_error", _last_line(exc)
        result.seconds = time.perf_counter() - t0
        return result
    try:
        # the same seed, and nothing copied: the candidate's weights are its own
        torch.manual_seed(seed)
        cand = cand_module.ModelNew(*init_inputs)
        ref, cand = ref.to(device), cand.to(device)  # training mode, as constructed
        worst = 0.0
        with torch.no_grad():
            for trial in range(trials):
                torch.manual_seed(seed + 1000 + trial)
                inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in module.get_inputs()]
                ref_out = ref(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
                cand_out = cand(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
                close, err, message = compare(ref_out, cand_out)
                worst = max(worst, err if err is not None else float("inf"))
                if not close:
                    result.status, result.message = "incorrect", f"trial {trial + 1}: {message}"
                    break
        result.max_abs_err = worst
    except Exception as exc:
        result.status, result.message = "runtime_error", _last_line(exc)
    result.seconds = time.perf_counter() - t0
    return result


def _last_line(exc: BaseException) -> str:
    """The most telling line: a compiler's first `error:` line, else the last line."""
    lines = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
    errors = [ln.strip() for ln in lines if "error:" in ln]
    return (errors[0] if errors else lines[-1] if lines else type(exc).__name__)[:500]


def check_builtin(languages: list[str] | None = None, profile: str = "small",
                  device: str = "cpu", only: list[str] | None = None) -> list[CheckResult]:
    from ...languages import get_language
    from .. import load_tasks
    from . import builtin_samples

    tasks = load_tasks("builtin").by_id()
    results = []
    for sample in builtin_samples(languages):
        if only and sample.sample_id not in only:
            continue
        if sample.meta["expect"] == "timeout":
            results.append(CheckResult(sample.sample_id, "timeout", "skipped", message="never returns; not run in-process"))
            continue
        if get_language(sample.language).needs_gpu and device != "cuda":  # cuda, tilelang
            results.append(CheckResult(sample.sample_id, sample.meta["expect"], "skipped", message="needs CUDA"))
            continue
        if device.startswith("cuda") and not only:
            # a CUDA error poisons the process's context, so each candidate
            # gets a fresh interpreter (this is what --only is for)
            results.append(_check_in_subprocess(sample, profile, device))
            continue
        results.append(check_candidate(tasks[sample.task_id], sample, profile, device))
    return results


def _check_in_subprocess(sample: Sample, profile: str, device: str, timeout_s: float = 600) -> CheckResult:
    import subprocess

    cmd = [sys.executable, "-m", __name__, "--json", "--profile", profile, "--device", device,
           "--only", sample.sample_id]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return CheckResult(sample.sample_id, sample.meta["expect"], "timeout", message=f"over {timeout_s:.0f}s")
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            data = json.loads(line)
            data.pop("as_expected", None)
            return CheckResult(**data)
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [f"exit code {proc.returncode}"]
    return CheckResult(sample.sample_id, sample.meta["expect"], "runtime_error", message=tail[0][:500])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--language", action="append", help="only these languages (repeatable)")
    parser.add_argument("--profile", default="small", choices=["small", "full"])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", action="store_true", help="one JSON object per candidate")
    parser.add_argument("--only", action="append", help="only this sample id (repeatable)")
    args = parser.parse_args(argv)
    if args.device == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")
    results = check_builtin(args.language, args.profile, args.device, args.only)
    for r in results:
        if args.json:
            print(json.dumps({**asdict(r), "as_expected": r.as_expected}), flush=True)
        else:
            mark = "ok " if r.as_expected else ("-- " if r.status == "skipped" else "BAD")
            print(f"{mark} {r.sample_id:55s} expect={r.expect:13s} got={r.status:13s} "
                  f"{r.seconds:6.2f}s {r.message}", flush=True)
    bad = [r for r in results if r.status != "skipped" and not r.as_expected]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
