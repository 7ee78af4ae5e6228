"""A supervisor that stays: one run worker takes one guarded job after another
(``worker resident DIR DEVICE AHEAD``; the runner's side is resident_pool.py).

A spare (standby.py) supervises one candidate and exits, so every candidate on a
GPU cost two CUDA contexts: its supervisor's and its own. The driver opens them one
at a time (0.11 s alone, 0.3-0.45 s under load on an H200) and never during a
timing, which made two contexts and one timing per candidate the ceiling of that
design (~55-59 candidates/min, docs/benchmarks.md, issue 14). Here the supervisor's
context, cuBLAS and cuDNN open once for the life of the process:

    resident (trusted: the reference, its outputs, the judge; one CUDA context)
      ├─ launcher: forked first, torch imported, CUDA never touched, no job ever read
      │    └─ forks each candidate's process, which is then re-parented to the resident
      │       (a double fork; the resident is a child subreaper), so the resident
      │       waits for it and reaps what it leaves, as for a spare's own child
      └─ the candidates' processes of the next AHEAD jobs, warming up (their context,
         the profiler) while earlier jobs run: each takes exactly one job

What every job still gets new: the candidate's process (forked from the launcher,
whose memory never held anything of a task, as `launch.prestart` requires), its
folders, its environment (the job's: `adopt_env` against what the resident started
with), the reference's module (loaded from the job's source), and the supervisor's
numerics settings and allocator cache as they were before the first job (`_Baseline`).
What carries over: the resident's CUDA context and library handles, its imports and
the GPU facts it read once. A job whose process group is killed (deadline, memory)
takes the resident with it; the pool starts another.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import sys
import time
from pathlib import Path

from .launch import KEEP, Launched, _dirs, _spawn, become_subreaper, run_child

REPARENT_WAIT_S = 2.0  # longest a forked candidate's process waits to become the resident's child
LAUNCH_TIMEOUT_S = 30.0  # longest the resident waits for its launcher's answer (then it starts them fresh)


class Launcher:
    """The resident's end of its launcher: `launch` forks a candidate's process for a
    job folder, as `launch.prestart` does, and the resident becomes its parent."""

    def __init__(self):
        import torch

        if torch.cuda.is_initialized():  # its children could not open a CUDA context
            raise RuntimeError("the launcher must be forked before this process touches CUDA")
        self.sock, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                self.sock.close()
                _launcher_main(child)
            finally:
                os._exit(0)
        child.close()
        self.sock.settimeout(LAUNCH_TIMEOUT_S)
        self.pid = pid
        KEEP.add(pid)

    def launch(self, phase_dir: Path, device: str, env: dict[str, str] | None = None) -> Launched:
        """The candidate's process for the job whose folder is `phase_dir`; `env`:
        variables it warms up under (a gate: gpulock.gate_env)."""
        cdir, priv = _dirs(Path(phase_dir))
        r, w = os.pipe()
        rr, rw = os.pipe()
        cuda = device if str(device).startswith("cuda") else None
        try:
            msg = {"cdir": str(cdir), "priv": str(priv), "cuda": cuda, "env": env or {}}
            socket.send_fds(self.sock, [json.dumps(msg).encode()], [r, rw])
            data = self.sock.recv(4096)
            if not data:
                raise RuntimeError("the resident's launcher stopped")
            pid = int(json.loads(data)["pid"])
        except BaseException:
            for fd in (w, rr):
                os.close(fd)
            raise
        finally:
            os.close(r)
            os.close(rw)
        return Launched(cdir, priv, pid, w, None, rr, warms=cuda is not None)

    def close(self, kill: bool = False) -> None:
        """Stop the launcher: it reads EOF and exits, or (`kill`: it stopped answering) is killed."""
        self.sock.close()
        if kill:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        KEEP.discard(self.pid)


def _launcher_main(sock: socket.socket) -> None:
    """The launcher's loop: for each request, fork; the child forks the candidate's
    process, sends its pid and exits at once, so the candidate's process is re-parented
    to the nearest subreaper above it: the resident."""
    from .loading import die_with_parent, name_process

    die_with_parent()
    name_process("km launcher")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # the resident's stdin carries its jobs' paths
    os.close(null)
    resident = os.getppid()
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, 65536, 2)
        except OSError:
            return
        if not data:
            return
        msg = json.loads(data)
        mid = os.fork()
        if mid == 0:
            try:
                child = os.fork()
                if child:
                    sock.send(json.dumps({"pid": child}).encode())
                    os._exit(0)
                sock.close()
                _candidate_child(msg, fds, resident, os.getppid())
            finally:
                os._exit(70)
        for fd in fds:
            os.close(fd)
        os.waitpid(mid, 0)


def _candidate_child(msg: dict, fds: list[int], resident: int, middle: int) -> None:
    """In the candidate's process: wait to be the resident's child (its death signal
    must name the resident, not the short-lived process between), then `run_child`."""
    deadline = time.monotonic() + REPARENT_WAIT_S
    while os.getppid() == middle and time.monotonic() < deadline:
        time.sleep(0.0005)
    if os.getppid() != resident:  # the resident is gone (or never took us): nothing to serve
        os._exit(0)
    os.environ.update(msg.get("env") or {})
    r, rw = fds
    run_child(Path(msg["cdir"]), Path(msg["priv"]), r, rw, msg.get("cuda"))


class _Baseline:
    """The supervisor's process-wide settings before its first job, put back after each
    job: a reference may change them (a task module that sets cudnn.benchmark, the
    default dtype, the matmul precision), and a fresh process per job never saw that."""

    def __init__(self):
        import torch

        self.flags = self._read(torch)
        self.dtype = torch.get_default_dtype()
        self.threads = torch.get_num_threads()
        # what exists now (torch, our modules, the warm-up's objects) is never collected:
        # the collection after each job then walks only what that job made (0.07 s -> ~0)
        gc.freeze()

    @staticmethod
    def _read(torch) -> dict:
        m, c = torch.backends.cuda.matmul, torch.backends.cudnn
        return {"matmul_tf32": m.allow_tf32, "fp16_reduced": m.allow_fp16_reduced_precision_reduction,
                "bf16_reduced": m.allow_bf16_reduced_precision_reduction, "cudnn_tf32": c.allow_tf32,
                "cudnn_benchmark": c.benchmark, "cudnn_deterministic": c.deterministic, "cudnn_enabled": c.enabled,
                "precision": torch.get_float32_matmul_precision(),
                "deterministic": torch.are_deterministic_algorithms_enabled(),
                "deterministic_warn": torch.is_deterministic_algorithms_warn_only_enabled(),
                "grad": torch.is_grad_enabled()}

    def restore(self) -> bool:
        """Put the settings back; False when this process's CUDA context no longer works."""
        import linecache

        import torch

        f = self.flags
        if self._read(torch) != f:  # set only what differs: the first use_deterministic_algorithms costs ~1 s
            m, c = torch.backends.cuda.matmul, torch.backends.cudnn
            torch.set_float32_matmul_precision(f["precision"])  # before allow_tf32: it sets that too
            m.allow_tf32, c.allow_tf32 = f["matmul_tf32"], f["cudnn_tf32"]
            m.allow_fp16_reduced_precision_reduction = f["fp16_reduced"]
            m.allow_bf16_reduced_precision_reduction = f["bf16_reduced"]
            c.benchmark, c.deterministic, c.enabled = f["cudnn_benchmark"], f["cudnn_deterministic"], f["cudnn_enabled"]
            if (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()) \
                    != (f["deterministic"], f["deterministic_warn"]):
                torch.use_deterministic_algorithms(f["deterministic"], warn_only=f["deterministic_warn"])
            torch.set_grad_enabled(f["grad"])
        if torch.get_default_dtype() != self.dtype:
            torch.set_default_dtype(self.dtype)
        if torch.get_num_threads() != self.threads:
            torch.set_num_threads(self.threads)
        if "torch._dynamo" in sys.modules:  # a compiled baseline's caches (verify/compiled.py)
            sys.modules["torch._dynamo"].reset()
        sys.modules.pop("reference", None)
        for label in [k for k in linecache.cache if k.startswith("<task ")]:
            linecache.cache.pop(label, None)
        gc.collect()
        if torch.cuda.is_initialized():
            try:
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
            except RuntimeError as exc:  # torch.AcceleratorError is one: a sticky error stays for good
                print(f"resident: its CUDA context is broken ({str(exc).splitlines()[0]}); leaving", file=sys.stderr)
                return False
        return True


