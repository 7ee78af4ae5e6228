"""Task audit: would a trivial candidate pass kernelmill's correctness check?

A verifier is only as strong as its tasks. When a task's reference output is
all zeros, a constant, or its own input, a candidate that computes nothing
passes `verify`. The audit builds the reference the way a candidate meets it
(a fixed weight seed, a freshly constructed module in training mode, under
``torch.no_grad()``), draws ``trials`` input sets with different seeds, and
checks five trivial candidates with `kernelmill.verify.measure.correctness.compare`
(``DEFAULT_TOLERANCES``):

* ``zeros``: zeros of each output's shape and dtype;
* ``constant``: each output's overall mean, as one constant;
* ``mean_only``: a per-index mean, broadcast: the mean over every dimension but
  dim 1 (the channel of NC..., the feature of 2-D outputs), or over every
  dimension but the last; it passes when either does;
* ``shape_only``: normal noise of the right shape, scaled to the output's std
  and shifted to its mean (a sanity row: it should never pass);
* ``input_copy``: the first tensor input, as is, reshaped, truncated or
  zero-padded to each output's element count and cast to its dtype ("n/a" when
  there is no tensor input).

Constants, means and the noise's scale are fitted once, on the first input
set, and then checked on every set, as a hard-coded candidate would be: a task
passes a trivial candidate only when it passes on all input sets.

Each task runs in its own process (``python -m kernelmill.tasks.audit JOB``)
through the verify `Sandbox`, so a task that raises, hangs or eats memory
becomes an error row and the audit goes on.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..records import Task
from ..verify import DEFAULT_TOLERANCES, CheckRule, flatten_outputs
from ..verify import NA, WEAK_BY, TrivialCheck, finite_mean_std, work_copy
from ..verify import Sandbox, apply_rlimits, python_argv

CANDIDATES = ("zeros", "constant", "mean_only", "shape_only", "input_copy")
PASS, FAIL = "pass", "FAIL"
NEAR_CONSTANT_SPREAD = 0.01  # std under 1% of max|x| counts as near-constant (outputs of 2+ elements)


@dataclass
class AuditOptions:
    profile: str = "auto"  # auto (small on CPU, full on CUDA), small, full
    device: str = "cpu"
    trials: int = 2
    weight_seed: int = 42
    input_seed: int = 1000
    timeout_s: float = 300.0
    memory_gb: float = 8.0
    threads: int = 0  # torch threads in each task's process; 0 = torch's default

    def resolved_profile(self) -> str:
        if self.profile != "auto":
            return self.profile
        return "full" if self.device.startswith("cuda") else "small"


@dataclass
class OutputStats:
    """Scale and spread of one output of the reference (first input set)."""
    where: str
    shape: list[int]
    dtype: str
    numel: int
    max_abs: float
    mean: float
    std: float
    zero_frac: float
    nonfinite_frac: float
    near_constant: bool


@dataclass
class TaskAudit:
    task_id: str
    status: str  # ok | error | timeout | interrupted
    message: str = ""
    wall_s: float = 0.0
    verdicts: dict[str, str] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)  # candidate -> why it failed
    details: dict[str, str] = field(default_factory=dict)
    outputs: list[OutputStats] = field(default_factory=list)

    @property
    def weak_by(self) -> list[str]:
        return [c for c in WEAK_BY if self.verdicts.get(c) == PASS]

    @property
    def weak(self) -> bool:
        return bool(self.weak_by)

    def scale(self) -> dict[str, float] | None:
        """max|x|, pooled std and zero fraction over all tensor outputs."""
        outs = [o for o in self.outputs if o.numel]
        if not outs:
            return None
        n = sum(o.numel for o in outs)
        mean = sum(o.mean * o.numel for o in outs) / n
        var = sum(o.numel * (o.std ** 2 + (o.mean - mean) ** 2) for o in outs) / n
        return {"max_abs": max(o.max_abs for o in outs), "std": math.sqrt(max(var, 0.0)),
                "zero_frac": sum(o.zero_frac * o.numel for o in outs) / n}

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(weak=self.weak, weak_by=self.weak_by, overall=self.scale())
        return d

    @classmethod
    def from_result(cls, task_id: str, res: dict[str, Any], wall_s: float) -> TaskAudit:
        return cls(task_id=task_id, status=res["status"], message=res.get("message", ""), wall_s=wall_s,
                   verdicts=res.get("verdicts", {}), failures=res.get("failures", {}),
                   details=res.get("details", {}),
                   outputs=[OutputStats(**o) for o in res.get("outputs", [])])


# ---------------------------------------------------------------- candidates

def output_stats(where: str, t) -> OutputStats:
    import torch

    w = work_copy(t)
    n = w.numel()
    mean, std = finite_mean_std(t)
    fin = torch.isfinite(w)
    max_abs = float(w[fin].abs().max()) if n and bool(fin.any()) else 0.0
    return OutputStats(
        where=where, shape=list(t.shape), dtype=str(t.dtype).removeprefix("torch."), numel=n,
        max_abs=max_abs, mean=mean, std=std,
        zero_frac=float((w == 0).sum()) / n if n else 0.0,
        nonfinite_frac=float((~fin).sum()) / n if n else 0.0,
        near_constant=n > 1 and std <= NEAR_CONSTANT_SPREAD * max_abs)





# ---------------------------------------------------------------- one task (child process)

def load_reference(task_path: str, sizes: dict, weight_seed: int):
    """The task module with its size profile applied, and `Model` built the way
    verify builds it: seed, ``get_init_inputs()``, seed again, construct."""
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location("reference", task_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["reference"] = module
    spec.loader.exec_module(module)
    for key, value in sizes.items():
        setattr(module, key, value)
    torch.manual_seed(weight_seed)
    init_inputs = module.get_init_inputs() if hasattr(module, "get_init_inputs") else []
    torch.manual_seed(weight_seed)
    return module, module.Model(*init_inputs)


def audit_reference(task_path: str, sizes: dict, opts: AuditOptions) -> dict[str, Any]:
    """Audit one task file in this process; returns the JSON-able result."""
    import torch

    if opts.threads > 0:
        torch.set_num_threads(opts.threads)
    device = torch.device(opts.device)
    stage = "building the reference"
    try:
        ref_mod, model = load_reference(task_path, sizes, opts.weight_seed)
        model = model.to(device)  # training mode, as constructed: no .eval()
        check = TrivialCheck(CheckRule(tolerances=dict(DEFAULT_TOLERANCES)))
        stats: list[OutputStats] = []
        with torch.no_grad():
            for trial in range(opts.trials):
                stage = f"get_inputs, input set {trial + 1}"
                torch.manual_seed(opts.input_seed + trial)
                inputs = ref_mod.get_inputs()
                inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]
                first = next((x.clone() for x in inputs if isinstance(x, torch.Tensor)), None)
                stage = f"reference forward, input set {trial + 1}"
                out = model(*inputs)
                del inputs
                if trial == 0:
                    stats = [output_stats(w, t) for w, t in flatten_outputs(out) if isinstance(t, torch.Tensor)]
                stage = f"trivial candidates, input set {trial + 1}"
                check.add(out, first, f"input set {trial + 1}/{opts.trials}")
                del out, first
    except BaseException as exc:  # noqa: BLE001 - the task itself is broken
        if isinstance(exc, KeyboardInterrupt):
            raise
        msg = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return {"status": "error", "message": f"{stage}: {msg[-2000:]}"}

    alive, failures, notes = check.alive, check.failures, check.notes

    def verdict(n: str) -> str:
        if alive[n]:
            return PASS
        return NA if failures[n].startswith(NA) else FAIL
    verdicts = {n: verdict(n) for n in ("zeros", "constant", "shape_only", "input_copy")}
    verdicts["mean_only"] = PASS if PASS in (verdict("mean_channel"), verdict("mean_last")) else FAIL
    details = {}
    if "input_copy" in notes:
        details["input_copy_mode"] = notes["input_copy"]
    if verdicts["mean_only"] == PASS:
        details["mean_only_axis"] = "dim 1" if alive["mean_channel"] else "last dim"
    else:
        failures["mean_only"] = f"dim 1: {failures['mean_channel']}; last dim: {failures['mean_last']}"
    for n in ("mean_channel", "mean_last"):
        failures.pop(n, None)
    return {"status": "ok", "verdicts": {c: verdicts[c] for c in CANDIDATES}, "failures": failures,
            "details": details, "outputs": [asdict(s) for s in stats]}


def _child_main(job_path: str) -> None:
    job = json.loads(Path(job_path).read_text())
    apply_rlimits(job["rlimits"])
    opts = AuditOptions(**job["options"])
    result = audit_reference(job["task"], job["sizes"], opts)
    Path(job["result"]).write_text(json.dumps(result, allow_nan=True))


# ---------------------------------------------------------------- the audit (parent)

def audit_task(task: Task, opts: AuditOptions, sandbox: Sandbox) -> TaskAudit:
    """Audit one task in a fresh process under the timeout and memory limit."""
    sizes = task.sizes.get(opts.resolved_profile(), {}) if opts.resolved_profile() != "full" else {}
    with tempfile.TemporaryDirectory(prefix="km-audit-") as tmp:
        d = Path(tmp)
        (d / "task.py").write_text(task.code, encoding="utf-8")
        job = {"task": str(d / "task.py"), "sizes": sizes, "result": str(d / "result.json"),
               "options": asdict(opts), "rlimits": sandbox.rlimits()}
        (d / "job.json").write_text(json.dumps(job))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH", "")])
        res = sandbox.run(python_argv("kernelmill.tasks.audit", str(d / "job.json")), d, env, opts.timeout_s)
        if res.timed_out:
            return TaskAudit(task.task_id, "timeout", f"ran past {opts.timeout_s:g} s", res.wall_s)
        if res.killed_reason == "interrupted":
            return TaskAudit(task.task_id, "interrupted", "stopped by Ctrl-C", res.wall_s)
        if res.killed_reason == "memory":
            return TaskAudit(task.task_id, "error", f"used more than {opts.memory_gb:g} GB of memory", res.wall_s)
        result_path = d / "result.json"
        if res.returncode != 0 or not result_path.exists():
            tail = (res.stderr or "").strip().splitlines()[-3:]
            why = res.signal_name or f"exit code {res.returncode}"
            return TaskAudit(task.task_id, "error", f"the task's process died ({why}): " + " | ".join(tail), res.wall_s)
        return TaskAudit.from_result(task.task_id, json.loads(result_path.read_text()), res.wall_s)


@dataclass
class AuditReport:
    source: str
    options: AuditOptions
    tasks: list[TaskAudit] = field(default_factory=list)
    interrupted: bool = False
    planned: int = 0  # tasks the audit was asked to run

    def summary(self) -> dict[str, Any]:
        done = [t for t in self.tasks if t.status == "ok"]
        return {
            "planned": self.planned, "tasks": len(self.tasks), "audited": len(done),
            "weak": sum(t.weak for t in done),
            "weak_by": {c: sum(t.verdicts.get(c) == PASS for t in done) for c in WEAK_BY},
            "shape_only_passed": sum(t.verdicts.get("shape_only") == PASS for t in done),
            "errors": sum(t.status == "error" for t in self.tasks),
            "timeouts": sum(t.status == "timeout" for t in self.tasks),
            "interrupted": self.interrupted,
        }

    def summary_line(self) -> str:
        s = self.summary()
        by = ", ".join(f"{c.replace('_', '-')} {n}" for c, n in s["weak_by"].items())
        line = (f"{s['audited']} of {s['tasks']} tasks audited: {s['weak']} weak ({by}); "
                f"{s['errors']} errors, {s['timeouts']} timeouts")
        if s["shape_only_passed"]:
            line += f"; shape-only passed on {s['shape_only_passed']} (random noise passes: the output barely matters)"
        if self.interrupted:
            line += f"; interrupted: {self.planned - len(self.tasks)} tasks not run"
        return line

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "options": asdict(self.options),
                "profile": self.options.resolved_profile(),
                "tolerances": {k: list(v) for k, v in DEFAULT_TOLERANCES.items()},
                "summary": self.summary(), "tasks": [t.to_dict() for t in self.tasks]}


def run_audit(tasks: list[Task], source: str, opts: AuditOptions,
              on_done: Callable[[TaskAudit], None] | None = None,
              on_start: Callable[[Task], None] | None = None) -> AuditReport:
    """Audit tasks one at a time; Ctrl-C stops the current task's process and
    returns the report of what was done."""
    if opts.trials < 2:
        raise ValueError(f"trials must be at least 2 (got {opts.trials}): a trivial candidate must pass on several input sets")
    sandbox = Sandbox(memory_limit_gb=opts.memory_gb, max_procs=64, output_limit=4000,
                      limit_address_space=not opts.device.startswith("cuda"))
    report = AuditReport(source, opts, planned=len(tasks))
    try:
        for task in tasks:
            if on_start:
                on_start(task)
            t0 = time.monotonic()
            audit = audit_task(task, opts, sandbox)
            audit.wall_s = time.monotonic() - t0
            if audit.status == "interrupted":
                raise KeyboardInterrupt
            report.tasks.append(audit)
            if on_done:
                on_done(audit)
    except KeyboardInterrupt:
        sandbox.stop()
        report.interrupted = True
    return report


def render_table(report: AuditReport):
    """One row per task: the five verdicts, the output's scale and `weak`."""
    from rich.table import Table

    table = Table(title=f"task audit of {report.source} ({report.options.resolved_profile()} sizes, "
                        f"{report.options.trials} input sets, {report.options.device})")
    for col in ("task", "zeros", "const", "mean", "shape", "copy", "max|x|", "std", "zero%", "weak", "note"):
        table.add_column(col, justify="right" if col in ("max|x|", "std", "zero%") else "left",
                         overflow="fold" if col == "note" else "ellipsis", no_wrap=col != "note",
                         min_width=len(col))
    style = {PASS: "[bold red]pass[/]", FAIL: "[green]FAIL[/]", NA: "[dim]n/a[/]"}
    for t in report.tasks:
        if t.status != "ok":
            table.add_row(t.task_id, *(["[magenta]" + t.status + "[/]"] + [""] * 4), "", "", "", "?",
                          t.message[:200])
            continue
        sc = t.scale() or {"max_abs": math.nan, "std": math.nan, "zero_frac": math.nan}
        notes = [o.where + " near-constant" for o in t.outputs if o.near_constant]
        if "input_copy_mode" in t.details and t.verdicts.get("input_copy") == PASS:
            notes.append("copy " + t.details["input_copy_mode"])
        table.add_row(t.task_id, *(style.get(t.verdicts.get(c, NA), "?") for c in CANDIDATES),
                      f"{sc['max_abs']:.3g}", f"{sc['std']:.3g}", f"{100 * sc['zero_frac']:.1f}",
                      "[bold red]yes[/]" if t.weak else "no", "; ".join(notes))
    return table


if __name__ == "__main__":
    _child_main(sys.argv[1])
