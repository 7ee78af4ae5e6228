"""One long-lived verification session: an executor, a `Verifier` and its store, opened
on first use and kept across calls, so warm spare processes, resident supervisors and
reference profiles carry over. `kernelmill serve` (service.py) and the GRPO reward
(train/rewards.py `LocalVerifier`) each hold one; `verify_samples` without a verifier is
the one-shot form of the same.

    with VerifySession(VerifyConfig(device="cpu"), store="v.sqlite") as session:
        verdicts = session.verify(tasks, samples)
"""

from __future__ import annotations

import atexit
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable

from ..records import Sample, Task, Verdict
from .config import VerifyConfig
from .runner import HarnessError, RunnerJob, Verifier, sized_tasks, static_verdict
from .store import ResultStore, input_key, result_key


class VerifySession:
    def __init__(self, config: VerifyConfig | None = None, store: str | Path | None = None):
        self.config = config or VerifyConfig()
        self.store_path = store
        self._verifier = None
        self._executor = None
        self._lock = threading.Lock()

    def open(self) -> "VerifySession":
        """Start the executor and the verifier now (else on the first `verify`)."""
        with self._lock:
            if self._verifier is None:
                from .executors import make_executor

                self._executor = make_executor(self.config.executor, self.config.address)
                self.config = self._executor.prepare(self.config)
                store = ResultStore(self.store_path) if self.store_path else None
                self._verifier = Verifier(self.config, store)
                atexit.register(self.close)
        return self

    @property
    def verifier(self):
        return self.open()._verifier

    @property
    def executor(self):
        return self.open()._executor

    @property
    def store(self):
        return self.verifier.store

    def verify(self, tasks: Any, samples: list[Sample], **options: Any) -> list[Verdict]:
        """`verify_samples` on this session's verifier (its config and store)."""
        return verify_samples(tasks, samples, executor=self.executor, verifier=self.verifier, **options)

    __call__ = verify

    def close(self) -> None:
        """Stop the spares and residents, close the store; a later `verify` opens again."""
        with self._lock:
            verifier, self._verifier = self._verifier, None
        if verifier is not None:
            verifier.close()
            if verifier.store is not None:
                verifier.store.close()

    def __enter__(self) -> "VerifySession":
        return self.open()

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _as_task_map(tasks) -> dict[str, Task]:
    if isinstance(tasks, dict):
        return tasks
    return {t.task_id: t for t in tasks}


def verify_samples(
    tasks, samples: Iterable[Sample], config: VerifyConfig | None = None,
    store: str | Path | ResultStore | None = None, progress: bool = False,
    on_verdict: Callable[[Verdict], None] | None = None, executor=None, stats: dict | None = None,
    verifier: "Verifier | None" = None, rerun: bool = False,
) -> list[Verdict]:
    """Verify `samples` against `tasks`; one verdict per sample, in input order.
    `rerun`: verify again what the store already answers (the new verdicts replace them).

    `store` (a path or ResultStore) makes the run resumable and re-runs free.
    `on_verdict` is called (in the calling thread) as each verdict is final.
    `executor` is an executor object or name (default: `config.executor`,
    ``local``; ``ray`` uses `config.address`). `stats`, if given, is filled
    with the run's accounting (builds/s, GPU busy share, ...). `verifier`, if
    given, is a long-lived `Verifier` (its config and store are used, its warm
    spare processes and reference profiles carry over, and it is left open):
    what `kernelmill serve` and the GRPO reward keep between requests.
    """
    from .executors import make_executor
    from .progress import StatusProgress

    config = config or VerifyConfig()
    if executor is None or isinstance(executor, str):
        executor = make_executor(executor or config.executor, config.address)
    samples = list(samples)
    task_map = _as_task_map(tasks)
    keep = verifier is not None
    walls = {}  # where the call's wall went (stats: startup_s, batch_s, close_s)
    t_start = time.monotonic()
    if keep:
        config, db, own_store = verifier.config, verifier.store, False
    else:
        config = executor.prepare(config)
        own_store = isinstance(store, (str, Path))
        db = ResultStore(store) if own_store else store
        verifier = Verifier(config, db)
    walls["startup_s"] = time.monotonic() - t_start
    task_map = sized_tasks(task_map, samples, verifier.config, verifier.device)
    results: dict[str, Verdict] = {}
    bar = StatusProgress(len(samples), enabled=progress, device=verifier.device_name,
                         gpus=len(verifier.gpus))

    def finish(sample: Sample, verdict: Verdict) -> None:
        verdict = replace(verdict, sample_id=sample.sample_id, task_id=sample.task_id,
                          input_key=input_key(task_map.get(sample.task_id), sample, verifier.answer_key))
        results[sample.sample_id] = verdict
        bar.advance(verdict.status, cached=verdict.cached)
        if on_verdict:
            on_verdict(verdict)

    # static verdicts and store hits first; group the rest by key
    pending: dict[str, list[Sample]] = {}
    jobs: dict[str, RunnerJob] = {}
    keys = {}
    for s in samples:
        task = task_map.get(s.task_id)
        static = static_verdict(s, task, verifier.device)
        if static is not None:
            static.device = verifier.device_name
            finish(s, static)
            continue
        keys[s.sample_id] = result_key(task, s, verifier.answer_key, verifier.device_name)
    hits = db.get_many(list(set(keys.values()))) if db and not rerun else {}
    for s in samples:
        key = keys.get(s.sample_id)
        if key is None:
            continue
        if key in hits:
            finish(s, replace(hits[key], cached=True))
        else:
            pending.setdefault(key, []).append(s)
            jobs.setdefault(key, RunnerJob(key, task_map[s.task_id], s))

    def on_done(job: RunnerJob, outcome) -> None:
        verifier.cleanup(job)
        if not keep:
            verifier.job_done()
        if isinstance(outcome, BaseException):
            if isinstance(outcome, KeyboardInterrupt):
                raise outcome
            raise HarnessError(f"verifying {job.sample.sample_id} failed inside kernelmill: {outcome!r}") from outcome
        if db is not None:
            db.put(job.key, outcome)
        for s in pending[job.key]:
            finish(s, outcome)

    t_batch = time.monotonic()
    if not keep:
        verifier.expect_jobs(len(jobs))
    try:
        verifier.prepare_builds(list(jobs.values()))
        executor.execute(verifier, list(jobs.values()), on_done, bar)
    except BaseException:
        for job in jobs.values():
            verifier.cleanup(job)
        raise
    finally:
        t_close = time.monotonic()
        walls["batch_s"] = t_close - t_batch
        if not keep:
            verifier.close()
        walls["close_s"] = time.monotonic() - t_close
        bar.close()
        if stats is not None:
            stats.update(bar.stats())
            stats.update({k: round(v, 3) for k, v in walls.items()})
            if verifier.standby is not None:
                stats["spares_started"] = verifier.standby.started
        if own_store and db is not None:
            db.close()
    return [results[s.sample_id] for s in samples]
