"""The timing lock: nothing else of ours runs on a GPU while it is being timed.

A GPU shared by several CUDA contexts time-slices between them: while the
next candidate's spare process opened its context and started the profiler
(`standby.py`, a few seconds of GPU work), the current candidate's timed calls
waited for the other context's slices. Measured on an H100 with guards on, a
10 us three-kernel candidate read 32 us: its rounds alternated between stretches
at 10 us and stretches at 60 us while spares warmed up (docs/results/benchmarks_history.md).

One lock file per GPU, taken with ``flock``: timing holds it exclusively (the
reference's and the candidate's rounds, driven by one process); GPU work that
may overlap other GPU work (spares opening their context and warming the
profiler) holds it shared, so warm-ups run side by side but never during a
timed round. So does the rest of a run's GPU work (inputs, the reference,
correctness checks: `SharedUse`), so that several runs may share one GPU and
none of them is timed while another's work is in flight. The kernel drops a lock when its holder dies. The lock is only
taken by harness code, before a candidate's code is loaded, and released
before it is (a candidate cannot hold it). Timed work of another program on
the same GPU is not covered.

The folder is ``KERNELMILL_GPU_LOCK_DIR`` (handed on to every worker and
candidate process: sandbox.scrubbed_env) or /dev/shm (the system temporary
folder where there is none): shared by every kernelmill run on the machine, so
two runs on one GPU do not time over each other either. A GPU is named by
``CUDA_VISIBLE_DEVICES`` and its index. No torch import.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


# a timing waits at most this long for other GPU work to let go, then times unlocked
TIMING_LOCK_TIMEOUT_S = 120.0
# the lock files' folder, where set; every worker gets it (sandbox.scrubbed_env)
LOCK_DIR_ENV = "KERNELMILL_GPU_LOCK_DIR"


def lock_path(device: str, env: dict[str, str] | None = None) -> Path | None:
    """The lock file of a CUDA device string ("cuda", "cuda:1"); None for a CPU. `env`:
    the environment of the process that will use it (default: this one's)."""
    device = str(device)
    if not device.startswith("cuda"):
        return None
    env = os.environ if env is None else env
    index = device.split(":", 1)[1] if ":" in device else "0"
    visible = env.get("CUDA_VISIBLE_DEVICES", "all").replace(",", "_").replace("/", "_") or "none"
    root = Path(os.environ.get(LOCK_DIR_ENV)
                or ("/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()))
    return root / f"kernelmill-gpu-{visible}-{index}.lock"


class Held:
    """What taking the lock cost: `wait_s` seconds, and whether it was `acquired`
    (False on a CPU, or after `timeout`: the block then runs without it)."""

    def __init__(self) -> None:
        self.wait_s = 0.0
        self.acquired = False
        self.holders: list[str] = []  # for a timing that had to wait: who held the lock then


def flock_holders(inode: int) -> list[tuple[int, str]]:
    """(PID, "READ" or "WRITE") of each process holding a flock on `inode`, from
    /proc/locks (the ones queued behind are left out); empty where it cannot be read.
    Also read from outside by benchmarks/diag/gpu_lock_share.py."""
    try:
        with open("/proc/locks") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        parts = line.split()
        if "->" in parts or len(parts) < 6 or parts[1] != "FLOCK" or parts[5].rsplit(":", 1)[-1] != str(inode):
            continue
        out.append((int(parts[4]), parts[3]))
    return out


def _holders(fd: int) -> list[str]:
    """The other processes holding the lock file `fd` names, as "PID: READ|WRITE command
    line" (shortened)."""
    try:
        ino = os.fstat(fd).st_ino
    except OSError:
        return []
    out = []
    for pid, access in flock_holders(ino):
        if pid == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            cmd = "?"
        out.append(f"{pid}: {access} {' '.join(cmd.split()[2:5])}"[:120])
    return out


def _open(path: Path) -> int | None:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        return None


def _flock(fd: int, mode: int, deadline: float | None) -> bool:
    """flock `fd`; with a deadline, poll until then (False when it passed)."""
    if deadline is None:
        fcntl.flock(fd, mode)
        return True
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)


# -- who held the lock, for benchmarks ---------------------------------------------
# Beside the lock file, `<lock>.events`: while that file exists (a benchmark makes it and
# removes it: benchmarks/diag/lock_events.py), every hold appends one line to it,
# "PID S|X LABEL T_ASKED T_HELD T_LET_GO ACQUIRED" (time.monotonic, system-wide on Linux,
# so lines of different processes compare). /proc/locks names a holder by its PID only:
# the same zygote-forked process is a spare warming up, then a supervisor; the labels say
# which hold of ours kept a timing waiting. One open() that fails costs a few
# microseconds a hold where the file does not exist.
def events_path(path: Path) -> Path:
    return path.with_name(path.name + ".events")


def lend_path(path: Path) -> Path:
    """Beside lock file `path`, the lenders' notes (measure/gpu_lend.py), written while it exists."""
    return path.with_name(path.name + ".lend")


def _log_hold(path: Path, exclusive: bool, label: str, t_asked: float, t_held: float, acquired: bool) -> None:
    try:
        fd = os.open(events_path(path), os.O_WRONLY | os.O_APPEND)  # no O_CREAT: only while a benchmark asks
    except OSError:
        return
    try:  # one write under PIPE_BUF bytes to an O_APPEND file: lines of processes do not mix
        os.write(fd, (f"{os.getpid()} {'X' if exclusive else 'S'} {label or '-'} {t_asked:.6f} "
                      f"{t_held:.6f} {time.monotonic():.6f} {int(acquired)}\n").encode())
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def gpu_lock(device: str, exclusive: bool, timeout: float | None = None,
             behind_timing_s: float | None = None, label: str = "",
             env: dict[str, str] | None = None) -> Iterator[Held]:
    """Hold the device's timing lock (exclusive for timing, shared for other GPU
    work) for the block; a no-op for a CPU or where the file cannot be made.
    With `timeout`, a holder that never lets go (a spare's warm-up stuck in the
    driver) costs at most that long: the block then runs unlocked and says so.

    Timings go first: a timing that waits holds a second file (the intent)
    exclusively, and shared holders pass through the
    intent before they take the lock, so several runs sharing a GPU cannot keep
    a timing waiting by handing the shared lock to each other. A shared holder
    queues there at most `behind_timing_s` seconds (None: as long as it takes,
    0: not at all): a candidate's warm-up passes a bound, since the supervisor
    of its run may hold the lock shared while it waits for that warm-up, and a
    timing waits for the supervisor. `label` names the hold in the events file
    (`events_path`), where a benchmark asked for one. `env`: the environment of the
    process whose GPU work the hold covers (its CUDA_VISIBLE_DEVICES names the GPU),
    where that is not this one (the runner holding it for a sanitizer's process)."""
    held = Held()
    path = lock_path(device, env)
    fd = _open(path) if path is not None else None
    if fd is None:
        yield held
        return
    intent = _open(path.with_name(path.name + ".intent")) if (exclusive or behind_timing_s != 0.0) else None
    t0 = time.monotonic()
    deadline = None if timeout is None else t0 + timeout
    try:
        if exclusive:
            # timings queue among themselves on the intent, then wait for the shared holders
            ok = intent is None or _flock(intent, fcntl.LOCK_EX, deadline)
            if ok and not _flock(fd, fcntl.LOCK_EX, time.monotonic()):  # busy: say by whom
                held.holders = _holders(fd)
            held.acquired = ok and _flock(fd, fcntl.LOCK_EX, deadline)
        else:
            # not while a timing waits (or, bounded, not for longer than behind_timing_s)
            queue_until = deadline if behind_timing_s is None else time.monotonic() + behind_timing_s
            ok = intent is None or _flock(intent, fcntl.LOCK_SH, queue_until) or behind_timing_s is not None
            held.acquired = ok and _flock(fd, fcntl.LOCK_SH, deadline)
            if intent is not None:
                os.close(intent)  # a shared holder lets the next timing queue at once
                intent = None
        held.wait_s = time.monotonic() - t0
        yield held
    finally:
        if exclusive and held.acquired:
            _count_timing(path)  # still alone on the GPU: no other holder counts at the same time
        _log_hold(path, exclusive, label, t0, t0 + held.wait_s, held.acquired)
        os.close(fd)  # closing drops the lock
        if intent is not None:
            os.close(intent)


# -- warm-ups open their contexts one at a time ----------------------------------
# The driver opens contexts one at a time: on an H200 one took 0.11 s alone and four
# started at the same instant 0.38-0.44 s each (diag/warm_sections.py). Beside two runs
# a warm-up's context hold was 1.2-1.4 s (median) and the timings waited 0.48 s each
# for the lock, most of it behind context openings (diag/lock_events.py, issue 14).
# Taking turns (a lane file, held exclusively before the lock itself is taken shared),
# each hold is short (0.3-0.45 s under load) and a timing that comes meanwhile waits for
# one opening, not a pile of them: the next one queues behind the timing's intent. Two
# lanes made each opening twice as long. A warm-up waits for its turn at most
# CTX_QUEUE_MAX_S, then opens its context anyway.
CTX_QUEUE_MAX_S = 10.0
CTX_LANES = 1  # contexts opened at once by warm-ups on one GPU


def _ctx_turn(path: Path) -> int | None:
    """A turn among the warm-ups opening a context on the GPU of lock file `path`: the
    descriptor of one of CTX_LANES lane files, held exclusively (None after CTX_QUEUE_MAX_S)."""
    fds = [fd for fd in (_open(path.with_name(f"{path.name}.ctx{i}")) for i in range(CTX_LANES)) if fd is not None]
    deadline = time.monotonic() + CTX_QUEUE_MAX_S
    try:
        while fds:
            for fd in fds:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    fds.remove(fd)
                    return fd
                except BlockingIOError:
                    pass
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.005)
        return None
    finally:
        for fd in fds:
            os.close(fd)


@contextmanager
def warm_section(device: str, part: str, who: str, behind_timing_s: float | None = None) -> Iterator[Held]:
    """The GPU lock held shared around one GPU step of a warm-up (guards/trace.warm_cuda's
    `part`: "ctx", "libs", "kernels"), labelled `who-part`; a "ctx" step first waits for
    its turn among the warm-ups opening contexts on this GPU."""
    path = lock_path(device)
    turn = _ctx_turn(path) if (path is not None and part == "ctx") else None  # None: open it anyway
    try:
        with gpu_lock(device, exclusive=False, behind_timing_s=behind_timing_s, label=f"{who}-{part}") as held:
            yield held
    finally:
        if turn is not None:
            os.close(turn)


# -- spares open their context right after a timing -----------------------------
# A spare started while a candidate runs on its GPU (standby.py) would open its CUDA
# context just when that candidate comes to its timing, which then waits. Each timing
# counts itself in a file beside the lock; a spare started during a run waits, before
# its warm-up's GPU steps, until the count passes what it was at its start (the run's
# timing is over), until its job arrives (stdin readable: it is needed now), or at most
# `max_s`. While a whole warm-up held the lock (the profiler's start-up, seconds of host
# work, included), the gate alone did not help: on an H200 the median timing waited
# 2.8-4.5 s of a 5.5-7 s run either way (docs/results/benchmarks_history.md, issue 14); now only the
# context and one profiled call hold it (guards/trace.warm_cuda).
GATE_ENV = "KERNELMILL_WARM_AFTER"  # "COUNT MAX_S", set by standby.py for a spare started during a run


def _count_file(path: Path) -> Path:
    return path.with_name(path.name + ".timed")


def _count_timing(path: Path) -> None:
    f = _count_file(path)
    tmp = f.with_name(f"{f.name}.{os.getpid()}")
    try:
        tmp.write_text(str(timings_done(path) + 1))
        tmp.replace(f)  # readers see the old number or the new one, never a part
    except OSError:
        pass


def timings_done(path: Path | None) -> int:
    """How many timings have finished on the GPU of lock file `path` (0 if none or unknown)."""
    if path is None:
        return 0
    try:
        return int(_count_file(path).read_text() or 0)
    except (OSError, ValueError):
        return 0


def gate_env(device: str, env: dict[str, str], max_s: float) -> dict[str, str]:
    """The variable that makes a spare started now (with environment `env`) warm up
    after the next timing on its GPU; empty on a CPU."""
    path = lock_path(device, env)
    return {} if path is None else {GATE_ENV: f"{timings_done(path)} {max_s}"}


def wait_for_timing(device: str, interrupt_fd: int | None = 0) -> float:
    """In a spare, before its warm-up: wait as GATE_ENV says (nothing where it is not
    set). Returns the seconds waited. `interrupt_fd` readable (the job came) ends it."""
    import select

    spec = os.environ.get(GATE_ENV, "").split()
    path = lock_path(device)
    if len(spec) != 2 or path is None:
        return 0.0
    try:
        after, max_s = int(spec[0]), float(spec[1])
    except ValueError:
        return 0.0
    t0 = time.monotonic()
    while timings_done(path) <= after and time.monotonic() - t0 < max_s:
        if interrupt_fd is None:
            time.sleep(0.01)
        elif select.select([interrupt_fd], [], [], 0.01)[0]:
            break
    return time.monotonic() - t0


class SharedUse:
    """A run's GPU work outside its timed rounds, holding the lock shared: the
    runs sharing a GPU (`VerifyConfig.runs_per_gpu`) draw inputs, run
    references and check candidates side by side, and a timing of any of them
    waits until none of that is in flight. `pause()` lets go around the run's
    own timing; `wait_s` sums what taking it cost. `label` names its holds in
    the lock's events file (`pause(then=)` renames those after the pause)."""

    def __init__(self, device: str, label: str = "run"):
        self.device = str(device)
        self.label = label
        self.wait_s = 0.0
        self._cm = None

    def __enter__(self) -> "SharedUse":
        self._take()
        return self

    def __exit__(self, *exc) -> None:
        self._drop()

    def _take(self) -> None:
        if self._cm is None:
            self._cm = gpu_lock(self.device, exclusive=False, timeout=TIMING_LOCK_TIMEOUT_S, label=self.label)
            self.wait_s += self._cm.__enter__().wait_s

    def _drop(self) -> None:
        if self._cm is not None:
            cm, self._cm = self._cm, None
            cm.__exit__(None, None, None)

    @contextmanager
    def pause(self, then: str | None = None) -> Iterator[None]:
        self._drop()
        try:
            yield
        finally:
            self.label = then or self.label
            self._take()
