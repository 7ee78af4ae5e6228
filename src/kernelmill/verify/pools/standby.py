"""Run workers started ahead of their candidate ("spares").

Most of a guarded run phase on a GPU is start-up that does not depend on the
candidate: a Python interpreter importing torch, a CUDA context and the
profiler's start-up (CUPTI), twice over (the supervising worker and the
candidate's own process). A spare is a run worker started with
``worker standby DIR DEVICE``: it does all of that, starts the candidate's
process (which warms up the same way), then waits on stdin for the path of its
job file. Each job taken starts a new spare, so up to `depth` spares warm up
while earlier candidates run. A spare started while a run is on its GPU opens
its CUDA context only after that run's timing (or when its own job comes, or
after GATE_MAX_S): see gpulock.py. Only the context and one profiled call hold
the GPU lock (shared); the rest of a warm-up (imports, the profiler's start-up,
~8 s on an H200) is host work and overlaps anything (guards/trace.warm_cuda).
Build workers have spares too (`mode="build"`): a build process spends
2.5-4 s importing torch before it imports the candidate, which for a cached
extension is the whole build phase (the wait of a `kernelmill serve` request).
A fill from an empty queue (a GPU's first job) is staggered, `STAGGER_S` apart, so
the spares needed first warm up on free cores, and is not gated. With `groups`, spares start only
when none is left, `depth` at a time.

What stays true: every spare takes exactly one job and then exits, so each
candidate still runs in fresh processes and no CUDA context that ran a
candidate is reused; the deadline and the memory and process watchdogs count
from the hand-over (`Sandbox.watch`); the job's environment (its extension
folder, HOME, TMPDIR) is applied in both processes before the candidate is
imported (`adopt_env`). A spare that died while waiting is discarded and a
fresh process takes the job.

This module imports no torch.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..measure.gpulock import gate_env
from ..sandbox import Sandbox, python_argv, scrubbed_env
from .zygote import ZygoteError, launch

# longest a spare started during a run waits for that run's timing before its warm-up
GATE_MAX_S = 15.0
# spares per run sharing a GPU, by default: a pair of processes warms up in ~8-10 s on an
# H200 and a guarded run takes ~1.5-2.5 s, so each spare has ~6 runs' time (issue 14)
SPARES_PER_RUN = 6
# spares filled in at once (the first job on a GPU, or after the queue ran dry) start this
# many seconds apart, the k-th after k * STAGGER_S or when its job comes: started together,
# 12 pairs of processes and the builds shared 16 cores and the first two runs waited 13-16 s
# for spares that warm up in ~7 s alone (H200, docs/results/benchmarks_history.md, issue 14); once running,
# each spare is replaced as it is taken, with no delay
STAGGER_S = 1.0
DELAY_ENV = "KERNELMILL_SPARE_DELAY"  # seconds a spare waits before its start-up (worker._standby)
# host memory of one waiting spare, an estimate: two processes with torch imported and the
# profiler started (367 MB each, measured on a CPU machine) plus a CUDA context's host
# side (not measured here)
SPARE_HOST_GB = 2.0


def auto_depth(runs_per_gpu: int, n_gpus: int, mem_available_gb: float | None = None) -> int:
    """Spares per GPU when VerifyConfig.standby is auto: SPARES_PER_RUN for each run
    sharing the GPU, fewer where all of them together would take more than a quarter of
    the host's available memory (at least 1)."""
    want = SPARES_PER_RUN * max(1, runs_per_gpu)
    if mem_available_gb is None:
        mem_available_gb = _mem_available_gb()
    if mem_available_gb is None:
        return want
    fit = int(mem_available_gb / 4 / SPARE_HOST_GB / max(1, n_gpus))
    return max(1, min(want, fit))


def _mem_available_gb() -> float | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / (1 << 20)
    except (OSError, ValueError, IndexError):
        pass
    return None


@dataclass
class Spare:
    proc: subprocess.Popen  # started with stdin=PIPE
    dir: Path  # its phase directory: job.json, result.json, stdout/stderr, candidate/, exchange/

    def hand_over(self, job_path: Path, last: bool = True) -> bool:
        """Give the spare its job (`last`: its only one, so its stdin is closed after it);
        False if it is no longer there to take it."""
        try:
            self.proc.stdin.write((str(job_path) + "\n").encode())
            if last:
                self.proc.stdin.close()
            else:
                self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False


