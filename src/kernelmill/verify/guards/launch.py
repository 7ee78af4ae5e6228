"""Starting the candidate's process of a guarded run, before anything secret exists.

The process starts while the supervisor is still importing torch and running
the reference, and waits for one byte on a pipe: b"1" = the inputs and job file
are ready, anything else (or EOF) = exit. On CPU it is forked from the
supervisor (torch already imported); on CUDA it is started fresh (exec),
because a forked child cannot use CUDA ("Cannot re-initialize CUDA in forked
subprocess"), and it opens its CUDA context and the profiler while it waits
(`candidate._warm_up`). The worker calls `launch` first thing for CUDA jobs,
before its own imports, so the two start-ups overlap.

This module imports no torch: it must be cheap to import from the worker.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Launched:
    cdir: Path  # the candidate's working directory: only its own code
    priv: Path  # the exchange directory (inputs, job, outputs, facts)
    pid: int | None
    pipe: int  # write end; one byte starts the candidate
    proc: subprocess.Popen | None = None

    def go(self) -> int:
        """Start the candidate and wait for it; returns its wait status."""
        os.write(self.pipe, b"1")
        return self._reap()

    def _reap(self) -> int:
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        if self.proc is not None:  # the Popen object must not reap it again
            self.proc.returncode = os.waitstatus_to_exitcode(status)
        return status

    def close(self) -> None:
        try:
            os.close(self.pipe)  # a child still waiting reads EOF and exits
        except OSError:
            pass
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                self._reap()
            except (ProcessLookupError, ChildProcessError):
                pass

    def failure(self, status: int) -> str:
        """What to say about a candidate process that ended without a report."""
        if os.WIFSIGNALED(status):
            try:
                name = signal.Signals(os.WTERMSIG(status)).name
            except ValueError:
                name = f"signal {os.WTERMSIG(status)}"
            msg = f"run process crashed with {name}"
        else:
            msg = f"run process exited with code {os.waitstatus_to_exitcode(status)} before reporting a result"
        try:
            tail = (self.cdir / "stderr.txt").read_text(errors="replace")[-2000:].strip()
        except OSError:
            tail = ""
        return msg + ("\n" + tail if tail else "")


def shm_exchange_dir(priv: Path) -> Path:
    """The /dev/shm folder a guarded run may exchange its tensors through
    (`supervisor._tensor_dir`), named after the run's exchange folder."""
    return Path("/dev/shm") / ("km-x-" + hashlib.sha1(str(priv.resolve()).encode()).hexdigest()[:20])


def remove_exchange(phase_dir: Path) -> None:
    """After the run process is gone: its /dev/shm folder holds memory, not disk."""
    shutil.rmtree(shm_exchange_dir(Path(phase_dir) / "exchange"), ignore_errors=True)


def _dirs(phase_dir: Path) -> tuple[Path, Path]:
    cdir, priv = phase_dir / "candidate", phase_dir / "exchange"
    cdir.mkdir(exist_ok=True)
    priv.mkdir(exist_ok=True)
    return cdir, priv


def prestart(phase_dir: Path, device: str) -> Launched | None:
    """On CUDA, start the candidate's process before the job is known (a spare
    run worker does this, verify/standby.py); None elsewhere (forked later)."""
    if not str(device).startswith("cuda"):
        return None
    return _spawn(*_dirs(Path(phase_dir)), str(device))


def launch(job: dict, started: Launched | None = None) -> Launched:
    """The candidate's process for `job`: `started` (from `prestart`) if given,
    else spawned now on CUDA or forked on CPU. Its folder gets the candidate's code."""
    cdir, priv = _dirs(Path(job["result"]).parent)
    shutil.copy(job["candidate"], cdir / "candidate.py")
    if started is not None:
        return started
    if str(job["device"]).startswith("cuda"):
        return _spawn(cdir, priv, str(job["device"]))
    return _fork(job, cdir, priv)


def _spawn(cdir: Path, priv: Path, device: str) -> Launched:
    r, w = os.pipe()
    with open(cdir / "stderr.txt", "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "kernelmill.verify.guards.candidate",
                                 str(priv / "job.json"), device], cwd=cdir, stdin=r, stderr=err)
    os.close(r)
    return Launched(cdir, priv, proc.pid, w, proc)


def _fork(job: dict, cdir: Path, priv: Path) -> Launched:
    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        os.close(r)
        return Launched(cdir, priv, pid, w)
    try:
        os.close(w)
        job.pop("input_seed", None)  # our copy of the job is the only one left in this process
        go = os.read(r, 1)
        os.close(r)
        if go != b"1":
            os._exit(0)
        fd = os.open(cdir / "stderr.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 2)
        os.chdir(cdir)
        sys.path[:] = [p for p in sys.path if p not in ("", ".")]
        from . import candidate

        candidate.main_forked(str(priv / "job.json"))
    finally:
        os._exit(70)
