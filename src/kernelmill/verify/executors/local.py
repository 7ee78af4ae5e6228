"""The local executor: a build pool on every CPU core feeding `runs_per_gpu` run
workers per GPU (on a CPU device, `cpu_runners` run workers: 1 unless asked).

Builds run ahead of the GPUs in a thread pool (each build is its own sandboxed
process); run workers pull built candidates as they free up. After a candidate
fails on a GPU (crash, timeout) that GPU gets a health check in a fresh
process; a GPU that fails it is reported and taken out, and the candidate gets
one more try on a healthy GPU (a wedged GPU is not the candidate's fault).
"""

from __future__ import annotations

import itertools
import queue
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from ..health import gpu_healthy
from ..runner import NeedsBuild, compiles_on_first_call, harness_out_of_memory

_RETRYABLE = ("runtime_error", "timeout")


class RunQueue:
    """The candidates waiting for a run worker: first in, first out, except that a candidate
    back from a build its own run asked for (NeedsBuild) goes before the others. It has waited
    for a run once; at the back it waited for every run queued meanwhile, and ended the batch:
    on issue 40's cold cuda-l1 run four such candidates queued again 32-61 s after their
    builds and were the batch's last four runs, 176-201 s (session_2026-11-30i). Next come
    candidates whose first call compiles (`runner.compiles_on_first_call`): each held its
    GPU alone 9-13 s in session 28's cold run, one after another; started together, two
    share a GPU's time. A stop (None) comes after every candidate."""

    def __init__(self) -> None:
        self._q: queue.PriorityQueue = queue.PriorityQueue()
        self._order = itertools.count()

    def put(self, job, first: bool = False) -> None:
        code = getattr(getattr(job, "sample", None), "code", None)
        rank = 3 if job is None else 0 if first else 1 if isinstance(code, str) and compiles_on_first_call(code) else 2
        self._q.put((rank, next(self._order), job))

    def get(self):
        return self._q.get()[2]


