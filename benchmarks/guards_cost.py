"""Cost of the reward-hacking guards: seconds per candidate with guards off,
standard and strict, on the builtin suite's correct candidates.

Each level verifies the same candidates with a fresh store and its own cache
directory; built extensions are shared through a warm-up pass first, so the
figures compare the run phase (checking, timing, the guards), not compilation.

    python benchmarks/guards_cost.py --device cuda --languages cuda,triton,torch --json $OUT/guards.json
    python benchmarks/guards_cost.py --device cpu --languages torch,cpp
    python benchmarks/guards_cost.py --device cuda --levels strict --json J --work W --resume   # go on from a cut run
    python benchmarks/guards_cost.py --device cuda --levels off,standard:file,standard:auto   # CUDA IPC against files
    python benchmarks/guards_cost.py --device cuda --corpus kernelbench --languages torch --levels standard:file,standard:auto
        # issue 14's corpus (benchmarks/corpus_llm): its correct torch candidates on KernelBench's
        # problems, 32-256 MB of inputs each, where the exchange's cost shows; nothing to build

A level is a guard setting with an optional ":file" or ":auto" (`VerifyConfig.exchange`:
tensors through files, or through CUDA IPC where they fit; without one, ":auto", the default of `kernelmill verify`).

Prints a table; results go in docs/benchmarks.md by hand with the machine and date.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from kernelmill.records import Sample
from kernelmill.tasks import load_tasks
from kernelmill.tasks.builtin import builtin_samples
from kernelmill.verify import VerifyConfig, verify_samples
from kernelmill.verify.devices import device_name


def _median(xs):
    return statistics.median(xs) if xs else None


def _row(v) -> dict:
    """What the level's figures need of one verdict (kept in the JSON, so a cut level resumes)."""
    ph = {k: t for k, t in v.phases.items() if isinstance(t, (int, float))}
    return {"sample": v.sample_id, "status": v.status, "flags": list(v.flags), "phases": ph,
            "exchange": str((v.measurement or {}).get("exchange"))}


def _per_candidate(rows: list[dict]) -> dict:
    """Medians of what each candidate's verdict says it took (a level cut short still has them)."""
    run_s = [r["phases"].get("run_wall_s", 0.0) for r in rows]
    san_s = [r["phases"].get("sanitize_s", 0.0) for r in rows]
    return {"done": len(rows), "median_run_phase_s": _median(run_s), "median_sanitize_s": _median(san_s),
            "median_run_and_sanitize_s": _median([r + s for r, s in zip(run_s, san_s)]),
            # which candidates landed and what each took: a cut level's medians are over these only
            # (session_2026-11-30e: strict's 18 of 25, the 7 left not named)
            # and how long its timing waited for the GPU (strict's three 122-124 s runs beside racecheck's 120-s
            # runs, session_2026-11-30g, could not be told apart from the candidates' own time without it)
            "each": [{"sample": r["sample"], "status": r["status"], "run_wall_s": round(a, 2), "sanitize_s": round(b, 2),
                      "timing_lock_wait_s": round(r["phases"].get("timing_lock_wait_s", 0.0), 2)}
                     for r, a, b in zip(rows, run_s, san_s)]}


def run_level(level: str, tasks, samples, device: str, cache: Path, trials: int, partial=None,
              done: list[dict] | None = None, wall_before: float = 0.0) -> dict:
    """One level's figures; `partial(dict)` after each verdict, so a level cut off by a device
    call's limit (strict's sanitizer takes tens of seconds a CUDA candidate) still reports
    what each candidate it finished took. `done`: rows of a cut run of this level (`--resume`):
    their candidates are not verified again, and the level's wall time adds `wall_before`."""
    guards, _, exchange = level.partition(":")
    cfg = VerifyConfig(device=device, trials=trials, guards=guards, cache_dir=str(cache), exchange=exchange or "auto")
    rows = list(done or [])
    seen = {r["sample"] for r in rows}
    todo = [s for s in samples if s.sample_id not in seen]
    t0 = time.perf_counter()

    def on_verdict(v) -> None:
        rows.append(_row(v))
        if partial is not None:
            partial({"level": level, "partial": True, "wall_s_so_far": round(wall_before + time.perf_counter() - t0, 1),
                     "rows": rows, **_per_candidate(rows)})

    if todo:
        verify_samples(tasks, todo, cfg, on_verdict=on_verdict)
    wall = wall_before + time.perf_counter() - t0
    run_s = [r["phases"].get("run_wall_s", 0.0) for r in rows]  # the run process, start-up included
    guard_s = [sum(t for k, t in r["phases"].items() if k.startswith("guard_") and k.endswith("_s")) for r in rows]
    return {
        "level": level, "candidates": len(rows), "wall_s": wall, "s_per_candidate": wall / len(rows),
        "resumed_from": len(done or []), **_per_candidate(rows), "median_guard_overhead_s": statistics.median(guard_s),
        "median_phases_s": {k: round(statistics.median(r["phases"].get(k, 0.0) for r in rows), 3)
                            for k in sorted({k for r in rows for k in r["phases"]})},
        "exchange": sorted({r["exchange"] for r in rows}),
        "guard_share_median": _median([g / r for g, r in zip(guard_s, run_s) if r > 0]),
        "statuses": {s: sum(r["status"] == s for r in rows) for s in {r["status"] for r in rows}},
        "flags": sorted({f for r in rows for f in r["flags"]}),
    }


