"""The test suite's time as a contributor meets it (issue 45, target 6: <= 15 minutes on
the 2-core CI machine): the README's test command in a fresh clone, with its wall time,
its CPU time (every process of the run), the machine's load while it ran, and each test
file's wall and CPU time (benchmarks/suite_time_plugin.py).

    python benchmarks/suite_time.py --out docs/results/issue45/run1
    python benchmarks/suite_time.py --out DIR --write-weights   # also refresh tests/file_weights.json
    python benchmarks/suite_time.py --summarize DIR               # the tables again, from DIR's files

By default the clone's `src/` is put first on PYTHONPATH instead of running the
README's `pip install -e .` (which would point this environment's kernelmill at the
temporary clone); `--install` runs the README's command as written. `CI=true` is set,
as the CI runner sets it. The load is sampled every 30 s: a figure taken beside other
work measures the machine, not the suite (the CPU time does not depend on it).

`--write-weights` writes each file's wall time to tests/file_weights.json, which
tests/conftest.py uses to hand the longest files out first under pytest-xdist."""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PLUGIN_DIR = Path(__file__).resolve().parent


def readme_test_command(readme: Path) -> str:
    """The README's test command: the line of its first ```bash block that runs pytest."""
    text = readme.read_text(encoding="utf-8")
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            if "pytest" in line and not line.lstrip().startswith("#"):
                return re.sub(r"\s+#\s.*$", "", line).strip()
    raise SystemExit(f"{readme}: no ```bash line that runs pytest")


def _loads(stop: threading.Event, samples: list) -> None:
    while not stop.wait(30.0):
        samples.append([round(time.time()), *os.getloadavg()])


def run(out: Path, install: bool, keep: bool, extra: list[str]) -> dict:
    work = Path(tempfile.mkdtemp(prefix="km-suite-"))
    clone = work / "kernelmill"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    commit = subprocess.run(["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    command = readme_test_command(clone / "README.md")
    if not install:  # the pytest part only, with the clone's source first on the path
        command = command[command.index("python -m pytest"):] if "python -m pytest" in command else command
    command += " -p suite_time_plugin -p no:cacheprovider " + " ".join(extra)
    env = {**os.environ, "CI": "true", "SUITE_TIME_OUT": str(out / "tests")}
    env["PYTHONPATH"] = os.pathsep.join([str(PLUGIN_DIR)] + ([] if install else [str(clone / "src")])
                                        + [p for p in [os.environ.get("PYTHONPATH")] if p])
    for old in out.glob("tests-*.jsonl"):
        old.unlink()
    print(f"suite_time: {commit} in {clone}\n  {command}", flush=True)
    stop, loads = threading.Event(), [[round(time.time()), *os.getloadavg()]]
    sampler = threading.Thread(target=_loads, args=(stop, loads), daemon=True)
    sampler.start()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    with open(out / "pytest.log", "w", encoding="utf-8") as log:
        rc = subprocess.run(["bash", "-c", command], cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    stop.set()
    tail = (out / "pytest.log").read_text(encoding="utf-8", errors="replace").strip().splitlines()
    run_info = {"commit": commit, "command": command, "exit": rc, "wall_s": round(wall, 1),
                "cpu_user_s": round(after.ru_utime - before.ru_utime, 1),
                "cpu_sys_s": round(after.ru_stime - before.ru_stime, 1), "cores": os.cpu_count(),
                "result": tail[-1] if tail else "", "loads": loads, "date": time.strftime("%Y-%m-%d %H:%M")}
    (out / "run.json").write_text(json.dumps(run_info, indent=1), encoding="utf-8")
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    return run_info


def per_file(out: Path) -> list[dict]:
    files: dict[str, dict] = defaultdict(lambda: {"tests": 0, "wall_s": 0.0, "cpu_s": 0.0})
    # a run's own files, or the same gzipped (tests-gw0.jsonl.gz) as docs/results keeps them
    for path in sorted([*out.glob("tests-*.jsonl"), *out.glob("tests-*.jsonl.gz")]):
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        for line in raw.decode("utf-8").splitlines():
            row = json.loads(line)
            name = row["id"].split("::")[0]
            if name == "<start>":
                name = f"<start: {path.name.split('.')[0]}>"  # the worker's start and collection
            f = files[name]
            f["tests"] += row["id"] != "<start>"
            f["wall_s"] += row.get("wall", 0.0)
            f["cpu_s"] += row["cpu_self"] + row["cpu_children"]
    rows = [{"file": k, **{m: round(v, 1) if isinstance(v, float) else v for m, v in f.items()}} for k, f in files.items()]
    return sorted(rows, key=lambda r: -r["cpu_s"])


def report(out: Path, top: int = 30) -> str:
    info = json.loads((out / "run.json").read_text(encoding="utf-8"))
    files = per_file(out)
    cpu = info["cpu_user_s"] + info["cpu_sys_s"]
    loads = [l[1] for l in info["loads"]]
    lines = [f"# Test suite time: {info['commit']}, {info['date']}", "",
             f"`{info['command']}` (CI=true, a fresh clone), {info['cores']} cores", "",
             "| figure | value |", "|---|---|",
             f"| wall | **{info['wall_s']:.0f} s ({info['wall_s'] / 60:.1f} min)** |",
             f"| CPU, every process (user + system) | {cpu:.0f} s ({cpu / max(info['wall_s'], 1e-9):.0%} of one core) |",
             f"| 1-minute load while it ran | {min(loads):.1f} to {max(loads):.1f} (median "
             f"{sorted(loads)[len(loads) // 2]:.1f}) |",
             f"| result | {info['result']} (exit {info['exit']}) |", "",
             f"The {top} test files that took the most CPU (a module fixture counts in its first test; "
             "`<start: ...>`: a worker's start and collection):", "",
             "| file | tests | wall s | CPU s |", "|---|---|---|---|"]
    lines += [f"| {r['file']} | {r['tests']} | {r['wall_s']} | {r['cpu_s']} |" for r in files[:top]]
    rest = files[top:]
    lines.append(f"| {len(rest)} other files | {sum(r['tests'] for r in rest)} | "
                 f"{sum(r['wall_s'] for r in rest):.0f} | {sum(r['cpu_s'] for r in rest):.0f} |")
    text = "\n".join(lines) + "\n"
    (out / "suite_time.md").write_text(text, encoding="utf-8")
    return text


def write_weights(out: Path) -> Path:
    weights = {r["file"]: r["wall_s"] for r in per_file(out) if not r["file"].startswith("<")}
    path = REPO / "tests" / "file_weights.json"
    path.write_text(json.dumps(dict(sorted(weights.items(), key=lambda kv: -kv[1])), indent=0) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="folder for run.json, pytest.log, tests-*.jsonl and suite_time.md")
    ap.add_argument("--summarize", type=Path, help="only print the tables of an earlier run's folder")
    ap.add_argument("--install", action="store_true", help="run the README's command as written (pip install -e . too)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary clone")
    ap.add_argument("--write-weights", action="store_true", help="write tests/file_weights.json from this run")
    ap.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = ap.parse_args(argv)
    if args.summarize:
        print(report(args.summarize))
        return
    if args.out is None:
        ap.error("--out is needed (or --summarize DIR)")
    args.out.mkdir(parents=True, exist_ok=True)
    args.out = args.out.resolve()
    info = run(args.out, args.install, args.keep, args.pytest_args)
    print(report(args.out))
    if args.write_weights:
        print(f"wrote {write_weights(args.out)}")
    sys.exit(0 if info["exit"] == 0 else 1)


if __name__ == "__main__":
    main()
