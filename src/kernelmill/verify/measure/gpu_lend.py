"""A run lends its share of the GPU lock to a waiting timing while its candidate's process is held off the GPU.

A guarded run holds its GPU's lock shared (gpulock.SharedUse) from the candidate's start to
its timing: the candidate's loading, its first calls and checks are GPU work no timing may
overlap. When that stretch is long and mostly host work (a `torch.compile` first call: code
generation and Triton builds, 9-13 s; torch's own `load_inline` build, 17.5 s), every timing
on the GPU waits, and behind it (writer-first) every other run's shared work: in session 28's
cold run of cuda-l1 a run's share held a GPU with nothing else on it 58 s of the 157 s.

While the supervisor does nothing but wait for its candidate (`Lender.waiting`), a thread
watches the lock's intent file. When a timing queues there, it locks the CUDA side of the
candidate's processes with the driver's checkpoint lock (cuCheckpointProcessLock, driver 570
and later): the call returns once the work a process submitted has finished, and every CUDA
call of the process after it blocks, in any thread, until the unlock; its host work goes on.
Then the run lets go of its share and takes it again, which queues behind the timing (the
intent is writer-first), and unlocks. The candidate cannot keep a GPU while another run is
timed: what it launched is done before the share goes, and it launches nothing until the
share is back. Measured on an H200 (docs/results/session_2026-12-01l/ckpt_probe.py): the lock
of a process with a 1 s kernel in flight returned after 0.96 s, and an empty kernel of ours
then took 18 us (2.4 ms beside that kernel running: the GPU time-slices contexts); locking and
unlocking an idle process 0.2-0.7 ms; it works on our candidates' processes (not dumpable,
without CAP_SYS_PTRACE) and after CUDA IPC.

Once kineto (CUPTI) has started in a process, the driver refuses to lock it and refuses the
checkpoint calls made from it (801, CUDA_ERROR_NOT_SUPPORTED; ckpt_probe3/4/5.py): so the calls
are made by a helper process (FREEZER), and a candidate's process starts kineto just before its
timing (candidate.run_candidate; its warm-up only loads CUPTI's library: trace.preload_cupti),
after the stretch in which its supervisor lends.

What this does not cover: a process below the candidate that opens a CUDA context after the
processes were listed and before the share is back. The processes are listed again before the
share goes (a new one: no lending this time) and after it is back (a new one: `escaped`, and
this run lends no more). Driver checkpointing is Linux-only, and a process the lock cannot
take (a timeout: work in flight for longer than LOCK_TIMEOUT_MS) keeps the share as before.

Written by hand: no library lends a flock share or wraps the driver's checkpoint calls (the
CUDA Python bindings have them, but are not a dependency of ours: three ctypes calls, made in a
helper process, FREEZER below).
"""

from __future__ import annotations

import fcntl
import functools
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from ..sandbox import process_children, processes_below
from .gpulock import SharedUse, lend_path, lock_path

POLL_S = 0.01  # how often the watcher looks at the intent file
LOCK_TIMEOUT_MS = 2000  # how long the driver may take to lock a process (its submitted work finishing)
BUDGET_S = 30.0  # seconds a run lends in all, so that a stream of timings cannot starve its candidate
RETRY_AFTER_S = 0.5  # after a lock that failed, the next attempt
ANSWER_TIMEOUT_S = 10.0  # the helper's start (the driver's cuInit) and each answer, beyond a lock's own timeout


