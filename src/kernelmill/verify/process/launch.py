"""Starting the candidate's process of a guarded run, before anything secret exists.

The process starts while the supervisor is still importing torch and running
the reference (in fact before the worker reads its job), and waits for one byte on a pipe: b"1" = the inputs and job file
are ready, anything else (or EOF) = exit. After that byte the same pipe carries
the supervisor's commands (timing rounds, one JSON line each) and a second pipe
carries the candidate's reports back (`Channel`); nothing else of the
candidate's reaches the supervisor except its outputs file. On CPU it is forked from the
supervisor (torch already imported, no job read yet). On CUDA it is forked only
from a worker the zygote forked (pools/zygote.py) that has not touched CUDA
(a child forked after that cannot use it: "Cannot re-initialize CUDA in forked
subprocess"), else started fresh (exec); either way it opens its CUDA context
and the profiler while it waits and says when it is warm (`candidate._warm_up`). The worker calls `prestart` first thing,
before it reads its job, so the two start-ups overlap and nothing of the task
is ever in memory the candidate's process inherits.

This module imports no torch: it must be cheap to import from the worker.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


from .channel import WARM_LINE


@dataclass
class Launched:
    cdir: Path  # the candidate's working directory: only its own code
    priv: Path  # the exchange directory (inputs, job, outputs)
    pid: int | None
    pipe: int  # write end of the command pipe; one byte starts the candidate
    proc: subprocess.Popen | None = None
    report: int = -1  # read end of the candidate's report pipe
    warms: bool = False  # it warms up first and says so (`WARM_LINE`): every candidate process on CUDA

    def go(self) -> None:
        """Start the candidate (its job and inputs are in place)."""
        os.write(self.pipe, b"1")

    def wait_warm(self, timeout: float) -> bool:
        """Wait until a spawned candidate's process has warmed up (it says so with one
        line on its report pipe before anything else: `WARM_LINE`), at most
        `timeout` seconds. True when it said so; False on a forked process (it has no
        warm-up), at the deadline, or when the process ended (the run meets that later)."""
        import select
        import time

        if not self.warms:
            return False
        deadline = time.monotonic() + timeout
        got = b""
        while not got.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.report], [], [], left)[0]:
                return False
            chunk = os.read(self.report, 1)  # byte by byte: nothing after the line may be taken
            if not chunk:
                return False
            got += chunk
        return got.strip() == WARM_LINE

    def send(self, message: dict) -> None:
        os.write(self.pipe, (json.dumps(message) + "\n").encode())

    def wait(self) -> int:
        """Wait for the candidate's process to end; returns its wait status."""
        return self._reap()

    def _reap(self) -> int:
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        if self.proc is not None:  # the Popen object must not reap it again
            self.proc.returncode = os.waitstatus_to_exitcode(status)
        return status

    def close(self) -> None:
        for fd in (self.pipe, self.report):
            try:
                os.close(fd)  # a child still waiting reads EOF and exits
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


def phase_dirs(phase_dir: Path) -> tuple[Path, Path]:
    cdir, priv = phase_dir / "candidate", phase_dir / "exchange"
    cdir.mkdir(exist_ok=True)
    priv.mkdir(exist_ok=True)
    return cdir, priv


def prestart(phase_dir: Path, device: str) -> Launched:
    """Start the candidate's process before the worker has read its job (so the
    worker's memory, which a forked child copies, never held the task): forked on a
    CPU (torch is imported first, so the child starts warm) and on CUDA from a worker
    the zygote forked that has not touched CUDA (`_forked_without_cuda`), spawned
    fresh otherwise. The job's candidate code is copied in later (`place`)."""
    cdir, priv = phase_dirs(Path(phase_dir))
    if str(device).startswith("cuda"):
        if _forked_without_cuda():
            return _fork(cdir, priv, cuda_device=str(device))
        return spawn(cdir, priv, str(device))
    import torch  # noqa: F401 - imported once, before the fork, for both processes

    return _fork(cdir, priv)


