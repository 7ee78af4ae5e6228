"""A supervisor that stays: one run worker takes one guarded job after another
(``worker resident DIR DEVICE AHEAD``; the runner's side is resident_pool.py).

A spare (standby.py) supervises one candidate and exits, so every candidate on a
GPU cost two CUDA contexts: its supervisor's and its own. The driver opens them one
at a time (0.11 s alone, 0.3-0.45 s under load on an H200) and never during a
timing, which made two contexts and one timing per candidate the ceiling of that
design (~55-59 candidates/min, docs/results/benchmarks_history.md, issue 14). Here the supervisor's
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

from ..measure.environment import backend_flags
from ..process.launch import KEEP, Launched, phase_dirs, spawn, become_subreaper, run_child

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
        cdir, priv = phase_dirs(Path(phase_dir))
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
    from ..process.loading import die_with_parent, name_process

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
    default dtype, the matmul precision), and a fresh process per job never saw that.
    The settings are those a verdict records of the reference (environment.backend_flags)
    and the grad mode, the default dtype and the deterministic mode's warn_only."""

    def __init__(self):
        import torch

        self.flags = backend_flags()
        self.warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
        self.grad = torch.is_grad_enabled()
        self.dtype = torch.get_default_dtype()
        # what exists now (torch, our modules, the warm-up's objects) is never collected:
        # the collection after each job then walks only what that job made (0.07 s -> ~0)
        gc.freeze()

    def restore(self) -> bool:
        """Put the settings back; False when this process's CUDA context no longer works."""
        import linecache

        import torch

        m, c = torch.backends.cuda.matmul, torch.backends.cudnn
        setters = {  # backend_flags' names; the precision first: it sets allow_tf32 too
            "float32_matmul_precision": torch.set_float32_matmul_precision,
            "num_threads": torch.set_num_threads,
            "cudnn_benchmark": lambda v: setattr(c, "benchmark", v),
            "cudnn_deterministic": lambda v: setattr(c, "deterministic", v),
            "cudnn_enabled": lambda v: setattr(c, "enabled", v),
            "matmul_allow_tf32": lambda v: setattr(m, "allow_tf32", v),
            "cudnn_allow_tf32": lambda v: setattr(c, "allow_tf32", v),
            "matmul_fp16_reduced": lambda v: setattr(m, "allow_fp16_reduced_precision_reduction", v),
            "matmul_bf16_reduced": lambda v: setattr(m, "allow_bf16_reduced_precision_reduction", v),
        }
        for key, set_to in setters.items():  # only what differs: the first use_deterministic_algorithms costs ~1 s
            if key in self.flags and backend_flags()[key] != self.flags[key]:
                set_to(self.flags[key])
        if (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()) \
                != (self.flags["deterministic_algorithms"], self.warn_only):
            torch.use_deterministic_algorithms(self.flags["deterministic_algorithms"], warn_only=self.warn_only)
        torch.set_grad_enabled(self.grad)
        if torch.get_default_dtype() != self.dtype:
            torch.set_default_dtype(self.dtype)
        if "torch._dynamo" in sys.modules:  # a compiled baseline's caches (verify/measure/compiled.py)
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

    from ..process.worker import await_job, do_job, warm_supervisor, write_result

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
            from ..measure.gpulock import gate_env
            from .standby import GATE_MAX_S

            env = gate_env(device, dict(os.environ), GATE_MAX_S)
        ready[where.resolve()] = _keep(start(where, env))

    def start(where: Path, env: dict | None = None) -> Launched:
        """The candidate's process for the job folder `where`: from the launcher, or, once
        the launcher is gone (a candidate can kill it: same user), a fresh interpreter
        (launch.spawn: slower, as clean)."""
        nonlocal launcher
        if launcher is not None:
            try:
                return launcher.launch(where, device, env)
            except (OSError, RuntimeError, ValueError) as exc:
                print(f"resident: the launcher failed ({exc}); candidates' processes start fresh", file=sys.stderr)
                launcher.close(kill=True)
                launcher = None
        cdir, priv = phase_dirs(Path(where))
        return spawn(cdir, priv, device)

    for _ in range(max(1, ahead)):
        start_next(gated=False)
    warm_supervisor(device)
    warm_s = time.time()
    baseline = _Baseline()
    jobs = 0
    while True:
        os.environ.clear()  # what it started with: the job's environment replaces it (await_job)
        os.environ.update(started_with)
        got = await_job(started_with)
        if got is None:
            break
        job, _, waited = got
        t_job = time.time()
        jobs += 1
        folder_of_job = Path(job.result).parent  # the runner writes the result into the job's folder
        launched = _alive(ready.pop(folder_of_job.resolve(), None))
        fresh = launched is None
        if fresh:
            launched = start(folder_of_job)
        KEEP.discard(launched.pid)
        start_next(gated=True)
        marks = {"resident_jobs": jobs, "spare_wait_s": round(waited, 4)}
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


def main() -> None:
    """``python -m kernelmill.verify.pools.resident DIR DEVICE AHEAD``: a supervisor that
    takes guarded job after job on stdin (started by the pool, `resident_pool.Residents`)."""
    from ..process.loading import die_with_parent, name_process, started_at

    t_start = started_at()
    die_with_parent()
    name_process("km resident")
    serve(sys.argv[1], sys.argv[2], int(sys.argv[3]), t_start)
    os._exit(0)


if __name__ == "__main__":
    main()
