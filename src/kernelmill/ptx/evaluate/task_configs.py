"""Launch configurations for pairs of KernelBench candidates, from the task (issue 44 item 4).

A `load_inline` candidate's kernels are launched by its C++ host code or its torch wrapper,
with sizes that come from the task's `get_inputs`. `trace_candidate` runs the candidate on the
CPU with the task's inputs (torch_trace.py, in the verify sandbox: no network-free guarantee is
claimed beyond the sandbox's, see verify/sandbox.py) and gets one config per launch it reached;
`attach_configs` stores them as `meta.config` of the pairs of the same kernel (the instance's
template arguments, read from the pair's demangled signature, must agree).
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

from ...records import Pair


def trace_candidate(custom_code: str, ref_code: str, timeout: float = 180.0) -> dict:
    """torch_trace's result for one candidate (`error` says why when the run itself failed)."""
    from ...verify import Sandbox, scrubbed_env
    with tempfile.TemporaryDirectory(prefix="km-trace-") as d:
        job, out = Path(d) / "job.json", Path(d) / "out.json"
        job.write_text(json.dumps({"ref_code": ref_code, "custom_code": custom_code}))
        box = Sandbox(memory_limit_gb=16, max_procs=64, output_limit=20000, limit_address_space=False)
        env = scrubbed_env({"CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "2"}, home=d)
        env["PYTHONPATH"] = ":".join(p for p in sys.path if p)
        res = box.run([sys.executable, "-m", "kernelmill.ptx.evaluate.torch_trace", str(job), str(out)],
                      Path(d), env, timeout)
        if out.exists():
            return json.loads(out.read_text())
        why = "timed out" if res.timed_out else res.killed_reason or (res.stderr or "").strip()[-400:]
        return {"error": f"trace failed: {why}", "launches": [], "extensions": [], "calls": [], "problems": []}


_SIG = re.compile(r"^[^(]*?\b(\w+)\s*<(.*)>\s*\(")


def signature_template_args(signature: str) -> list[str] | None:
    """`['float', '256']` of `void k<float, 256>(float const*, int)`; None when not a template."""
    m = _SIG.match(signature or "")
    if not m:
        return None
    from .config import _split_top
    return [a.strip() for a in _split_top(m.group(2))]


_CANON = {"half": "__half", "c10::Half": "__half", "at::Half": "__half", "Half": "__half",
          "c10::BFloat16": "__nv_bfloat16", "at::BFloat16": "__nv_bfloat16", "long": "long", "int64_t": "long",
          "true": "1", "false": "0", "unsigned int": "unsigned", "uint32_t": "unsigned"}


def _canon(a: str) -> str:
    a = " ".join(a.replace("(", " ").replace(")", " ").split())
    a = re.sub(r"^(\d+)[uUlL]*$", r"\1", a)
    return _CANON.get(a, a)


def same_instance(pair: Pair, template_args: list[str]) -> bool:
    """Whether a launch's template arguments name the pair's instance."""
    sig = signature_template_args((pair.meta or {}).get("signature", ""))
    if sig is None:
        return not template_args
    return [_canon(a) for a in sig] == [_canon(a) for a in template_args]


def attach_configs(pairs: list[Pair], trace: dict) -> int:
    """Set `meta.config` on the ok pairs without one whose kernel (and instance) a launch of the
    trace configures: a launch reached first, then one of a branch not taken. Returns how many."""
    launches = sorted((la for la in trace.get("launches", []) if la.get("config")),
                      key=lambda la: not la.get("taken", True))
    n = 0
    for p in pairs:
        meta = p.meta or {}
        if meta.get("status") != "ok" or meta.get("config"):
            continue
        for la in launches:
            if la["kernel"] == p.kernel_name and same_instance(p, la.get("template_args") or []):
                cfg = dict(la["config"])
                cfg["origin"] = "task" if la.get("taken", True) else "task, branch not taken"
                p.meta = {**meta, "config": cfg}
                n += 1
                break
    return n


def table_sources(table: Path, dest: Path) -> dict[Path, str]:
    """The rows of a table of KernelBench candidates (read as `kernelmill audit` reads one:
    `id`, `ref_code`, `custom_code`, as ../shared/external/cuda-l1/kernels.jsonl) as
    `<dest>/<id>.py` files, each with its reference: {file: ref_code}. The files stay (the
    pairs' origins name them; a re-run resumes). A bad row raises ValueError naming its line."""
    from ...audit.sources import read_table
    dest.mkdir(parents=True, exist_ok=True)
    out: dict[Path, str] = {}
    for row in read_table(table):
        path = dest / f"{row.row_id}.py"
        if not path.exists() or path.read_text(encoding="utf-8") != row.code:
            path.write_text(row.code, encoding="utf-8")
        out[path] = row.task_code
    return out


class TaskConfigurer:
    """`build_pairs`' `configure` hook: a Python candidate whose task is known is traced once (in
    the sandbox, on the CPU) and its launches configure its pairs; other files are left alone.
    `errors` keeps why a trace failed, by file."""

    def __init__(self, tasks: dict[Path, str], timeout: float = 180.0):
        self.tasks = {Path(k).resolve(): v for k, v in tasks.items()}
        self.timeout = timeout
        self.traces: dict[Path, dict] = {}
        self.errors: dict[str, str] = {}

    def __call__(self, path: Path, pairs: list[Pair]) -> None:
        key = Path(path).resolve()
        ref = self.tasks.get(key)
        if ref is None or not any((p.meta or {}).get("status") == "ok" for p in pairs):
            return
        if key not in self.traces:
            self.traces[key] = trace_candidate(key.read_text(encoding="utf-8"), ref, self.timeout)
            if self.traces[key].get("error"):
                self.errors[str(path)] = self.traces[key]["error"]
        attach_configs(pairs, self.traces[key])