def serve(folder: str, device: str, ahead: int, t_start: float) -> None:
    """The resident's life: the launcher forked, the candidates' processes of the first
    `ahead` jobs started, its own warm-up, then one job per line on stdin (the job file's
    path; the job's folder is that file's folder) until EOF. The pool names the n-th
    job's folder DIR/job-n, which is where the process for it was started; a job
    elsewhere gets one started when it comes."""
    import torch  # noqa: F401 - before the launcher's fork: its children start with it imported

    from .standby import adopt_env
    from .worker import do_job, write_result

    started_with = dict(os.environ)
    become_subreaper()
    launcher = Launcher()
    folder_p, n_started, ready = Path(folder), 0, {}

    def start_next(gated: bool) -> None:
        nonlocal n_started
        n_started += 1
        where = folder_p / f"job-{n_started}"
        where.mkdir(exist_ok=True)
        env = {}
        if gated:  # started during a job: its warm-up's GPU steps after that job's timing (gpulock.py)
            from .gpulock import gate_env
            from .standby import GATE_MAX_S

            env = gate_env(device, dict(os.environ), GATE_MAX_S)
        ready[where.resolve()] = _keep(start(where, env))

    def start(where: Path, env: dict | None = None) -> Launched:
        """The candidate's process for the job folder `where`: from the launcher, or, once
        the launcher is gone (a candidate can kill it: same user), a fresh interpreter
        (launch._spawn: slower, as clean)."""
        nonlocal launcher
        if launcher is not None:
            try:
                return launcher.launch(where, device, env)
            except (OSError, RuntimeError, ValueError) as exc:
                print(f"resident: the launcher failed ({exc}); candidates' processes start fresh", file=sys.stderr)
                launcher.close(kill=True)
                launcher = None
        cdir, priv = _dirs(Path(where))
        return _spawn(cdir, priv, device)

    for _ in range(max(1, ahead)):
        start_next(gated=False)
    warm_s = _warm_up(device)
    baseline = _Baseline()
    jobs = 0
    while True:
        t_ready = time.time()
        line = sys.stdin.readline().strip()
        if not line:
            break
        job_path = Path(line)
        try:
            written = os.stat(job_path).st_mtime
        except OSError:
            written = t_ready
        from .job import RunJob

        job = RunJob.read(job_path, delete=True)
        t_job = time.time()
        jobs += 1
        os.environ.clear()
        os.environ.update(started_with)
        adopt_env(job.env or {}, started_with)
        launched = _alive(ready.pop(job_path.parent.resolve(), None))
        fresh = launched is None
        if fresh:
            launched = start(job_path.parent)
        KEEP.discard(launched.pid)
        start_next(gated=True)
        marks = {"resident_jobs": jobs, "spare_wait_s": round(max(0.0, t_ready - written), 4)}
        if jobs == 1:
            marks["spare_warm_s"] = round(warm_s - t_start, 4)
        if fresh:
            marks["resident_cand_fresh"] = 1
        result = do_job("run", job, launched, marks)
        write_result(job, result, t_job)
        if not baseline.restore():  # this process's CUDA context broke (a reference that faulted): leave
            break
    for launched in ready.values():
        launched.close()
    if launcher is not None:
        launcher.close()


