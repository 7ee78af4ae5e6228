"""The compiled baseline's cost and figures (issue 17): the builtin suite's
correct candidates of a few tasks verified twice, without and with
`--compile-baseline`, on one device; per task the compile time, the compiled
reference's speedup over eager, and each candidate's two speedups.

    export PYTHONPATH=$PWD/src
    python benchmarks/compiled_baseline.py --device cuda --tasks 8 --out $OUT/compiled_baseline.json
    python benchmarks/compiled_baseline.py --device cpu --tasks 2 --languages torch

Writes one JSON file (the table's rows, both runs' wall times, every verdict
with the compiled baseline) and prints a table. Each run has its own cache
folder and no store, so nothing is shared between the two runs.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from kernelmill.records import to_dict
from kernelmill.tasks import load_tasks
from kernelmill.tasks.builtin import builtin_samples
from kernelmill.verify import VerifyConfig, verify_samples
from kernelmill.verify.devices import device_name


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tasks", type=int, default=8, help="the first N level-1 tasks with correct candidates")
    ap.add_argument("--languages", default="torch,cuda,triton")
    ap.add_argument("--mode", default="default", help="torch.compile mode")
    ap.add_argument("--out", type=Path, required=True, help="JSON file to write")
    args = ap.parse_args()

    langs = set(args.languages.split(","))
    ok = [s for s in builtin_samples() if s.meta["expect"] == "ok" and s.language in langs
          and s.task_id.startswith("level1/")]
    task_ids = sorted({s.task_id for s in ok})[: args.tasks]
    samples = [s for s in ok if s.task_id in task_ids]
    tasks = load_tasks("builtin").by_id()
    runs = {}
    for on in (False, True):
        with tempfile.TemporaryDirectory(prefix="km-compiled-") as cache:
            config = VerifyConfig(device=args.device, trials=2, cache_dir=cache, compile_baseline=on,
                                  compile_mode=args.mode)
            t0 = time.perf_counter()
            verdicts = verify_samples(tasks, samples, config, store=None)
            runs["with" if on else "without"] = {"wall_s": round(time.perf_counter() - t0, 2), "verdicts": verdicts}
    rows = []
    for v in runs["with"]["verdicts"]:
        rec = (v.measurement or {}).get("compiled_reference") or {}
        rows.append({"sample_id": v.sample_id, "status": v.status, "speedup": v.speedup,
                     "speedup_compiled": v.speedup_compiled, "ref_runtime_ms": v.ref_runtime_ms,
                     "ref_compiled_runtime_ms": v.ref_compiled_runtime_ms, "compile_s": rec.get("compile_s"),
                     "compiled_over_eager": rec.get("speedup_over_eager"), "measured": rec.get("measured"),
                     "error": rec.get("error"), "flags": v.flags})
    print(f"{device_name(args.device)}: {len(samples)} candidates of {len(task_ids)} tasks; "
          f"wall {runs['without']['wall_s']} s without, {runs['with']['wall_s']} s with --compile-baseline")
    print(f"{'sample':58} {'status':8} {'speedup':>8} {'vs comp':>8} {'c/eager':>8} {'compile_s':>9}")
    for r in rows:
        f = lambda x, w=8: f"{x:{w}.3f}" if isinstance(x, (int, float)) else f"{'-':>{w}}"
        print(f"{r['sample_id'][:58]:58} {r['status']:8} {f(r['speedup'])} {f(r['speedup_compiled'])} "
              f"{f(r['compiled_over_eager'])} {f(r['compile_s'], 9)}  {r['error'] or ''}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "device": device_name(args.device), "tasks": task_ids, "mode": args.mode,
        "wall_s": {k: r["wall_s"] for k, r in runs.items()}, "rows": rows,
        "verdicts": [to_dict(v) for v in runs["with"]["verdicts"]]}, indent=1, default=float))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
