"""KernelBench's harness and kernelmill side by side on the same candidates.

Given a corpus (default benchmarks/corpus_llm/, README there) and a device:

(a) KernelBench: its own `eval_kernel_against_ref`, run the way its batch
    scripts run it: first every candidate through `build_compile_cache` in a
    pool of compile processes (each candidate with its own build directory),
    then one fresh evaluation process per candidate (one at a time per GPU)
    calling `eval_kernel_against_ref(ref_src, candidate_src, seed_num=42,
    num_correct_trials=5, num_perf_trials=100, measure_performance=True,
    timing_method="cuda_event", build_dir=<its build dir>, device=<gpu>,
    backend="triton" for Triton candidates else "cuda", precision=fp32)`.
    Its code is imported at run time from --kernelbench (harness/ and
    harness/stubs/ put on sys.path), never copied. The whole batch is timed.
    KernelBench's eval asserts `torch.cuda.is_available()`, so with
    --device cpu this part is skipped and said so.
(b) kernelmill: `kernelmill verify` in a subprocess on the same candidates
    (a task folder holding builtin/... and kernelbench/... task files, a
    samples JSONL), with --trials 5 (correctness trials) and the guards on
    (--guards standard); the whole run is timed. kernelmill's timing rounds are
    its own (docs/SEMANTICS.md); it has no "100 perf trials" knob.
kernelmill runs first: on a fresh machine it is the side that starts cold (issue 40), and
KernelBench's harness finds the machine warm.
(c) prints and writes JSON (--out) and a Markdown table (--markdown):
    candidates per minute of each, their ratio, and the verdicts compared one
    by one (status ok / incorrect / compile_error / runtime_error / ...,
    speedup), with the candidate's `# expect:` line to say which side is
    right where they differ.

GPU (on the device machine; KernelBench needs pydantic, requests,
python-dotenv, tqdm and numpy, and its folder must be there: give
--kernelbench DIR or KERNELBENCH_DIR when it is not at
../shared/baselines/kernelbench; kernelmill must be installed there too):

    python benchmarks/vs_kernelbench.py --device cuda --out vs_kb.json --markdown vs_kb.md

CPU (kernelmill only, torch and C++ candidates on the builtin tasks' small sizes):

    python benchmarks/vs_kernelbench.py --device cpu --out vs_kb_cpu.json --limit 5

External candidates (issue 40's set): `--external ../shared/external/cuda-l1/kernels.jsonl` takes
a table of rows `id, ref_code, custom_code` instead of --corpus (each row's reference is its
task, under external/<id> in both harnesses; the language is read from the code); a set too
long for one device call is split the same way for both sides with `--part K/N` (every N-th
row from the K-th, in file order):

    python benchmarks/vs_kernelbench.py --external ../shared/external/cuda-l1/kernels.jsonl \
        --part 1/2 --out vs_kb_1.json --markdown vs_kb_1.md

--out is rewritten after every candidate (KernelBench side) and after
kernelmill's run (whose verdicts JSONL next to it is appended per candidate
by kernelmill itself), so an interrupted run loses nothing: --resume skips
what is already there and adds the new wall time to the old.

The parts' files as one comparison (each side's walls summed; refused when the parts mix
devices, trials or kernelmill harness versions):

    python benchmarks/vs_kernelbench.py --combine vs_kb_1of4.json vs_kb_2of4.json ... --markdown all.md
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_CORPUS = HERE / "corpus_llm"
DEFAULT_KERNELBENCH = REPO.parent / "shared" / "baselines" / "kernelbench"


def _load_check():
    """benchmarks/corpus_llm/check.py (headers, task files), loaded by path."""
    import importlib.util

    name = "corpus_llm_check"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, DEFAULT_CORPUS / "check.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


corpus_check = _load_check()
sys.path.insert(0, str(HERE / "diag"))
import lock_events  # noqa: E402 - benchmarks/diag/lock_events.py
from smi_busy import SmiSampler, busy_mean  # noqa: E402 - benchmarks/diag/smi_busy.py

SEED = 42
NUM_CORRECT_TRIALS = 5
NUM_PERF_TRIALS = 100
KB_NEEDS_GPU = ("KernelBench's eval_kernel_against_ref needs a GPU: it asserts torch.cuda.is_available(), "
                "sets the CUDA device and times with CUDA events; with --device cpu only kernelmill runs")


# ------------------------------------------------------------ results file

def load_results(path: Path | None) -> dict:
    if path and path.exists():
        try:
            return json.loads(path.read_text())
        except json.JSONDecodeError:
            pass
    return {}


def save_results(path: Path | None, results: dict) -> None:
    if not path:
        return
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(results, indent=1, default=str))
    os.replace(tmp, path)


# ------------------------------------------------------- KernelBench side

def _kb_import(kb_root: str):
    harness = os.path.join(kb_root, "harness")
    for p in (os.path.join(harness, "stubs"), harness):
        if p not in sys.path:
            sys.path.insert(0, p)
    from kernelbench import eval as kb_eval  # noqa: PLC0415  (KernelBench's own code, imported at run time)

    return kb_eval


def _kb_compile(job: dict) -> dict:
    """One compile-pool task: KernelBench's build_compile_cache on one candidate."""
    t0 = time.perf_counter()
    try:
        kb_eval = _kb_import(job["kb_root"])
        ok, _stdout, err = kb_eval.build_compile_cache(job["custom_src"], verbose=False, build_dir=job["build_dir"])
        return {"name": job["name"], "compiled": bool(ok), "error": err, "seconds": round(time.perf_counter() - t0, 2)}
    except Exception as exc:  # noqa: BLE001
        return {"name": job["name"], "compiled": False, "error": f"{type(exc).__name__}: {exc}",
                "seconds": round(time.perf_counter() - t0, 2)}