class Standby:
    """Up to `depth` warm spares per GPU (or for the CPU run worker)."""

    def __init__(self, sandbox: Sandbox, work_dir: Path, device: str, env_for: Callable[[int | None], dict],
                 depth: int = 1, groups: bool = False, mode: str = "run", nice: int = 0,
                 demand: Callable[[], int] | None = None, zygote: bool = False):
        # mode "run": run workers (GPU warm-up, the candidate's process started ahead);
        # "build": build workers with torch and the builder imported (``worker
        # buildstandby``), `nice` lower in CPU priority, as a build process is
        self.mode = mode
        self.nice = nice
        self.sandbox = sandbox
        self.work_dir = Path(work_dir)
        self.device = device
        self.env_for = env_for
        self.depth = depth
        # how many spares a GPU can use now (None: always `depth`). A verification run
        # starts with its CUDA candidates building for 20-50 s; 12 spare pairs warming
        # up then (each ~100% of a core for ~20 s) took the cores from those builds:
        # median build 34.7 s with spares, 20.0 s without (H200, 9 builds; issue 14).
        # So spares are filled to what the runs queued for the GPU need (`top_up`)
        self.demand = demand
        # spares forked from one process that imported torch once (pools/zygote.py)
        # instead of each importing it: started (start_zygote) on the first spare, or
        # earlier by the owner, which passes its Future here (verify/runner.py, early.py).
        # Run spares on CUDA need a zygote whose imports left CUDA usable in its children
        # (zygote.PRELOAD leaves torch.utils.cpp_extension out for that); it checks
        # (cuda_fork_safe), and where it is not, run spares start fresh as before
        self.use_zygote = bool(zygote)
        self._zygote_future = zygote if isinstance(zygote, Future) else None
        self._zygote = None
        self.groups = groups
        self._spares: dict[int | None, deque[Spare]] = {}
        self._lock = threading.Lock()
        self._closed = False
        # spares are started from this one long-lived thread: a worker dies with
        # its parent through PR_SET_PDEATHSIG, which Linux ties to the *thread*
        # that started it, so a spare started by a run thread of one
        # `verify_samples` call was killed when that call's threads ended
        # (a long-lived verifier, `kernelmill serve`, lost every other request)
        self._starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kernelmill-spares")
        self.started = 0  # spares started (each took a job, or was warm for nothing)

    def _start(self, gpu: int | None, gated: bool = False, delay_s: float = 0.0) -> Spare:
        return self._starter.submit(self._start_here, gpu, gated, delay_s).result()

    def _start_here(self, gpu: int | None, gated: bool = False, delay_s: float = 0.0) -> Spare:
        self.started += 1
        d = Path(tempfile.mkdtemp(prefix="spare-", dir=self.work_dir))
        env = scrubbed_env(self.env_for(gpu), home=str(d))
        if gated:  # started while a run is on its GPU: warm up after that run's timing (gpulock.py)
            env.update(gate_env(self.device, env, GATE_MAX_S))
        if delay_s > 0:
            env[DELAY_ENV] = f"{delay_s:g}"
        args = self._args(d)
        zygote = self._zygote_here(env)
        if zygote is not None:
            try:
                return Spare(self.sandbox.start_forked(zygote, list(args), d, env, stdin_pipe=True,
                                                       module=self.module), d)
            except ZygoteError as exc:
                print(f"kernelmill: {exc}; spares start as fresh processes", file=sys.stderr)
                self.use_zygote = False
        proc = self.sandbox.start(python_argv(self.module, *args), d, env, stdin_pipe=True)
        return Spare(proc, d)

    # the module a spare runs as (``python -m``, or forked by the zygote)
    module = "kernelmill.verify.process.worker"

    def _args(self, folder: Path) -> tuple[str, ...]:
        """The worker's arguments for a spare in `folder`."""
        return ("standby", str(folder), self.device) if self.mode == "run" else ("buildstandby", str(folder), str(self.nice))

    def _zygote_here(self, env: dict[str, str]):
        """The zygote (on the starter thread: it dies with the thread that started it);
        None when not used or it could not start (then spares start fresh, as before)."""
        if not self.use_zygote:
            return None
        if self._zygote is None:
            future, self._zygote_future = self._zygote_future, None
            runs = self.mode in ("run", "resident")  # a resident is forked from the run zygote
            if future is None:
                future = start_zygote("run" if runs else self.mode, self.work_dir, env)
            try:
                self._zygote = future.result()
                if runs and self.device.startswith("cuda") and not self._zygote.cuda_fork_safe:
                    why = self._zygote.why_not_cuda
                    self._zygote.close()
                    self._zygote = None
                    raise ZygoteError(f"run spares cannot be forked on CUDA here ({why})")
            except (ZygoteError, OSError) as exc:
                print(f"kernelmill: {exc}; spares start as fresh processes", file=sys.stderr)
                self.use_zygote = False
                return None
        return self._zygote

    def take(self, gpu: int | None) -> Spare:
        """A warm spare for `gpu` (a fresh one if none is alive); new ones start,
        gated on this job's timing, until `depth` wait again (or as many as the queued
        runs need, with `demand`). With `groups`, new ones
        start only when none is left, `depth` at once, so that they warm up together
        and the next `depth` jobs run back to back; that paid while a whole warm-up
        held the GPU lock (each one ran into the next timing: the median timing waited
        2.8-4.5 s of a 5.5-7 s run on an H200), and costs a wait every `depth` jobs
        now that only its GPU steps do (docs/results/benchmarks_history.md, issue 14)."""
        with self._lock:
            queue = self._spares.setdefault(gpu, deque())
            spare = None
            while queue and spare is None:
                s = queue.popleft()
                if s.proc.poll() is None:
                    spare = s
                else:
                    self._drop(s)
            spare = spare or self._start(gpu)
            self._fill(gpu, queue)
            return spare

    def _target(self) -> int:
        if self.demand is None:
            return self.depth
        return max(0, min(self.depth, int(self.demand())))

    def top_up(self, gpu: int | None) -> None:
        """Start spares for `gpu` up to what its queued runs need now (`demand`); a
        verifier calls it when a candidate's build is done and it waits for a run."""
        if self.demand is None or self._closed:
            return
        with self._lock:
            self._fill(gpu, self._spares.setdefault(gpu, deque()))

    def _fill(self, gpu: int | None, queue: deque) -> None:
        """Under the lock: start spares for `gpu` up to the target."""
        if not queue or not self.groups:
            # from an empty queue (the GPU's first job, or the queue ran dry): staggered
            # and not gated (the first runs' timings come only after their own processes
            # warmed up, so gated spares waited ~10 s and were late: H200, issue 14);
            # their CUDA steps still never overlap a timing (the GPU lock)
            stagger = STAGGER_S if not queue and not self.groups and self.mode == "run" else 0.0
            k, target = 0, self._target()
            while not self._closed and len(queue) < target:
                queue.append(self._start(gpu, gated=not stagger, delay_s=k * stagger))
                k += 1

    def drop_gpu(self, gpu: int | None) -> None:
        """Discard the spares of a GPU (it failed a health check)."""
        with self._lock:
            for s in self._spares.pop(gpu, deque()):
                self._drop(s)

    def _drop(self, spare: Spare) -> None:
        try:
            spare.proc.stdin.close()  # a waiting spare reads EOF and exits
        except OSError:
            pass
        self.sandbox.discard(spare.proc)
        shutil.rmtree(spare.dir, ignore_errors=True)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            spares = [s for queue in self._spares.values() for s in queue]
            # every spare's group killed first, then each reaped: one at a time, each spare
            # with a CUDA context took its teardown in turn at the end of every batch
            for s in spares:
                try:
                    os.killpg(s.proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            for s in spares:
                self._drop(s)
            self._spares.clear()
        self._starter.shutdown(wait=True)
        if self._zygote_future is not None:  # started early, never used
            close_started(self._zygote_future)
            self._zygote_future = None
        if self._zygote is not None:
            self._zygote.close()
            shutil.rmtree(self._zygote.folder, ignore_errors=True)
            self._zygote = None


def zygote_folder(mode: str, work_dir: Path) -> Path:
    """A new folder of its own under `work_dir` for a `mode` zygote (its HOME and TMPDIR)."""
    return Path(tempfile.mkdtemp(prefix=f"zygote-{mode}-", dir=work_dir))


def start_zygote(mode: str, work_dir: Path, env: dict[str, str], folder: Path | None = None) -> Future:
    """Start the zygote of a `mode` standby in the background (zygote.launch), in its own
    folder under `work_dir` (`folder`, else a new one), with a spare's environment (`env`,
    from scrubbed_env)."""
    folder = folder or zygote_folder(mode, work_dir)
    return launch(mode, {**env, "HOME": str(folder), "TMPDIR": str(folder)}, folder)


def close_started(future: Future) -> None:
    """Close a zygote started with `start_zygote` that no standby took (now, or once it
    has started)."""
    def done(f: Future) -> None:
        if not f.cancelled() and f.exception() is None:
            z = f.result()
            z.close()
            shutil.rmtree(z.folder, ignore_errors=True)
    future.add_done_callback(done)


def adopt_env(job_env: dict[str, str], started_with: dict[str, str]) -> None:
    """Make this process's environment the job's: what the spare was started
    with is replaced by what a fresh process for this job would have had."""
    for key, value in started_with.items():
        if key not in job_env and os.environ.get(key) == value:
            del os.environ[key]
    os.environ.update(job_env)
    tempfile.tempdir = None  # TMPDIR is read again on next use
