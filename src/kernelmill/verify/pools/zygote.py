"""A fork server for worker processes: torch imported once, each worker forked.

Every build and run worker is a Python process that imports torch (and our
builder, supervisor and guards) before it can take its job: 2.5-4 s of a core
alone, 8-16 s when a batch starts a dozen at once beside the compilers (issue 14:
the build processes of 14 candidates each waited ~8 s for their own imports on
an H100, and the first runs waited 16 s for a spare). A `Zygote` is one process
that does those imports once and then forks a worker per request; the worker
starts warm, in ~10 ms.

The standard library's `multiprocessing.forkserver` does the same for
multiprocessing's own Process objects (pickled targets, its own connection
protocol). A worker here must be a `Sandbox` process like any other: its own
session and process group (the group kill), its stdin a pipe the spare reads its
job from, stdout/stderr files in its folder, its own environment, and a
`Popen`-like handle the sandbox can poll and wait on. That is why this is written
here rather than bent out of multiprocessing.

What a forked worker shares with a fresh one: the modules are those a spare
imports before its job anyway (verify/standby.py), under the same scrubbed
environment; the child's environment, folder, session and standard streams are
its own before it runs anything. Python's `random` is reseeded in every child
(the interpreter does that at fork).

CUDA: a child forked after torch touched the driver cannot open a context
("Cannot re-initialize CUDA in forked subprocess"). Importing torch does not;
importing torch.utils.cpp_extension does (torch 2.11+cu130, probed on an H100:
docs/results/benchmarks_history.md, issue 14). So the run zygote leaves it out (a run worker and
its candidate's process import it themselves), the zygote reports whether its
children can use CUDA (`cuda_fork_safe`, read from torch's own fork mark), and
run spares start fresh where they cannot. The build zygote imports it: builds
never use the GPU.

Protocol (a SOCK_SEQPACKET pair, one JSON message per packet): the parent sends
{"module", "args", "cwd", "env"} (run as ``python -m MODULE ARGS...`` would run it)
with three descriptors (stdin, stdout, stderr) and gets
{"pid"}; the zygote reaps its children and sends {"exit": pid, "code"} (the
`Popen.returncode` convention: negative for a signal). It exits when the parent
closes the socket, and dies with the parent (PR_SET_PDEATHSIG); its children die
with it. This module imports no torch.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

FORKED = False  # True in a worker this zygote forked (its spare marks say so: worker.py)
READY_TIMEOUT_S = 180.0  # the zygote's own imports, on a loaded machine
# what the zygote imports for each kind of worker (what that worker imports before its job)
PRELOAD = {
    "build": ("torch", "torch.utils.cpp_extension", "kernelmill.verify.build.inline_build", "kernelmill.verify.build.lazy_builds",
              "kernelmill.verify.process.worker"),
    # not torch.utils.cpp_extension: importing it (torch 2.11+cu130) makes every later fork
    # unable to open a CUDA context ("Cannot re-initialize CUDA in forked subprocess";
    # docs/results/issue14/session11/scripts/poison_probe2.py on an H100); a run worker imports it itself
    "run": ("torch", "kernelmill.verify.build.inline_build", "kernelmill.verify.process.worker",
            "kernelmill.verify.process.supervisor", "kernelmill.verify.process.candidate",
            "kernelmill.verify.guards.trace", "kernelmill.verify.measure.environment",
            "kernelmill.verify.pools.resident"),
}


class ZygoteError(RuntimeError):
    """The zygote could not start, or stopped answering."""


# Zygotes are started from one thread that lives as long as this process: a zygote
# dies with the *thread* that started it (PR_SET_PDEATHSIG), and a verifier wants its
# zygotes importing torch while it still probes the GPUs, before the thread that will
# start its spares exists (a `kernelmill serve` request's thread may end sooner still).
_launcher: ThreadPoolExecutor | None = None
_launcher_lock = threading.Lock()


def launch(kind: str, env: dict[str, str], folder: Path) -> "Future[Zygote]":
    """Start a `Zygote` in the background; its future gives it, or raises ZygoteError
    or OSError when it could not start."""
    global _launcher
    with _launcher_lock:
        if _launcher is None:
            _launcher = ThreadPoolExecutor(max_workers=4, thread_name_prefix="kernelmill-zygotes")
        return _launcher.submit(Zygote, kind, env, folder)


class ForkedProcess:
    """The part of `subprocess.Popen` the sandbox uses, for a worker the zygote forked."""

    def __init__(self, pid: int, stdin, zygote: "Zygote"):
        self.pid = pid
        self.stdin = stdin
        self.returncode: int | None = None
        self._zygote = zygote

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._zygote.exit_code(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            code = self._zygote.exit_code(self.pid, wait=True, timeout=timeout)
            if code is None:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout or 0.0)
            self.returncode = code
        return self.returncode


class Zygote:
    """One fork server. It dies with the thread that starts it (PR_SET_PDEATHSIG): start
    it through `launch`, or from a thread that outlives it."""

    def __init__(self, kind: str, env: dict[str, str], folder: Path):
        if kind not in PRELOAD:
            raise ValueError(f"no zygote kind {kind!r}")
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with open(folder / "zygote.stderr.txt", "wb") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "kernelmill.verify.pools.zygote", kind,
                                          str(theirs.fileno())], cwd=folder, env=env, stdin=subprocess.DEVNULL,
                                         stdout=err, stderr=err, pass_fds=(theirs.fileno(),), start_new_session=True)
        theirs.close()
        self.sock = ours
        self._lock = threading.Lock()  # one start request at a time
        self._cond = threading.Condition()
        self._replies: list[int] = []
        self._exits: dict[int, int] = {}
        self._closed = False
        ready, _, _ = select.select([ours], [], [], READY_TIMEOUT_S)
        msg = ours.recv(65536) if ready else b""
        if not msg.startswith(b'{"ready"'):
            self.close()
            raise ZygoteError(f"the {kind} zygote did not start (see {folder / 'zygote.stderr.txt'})")
        # whether a child it forks can still open a CUDA context of its own (`_cuda_fork_safe`)
        ready_msg = json.loads(msg)
        self.cuda_fork_safe = bool(ready_msg.get("cuda_fork_safe"))
        self.why_not_cuda = str(ready_msg.get("why") or "")
        threading.Thread(target=self._read, name=f"km-zygote-{kind}", daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                data = self.sock.recv(65536)
            except OSError:
                data = b""
            with self._cond:
                if not data:  # the zygote is gone, and its children with it (PR_SET_PDEATHSIG)
                    self._closed = True
                    self._cond.notify_all()
                    return
                msg = json.loads(data)
                if "exit" in msg:
                    self._exits[int(msg["exit"])] = int(msg["code"])
                else:
                    self._replies.append(int(msg["pid"]))
                self._cond.notify_all()

    def start(self, args: list[str], cwd: Path, env: dict[str, str], stdin_pipe: bool, stdout: int,
              stderr: int, module: str = "kernelmill.verify.process.worker") -> ForkedProcess:
        """Fork a process running ``python -m MODULE ARGS`` in `cwd` with exactly `env`;
        its stdin a new pipe (`stdin_pipe`) or /dev/null, stdout/stderr the given descriptors."""
        r, w = os.pipe() if stdin_pipe else (os.open(os.devnull, os.O_RDONLY), None)
        try:
            with self._lock:
                if self._closed:
                    raise ZygoteError("the zygote is gone")
                msg = json.dumps({"module": module, "args": list(args), "cwd": str(cwd), "env": dict(env)}).encode()
                socket.send_fds(self.sock, [msg], [r, stdout, stderr])
                with self._cond:
                    deadline = time.monotonic() + 30.0
                    while not self._replies and not self._closed:
                        left = deadline - time.monotonic()
                        if left <= 0:
                            raise ZygoteError("the zygote did not answer a start request")
                        self._cond.wait(left)
                    if not self._replies:
                        raise ZygoteError("the zygote is gone")
                    pid = self._replies.pop(0)
                    self._exits.pop(pid, None)  # a pid used again
        except BaseException:
            if w is not None:
                os.close(w)
            raise
        finally:
            os.close(r)
        return ForkedProcess(pid, os.fdopen(w, "wb") if w is not None else None, self)

    def exit_code(self, pid: int, wait: bool = False, timeout: float | None = None) -> int | None:
        with self._cond:
            deadline = None if timeout is None else time.monotonic() + timeout
            while pid not in self._exits:
                if self._closed:
                    return -signal.SIGKILL  # killed with the zygote
                if not wait:
                    return None
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                self._cond.wait(left)
            return self._exits[pid]

    def close(self) -> None:
        self._closed = True
        try:
            self.sock.close()
        except OSError:
            pass
        try:
            self.proc.kill()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass


# -- the zygote process ----------------------------------------------------------

def _cuda_fork_safe() -> tuple[bool, str]:
    """Whether a child forked from this process can use CUDA, and if not why: torch marks
    its forks as unable to once anything asked it for the device count or opened a
    context ("Cannot re-initialize CUDA in forked subprocess"; importing
    torch.utils.cpp_extension does, with torch 2.11+cu130), which only a child can read.
    (The driver library being mapped says nothing: torch's own import maps it, and a
    child forked after that import opens a context; probed on an H100.)"""
    torch = sys.modules.get("torch")
    if torch is None:
        return True, ""
    if torch.cuda.is_initialized():
        return False, "CUDA was initialised in the zygote"
    pid = os.fork()
    if pid == 0:
        os._exit(1 if torch.cuda._is_in_bad_fork() else 0)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return False, "torch marks the zygote's forks as unable to use CUDA (something asked it for the device count)"
    return True, ""


def _child(sock: socket.socket, wake: tuple[int, int], req: dict, fds: list[int], home: str) -> None:
    code = 70
    try:
        from ..process.loading import die_with_parent, name_process

        die_with_parent()  # whatever it runs goes when the zygote goes
        name_process("km " + (req["args"][0] if req["args"] and req["module"].endswith(".worker")
                              else req["module"].rsplit(".", 1)[-1]))
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        sock.close()
        for fd in wake:
            os.close(fd)
        os.setsid()  # its own session and process group, as Sandbox.start gives a fresh one
        for target, fd in zip((0, 1, 2), fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.chdir(req["cwd"])
        os.environ.clear()
        os.environ.update(req["env"])
        import tempfile

        tempfile.tempdir = None  # TMPDIR is read again on next use
        # `python -m` puts the folder it started in first on sys.path: the worker's, not ours
        if sys.path and sys.path[0] == home:
            sys.path[0] = req["cwd"]
        # this file runs as __main__ in the zygote: the flag goes on the module the worker imports
        import runpy

        import kernelmill.verify.pools.zygote as this

        this.FORKED = True
        sys.argv = [req["module"], *req["args"]]
        runpy.run_module(req["module"], run_name="__main__", alter_sys=True)  # a worker ends in os._exit(0)
        code = 0
    except SystemExit as exc:  # what the interpreter would make of it
        if isinstance(exc.code, int) or exc.code is None:
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 - printed as an uncaught exception would be
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def serve(kind: str, fd: int) -> None:
    from ..process.loading import die_with_parent, name_process

    die_with_parent()
    name_process(f"km zygote {kind}")
    sock = socket.socket(fileno=fd)
    import importlib

    for name in PRELOAD[kind]:
        importlib.import_module(name)
    home = os.getcwd()
    wake = os.pipe()
    os.set_blocking(wake[1], False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake[1])
    safe, why = _cuda_fork_safe()
    sock.send(json.dumps({"ready": True, "cuda_fork_safe": safe, "why": why}).encode())
    while True:
        ready, _, _ = select.select([sock, wake[0]], [], [], 1.0)
        if wake[0] in ready:
            os.read(wake[0], 4096)
        while True:  # report every child that ended
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            sock.send(json.dumps({"exit": pid, "code": os.waitstatus_to_exitcode(status)}).encode())
        if sock in ready:
            try:
                msg, fds, _flags, _addr = socket.recv_fds(sock, 1 << 20, 3)
            except OSError:
                msg, fds = b"", []
            if not msg:
                return  # the parent closed its end
            req = json.loads(msg)
            pid = os.fork()
            if pid == 0:
                _child(sock, wake, req, fds, home)
            for f in fds:
                os.close(f)
            sock.send(json.dumps({"pid": pid}).encode())


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