def corpus_samples(part: str, langs: set[str], device: str, folder: Path):
    """Correct candidates of benchmarks/corpus_llm in `langs` that run on `device`, and a task
    folder holding their tasks (ids as benchmarks/vs_kernelbench.py gives them)."""
    import vs_kernelbench as vk  # beside this file; it knows the corpus and its task files

    cands = [c for c in vk.corpus_check.load_corpus() if c.expect == "ok" and c.language in langs
             and c.runs_on(device) and (part == "all" or c.task.startswith(part + "/"))]
    if not cands:
        raise SystemExit(f"no correct {','.join(sorted(langs))} candidates of the corpus run on {device} ({part})")
    # KernelBench's folder: KERNELBENCH_DIR (on the device, a carried copy such as .kb), else ../shared's
    vk.write_task_folder(cands, folder, Path(os.environ.get("KERNELBENCH_DIR") or vk.DEFAULT_KERNELBENCH))
    samples = [Sample(sample_id=c.name, task_id=c.task_id, language=c.language, code=c.path.read_text(encoding="utf-8"))
               for c in cands]
    return load_tasks(str(folder)).by_id(), samples


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--languages", default="torch,cpp")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=1, help="repeat each level (levels interleaved)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--levels", default="off,standard,strict",
                    help="comma-separated guard levels, each with an optional :file (exchange through files)")
    ap.add_argument("--work", type=Path, help="folder for the caches (default: a new temporary one); the same folder "
                                              "across calls keeps the built extensions, as --resume wants")
    ap.add_argument("--resume", action="store_true",
                    help="go on from --json's file: its finished levels are kept, a level cut off goes on from the "
                         "candidates it finished (a device call's limit; compare timings on one warm machine only)")
    ap.add_argument("--corpus", choices=["builtin", "kernelbench", "all"],
                    help="take the correct candidates of benchmarks/corpus_llm instead of the builtin suite's: "
                         "those on builtin tasks, on KernelBench's problems, or all")
    args = ap.parse_args(argv)
    results, cut = [], None
    if args.resume:
        if args.json is None or not args.json.exists():
            ap.error(f"--resume: no {args.json or '--json FILE'} to go on from")
        try:
            old = json.loads(args.json.read_text())
            results, cut = list(old["results"]), old.get("in_progress")
            if cut is not None and "rows" not in cut:
                raise KeyError("in_progress.rows (written by an older guards_cost.py)")
        except (ValueError, KeyError, TypeError) as exc:
            ap.error(f"--resume: {args.json} is not a guards_cost.py result to go on from ({exc})")
    langs = set(args.languages.split(","))
    root = args.work or Path(tempfile.mkdtemp(prefix="guards-cost-"))
    root.mkdir(parents=True, exist_ok=True)
    if args.corpus:
        tasks, samples = corpus_samples(args.corpus, langs, args.device, root / "tasks")
    else:
        samples = [s for s in builtin_samples() if s.meta.get("expect") == "ok" and s.language in langs]
        tasks = load_tasks("builtin").by_id()
    os.environ.setdefault("KERNELMILL_CACHE", str(root / "shared"))
    # warm the extension cache once, so compilation is not part of any level's figure
    # (torch candidates build nothing: no warm-up pass for them)
    if langs - {"torch"}:
        verify_samples(tasks, samples, VerifyConfig(device=args.device, trials=1, time=False, guards="off",
                                                    cache_dir=str(root / "warm")))
    print(f"device: {device_name(args.device)}; {len(samples)} candidates ({','.join(sorted(langs))}), "
          f"{args.trials} trials", flush=True)
    print(f"{'level':10} {'s/candidate':>12} {'run phase (median s)':>22} {'guard overhead (median s)':>26}  statuses")
    def write(extra: dict | None = None) -> None:
        if args.json:
            args.json.write_text(json.dumps({"device": device_name(args.device), "results": results,
                                             **({"in_progress": extra} if extra else {})}, indent=2))

    finished = {(res["level"], res.get("repeat", 0)) for res in results}
    for r in range(args.repeat):
        for level in args.levels.split(","):
            if (level, r) in finished:
                continue
            cache = root / "warm"  # same extension cache; no store, so every candidate runs
            ahead = cut if cut is not None and (cut["level"], cut.get("repeat", 0)) == (level, r) else None
            res = run_level(level, tasks, samples, args.device, cache, args.trials,
                            partial=lambda d, r=r: write(d | {"repeat": r}),
                            done=ahead["rows"] if ahead else None,
                            wall_before=ahead["wall_s_so_far"] if ahead else 0.0) | {"repeat": r}
            results.append(res)
            # each level as it finishes, so a run cut off by a time limit still reports
            print(f"{res['level']:10} {res['s_per_candidate']:12.2f} {res['median_run_phase_s']:22.3f} "
                  f"{res['median_guard_overhead_s']:26.3f}  {res['statuses']} {res['flags']} "
                  f"exchange={res['exchange']} guard share (median)={res['guard_share_median']}")
            print(f"{'':10} median phases: {res['median_phases_s']}", flush=True)
            write()


if __name__ == "__main__":
    main()