def _alive(launched: Launched | None) -> Launched | None:
    """`launched` if its process still waits for its job; None (it reaped and closed) if
    it ended while warming up or waiting (a spare that died waiting is replaced the same way)."""
    if launched is None:
        return None
    try:
        pid, _ = os.waitpid(launched.pid, os.WNOHANG)
    except ChildProcessError:
        pid = launched.pid
    if pid == 0:
        return launched
    launched.pid = None
    launched.close()
    KEEP.discard(pid)
    return None


def _keep(launched: Launched) -> Launched:
    KEEP.add(launched.pid)  # not a leftover of the job that runs meanwhile (launch.reap_descendants)
    return launched


def _warm_up(device: str) -> float:
    """What a spare does before its job (worker._standby): the imports, this process's
    CUDA context and libraries, the facts every verdict describes. Returns when it ended."""
    try:
        import torch
        import torch.utils.cpp_extension  # noqa: F401 - after the launcher's fork: it touches the driver

        from . import supervisor  # noqa: F401
        from .. import inline_build  # noqa: F401
        from ..environment import warm_facts
        from ..guards.trace import warm_cuda
        from .gpulock import warm_section

        if str(device).startswith("cuda"):
            warm_cuda(torch.device(device), lambda part: warm_section(device, part, "spare"), draws=True)
        warm_facts(torch.device(device))
    except Exception as exc:  # noqa: BLE001 - the first job meets and reports the same failure
        print(f"resident warm-up failed: {exc}", file=sys.stderr)
    return time.time()