def _forked_without_cuda() -> bool:
    """This worker was forked by the zygote (pools/zygote.py: torch imported, CUDA
    never touched there) and has not touched CUDA since: its own child may then use
    CUDA, and starts with torch imported instead of importing it again."""
    from ..pools import zygote

    torch = sys.modules.get("torch")
    return (zygote.FORKED and torch is not None and not torch.cuda.is_initialized()
            and not torch.cuda._is_in_bad_fork() and "torch.utils.cpp_extension" not in sys.modules)


def place(job: dict, launched: Launched) -> None:
    """The candidate's folder gets the candidate's code (and nothing else)."""
    shutil.copy(job.candidate, launched.cdir / "candidate.py")


def spawn(cdir: Path, priv: Path, device: str) -> Launched:
    r, w = os.pipe()
    rr, rw = os.pipe()
    with open(cdir / "stderr.txt", "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "kernelmill.verify.process.candidate",
                                 str(priv / "job.json"), device, str(rw)], cwd=cdir, stdin=r, stderr=err,
                                pass_fds=(rw,))
    os.close(r)
    os.close(rw)
    return Launched(cdir, priv, proc.pid, w, proc, rr, warms=True)


def _fork(cdir: Path, priv: Path, cuda_device: str | None = None) -> Launched:
    r, w = os.pipe()
    rr, rw = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        os.close(r)
        os.close(rw)
        return Launched(cdir, priv, pid, w, None, rr, warms=cuda_device is not None)
    try:
        os.close(w)
        os.close(rr)
        run_child(cdir, priv, r, rw, cuda_device)
    finally:
        os._exit(70)


def run_child(cdir: Path, priv: Path, r: int, rw: int, cuda_device: str | None) -> None:
    """In a forked candidate's process (here, or a resident's launcher: resident.py), with
    `r` its command pipe and `rw` its report pipe: on CUDA warm up, say so and wait for
    the start, on a CPU wait for it; then the candidate. Never returns."""
    # the worker's stdin is where a spare's job path comes: never the candidate's to read
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    if cuda_device is not None:  # as a spawned one: warm up, say so, then wait for the start
        _into_candidate_folder(cdir).main_forked_cuda(str(priv / "job.json"), cuda_device, r, rw)
    if os.read(r, 1) != b"1":
        os._exit(0)
    _into_candidate_folder(cdir).main_forked(str(priv / "job.json"), r, rw)
    os._exit(70)


def _into_candidate_folder(cdir: Path):
    """In the forked child: stderr to its own file, its folder as the working folder and
    nothing of it on sys.path; returns the candidate module to run."""
    fd = os.open(cdir / "stderr.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 2)
    os.close(fd)
    os.chdir(cdir)
    sys.path[:] = [p for p in sys.path if p not in ("", ".")]
    from . import candidate

    return candidate


# processes below this one that are not a candidate's leftovers: a resident supervisor's
# launcher and the candidates' processes it started for later jobs (resident.py)
KEEP: set[int] = set()


def reap_descendants(keep: frozenset[int] = frozenset()) -> list[str]:
    """Kill every process left below this one (the candidate's grandchildren,
    re-parented here because the worker is a child subreaper): nothing of the
    candidate's may run once its process has ended (item 20: a detached child
    that rewrites the report). Returns a line for each killed process that had
    left our session (setsid: detached on purpose); ordinary stragglers (a
    compile worker still shutting down) are killed without a word. `keep`: children
    this process started itself and waits for (a GPU clock query); `KEEP` is never killed."""
    keep = keep | KEEP
    detached = []
    me, my_session = os.getpid(), os.getsid(0)
    for _ in range(5):
        mine = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me and int(entry) not in keep:  # ppid
                mine.append((int(entry), int(fields[3])))  # (pid, session)
        if not mine:
            break
        for pid, session in mine:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                continue
            if session != my_session:
                detached.append(f"process {pid} in a session of its own was still running after the "
                                "candidate's process ended (killed before its report was read)")
    return detached


def become_subreaper() -> None:
    """Orphans of the candidate's process re-parent to this process, not to init,
    so `reap_descendants` finds them even after setsid()."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass
