"""Running one phase of one candidate in a fresh, contained process.

What it protects against:
* crashes of any kind (segfault, abort, ``os._exit``, CUDA errors): the child
  is a separate process, its exit status becomes a result, never our crash;
* hangs: a wall-clock deadline, after which the whole process group is killed;
* runaway memory: RLIMIT_AS on CPU-only runs (CUDA needs huge virtual
  reservations, so there) plus a resident-memory watchdog over the process
  group on every run; in a guarded run the group's leader is the harness's
  supervisor (no candidate code runs in it), and its memory (the reference, the
  input sets and their answers) is held to a limit of its own, apart from the
  candidate's processes;
* fork bombs: RLIMIT_NPROC where it applies (not for root) plus the same
  watchdog counting the group's processes;
* leaked secrets: the child gets a scrubbed environment (an allow-list; no
  tokens, keys or KERNELMILL_* variables but the GPU lock's folder), and its own
  HOME and TMPDIR;
* leftovers: after the child exits, its process group is killed, so no
  background process or thread of the candidate outlives the phase.

What it does not do: it is not a security boundary against a determined
attacker (same user, same filesystem; a process that calls setsid() escapes
the group kill). Run untrusted code at scale inside a container or VM.
"""

from __future__ import annotations

import os
import resource
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .measure.gpulock import LOCK_DIR_ENV

_ENV_ALLOW = (
    "PATH", "LANG", "LC_ALL", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES",
    "CC", "CXX", "NVCC", "TORCH_CUDA_ARCH_LIST", "TORCH_EXTENSIONS_DIR", "TRITON_INTERPRET",
    "TRITON_CACHE_DIR", "TRITON_PTXAS_PATH", "MAX_JOBS", "PYTHONPATH", "VIRTUAL_ENV",
    "CUDA_MODULE_LOADING", "NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
    "NVSHMEM_DISABLE_NVLS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYENV_VERSION", "PYENV_ROOT",
    # TileLang: its caches and target (set per phase by backends.Backend.env), and an
    # nvcc time limit an operator may set
    "TILELANG_CACHE_DIR", "TVM_FFI_CACHE_DIR", "TILELANG_DEFAULT_TARGET", "TILELANG_COMPILE_TIMEOUT_SECONDS",
)
_SECRET_WORDS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "CREDENTIAL")


def scrubbed_env(extra: dict[str, str] | None = None, home: str | None = None) -> dict[str, str]:
    """The environment a candidate sees: an allow-list, then `extra`."""
    env = {}
    for k in _ENV_ALLOW:
        v = os.environ.get(k)
        if v is not None and not any(w in k.upper() for w in _SECRET_WORDS):
            env[k] = v
    # the GPU lock's folder (gpulock.LOCK_DIR_ENV), no secret: the workers, the
    # candidates' warm-ups and the runner must all take the lock in the same place
    lock_dir = os.environ.get(LOCK_DIR_ENV)
    if lock_dir:
        env[LOCK_DIR_ENV] = lock_dir
    # our package must be importable by the worker even when not installed
    src = str(Path(__file__).resolve().parents[2])  # the folder that holds kernelmill/
    # and the user's entries mean what they meant where the harness was started: a relative
    # one (`PYTHONPATH=src`; an empty one is that folder) resolved in a worker's own folder
    # would name a path under the work folder, and a library that scans sys.path
    # (importlib.metadata, under torch.compile) opened it as another candidate's (shared_answers)
    given = [os.path.abspath(e or os.curdir) for e in env.get("PYTHONPATH", "").split(os.pathsep)] \
        if env.get("PYTHONPATH") else []
    env["PYTHONPATH"] = os.pathsep.join([src, *given])
    if home:
        env["HOME"] = home
        env["TMPDIR"] = home
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


@dataclass
class PhaseResult:
    returncode: int | None
    timed_out: bool = False
    killed_reason: str = ""  # memory | harness_memory | procs | interrupted
    stdout: str = ""
    stderr: str = ""
    wall_s: float = 0.0
    peak_rss_mb: float = 0.0  # most resident memory of the group at once, summed (shared pages in each)
    # a guarded run's two sides apart ({"harness": MB, "candidate": MB}: the supervisor, the rest of
    # the group), each side's own peak; empty where the group is watched whole
    peak_by_side: dict = field(default_factory=dict)

    @property
    def signal_name(self) -> str:
        if self.returncode is not None and self.returncode < 0:
            try:
                return signal.Signals(-self.returncode).name
            except ValueError:
                return f"signal {-self.returncode}"
        return ""


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _tail(path: Path, limit: int, start: int = 0) -> str:
    """What `path` holds after byte `start`, at most `limit` bytes (head and tail)."""
    try:
        size = path.stat().st_size - start
        with open(path, "rb") as fh:
            fh.seek(start)
            if size <= limit:
                data = fh.read()
            else:
                head = fh.read(limit // 4)
                fh.seek(start + size - (limit - limit // 4))
                data = head + f"\n[... {size - limit} bytes cut ...]\n".encode() + fh.read()
        return data.decode("utf-8", errors="replace")
    except OSError:
        return ""


# One scan of /proc serves every watch loop that asks within this many seconds. Each
# watched process (a build, a run) used to scan /proc itself every 0.1 s and read the
# group's smaps_rollup (13 ms for one process with torch imported, more with a CUDA
# context): with a dozen builds watched at once that was cores of the harness's CPU
# in a batch that is CPU-bound (issue 14, benchmarks/cpu_by_process.py)
_SCAN_MAX_AGE_S = 0.05
_scan_lock = threading.Lock()
_scan: tuple[float, dict[int, list[int]]] = (float("-inf"), {})


def _group_members(pgid: int, max_age: float = 0.0) -> list[int]:
    """The live processes of group `pgid`, from a scan of /proc at most `max_age` s old."""
    global _scan
    with _scan_lock:
        when, groups = _scan
        now = time.monotonic()
        if now - when > max_age:
            groups = _scan_groups()
            _scan = (now, groups)
    return groups.get(pgid, [])


def _scan_groups() -> dict[int, list[int]]:
    groups: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            # fields[0] is the state, fields[2] the process group
            if fields[0] != b"Z":
                groups.setdefault(int(fields[2]), []).append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue
    return groups


def process_children() -> dict[int, list[int]]:
    """ppid -> the pids of every process this one can see in /proc."""
    out: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        out.setdefault(ppid, []).append(int(entry.name))
    return out


def processes_below(roots) -> set[int]:
    """`roots` (pids; 0 and None left out) and every process below them."""
    kids = process_children()
    seen: set[int] = set()
    todo = [r for r in roots if r]
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            todo.extend(kids.get(pid, ()))
    return seen


_PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20


def _resident_mb(pids: list[int]) -> float:
    """The group's resident memory, summed (/proc/PID/statm: no page walk): never less
    than its proportional set size, since pages shared after a fork count in each."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm", "rb") as fh:
                total += int(fh.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total * _PAGE_MB


def _memory_mb(pids: list[int]) -> float:
    """Proportional set size of the group: forked children share pages
    copy-on-write, and summing their RSS would count those pages many times.
    Costly (the kernel walks each process's pages): read only when `_resident_mb`,
    its upper bound, is over the limit."""
    total_kb = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as fh:
                for line in fh:
                    if line.startswith("Pss:"):
                        total_kb += int(line.split()[1])
                        break
        except (OSError, IndexError, ValueError):
            continue
    return total_kb / 1024


def _kill_group(pgid: int) -> None:
    for _ in range(50):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            return
        except PermissionError:
            return
        if not _group_members(pgid):
            return
        time.sleep(0.02)


class Sandbox:
    """Runs commands with limits; `stop()` from another thread kills what runs."""

    def __init__(self, memory_limit_gb: float, max_procs: int, output_limit: int,
                 limit_address_space: bool, harness_memory_gb: float | None = None):
        self.memory_limit_mb = memory_limit_gb * 1024
        # a guarded run's supervisor (`watch(harness_leader=True)`); None: counted with the rest
        self.harness_limit_mb = harness_memory_gb * 1024 if harness_memory_gb else None
        self.max_procs = max_procs
        self.output_limit = output_limit
        self.limit_address_space = limit_address_space
        self._live: set[int] = set()
        self._stopping = False

    def stop(self) -> None:
        self._stopping = True
        for pgid in list(self._live):
            _kill_group(pgid)

    def rlimits(self, harness: bool = False) -> dict[str, int]:
        """Limits the worker applies to itself first thing (a preexec_fn is not
        safe in our multi-threaded parent). `harness`: a guarded run's supervisor's,
        whose address space is held to the harness's limit; the candidate's process
        lowers its own to the candidate's (process/candidate.py)."""
        limits = {"RLIMIT_CORE": 0, "RLIMIT_NPROC": self.max_procs * 4}
        if self.limit_address_space:
            # headroom over the resident limit for the interpreter's own mappings
            mb = self.harness_limit_mb if harness and self.harness_limit_mb else self.memory_limit_mb
            limits["RLIMIT_AS"] = int((mb + 4096) * 2**20)
        return limits

    def run(self, argv: list[str], cwd: Path, env: dict[str, str], timeout: float,
            harness_leader: bool = False) -> PhaseResult:
        return self.watch(self.start(argv, cwd, env), timeout, harness_leader=harness_leader)

    def start(self, argv: list[str], cwd: Path, env: dict[str, str], stdin_pipe: bool = False) -> subprocess.Popen:
        """Start a process in its own group; `watch` enforces the limits. With
        `stdin_pipe`, the process can be started ahead and given its work later
        (verify/standby.py); its stdout/stderr go to files in `cwd` either way."""
        return self._started(cwd, lambda out, err: subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=out, stderr=err, start_new_session=True,
            stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL))

    def start_forked(self, zygote, args: list[str], cwd: Path, env: dict[str, str],
                     stdin_pipe: bool = False, module: str = "kernelmill.verify.process.worker"):
        """`start` for ``python -m MODULE ARGS`` forked by `zygote` (pools/zygote.py)
        instead of a fresh interpreter: the same session of its own, folder, environment
        and output files."""
        return self._started(cwd, lambda out, err: zygote.start(args, cwd, env, stdin_pipe, out.fileno(),
                                                                err.fileno(), module=module))

    def _started(self, cwd: Path, launch):
        with open(cwd / "stdout.txt", "wb") as out, open(cwd / "stderr.txt", "wb") as err:
            proc = launch(out, err)
        proc.km_cwd = Path(cwd)  # where its output files are
        self._live.add(proc.pid)
        return proc

    def discard(self, proc: subprocess.Popen) -> None:
        """Kill a started process that will not be watched (a spare not used)."""
        _kill_group(proc.pid)
        proc.wait()
        self._live.discard(proc.pid)

    def watch(self, proc: subprocess.Popen, timeout: float, done: Path | None = None,
              stays: bool = False, harness_leader: bool = False) -> PhaseResult:
        """Wait for `proc` under the deadline and the memory and process watchdogs
        (counted from now), then kill whatever is left of its group. `done`: a file the
        process writes last (atomically) before it exits; once it exists the watch ends
        there, and the process's exit (a CUDA context torn down: 0.15-0.23 s a run on an
        H200, issue 14) and its group's killing go on on a thread of their own, so the
        caller's next job does not wait for them. Its `returncode` is then None.
        `stays`: a process that takes one job after another (resident.py): once `done`
        exists it is left running; otherwise (deadline, watchdog) its group is killed as
        any other. Its output is then what it wrote since this watch began.
        `harness_leader`: `proc` is a guarded run's supervisor, harness code holding the
        reference, the input sets and their answers (under strict, 11 trials of a full-size
        task: 14 GiB for a 268 MB ReLU, session 14); its memory is held to the harness's
        limit and the candidate's processes (the rest of the group) to the memory limit,
        so the harness's own tensors never count against the candidate."""
        out_path, err_path = proc.km_cwd / "stdout.txt", proc.km_cwd / "stderr.txt"
        since = (_size(out_path), _size(err_path)) if stays else (0, 0)
        pgid = proc.pid
        t0 = time.monotonic()
        timed_out, reason, peak, finished = False, "", 0.0, False
        peaks: dict[str, float] = {}
        exited = _exit_fd(proc.pid)
        try:
            poll = 0.01
            while proc.poll() is None:
                if done is not None and done.exists():
                    finished = True
                    break
                if self._stopping:
                    reason = "interrupted"
                    break
                if time.monotonic() - t0 > timeout:
                    timed_out = True
                    break
                members = _group_members(pgid, _SCAN_MAX_AGE_S)
                if len(members) > self.max_procs:
                    reason = "procs"
                    break
                # (pids, limit, reason) per side: the whole group, or the supervisor apart
                sides = ([([p for p in members if p != pgid], self.memory_limit_mb, "memory"),
                          ([p for p in members if p == pgid], self.harness_limit_mb, "harness_memory")]
                         if harness_leader and self.harness_limit_mb else [(members, self.memory_limit_mb, "memory")])
                rss = [_resident_mb(pids) for pids, _, _ in sides]
                peak = max(peak, sum(rss))
                for (_, _, why), r in zip(sides, rss):
                    peaks[why] = max(peaks.get(why, 0.0), r)
                reason = next((why for (pids, limit, why), r in zip(sides, rss)
                               if r > limit and _memory_mb(pids) > limit), "")
                if reason:
                    break
                if exited is None:
                    time.sleep(poll)
                else:  # wakes as the process exits, not up to `poll` later (~40 ms a run)
                    select.select([exited], [], [], poll)
                poll = min(poll * 1.5, 0.02 if done is not None else 0.1)
        finally:
            if exited is not None:
                os.close(exited)
            if finished and stays:
                pass  # it waits for its next job (resident_pool.Residents)
            elif finished:
                threading.Thread(target=self._end, args=(proc, pgid), daemon=True, name="km-reap").start()
            else:
                self._end(proc, pgid)
        return PhaseResult(
            # read before the reaping thread can set it: a finished watch's code is None
            returncode=None if finished else proc.returncode, timed_out=timed_out, killed_reason=reason,
            stdout=_tail(out_path, self.output_limit, since[0]), stderr=_tail(err_path, self.output_limit, since[1]),
            wall_s=time.monotonic() - t0, peak_rss_mb=peak,
            peak_by_side=({"harness": round(peaks["harness_memory"], 1), "candidate": round(peaks["memory"], 1)}
                          if "harness_memory" in peaks else {}),
        )

    def _end(self, proc: subprocess.Popen, pgid: int) -> None:
        _kill_group(pgid)
        proc.wait()
        self._live.discard(pgid)


def _exit_fd(pid: int) -> int | None:
    """A descriptor that becomes readable when process `pid` exits (Linux 5.3+
    pidfd); None where the system has none (the watch loop then sleeps)."""
    try:
        return os.pidfd_open(pid)
    except (OSError, AttributeError):
        return None


def python_argv(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", module, *args]


def apply_rlimits(limits: dict[str, int]) -> None:
    """Called by the worker on itself; limits we may not set are skipped."""
    for name, value in limits.items():
        try:
            resource.setrlimit(getattr(resource, name), (value, value))
        except (ValueError, OSError, AttributeError):
            pass


def lower_priority(increment: int) -> None:
    """Lower this process's CPU priority by `increment` (0-19; its children inherit
    it), as a build worker does to itself (VerifyConfig.build_nice); a system that
    refuses leaves it as it was."""
    if increment > 0:
        try:
            os.nice(increment)
        except OSError:
            pass


def idle_priority() -> bool:
    """Run this process (and its children) only on otherwise idle CPU time
    (SCHED_IDLE): for work nothing waits for, such as a precompiled header built
    in the background, which at nice 10 beside the builds of a cold batch took the
    CPU of ~2 compiles from them and served none (all had started). False where
    the system refuses."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        return True
    except (OSError, AttributeError):
        return False