# The driver's calls are made by a helper process of ours ("km freezer"), not by the supervisor:
# asked from a supervisor, every candidate answered 801 (CUDA_ERROR_NOT_SUPPORTED) while a plain
# process asking the same candidates at the same moments got their state (session 29's
# ckpt_probe4.py); the supervisor profiles the reference with CUPTI, the helper only initialises
# the driver. It reads "state|lock|unlock PID" lines and answers "RC STATE" lines. Its pipes must
# never reach a candidate's process (one that could write "unlock" to it would run beside another
# run's timing): it starts when a timing first waits, after the run's candidate was forked, or in a
# spare supervisor's warm-up, whose candidates are spawned (exec closes them); a resident's
# candidates come from its launcher, forked before anything else (pools/resident.py). Should a
# process of a candidate's hold them anyway, it cannot be obeyed: each command carries a token the
# helper read first (its memory not dumpable), a numbered one, and a line without the token gets no
# answer; an answer that does not come in time ends the lending of this process.
FREEZER = r"""
import ctypes, sys
libc = ctypes.CDLL(None)
libc.prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL: never outlives its supervisor
libc.prctl(4, 0)  # PR_SET_DUMPABLE 0: its memory (the token) out of a candidate's reach
token = sys.stdin.readline().strip()
class Args(ctypes.Structure):
    _fields_ = [("timeoutMs", ctypes.c_uint), ("reserved0", ctypes.c_uint), ("reserved1", ctypes.c_uint64 * 7)]
if len(sys.argv) > 2:  # a stand-in for the driver (tests/verify/test_gpu_lend.py)
    ns = {}
    exec(open(sys.argv[2]).read(), ns)
    lib, ok = ns["lib"], True
else:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        calls = (lib.cuCheckpointProcessGetState, lib.cuCheckpointProcessLock, lib.cuCheckpointProcessUnlock)
        ok = lib.cuInit(0) == 0
    except (OSError, AttributeError):
        ok = False
print("ready" if ok else "unavailable", flush=True)
for line in sys.stdin if ok else ():
    parts = line.split()
    if len(parts) != 4 or parts[0] != token or not parts[3].isdigit():
        continue  # not its supervisor's: no answer at all
    _, seq, cmd, pid = parts
    st = ctypes.c_int(-1)
    if cmd == "state":
        rc = lib.cuCheckpointProcessGetState(int(pid), ctypes.byref(st))
    elif cmd == "lock":
        rc = lib.cuCheckpointProcessLock(int(pid), ctypes.byref(Args(timeoutMs=int(sys.argv[1]))))
    else:
        rc = lib.cuCheckpointProcessUnlock(int(pid), None)
    print(seq, rc, st.value, flush=True)
"""


class DriverFreeze:
    """The driver's checkpoint lock of other processes' CUDA (cuCheckpointProcess*, driver 570
    and later), through a helper process (FREEZER) started on first use and kept (its PID in
    launch.KEEP: neither a candidate's process nor a leftover). `code`: the helper's program
    (a stand-in in tests)."""

    RUNNING, LOCKED = 0, 1

    def __init__(self, code: str = FREEZER, standin: str | None = None) -> None:
        self.code = code
        self.standin = standin  # a file defining `lib`, the driver's stand-in (tests)
        self.token = os.urandom(16).hex()
        self.seq = 0
        self.proc: subprocess.Popen | None = None
        self._available: bool | None = None
        self._lock = threading.Lock()

    @property
    def available(self) -> bool:
        """Whether the driver can be asked (the helper is started here on first use)."""
        if self._available is None:
            self._start()
        return bool(self._available)

    @property
    def known_unavailable(self) -> bool:
        """Known not to work, without starting the helper to find out."""
        return self._available is False

    def _start(self) -> None:
        from ..process.launch import KEEP

        try:
            argv = [sys.executable, "-c", self.code, str(LOCK_TIMEOUT_MS), *([self.standin] if self.standin else [])]
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         text=True)
            self.proc.stdin.write(self.token + "\n")
            self.proc.stdin.flush()
        except OSError:
            self._available = False
            return
        KEEP.add(self.proc.pid)
        self._available = self._line(ANSWER_TIMEOUT_S) == "ready"
        if not self._available:
            self.close()

    def close(self) -> None:
        from ..process.launch import KEEP

        if self.proc is not None:
            KEEP.discard(self.proc.pid)
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def _line(self, timeout: float) -> str | None:
        """The helper's next answer line, None when none comes within `timeout` seconds."""
        import select

        if not select.select([self.proc.stdout], [], [], timeout)[0]:
            return None
        line = self.proc.stdout.readline()
        return line.strip() if line else None

    def _ask(self, cmd: str, pid: int) -> tuple[int, int]:
        with self._lock:
            if not self.available or self.proc is None:
                return -1, -1
            self.seq += 1
            try:
                self.proc.stdin.write(f"{self.token} {self.seq} {cmd} {int(pid)}\n")
                self.proc.stdin.flush()
                line = self._line(ANSWER_TIMEOUT_S + LOCK_TIMEOUT_MS / 1000)
                seq, rc, state = (line or "").split()
                if int(seq) != self.seq:
                    raise ValueError("an answer out of turn")
                return int(rc), int(state)
            except (OSError, ValueError):  # gone, silent or out of turn: no more lending from this process
                self._available = False
                return -1, -1

    def state(self, pid: int) -> tuple[int, int]:
        """(the driver's return code, the process's state) for `pid` (a process without CUDA
        answers an error code)."""
        return self._ask("state", pid)

    def running(self, pid: int) -> bool:
        """Whether `pid` is a process with CUDA initialised, not locked."""
        return self.state(pid) == (0, self.RUNNING)

    def lock(self, pid: int) -> int:
        """Lock `pid`'s CUDA: the driver's answer, 0 once its submitted work is done and further
        calls block (801, CUDA_ERROR_NOT_SUPPORTED, where kineto has started in it)."""
        return self._ask("lock", pid)[0]

    def unlock(self, pid: int) -> None:
        self._ask("unlock", pid)


@functools.lru_cache(maxsize=1)
def driver_freeze() -> DriverFreeze:
    return DriverFreeze()


def candidate_roots(candidate_pid: int | None, keep: Iterable[int]) -> set[int]:
    """The candidate's process and this process's other children but `keep` (its orphans,
    re-parented here: this process is a child subreaper, launch.become_subreaper)."""
    return ({candidate_pid} if candidate_pid else set()) | (set(process_children().get(os.getpid(), ())) - set(keep))


def timing_waits(device: str) -> bool:
    """Whether a timing holds the intent of `device`'s lock (it waits for the shared holders, or
    is being timed; it cannot be timed while this process holds a share)."""
    path = lock_path(device)
    if path is None:
        return False
    try:
        fd = os.open(path.with_name(path.name + ".intent"), os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the shared hold it may have taken


def _note(device: str, text: str) -> None:
    """One line to the lock's notes file (gpulock.lend_path), where it exists (a benchmark or a
    diagnosis makes it, as the events file: gpulock.events_path): what each lending attempt found."""
    path = lock_path(device)
    if path is None:
        return
    try:
        fd = os.open(lend_path(path), os.O_WRONLY | os.O_APPEND)  # no O_CREAT
    except OSError:
        return
    try:
        os.write(fd, f"{os.getpid()} {time.monotonic():.6f} {text}\n".encode()[:4000])
    except OSError:
        pass
    finally:
        os.close(fd)


class Lender:
    """Lends `share` to waiting timings while the run only waits for its candidate (`waiting`).
    `roots()` gives the candidate's processes (those below them count too); `freeze` locks and
    unlocks their CUDA (DriverFreeze, or a stand-in with its `known_unavailable`, `available`,
    `state`, `running`, `lock` and `unlock`); `settle()` runs before the share goes
    (the supervisor's own queued GPU work finished: torch.cuda.synchronize)."""

    def __init__(self, share: SharedUse, roots: Callable[[], Iterable[int]], freeze=None,
                 settle: Callable[[], None] = lambda: None, budget_s: float = BUDGET_S):
        self.share = share
        self.roots = roots
        self.freeze = freeze if freeze is not None else driver_freeze()
        self.settle = settle
        self.budget_s = budget_s
        self.lent = 0  # times the share went to a timing
        self.lent_s = 0.0  # seconds it was away (the candidate's CUDA locked)
        self.refused = 0  # times a process could not be locked (the share was kept)
        self.escaped: list[int] = []  # processes that opened a CUDA context while the share was away
        self.seen = 0  # times a waiting timing was seen
        self.nothing = 0  # ... when no process of the candidate's had CUDA to lock (the share was kept)
        self.error = ""  # what stopped the watcher, where something did (it lends no more)
        self._stop = threading.Event()
        self._retry_at = 0.0

    @property
    def active(self) -> bool:
        # a helper not started yet counts as available: it starts in the watcher, when first needed
        return (not self.freeze.known_unavailable and not self.escaped and not self.error
                and self.lent_s < self.budget_s)

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """Around a wait for the candidate's process: a lend in progress when the wait ends is
        finished (the share back, the candidate unlocked) before this returns."""
        if not self.active:
            yield
            return
        self._stop.clear()
        watcher = threading.Thread(target=self._watch, name="km-gpu-lender", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            self._stop.set()
            watcher.join()

    def _watch(self) -> None:
        try:
            while not self._stop.wait(POLL_S):
                if self.active and time.monotonic() >= self._retry_at and timing_waits(self.share.device):
                    self.seen += 1
                    self.lend_once()
        except Exception as exc:  # noqa: BLE001 - the run goes on holding its share, as without lending
            self.error = f"{type(exc).__name__}: {exc}"
            _note(self.share.device, f"error {self.error}")

    def _listing(self) -> tuple[set[int], set[int]]:
        """The candidate's processes, and those of them with CUDA running (not locked)."""
        below = processes_below(self.roots())
        return below, {pid for pid in below if self.freeze.running(pid)}

    def lend_once(self) -> bool:
        """Lock the candidate's CUDA, let the share go to the waiting timing, take it back,
        unlock. False (the share kept) when there is nothing to lock or a lock failed."""
        if not self.freeze.available:
            return False
        below, pids = self._listing()
        if not pids:  # why not: the driver's answer for each
            _note(self.share.device, f"states {[(pid, *self.freeze.state(pid)) for pid in sorted(below)]}")
        _note(self.share.device, f"seen below={sorted(below)} cuda={sorted(pids)}")
        locked: list[int] = []
        try:
            for pid in sorted(pids):
                answer = self.freeze.lock(pid)
                if answer != 0:
                    _note(self.share.device, f"refused {pid} {answer}")
                    self.refused += 1
                    self._retry_at = time.monotonic() + RETRY_AFTER_S
                    return False
                locked.append(pid)
            if not locked:
                self.nothing += 1
                self._retry_at = time.monotonic() + RETRY_AFTER_S
                return False
            # listed again: a process that opened a context meanwhile would run beside the timing
            if self._listing()[1]:
                self._retry_at = time.monotonic() + RETRY_AFTER_S
                return False
            self.settle()
            t0 = time.monotonic()
            with self.share.pause():
                pass  # the timing that waited takes the GPU now; taking it back queues behind its intent
            self.lent += 1
            self.lent_s += time.monotonic() - t0
            _note(self.share.device, f"lent {sorted(locked)} {time.monotonic() - t0:.4f} s")
            self.escaped.extend(sorted(self._listing()[1]))
            return True
        finally:
            for pid in locked:
                self.freeze.unlock(pid)

    def phases(self) -> dict[str, float]:
        """What lending cost the run, for its verdict's phases (nothing where it never lent)."""
        if not (self.seen or self.error):
            return {}
        out = {"gpu_lent": float(self.lent), "gpu_lent_s": round(self.lent_s, 4), "gpu_lend_seen": float(self.seen)}
        for key, n in (("gpu_lend_refused", self.refused), ("gpu_lend_nothing", self.nothing),
                       ("gpu_lend_escaped", len(self.escaped)), ("gpu_lend_error", int(bool(self.error)))):
            if n:
                out[key] = float(n)
        return out
