"""Runs compiled harnesses in sandboxed worker processes (worker.py).

Jobs are cut into batches; `workers` threads each run one batch at a time in a
fresh worker process under verify's sandbox (own process group, scrubbed
environment, own HOME/TMPDIR, memory and process watchdogs, a deadline, a
group kill at the end). The worker reports per job (start, cand, done); when
it dies, the job it was in is judged by how it died:

* killed by SIGALRM (the worker's per-job alarm) or past the deadline: timeout;
* after the ``cand`` event, any other death (signal, exit code, memory): the
  candidate's runtime error; before it: the reference's failure (the pair is
  then skipped for the rest of the run);

and the jobs it never started go to a fresh worker. A worker that dies before
starting its first job is our failure (no torch, no GPU): `RunnerError`, with
its stderr.
"""

from __future__ import annotations

import json
import queue
import signal
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ...verify import Sandbox, python_argv, scrubbed_env

WORKER = "kernelmill.ptx.evaluate.worker"


class RunnerError(RuntimeError):
    pass


@dataclass
class RunSettings:
    device: str = "cuda"
    workers: int = 4
    batch: int = 16
    job_timeout: float = 30.0       # seconds per job (checks and timing)
    startup_s: float = 120.0        # allowance for torch and the CUDA context
    seed: int = 0
    tol: float = 1e-3
    # verify's timing convention with a small budget: the deviations are read as KDEs
    # over many kernels, not as single precise speedups
    timing: dict | None = field(default_factory=lambda: {
        "warmup_ms": 3.0, "round_ms": 3.0, "min_rounds": 4, "max_rounds": 8, "budget_ms": 24.0,
        "target_rse": 0.03})
    memory_limit_gb: float = 24.0
    max_procs: int = 64


def _death(res, after_cand: bool, timeout: float) -> dict:
    if res.returncode == -signal.SIGALRM or res.timed_out:
        return {"status": "timeout", "compiled": True, "message": f"no result within {timeout:.0f} s"}
    if res.killed_reason:
        what = f"killed ({res.killed_reason} limit)"
    elif res.signal_name:
        what = f"crashed ({res.signal_name})"
    else:
        what = f"exited with {res.returncode}"
    tail = "\n".join((res.stderr or "").strip().splitlines()[-6:])
    msg = what + (f": {tail}" if tail else "")
    if after_cand:
        return {"status": "runtime_error", "compiled": True, "message": msg}
    return {"status": "reference_failed", "message": f"reference: {msg}"}


def _read_events(path: Path) -> list[dict]:
    out = []
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line cut by the death of the worker
    return out


def run_batch(jobs: list[dict], cfg: RunSettings, work: Path, mode: str = "run",
              wrap: Callable[[Path], list[str]] | None = None,
              timeout: float | None = None) -> tuple[dict[str, dict], list[dict], object, Path]:
    """Run `jobs` in one worker: (results by job id, jobs never started, the
    PhaseResult, the batch's folder). `wrap(folder)` prefixes the command (ncu)."""
    work = Path(work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    d = Path(tempfile.mkdtemp(prefix="batch-", dir=work))
    events = d / "events.jsonl"
    box = Sandbox(cfg.memory_limit_gb, cfg.max_procs, 20000, limit_address_space=False)
    spec = {"device": cfg.device, "seed": cfg.seed, "tol": cfg.tol, "timing": cfg.timing, "mode": mode,
            "job_timeout": cfg.job_timeout, "events": str(events), "jobs": jobs, "rlimits": box.rlimits()}
    job_file = d / "job.json"
    job_file.write_text(json.dumps(spec))
    deadline = timeout if timeout is not None else cfg.startup_s + cfg.job_timeout * (len(jobs) + 1)
    res = box.run([*(wrap(d) if wrap else []), *python_argv(WORKER, str(job_file))], d, scrubbed_env(home=str(d)), deadline)
    evs = _read_events(events)
    started = {e["id"] for e in evs if e.get("event") == "start"}
    cand_seen = {e["id"] for e in evs if e.get("event") == "cand"}
    results = {e["id"]: {k: v for k, v in e.items() if k not in ("id", "event")}
               for e in evs if e.get("event") == "done"}
    for jid in started - set(results):
        results[jid] = _death(res, jid in cand_seen or mode == "ncu", cfg.job_timeout)
    if not started and jobs:
        raise RunnerError(f"the evaluation worker died before its first job ({_death(res, True, deadline)['message']});"
                          f" stderr:\n{(res.stderr or '').strip()[-3000:]}")
    rest = [j for j in jobs if j["id"] not in started]
    return results, rest, res, d


def run_jobs(jobs: list[dict], cfg: RunSettings, work: Path,
             on_result: Callable[[str, dict], None] | None = None) -> dict[str, dict]:
    """Results of every job (by id), in parallel batches; restarts after deaths."""
    results: dict[str, dict] = {}
    failed_refs: dict[str, str] = {}
    lock = threading.Lock()
    q: queue.Queue = queue.Queue()
    for i in range(0, len(jobs), cfg.batch):
        q.put(jobs[i:i + cfg.batch])
    errors: list[BaseException] = []
    pending = [len(jobs)]

    def finish(jid: str, res: dict) -> None:
        with lock:
            results[jid] = res
            pending[0] -= 1
        if on_result:
            on_result(jid, res)

    def worker() -> None:
        while True:
            with lock:
                if pending[0] <= 0 or errors:
                    return
            try:
                batch = q.get(timeout=0.2)
            except queue.Empty:
                continue
            todo = []
            for j in batch:
                if j["pair_id"] in failed_refs:
                    finish(j["id"], {"status": "reference_failed", "message": failed_refs[j["pair_id"]]})
                else:
                    todo.append(j)
            if not todo:
                continue
            try:
                got, rest, _, _ = run_batch(todo, cfg, work)
            except BaseException as exc:  # noqa: BLE001 - reported by run_jobs
                with lock:
                    errors.append(exc)
                return
            by_id = {j["id"]: j for j in todo}
            for jid, res in got.items():
                if res.get("status") == "reference_failed":
                    failed_refs.setdefault(by_id[jid]["pair_id"], res.get("message", ""))
                finish(jid, res)
            if rest:
                q.put(rest)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, cfg.workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RunnerError(str(errors[0])) from errors[0]
    return results


def run_ncu(jobs: list[dict], cfg: RunSettings, work: Path, exe: str, metric: str,
            per_job_s: float = 60.0) -> tuple[dict[str, dict[str, float | None]], str]:
    """Global-load efficiency of both sides of each job, one ncu-wrapped worker
    per batch: ({job id: {"ref", "cand"}}, a note on what went wrong or "")."""
    from .ncu import match_launches, ncu_command, parse_csv

    out: dict[str, dict[str, float | None]] = {}
    notes = []
    todo = list(jobs)
    while todo:
        batch, todo = todo[:cfg.batch], todo[cfg.batch:]
        kernels = [j["config"]["kernel"] for j in batch]
        got, rest, res, d = run_batch(batch, cfg, work, mode="ncu",
                                      wrap=lambda d: ncu_command(exe, metric, kernels, str(d / "ncu.csv")),
                                      timeout=cfg.startup_s + per_job_s * len(batch))
        launches = [e for e in _read_events(d / "events.jsonl") if e.get("event") == "launch"]
        text = (d / "ncu.csv").read_text(errors="replace") if (d / "ncu.csv").exists() else ""
        rows = parse_csv(text, metric)
        if launches and not rows:
            tail = "\n".join((text or res.stderr or "").strip().splitlines()[-5:])
            notes.append(f"ncu gave no {metric} rows: {tail}")
        out.update(match_launches(launches, rows))
        todo = rest + todo
    return out, "; ".join(dict.fromkeys(notes))
