"""The calibration table (issue 42): which check catches which plausible wrong kernel, and
which honest control a check flags by mistake.

Checks, each on every kernel of `families.py`:
- ``kb_allclose``: KernelBench's own rule, written here with nothing of kernelmill: 5 trials of
  the task's `get_inputs()` (seeds 0-4), ``torch.allclose(atol=rtol=1e-2)``;
- ``kernelmill``: `verify` with its defaults (guards standard: trials over several input
  distributions, float32 tolerance 1e-4, timed-call checks);
- ``kernelmill_fp64``: the same with the float64 error budget (``--fp64-k 8``);
- ``strict_fp64``: and ``--guards strict`` (its trials add structure-aware draws: a wide
  dynamic range, all non-negative).

    python benchmarks/calibration/run.py [--device cpu] [--json out.json] [--markdown out.md]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import families as F  # noqa: E402


def kb_allclose(task: str, kernel: str, device: str) -> bool:
    """True when KernelBench's rule passes the kernel (its 5 trials all within 1e-2)."""
    import torch

    ns_t, ns_k = {}, {}
    exec(compile(task, "<task>", "exec"), ns_t)
    exec(compile(kernel, "<kernel>", "exec"), ns_k)
    ref, cand = ns_t["Model"]().to(device), ns_k["ModelNew"]().to(device)
    with torch.no_grad():
        for seed in range(5):
            torch.manual_seed(seed)
            inputs = [x.to(device) for x in ns_t["get_inputs"]()]
            r, c = ref(*[x.clone() for x in inputs]), cand(*[x.clone() for x in inputs])
            if c.shape != r.shape or not torch.allclose(c.float(), r.float(), atol=1e-2, rtol=1e-2):
                return False
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--fp64-k", type=float, default=8.0)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", type=Path)
    args = ap.parse_args(argv)

    from kernelmill.records import Sample, Task
    from kernelmill.verify import VerifyConfig, verify_samples

    tasks = {f"cal/{fam}": Task(task_id=f"cal/{fam}", code=F.task_code(fam), name=fam, level=1) for fam in F.TASKS}
    samples = [Sample(f"{fam}/{name}", f"cal/{fam}", "torch", F.kernel_code(fam, body), meta={"kind": kind})
               for fam, name, kind, body in F.KERNELS]
    rows = {s.sample_id: {"family": s.task_id[4:], "kernel": s.sample_id, "kind": s.meta["kind"]} for s in samples}
    t0 = time.perf_counter()
    for s in samples:
        rows[s.sample_id]["kb_allclose"] = kb_allclose(tasks[s.task_id].code, s.code, args.device)
    with tempfile.TemporaryDirectory(prefix="calibration-") as tmp:
        for check, extra in (("kernelmill", {}), ("kernelmill_fp64", {"fp64_k": args.fp64_k}),
                             ("strict_fp64", {"fp64_k": args.fp64_k, "guards": "strict"})):
            cfg = VerifyConfig(device=args.device, time=False, cache_dir=str(Path(tmp) / "cache"), **extra)
            for v in verify_samples(tasks, samples, cfg):
                rows[v.sample_id][check] = v.status == "ok"
                rows[v.sample_id][check + "_why"] = v.message[:160]
    checks = ("kb_allclose", "kernelmill", "kernelmill_fp64", "strict_fp64")
    table = list(rows.values())
    summary = {"seconds": round(time.perf_counter() - t0, 1), "device": args.device,
               "wrong": sum(r["kind"] == "wrong" for r in table), "controls": sum(r["kind"] == "control" for r in table),
               "families": len(F.TASKS)}
    for c in checks:
        summary[f"{c}_caught"] = sum(r["kind"] == "wrong" and not r[c] for r in table)
        summary[f"{c}_false_flags"] = sum(r["kind"] == "control" and not r[c] for r in table)
    lines = ["| family | kernel | kind | " + " | ".join(checks) + " |", "|" + " --- |" * (3 + len(checks))]
    mark = {True: "passes", False: "**caught**"}
    for r in table:
        cells = [mark[r[c]] if r["kind"] == "wrong" else ("ok" if r[c] else "**false flag**") for c in checks]
        lines.append(f"| {r['family']} | {r['kernel'].split('/')[1]} | {r['kind']} | " + " | ".join(cells) + " |")
    lines += ["", f"wrong kernels caught, of {summary['wrong']}: " + ", ".join(f"{c} {summary[c + '_caught']}" for c in checks),
              f"controls flagged, of {summary['controls']}: " + ", ".join(f"{c} {summary[c + '_false_flags']}" for c in checks)]
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n", encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "rows": table}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