def _kb_eval_child(job: dict, out_path: str) -> None:
    """Body of one evaluation process: eval_kernel_against_ref on one candidate;
    writes a JSON result to out_path. stdout/stderr go to job['log']."""
    log = open(job["log"], "w", buffering=1)
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    res: dict = {}
    try:
        import torch

        kb_eval = _kb_import(job["kb_root"])
        device = torch.device(f"cuda:{job['gpu']}")
        r = kb_eval.eval_kernel_against_ref(
            job["ref_src"], job["custom_src"], seed_num=SEED,
            num_correct_trials=job["correct_trials"], num_perf_trials=job["perf_trials"],
            measure_performance=True, timing_method="cuda_event", verbose=False,
            build_dir=job["build_dir"], device=device, backend=job["backend"], precision=torch.float32)
        if r is None:
            res = {"status": "error", "error": "eval_kernel_against_ref returned None (lock-file error during compilation; KernelBench asks for a retry)"}
        else:
            md = {k: str(v) for k, v in (r.metadata or {}).items()}
            res = {"compiled": r.compiled, "correctness": r.correctness, "runtime_us": r.runtime,
                   "ref_runtime_us": r.ref_runtime, "metadata": md}
    except Exception as exc:  # noqa: BLE001
        res = {"status": "error", "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-2000:]}
    Path(out_path).write_text(json.dumps(res, default=str))


def kb_status(r: dict) -> tuple[str, float | None]:
    """KernelBench's result as kernelmill's status words, and its speedup."""
    if "status" in r:
        return r["status"], None
    if not r.get("compiled"):
        return "compile_error", None
    if not r.get("correctness"):
        md = r.get("metadata", {})
        return ("runtime_error" if "runtime_error" in md else "incorrect"), None
    rt, ref = r.get("runtime_us") or -1, r.get("ref_runtime_us") or -1
    return "ok", (ref / rt if rt > 0 and ref > 0 else None)


def kb_preflight(kb_root: Path) -> str | None:
    """Import KernelBench's eval in a throw-away process (this one stays free
    of CUDA); the error text, or None when it imports."""
    code = ("import sys; sys.path[:0] = [sys.argv[1] + '/harness/stubs', sys.argv[1] + '/harness']; "
            "from kernelbench.eval import eval_kernel_against_ref, build_compile_cache")
    if not (kb_root / "harness" / "kernelbench" / "eval.py").is_file():
        return f"no KernelBench harness at {kb_root}/harness/kernelbench/eval.py (give --kernelbench or KERNELBENCH_DIR)"
    p = subprocess.run([sys.executable, "-c", code, str(kb_root)], capture_output=True, text=True)
    if p.returncode != 0:
        tail = [l for l in p.stderr.splitlines() if l.strip()][-1:] or ["?"]
        return f"KernelBench's eval does not import: {tail[0]} (it needs pydantic, requests, python-dotenv, tqdm, numpy)"
    return None


def close_cut_segment(kb: dict) -> None:
    """An earlier run cut at a device call's limit left its time so far in `segments_open`: made a
    segment of its own (marked `cut`), else the next candidate to finish would overwrite it and
    the side's wall would lose it (session 25: 356 s of 22 candidates)."""
    if kb.get("segments_open"):
        kb["segments"].append(dict(kb.pop("segments_open"), cut=True))


def fits_before(stop_at: float, longest: float, now: float) -> bool:
    """Whether an evaluation as long as the longest so far, started now, ends before `stop_at`
    (0: no deadline)."""
    return not stop_at or now + longest <= stop_at


def stale_build_locks(build_root: Path, names: list[str]) -> list[Path]:
    """torch.utils.cpp_extension's build lock files (`lock`, its FileBaton) in the build folders of
    candidates not yet evaluated. Only a process killed mid-build leaves one (a device call's limit
    cutting a run), and every later load_inline of that folder then waits for it forever, as
    KernelBench's eval of cudal1-a100-L3-49 did for 235 s in session 25's resumed call."""
    return sorted(lk for n in names if (build_root / n).is_dir() for lk in (build_root / n).rglob("lock")
                  if lk.is_file())


def still_to_compile(jobs: list[dict], compiled: dict) -> list[dict]:
    """The jobs whose compile is still to run: a resumed side (the next call on the same
    machine) compiled the rest in an earlier call, into a build root that is still there (a
    candidate with nothing to build leaves no folder of its own in it).
    Compiling them again counted KernelBench's compile phase twice (session 26: 63.5 s and
    7.2 s more for 69 and 21 candidates the first call had compiled)."""
    return [j for j in jobs if j["name"] not in compiled or not Path(j["build_dir"]).parent.is_dir()]


def run_kernelbench(cands, args, results: dict, out: Path | None) -> None:
    why = kb_preflight(Path(args.kernelbench))
    if why:
        results["kernelbench_skipped"] = why
        print("kernelbench: " + why, flush=True)
        save_results(out, results)
        return
    kb = results.setdefault("kernelbench", {"compile": {}, "eval": {}, "segments": []})
    close_cut_segment(kb)
    todo = [c for c in cands if c.name not in kb["eval"]]
    if not todo:
        print("kernelbench: nothing left to run", flush=True)
        return
    build_root = Path(args.work) / "kb_build"
    logs = Path(args.work) / "kb_logs"
    build_root.mkdir(parents=True, exist_ok=True)
    logs.mkdir(parents=True, exist_ok=True)
    jobs = []
    for c in todo:
        tf = task_source(c, Path(args.kernelbench), Path(args.work))
        jobs.append({"name": c.name, "kb_root": str(args.kernelbench), "ref_src": tf.read_text(encoding="utf-8"),
                     "custom_src": c.path.read_text(encoding="utf-8"), "build_dir": str(build_root / c.name),
                     "backend": "triton" if c.language == "triton" else "cuda", "log": str(logs / f"{c.name}.log"),
                     "correct_trials": args.correct_trials, "perf_trials": args.perf_trials})
    for lock in stale_build_locks(build_root, [c.name for c in todo]):
        print(f"kernelbench: removed {lock}, left by a process killed at an earlier call's limit", flush=True)
        lock.unlink()
    ctx = mp.get_context("spawn")
    t_start = time.perf_counter()
    # phase 1: the compile pool (KernelBench's batch scripts: build_compile_cache on CPU workers),
    # once per candidate over a set's calls: KernelBench's batch run compiles each once
    compile_jobs = still_to_compile(jobs, kb["compile"])
    if len(compile_jobs) < len(jobs):
        print(f"kernelbench: {len(jobs) - len(compile_jobs)} candidates compiled in an earlier call "
              "(their build folders kept)", flush=True)
    print(f"kernelbench: compiling {len(compile_jobs)} candidates in {args.kb_compile_workers} processes", flush=True)
    with ctx.Pool(args.kb_compile_workers) as pool:
        for r in pool.imap_unordered(_kb_compile, compile_jobs):
            kb["compile"][r["name"]] = r
    t_compiled = time.perf_counter()
    save_results(out, results)
    print(f"kernelbench: compile phase {t_compiled - t_start:.0f} s", flush=True)
    # phase 2: one fresh evaluation process per candidate, one at a time per GPU
    gpus = list(range(args.gpus))
    running: dict[int, tuple] = {}
    queue = list(jobs)
    done = 0
    longest = max((r.get("seconds") or 0.0 for r in kb["eval"].values()), default=0.0)
    while queue or running:
        # an evaluation is started only when the longest one so far would still end before --stop-at:
        # one cut by the call's limit dies inside its build and leaves torch's build lock behind
        # (session 25: cudal1-a100-L3-49 started 20 s before the deadline and needed 53 s)
        if queue and len(running) < len(gpus) and not fits_before(args.stop_at, longest, time.time()):
            print(f"kernelbench: --stop-at within the longest evaluation so far ({longest:.0f} s), "
                  f"{len(queue)} candidates left for --resume", flush=True)
            queue.clear()
        while queue and len(running) < len(gpus):
            gpu = next(g for g in gpus if g not in running)
            job = dict(queue.pop(0), gpu=gpu)
            res_path = Path(args.work) / f"kb_result_{job['name']}.json"
            if res_path.exists():
                res_path.unlink()
            p = ctx.Process(target=_kb_eval_child, args=(job, str(res_path)))
            p.start()
            running[gpu] = (p, job, res_path, time.perf_counter())
        time.sleep(0.05)
        for gpu, (p, job, res_path, t0) in list(running.items()):
            elapsed = time.perf_counter() - t0
            if p.is_alive() and elapsed < args.timeout:
                continue
            if p.is_alive():
                p.kill()
                p.join()
                r = {"status": "timeout", "error": f"ran past {args.timeout:g} s"}
            else:
                p.join()
                r = json.loads(res_path.read_text()) if res_path.exists() else {
                    "status": "error", "error": f"evaluation process died (exit {p.exitcode})"}
            st, sp = kb_status(r)
            r.update({"status": st, "speedup": sp, "seconds": round(elapsed, 2)})
            longest = max(longest, elapsed)
            kb["eval"][job["name"]] = r
            del running[gpu]
            done += 1
            kb["segments_open"] = {"candidates": done, "seconds": round(time.perf_counter() - t_start, 2)}
            save_results(out, results)
            print(f"  kb [{done}/{len(jobs)}] {job['name']}: {st}" + (f" {sp:.2f}x" if sp else "") +
                  (f"  ({r.get('error', '')[:120]})" if r.get("error") else "") + f"  {elapsed:.1f} s", flush=True)
    kb.pop("segments_open", None)
    kb["segments"].append({"candidates": done, "seconds": round(time.perf_counter() - t_start, 2),
                           "compile_seconds": round(t_compiled - t_start, 2)})
    save_results(out, results)


# ------------------------------------------------------- external tables

def load_external(table: Path, work: Path) -> list:
    """The rows of an external table (read as `kernelmill audit` reads it) as corpus candidates:
    `<work>/external/candidates/<id>.py` and their references as
    `<work>/external/tasks/external/<id>.py` (task `external/<id>.py`). A bad row stops the run
    naming the file and line."""
    from kernelmill.audit.sources import AuditSourceError, read_table

    try:
        rows = read_table(table)
    except AuditSourceError as exc:
        raise SystemExit(str(exc)) from None
    cdir, tdir = work / "external" / "candidates", work / "external" / "tasks" / "external"
    cdir.mkdir(parents=True, exist_ok=True)
    tdir.mkdir(parents=True, exist_ok=True)
    out = []
    for row in rows:
        (tdir / f"{row.row_id}.py").write_text(row.task_code, encoding="utf-8")
        (cdir / f"{row.row_id}.py").write_text(row.code, encoding="utf-8")
        out.append(corpus_check.Candidate(name=row.row_id, path=cdir / f"{row.row_id}.py",
                                          task=f"external/{row.row_id}.py", language=row.language, device="cuda",
                                          style=f"external {row.where}", expect=""))
    return out


def task_source(c, kernelbench: Path, work: Path) -> Path:
    """The task file of a candidate: an external row's reference, or the corpus header's task."""
    if c.kind == "external":
        return work / "external" / "tasks" / c.task
    return corpus_check.task_file(c.task, kernelbench / "tasks")


def part_of(cands: list, part: str) -> list:
    """`K/N`: every N-th candidate from the K-th (1-based), in their order."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", part or "")
    if not m or not 1 <= int(m[1]) <= int(m[2]):
        raise SystemExit(f"--part {part!r}: give K/N with 1 <= K <= N, e.g. 1/2")
    k, n = int(m[1]), int(m[2])
    return [c for i, c in enumerate(cands) if i % n == k - 1]


# ---------------------------------------------------------- kernelmill side

class GpuWatch:
    """Beside kernelmill's run, per GPU: every hold of the GPU's lock (`gpulock`'s events file,
    benchmarks/diag/lock_events.py: who held it, shared or for a timing, and what each timing
    waited for) and nvidia-smi's busy share (benchmarks/diag/smi_busy.py). `summary` says, over
    the run's wall, the share of it a timing held each GPU, shared work only, nothing; what the
    timings waited for; and the driver's count of the time kernels ran (issue 40, targets 3 and 5).
    Nothing is written where no GPU is visible."""

    def __init__(self, gpus: int):
        from kernelmill.verify.devices import physical_gpu
        from kernelmill.verify.measure.gpulock import lock_path

        self.watched: list[tuple[int, Path, SmiSampler]] = []
        for g in range(gpus):
            # a run worker sees its one GPU as "cuda" under CUDA_VISIBLE_DEVICES=<that GPU> (runner._visible)
            lock = lock_path("cuda", {**os.environ, "CUDA_VISIBLE_DEVICES": physical_gpu(g)})
            if lock is not None:
                self.watched.append((g, lock_events.start(lock), SmiSampler(g)))
        self.t0 = time.monotonic()

    def summary(self, raw: Path | None = None) -> dict:
        """The summary per GPU; with `raw`, every hold (times from the run's start) and
        nvidia-smi sample also go to that JSON file, for a timeline."""
        t1 = time.monotonic()
        out, kept = {}, {}
        for g, events, smi in self.watched:
            holds = lock_events.read(events, stop=True)
            lend = lock_events.read_lend(events, stop=True)
            samples = smi.stop()
            out[str(g)] = {"lock": lock_events.summarize(holds, self.t0, t1), **busy_mean(samples, self.t0, t1),
                           "smi_by_state": lock_events.busy_by_state(holds, samples, self.t0, t1),
                           "lend": {k: v for k, v in lend.items() if k != "lines"}}
            kept[str(g)] = {"holds": [[h.pid, int(h.exclusive), h.label, round(h.asked - self.t0, 4),
                                       round(h.held - self.t0, 4), round(h.let_go - self.t0, 4), int(h.acquired)]
                                      for h in holds],
                            "smi": [[round(t - self.t0, 3), u] for t, u in samples],
                            "lend_notes": lend.get("lines", [])}
        if raw is not None:
            raw.write_text(json.dumps({"wall_s": round(t1 - self.t0, 4), "hold_fields": list(lock_events.Hold._fields),
                                       "gpus": kept}))
        return out


def gpu_lines(gpus: dict) -> list[str]:
    """The markdown lines of `GpuWatch.summary`s (several segments: the last one's)."""
    out = []
    for g, w in sorted(gpus.items()):
        lock = w.get("lock") or {}
        cover = lock.get("cover") or {}
        waits = lock.get("timing_waits_s") or {}
        top = ", ".join(f"{k} {v:.1f} s" for k, v in waits.items() if k != "total")
        out.append(f"- GPU {g}: a timing held it {100 * cover.get('timing', 0):.0f}% of kernelmill's wall, shared work only "
                   f"{100 * cover.get('shared_only', 0):.0f}%, nothing {100 * (1 - cover.get('any', 0)):.0f}%; "
                   f"{lock.get('timings', 0)} timings waited {waits.get('total', 0):.1f} s" + (f" (held meanwhile: {top})" if top else "")
                   + ("; held alone: " + ", ".join(f"{k} {v:.1f} s" for k, v in list(lock["alone_s"].items())[:4])
                      if lock.get("alone_s") else "")
                   + (f"; nvidia-smi busy {w['smi_util_mean']}% ({w['smi_samples']} samples)" if w.get("smi_util_mean") is not None else "")
                   + ("; busy while " + ", ".join(f"{k.replace('_', ' ')} {v['mean_pct']}%"
                                                   for k, v in (w.get("smi_by_state") or {}).items())
                      if w.get("smi_by_state") else "")
                   + (f"; lent to timings {w['lend']['lent']} times, {w['lend']['lent_s']:.1f} s (seen {w['lend']['seen']}, "
                      f"nothing to lock {w['lend']['nothing']}, refused {w['lend']['refused']}"
                      + (" (driver answers " + ", ".join(f"{a}: {n}" for a, n in w['lend']['refused_answers'].items()) + ")"
                         if w['lend'].get('refused_answers') else "")
                      + (f", errors {len(w['lend']['errors'])}" if w['lend'].get('errors') else "") + ")"
                      if w.get("lend") else ""))
    return out


def gpu_count() -> int:
    try:
        import torch

        return torch.cuda.device_count()
    except Exception:  # noqa: BLE001
        return 0


def kernelmill_command() -> list[str]:
    exe = shutil.which("kernelmill")
    return [exe] if exe else [sys.executable, "-m", "kernelmill"]


def write_task_folder(cands, dest: Path, kernelbench: Path, work: Path) -> None:
    """builtin/<level>/<file>, kernelbench/<level>/<file> and external/<id>: task ids are the
    header's task path without .py."""
    for c in cands:
        src = task_source(c, kernelbench, work)
        target = dest / (c.task if c.task.endswith(".py") else c.task + ".py")
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)


def read_verdicts(path: Path) -> dict[str, dict]:
    out: dict[str, dict] = {}
    if not path.exists():
        return out
    from kernelmill.records import read_bytes  # a verdicts file, gzip-compressed or not

    for line in read_bytes(path).decode("utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and "sample_id" in row:
            out[row["sample_id"]] = row
    return out


def run_kernelmill(cands, args, results: dict, out: Path | None) -> None:
    km = results.setdefault("kernelmill", {"segments": [], "verdicts": {}})
    verdicts_path = Path(km.get("verdicts_file") or (out.with_suffix(".verdicts.jsonl") if out else Path(args.work) / "verdicts.jsonl"))
    km["verdicts_file"] = str(verdicts_path)
    have = read_verdicts(verdicts_path)
    todo = [c for c in cands if c.name not in have]
    if todo:
        tasks = Path(args.work) / "km_tasks"
        write_task_folder(cands, tasks, Path(args.kernelbench), Path(args.work))
        samples = Path(args.work) / "km_samples.jsonl"
        with open(samples, "w", encoding="utf-8") as f:
            for c in todo:
                f.write(json.dumps({"sample_id": c.name, "task_id": c.task_id, "language": c.language,
                                    "code": c.path.read_text(encoding="utf-8"), "meta": {"style": c.style}}) + "\n")
        cmd = kernelmill_command() + ["verify", str(tasks), str(samples), "--out", str(verdicts_path), "--device", args.device,
                                      "--trials", str(args.correct_trials), "--guards", args.guards,
                                      "--store", str(Path(args.work) / "km_store.sqlite"), *args.kernelmill_arg]
        env = dict(os.environ)
        if not args.warm_cache:
            env["KERNELMILL_CACHE"] = str(Path(args.work) / "km_cache")  # cold: a fresh build cache
        if args.prepare_headers:
            km["prepare_headers"] = prepare_headers([c.path.read_text(encoding="utf-8") for c in todo], env,
                                                    apart="--no-merge-units" in args.kernelmill_arg, samples=samples)
        print("$ " + " ".join(cmd), flush=True)
        watch = GpuWatch(gpu_count()) if args.gpu_watch and args.device == "cuda" else None
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env)
        try:
            rc = proc.wait(timeout=(max(1.0, args.stop_at - time.time()) if args.stop_at else None))
        except subprocess.TimeoutExpired:
            # the call's deadline: kernelmill stops as on Ctrl-C (verdicts so far are in its
            # output; a --resume run verifies the rest), and the time it ran is counted
            proc.send_signal(signal.SIGINT)
            try:
                rc = proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = proc.wait()
            print("kernelmill: stopped at --stop-at; run again with --resume", flush=True)
        secs = time.perf_counter() - t0
        got = read_verdicts(verdicts_path)
        km["segments"].append({"candidates": len([c for c in todo if c.name in got]), "submitted": len(todo),
                               "seconds": round(secs, 2), "exit": rc})
        if watch is not None:
            km["segments"][-1]["gpus"] = watch.summary(
                Path(f"{out}.gpuwatch{len(km['segments'])}.json") if out is not None else None)
            print("\n".join(gpu_lines(km["segments"][-1]["gpus"])), flush=True)
        print(f"kernelmill verify: exit {rc}, {secs:.0f} s for {len(todo)} candidates", flush=True)
    for name, v in read_verdicts(verdicts_path).items():
        km["verdicts"][name] = {k: v.get(k) for k in ("status", "speedup", "speedup_ci", "flags", "message", "runtime_ms",
                                                      "ref_runtime_ms", "task_id", "harness_version") if k in v}
    save_results(out, results)


def prepare_headers(codes: list[str], env: dict, apart: bool = False, samples: Path | None = None) -> dict:
    """Prepare the build cache kernelmill's run will use, as a user does once per machine:
    `kernelmill prepare-builds SAMPLES` (the precompiled headers of the samples' flag sets
    and the binding objects of their signature lists); with `apart` (unit merging off), the
    headers for that mode by `verify/build/build_prepare.py` directly. Returns its report and the
    seconds it took."""
    from kernelmill.verify.build.build_prepare import run_specs
    from kernelmill.verify.config import default_cache_dir

    specs = run_specs(codes, min_uses=1)
    cache = env.get("KERNELMILL_CACHE") or str(default_cache_dir())
    # (build_prepare names the GPUs' architectures as the builds' environment does; before
    # the twelfth session it did not, and the "prepared" runs' headers were never used)
    build = str(Path(cache) / "build")
    if samples is not None and not apart:
        cmd = kernelmill_command() + ["prepare-builds", str(samples)]
    else:
        cmd = [sys.executable, "-m", "kernelmill.verify.build.build_prepare", build, "--specs", json.dumps(specs)] + (
            ["--apart"] if apart else [])
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    report = {"specs": len(specs), "seconds": round(time.perf_counter() - t0, 2), "exit": r.returncode,
              "command": " ".join(cmd[-2:]), "report": r.stdout.strip()[-2000:], "stderr": r.stderr.strip()[-1000:]}
    print(f"kernelmill: build cache prepared ({' '.join(cmd[-2:])}) for {len(specs)} flag sets in "
          f"{report['seconds']:.0f} s (exit {r.returncode})", flush=True)
    return report


# ------------------------------------------------------------------ report

def _segments(side: dict) -> list[dict]:
    """A side's timed segments, the one a cut run left open included."""
    return (side.get("segments") or []) + ([side["segments_open"]] if side.get("segments_open") else [])


def _rate(segments: list[dict]) -> tuple[int, float, float | None]:
    n = sum(s.get("candidates", 0) for s in segments)
    secs = sum(s.get("seconds", 0.0) for s in segments)
    return n, secs, (60.0 * n / secs if secs > 0 else None)


def _f(x, fmt="{:.2f}"):
    return "-" if x is None else fmt.format(x)


def _crosstab(rows: list[dict]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        cell = out.setdefault(r["kb_status"], {})
        cell[r["km_status"]] = cell.get(r["km_status"], 0) + 1
    return out


def summarize(cands, results: dict) -> tuple[dict, list[dict]]:
    kb = results.get("kernelbench", {})
    km = results.get("kernelmill", {})
    rows = []
    for c in cands:
        k = kb.get("eval", {}).get(c.name)
        m = km.get("verdicts", {}).get(c.name)
        ks, kspd = (k["status"], k.get("speedup")) if k else (None, None)
        ms, mspd = (m.get("status"), m.get("speedup")) if m else (None, None)
        row = {"candidate": c.name, "task": c.task_id, "language": c.language, "expect": c.expect,
               "kb_status": ks, "kb_speedup": kspd, "km_status": ms, "km_speedup": mspd,
               "km_flags": (m or {}).get("flags")}
        if ks and ms:
            row["agree"] = ks == ms
            if ks != ms and c.expect:
                right = [side for side, st in (("kernelbench", ks), ("kernelmill", ms))
                         if (st == "ok") == (c.expect == "ok")]
                row["right_by_expectation"] = right[0] if len(right) == 1 else ("both" if len(right) == 2 else "neither")
        rows.append(row)
    kb_n, kb_s, kb_rate = _rate(_segments(kb))
    km_n, km_s, km_rate = _rate(km.get("segments", []))
    both = [r for r in rows if "agree" in r]
    summary = {"kernelbench": {"candidates": kb_n, "seconds": round(kb_s, 1), "per_minute": kb_rate,
                               "skipped": results.get("kernelbench_skipped")},
               "kernelmill": {"candidates": km_n, "seconds": round(km_s, 1), "per_minute": km_rate},
               "ratio_kernelmill_over_kernelbench": (km_rate / kb_rate if km_rate and kb_rate else None),
               "compared": len(both), "agree": sum(r["agree"] for r in both),
               # KernelBench's status -> kernelmill's -> candidates, for the disagreements to be read by kind
               "statuses": _crosstab(both),
               "kernelmill_as_expected": sum(1 for r in rows if r["expect"] and r["km_status"]
                                             and (r["km_status"] == "ok") == (r["expect"] == "ok")),
               "kernelbench_as_expected": sum(1 for r in rows if r["expect"] and r["kb_status"]
                                              and (r["kb_status"] == "ok") == (r["expect"] == "ok"))}
    return summary, rows


def markdown(summary: dict, rows: list[dict], results: dict) -> str:
    kb, km = summary["kernelbench"], summary["kernelmill"]
    out = [f"# KernelBench's harness vs kernelmill ({results.get('device')}, {results.get('device_name', '')})", ""]
    if results.get("combined_from"):
        out += [f"Parts: {', '.join(str(p) for p in results['parts'])}, kernelmill harness "
                f"{results['harness_version']}; each side's wall is the sum of its parts'.", ""]
    out.append(f"Same candidates, {results.get('correct_trials')} correctness trials; KernelBench {results.get('perf_trials')} "
               f"perf trials (cuda_event), kernelmill its own timing rounds; kernelmill guards: {results.get('guards')}.")
    out.append("")
    out.append("| harness | candidates | wall s | candidates / min |")
    out.append("|---|---|---|---|")
    out.append(f"| KernelBench (batch: compile pool + one eval process per candidate) | {kb['candidates']} | {kb['seconds']} | {_f(kb['per_minute'])} |")
    out.append(f"| kernelmill verify | {km['candidates']} | {km['seconds']} | {_f(km['per_minute'])} |")
    out.append("")
    out.append(f"Ratio (kernelmill / KernelBench candidates per minute): **{_f(summary['ratio_kernelmill_over_kernelbench'])}x**")
    watched = [seg["gpus"] for seg in (results.get("kernelmill") or {}).get("segments", []) if seg.get("gpus")]
    if watched:
        out += ["", "kernelmill's GPUs during its run (--gpu-watch; the last segment):", *gpu_lines(watched[-1])]
    if kb.get("skipped"):
        out.append(f"\nKernelBench not run: {kb['skipped']}")
    out.append(f"\nVerdicts compared: {summary['compared']}, same status: {summary['agree']}; as the corpus expects: "
               f"kernelmill {summary['kernelmill_as_expected']}, KernelBench {summary['kernelbench_as_expected']}.")
    pairs = sorted(((kb_st, km_st, n) for kb_st, cell in (summary.get("statuses") or {}).items()
                    for km_st, n in cell.items()), key=lambda t: -t[2])
    if pairs:
        out.append("KernelBench -> kernelmill: " + ", ".join(f"{a} -> {b} {n}" for a, b, n in pairs) + ".")
    out.append("")
    out.append("| candidate | task | lang | expect | KernelBench | KB speedup | kernelmill | km speedup | same | right (by expect) |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        same = "" if "agree" not in r else ("yes" if r["agree"] else "**no**")
        out.append(f"| {r['candidate']} | {r['task']} | {r['language']} | {r['expect'] or '-'} | {r['kb_status'] or '-'} | {_f(r['kb_speedup'])} | "
                   f"{r['km_status'] or '-'} | {_f(r['km_speedup'])} | {same} | {r.get('right_by_expectation', '')} |")
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------- combine

class _Row:
    """A candidate as a part's results JSON names it (`rows`): enough for `summarize`."""

    def __init__(self, row: dict):
        self.name, self.task_id = row["candidate"], row.get("task")
        self.language, self.expect = row.get("language"), row.get("expect")


def _harness_versions(path: Path, part: dict) -> set[str]:
    km = part.get("kernelmill") or {}
    versions = {v.get("harness_version") for v in (km.get("verdicts") or {}).values() if v.get("harness_version")}
    if not versions:  # a part written before the version was kept: its verdicts file, where it was or beside it
        named = Path(km["verdicts_file"]) if km.get("verdicts_file") else None
        places = [named, path.parent / named.name] if named else []
        found = next((f for f in [*places, path.with_suffix(".verdicts.jsonl")] if f.is_file()), None)
        if found:
            versions = {v.get("harness_version") for v in read_verdicts(found).values() if v.get("harness_version")}
    return versions


def combine(paths: list[Path]) -> tuple[dict, dict, list[dict]]:
    """The parts of one split set (--part K/N runs, each its own --out) as one comparison: each
    side's walls summed, the verdicts side by side. Refused (SystemExit naming the files) when the
    parts do not belong together: another device, other trials or guards, a candidate twice, or
    kernelmill verdicts of more than one harness version (a table never mixes two versions)."""
    parts = []
    for path in paths:
        try:
            parts.append((path, json.loads(path.read_text())))
        except (OSError, json.JSONDecodeError) as exc:
            raise SystemExit(f"--combine: {path}: {exc}") from exc
    for key in ("device_name", "correct_trials", "perf_trials", "guards", "corpus"):
        seen = {str(r.get(key)) for _, r in parts}
        if len(seen) > 1:
            raise SystemExit(f"--combine: the parts differ in {key}: "
                             + ", ".join(f"{p.name}={r.get(key)}" for p, r in parts))
    versions: dict[str, list[str]] = {}
    for path, r in parts:
        for v in _harness_versions(path, r) or {"unknown"}:
            versions.setdefault(v, []).append(path.name)
    if len(versions) != 1 or "unknown" in versions:
        raise SystemExit("--combine: kernelmill's verdicts must come from one harness version: "
                         + "; ".join(f"{v}: {', '.join(f)}" for v, f in sorted(versions.items())))
    merged: dict = {k: parts[0][1].get(k) for k in ("device", "device_name", "corpus", "correct_trials", "perf_trials",
                                                    "guards")}
    merged.update(parts=[r.get("part") for _, r in parts], combined_from=[str(p) for p, _ in parts],
                  harness_version=next(iter(versions)),
                  kernelbench={"eval": {}, "segments": []}, kernelmill={"verdicts": {}, "segments": []})
    cands, seen_names = [], {}
    for path, r in parts:
        for row in r.get("rows") or []:
            if row["candidate"] in seen_names:
                raise SystemExit(f"--combine: {row['candidate']} is in {seen_names[row['candidate']]} and {path.name}")
            seen_names[row["candidate"]] = path.name
            cands.append(_Row(row))
        kb, km = r.get("kernelbench") or {}, r.get("kernelmill") or {}
        merged["kernelbench"]["eval"].update(kb.get("eval") or {})
        merged["kernelbench"]["segments"] += _segments(kb)
        merged["kernelmill"]["verdicts"].update(km.get("verdicts") or {})
        merged["kernelmill"]["segments"] += km.get("segments") or []
    summary, rows = summarize(cands, merged)
    merged["summary"], merged["rows"] = summary, rows
    return merged, summary, rows


# -------------------------------------------------------------------- main

def select(cands, device: str, only: str, limit: int, kind: str):
    chosen = [c for c in cands if c.runs_on(device)]
    if kind != "all":
        chosen = [c for c in chosen if c.kind == kind]
    if only:
        names = [n.strip() for n in only.split(",") if n.strip()]
        known = {c.name for c in chosen}
        missing = [n for n in names if n not in known]
        if missing:
            raise SystemExit(f"--only names not in the {device} selection: {', '.join(missing)}")
        chosen = [c for c in chosen if c.name in set(names)]
    return chosen[:limit] if limit else chosen


def report(args, results: dict, summary: dict, rows: list[dict]) -> None:
    """The results to --out, the table to --markdown and stdout."""
    save_results(args.out, results)
    md = markdown(summary, rows, results)
    if args.markdown:
        args.markdown.write_text(md)
    print(md)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="corpus folder with candidates/ (default: benchmarks/corpus_llm)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--kernelbench", type=Path, default=Path(os.environ.get("KERNELBENCH_DIR", DEFAULT_KERNELBENCH)),
                    help="KernelBench checkout with harness/ and tasks/ (default: ../shared/baselines/kernelbench)")
    ap.add_argument("--external", type=Path, default=None,
                    help="a table of external candidates (JSONL rows id, ref_code, custom_code), e.g. "
                         "../shared/external/cuda-l1/kernels.jsonl, instead of --corpus")
    ap.add_argument("--part", default="", help="K/N: only every N-th candidate from the K-th (a set split over "
                                               "device calls the same way for both harnesses)")
    ap.add_argument("--only", default="", help="comma-separated candidate names")
    ap.add_argument("--limit", type=int, default=0, help="at most this many candidates (after --only/--kind)")
    ap.add_argument("--kind", choices=("all", "builtin", "kernelbench", "external"), default="all", help="task kind to keep")
    ap.add_argument("--out", type=Path, default=None, help="results JSON (rewritten after every candidate)")
    ap.add_argument("--markdown", type=Path, default=None, help="write the Markdown table here")
    ap.add_argument("--resume", action="store_true", help="keep what --out already holds and run only the rest")
    ap.add_argument("--skip-kernelbench", action="store_true")
    ap.add_argument("--skip-kernelmill", action="store_true")
    ap.add_argument("--kb-compile-workers", type=int, default=os.cpu_count() or 1,
                    help="KernelBench compile pool size (its batch scripts: one per CPU core)")
    ap.add_argument("--gpus", type=int, default=1, help="GPUs for KernelBench's evaluation processes (one process per GPU at a time)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per KernelBench evaluation process")
    ap.add_argument("--correct-trials", type=int, default=NUM_CORRECT_TRIALS)
    ap.add_argument("--perf-trials", type=int, default=NUM_PERF_TRIALS, help="KernelBench's num_perf_trials")
    ap.add_argument("--guards", default="standard", help="kernelmill --guards (on: standard or strict)")
    ap.add_argument("--warm-cache", action="store_true", help="let kernelmill use its usual build cache instead of a fresh one")
    ap.add_argument("--work", type=Path, default=None, help="scratch folder (build dirs, logs, task folder); default: next to --out or a temp dir")
    ap.add_argument("--prepare-headers", action="store_true",
                    help="before kernelmill's timed run, `kernelmill prepare-builds` on the candidates (the "
                         "precompiled torch headers of their flag sets, the binding objects of their signature "
                         "lists) into its (cold) build cache, timed apart: a once-per-machine step, so the "
                         "candidates' cold builds are measured without it")
    ap.add_argument("--kernelmill-arg", action="append", default=[], help="extra argument for kernelmill verify (repeatable)")
    ap.add_argument("--gpu-watch", action="store_true",
                    help="during kernelmill's run, log every hold of each GPU's lock and sample nvidia-smi's busy "
                         "share: the results and table say how much of the wall a timing held each GPU, shared work "
                         "only, nothing, and what the timings waited for (benchmarks/diag/lock_events.py)")
    ap.add_argument("--combine", type=Path, nargs="+", metavar="PART.json",
                    help="no run: the --out files of a set's parts (--part K/N) as one comparison, written to "
                         "--out / --markdown; refused when the parts mix devices, trials or harness versions")
    ap.add_argument("--stop-at", type=float, default=0,
                    help="a Unix time (a device call's deadline): KernelBench starts no evaluation that the longest "
                         "one so far would carry past it, and kernelmill is stopped as by Ctrl-C; both sides' time "
                         "so far is kept, --resume runs the rest")
    args = ap.parse_args(argv)
    if args.combine:
        merged, summary, rows = combine(args.combine)
        report(args, merged, summary, rows)
        return 0
    if args.device == "cuda" and not args.skip_kernelbench:
        # before kernelmill's side: a comparison whose other side cannot import is no comparison,
        # and kernelmill's side from a cold machine cannot be run twice in a session (torch is
        # imported here anyway, for the device's name)
        why = kb_preflight(Path(args.kernelbench))
        if why:
            ap.error(f"{why}; install them (or --skip-kernelbench)")

    if args.work is None:
        args.work = (args.out.with_suffix(".work") if args.out else Path(tempfile.mkdtemp(prefix="vs-kb-")))
        if not args.resume and args.out and args.work.exists():
            shutil.rmtree(args.work)  # our own scratch folder from an earlier run (never a --work given by hand)
    args.work.mkdir(parents=True, exist_ok=True)
    args.work = args.work.resolve()
    pool = (load_external(args.external, args.work) if args.external else corpus_check.load_corpus(args.corpus))
    cands = select(part_of(pool, args.part) if args.part else pool, args.device, args.only, args.limit, args.kind)
    if not cands:
        print("no candidates selected", file=sys.stderr)
        return 1
    results = load_results(args.out) if args.resume else {}
    if not args.resume and args.out:
        vj = args.out.with_suffix(".verdicts.jsonl")
        if vj.exists():
            vj.unlink()
    device_name = args.device
    if args.device == "cuda":
        try:
            import torch

            device_name = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU visible"
        except Exception:  # noqa: BLE001
            pass
    results.update({"device": args.device, "device_name": device_name, "corpus": str(args.external or args.corpus), "part": args.part,
                    "correct_trials": args.correct_trials, "perf_trials": args.perf_trials, "guards": args.guards,
                    "candidates": [c.name for c in cands]})
    by_lang = {}
    for c in cands:
        by_lang[c.language] = by_lang.get(c.language, 0) + 1
    print(f"{len(cands)} candidates on {args.device}: {by_lang}", flush=True)
    save_results(args.out, results)

    # kernelmill first: on a fresh machine it is the side that starts cold (issue 40's rule);
    # KernelBench's harness then finds the machine warm
    if not args.skip_kernelmill:
        run_kernelmill(cands, args, results, args.out)
    if not args.skip_kernelbench:
        if args.device != "cuda":
            results["kernelbench_skipped"] = KB_NEEDS_GPU
            print(KB_NEEDS_GPU, flush=True)
        else:
            results.pop("kernelbench_skipped", None)
            run_kernelbench(cands, args, results, args.out)

    summary, rows = summarize(cands, results)
    results["summary"] = summary
    results["rows"] = rows
    report(args, results, summary, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
