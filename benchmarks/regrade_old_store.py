"""`kernelmill regrade` on a store made by an older kernelmill (issue 43).

Exports our own guard corpora (tests/guards: the hostile and honest candidates with their
tasks, plus the runtime-hook candidates) as a tasks folder and a samples table, verifies them
with the code of OLD_COMMIT (a git worktree, run on this machine's Python) into a result store,
then regrades that store with the installed kernelmill and writes what changed.

    python benchmarks/regrade_old_store.py a6f4b7b --out docs/results/issue43/regrade_cpu

The store of the old code is kept in --out (old.sqlite) so the regrade can be run again."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def export(dest: Path) -> int:
    """tasks/<task_id>.py and samples.jsonl from the guard corpora; returns the sample count."""
    sys.path.insert(0, str(ROOT / "tests" / "guards"))
    hostile = _load(ROOT / "tests" / "guards" / "hostile_corpus.py", "hostile_corpus")
    honest = _load(ROOT / "tests" / "guards" / "honest_corpus.py", "honest_corpus")
    hooks = _load(ROOT / "tests" / "guards" / "test_runtime_hooks.py", "runtime_hooks")
    rows, tasks = [], {}
    for kind, table in (("hostile", hostile.HOSTILE), ("honest", honest.HONEST)):
        for name, entry in table.items():
            task, language, code = entry[0], entry[1], entry[2]
            tasks[task.task_id] = task.code
            rows.append({"sample_id": f"{kind}_{name}", "task_id": task.task_id, "language": language,
                         "code": code, "meta": {"corpus": kind}})
    tasks["hooks/relu"] = hooks.TASK
    for name, (code, flag) in hooks.CASES.items():
        rows.append({"sample_id": f"hooks_{name}", "task_id": "hooks/relu", "language": "torch", "code": code,
                     "meta": {"corpus": "hostile" if flag else "honest"}})
    for task_id, code in tasks.items():
        path = dest / "tasks" / f"{task_id}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code, encoding="utf-8")
    with open(dest / "samples.jsonl", "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    return len(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old_commit", help="the older kernelmill's commit (e.g. a6f4b7b: before issues 39 and 42)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--keep-store", action="store_true", help="reuse --out/old.sqlite if it is there")
    args = ap.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    n = export(out)
    print(f"{n} samples exported to {out}", flush=True)
    store = out / "old.sqlite"
    if not (args.keep_store and store.exists()):
        tree = Path(os.environ.get("TMPDIR", "/tmp")) / f"kernelmill-{args.old_commit}"
        if not tree.exists():
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), args.old_commit],
                           check=True)
        env = {**os.environ, "PYTHONPATH": str(tree / "src")}
        t0 = time.perf_counter()
        rc = subprocess.run([sys.executable, "-m", "kernelmill", "verify", str(out / "tasks"), str(out / "samples.jsonl"),
                             "-o", str(out / "old.verdicts.jsonl"), "--device", args.device, "--store", str(store)],
                            env=env, cwd=tree).returncode
        print(f"old code ({args.old_commit}): exit {rc}, {time.perf_counter() - t0:.0f} s", flush=True)
    t0 = time.perf_counter()
    rc = subprocess.run([sys.executable, "-m", "kernelmill", "regrade", str(store), "-o", str(out / "regrade"),
                         "--samples", str(out / "samples.jsonl"), "--tasks", str(out / "tasks")]).returncode
    print(f"regrade: exit {rc}, {time.perf_counter() - t0:.0f} s", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