class LocalExecutor:
    name = "local"

    def prepare(self, config):
        return config

    def execute(self, verifier, jobs: list, on_done: Callable, accounting) -> None:
        """Calls `on_done(job, verdict)` in this thread as each job finishes;
        raises the first machinery failure (after stopping everything)."""
        done_q: queue.Queue = queue.Queue()
        run_q = RunQueue()
        stop = threading.Event()
        dead_gpus: list[str] = []
        dead: set[int] = set()
        dead_lock = threading.Lock()
        retried: set[str] = set()

        queued = getattr(verifier, "queued_runs", None)  # the spares follow the run queue (runner.py)

        def queue_run(job, first: bool = False) -> None:
            if queued is not None:
                queued(+1)
            run_q.put(job, first)

        # a failure anywhere in a build thread (queueing the run included) reaches the main
        # thread: a pool thread's exception is otherwise kept in its future, and the batch
        # would wait for that candidate for ever
        def build_one(job) -> None:
            if stop.is_set():
                return
            try:
                t0 = time.monotonic()
                verdict = verifier.build(job)
                accounting.note_build(time.monotonic() - t0, (job.build or {}).get("build_info"))
                if verdict is None:
                    queue_run(job)
                else:
                    done_q.put((job, verdict))
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                done_q.put((job, exc))

        def rebuild_one(job, requests) -> None:
            if stop.is_set():
                return
            try:
                t0 = time.monotonic()
                verifier.build_requested(job, requests)
                accounting.note_build(time.monotonic() - t0, None)
                queue_run(job, first=True)  # its run asked for this build: it goes next
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                done_q.put((job, exc))

        def run_worker(gpu: int | None) -> None:
            while not stop.is_set():
                job = run_q.get()
                if job is None:
                    return
                if queued is not None:
                    queued(-1)
                if gpu is not None and gpu in dead:  # another run of this GPU found it wedged
                    queue_run(job)
                    done_q.put((None, "gpu_dead"))
                    return
                try:
                    t0 = time.monotonic()
                    verdict = verifier.run(job, gpu)
                    accounting.note_run(gpu if gpu is not None else threading.current_thread().name, t0,
                                        time.monotonic(), (getattr(verdict, "phases", None) or {}).get("run_compiles", 0))
                except BaseException as exc:  # noqa: BLE001
                    done_q.put((job, exc))
                    continue
                if isinstance(verdict, NeedsBuild):
                    # the run stopped at an uncached load_inline: build it on a CPU
                    # worker, then the candidate queues for a run again
                    pool.submit(rebuild_one, job, verdict.requests)
                    continue
                if gpu is not None and verdict.status in _RETRYABLE and (
                        gpu in dead or not gpu_healthy(gpu, verifier.gpu_env(gpu))):
                    with dead_lock:
                        first = gpu not in dead
                        dead.add(gpu)
                    if first:
                        dead_gpus.append(f"GPU {gpu}")
                        if verifier.standby is not None:
                            verifier.standby.drop_gpu(gpu)
                        print(f"kernelmill: GPU {gpu} failed its health check after {job.sample.sample_id}; "
                              "taking it out of this run", file=sys.stderr)
                    # a run under way on the GPU when it wedged (this one, or another
                    # run sharing it) gets one more try on a healthy GPU
                    if job.key not in retried and len(dead) < len(verifier.gpus):
                        retried.add(job.key)
                        queue_run(job)
                    else:
                        done_q.put((job, verdict))
                    done_q.put((None, "gpu_dead"))
                    return
                if job.key not in retried and harness_out_of_memory(verdict):
                    # the harness's side ran out of memory, not the candidate: once more, behind
                    # the runs queued now (a cold start's crowding has passed by then)
                    retried.add(job.key)
                    job.retry_reason = verdict.message[:300]
                    print(f"kernelmill: {job.sample.sample_id}: the harness ran out of memory; "
                          "queued to run once more", file=sys.stderr)
                    queue_run(job)
                    continue
                done_q.put((job, verdict))

        verifier.defer_builds = True  # run phases may hand uncached builds back (NeedsBuild)
        # on CUDA, `runs_per_gpu` run workers per GPU: their runs overlap except
        # for the timed rounds (gpulock); on a CPU, `cpu_runners`
        slots = ([g for _ in range(verifier.runs_per_gpu) for g in verifier.gpus] if verifier.device == "cuda"
                 and verifier.gpus else [None] * (1 if verifier.device == "cuda" else verifier.cpu_runners))
        n_runners = len(slots)
        runners = [threading.Thread(target=run_worker, args=(gpu,), name=f"km-run-{i}", daemon=True)
                   for i, gpu in enumerate(slots)]
        for t in runners:
            t.start()
        pool = ThreadPoolExecutor(max_workers=verifier.build_workers, thread_name_prefix="km-build")
        try:
            for job in jobs:
                pool.submit(build_one, job)
            remaining, alive = len(jobs), n_runners
            refresh = getattr(verifier, "refresh_spares", None)  # spares for builds about to end (runner.py)
            next_refresh = time.monotonic() + 1.0
            while remaining:
                if refresh is not None and time.monotonic() >= next_refresh:
                    refresh()
                    next_refresh = time.monotonic() + 1.0
                try:
                    job, outcome = done_q.get(timeout=0.2)
                except queue.Empty:
                    continue
                if job is None:
                    alive -= 1
                    if alive == 0:
                        from ..runner import HarnessError

                        raise HarnessError(f"every GPU failed its health check ({', '.join(dead_gpus)}); "
                                           "no candidate can run")
                    continue
                remaining -= 1
                on_done(job, outcome)
        except BaseException:
            stop.set()
            verifier.sandbox.stop()
            raise
        finally:
            for _ in runners:
                run_q.put(None)
            pool.shutdown(wait=False, cancel_futures=True)
