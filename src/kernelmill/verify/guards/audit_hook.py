"""Items 28 and 36 (issue 42), decided by what the candidate's process did, not by its
text: Python's audit hooks (PEP 578) see every process it starts, every connection it
opens, every signal it sends and every file it opens, however the call was spelled
(`getattr(subprocess, "Po" + "pen")`, `exec` of a built string). A hook cannot be removed
once added; this one records and refuses:

- **runtime_install** (36): a package manager started (pip, conda, uv, apt, curl, wget,
  git), or a network connection opened (an internet address; local sockets are the
  harness's own business);
- **harness_tampering** (28): a signal sent to the supervisor (its parent) or its process
  group, or a file opened for writing inside kernelmill's or torch's installation;
- **harness_introspection** (24, and 26's spellings of it): the call stack read by the
  candidate's own code (`sys._getframe`, `sys._current_frames`, or `inspect`'s stack
  functions called from it, however spelled or `exec`-ed): the dual path that checks who
  called it (the checker or the timer) before choosing to compute; and the process's
  objects walked by it (`gc.get_objects`, `get_referrers`, `get_referents`): the harness's
  check sets and pools are objects of this process, and a candidate that found them
  computed only on a checked call's inputs; or a frame taken from a traceback or a
  generator (`tb_frame`, `gi_frame`, ...), whose `f_back` walks the same stack;
- **shared_answers** (23, 29): a file of another candidate's folder (the harness's work
  folder holds every candidate's, its own is its HOME; `reads_others`) or of shared memory
  (/dev/shm) opened: answers replayed from an earlier run or read from a neighbour.

The refused call raises PermissionError in the candidate; the verdict is rejected either
way. Written by hand: no library installs a process-wide policy of this kind, and the
hook must see calls the static checks cannot (guards/source.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

_PACKAGE_TOOLS = {"pip", "pip3", "conda", "mamba", "uv", "apt", "apt-get", "curl", "wget", "git", "ensurepip"}
_WATCHED = {"subprocess.Popen", "os.system", "os.posix_spawn", "os.exec", "os.spawn", "socket.connect",
            "socket.getaddrinfo", "urllib.Request", "os.kill", "os.killpg", "open", "sys._getframe",
            "sys._current_frames", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
            "object.__getattr__"}
# restricted attributes whose read Python audits (object.__getattr__): each hands over a frame,
# and from a frame `f_back` walks to the harness's (a caught exception's traceback is the way
# to a frame without sys._getframe)
_FRAME_ATTRS = {"tb_frame", "gi_frame", "cr_frame", "ag_frame"}
_STACK_HELPERS = (os.sep + "inspect.py",)  # a library whose stack functions read frames for their caller
_installed = False


def _protected_roots() -> tuple[str, ...]:
    roots = {str(Path(__file__).resolve().parents[2])}  # the kernelmill package
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "__file__", None):
        roots.add(str(Path(torch.__file__).resolve().parent))
    return tuple(sorted(roots))


_SHARED_MEMORY = ("/dev/shm/", "/run/shm/")


def _own_and_others() -> tuple[str, str | None]:
    """(this candidate's folder, the work folder that holds every candidate's): its HOME
    is its job's folder, two levels below the work folder (work/<spare>/<job> or
    work/<run>/run); None where the layout is not that one."""
    own = os.path.realpath(os.environ.get("HOME") or os.getcwd())
    work = os.path.dirname(os.path.dirname(own))
    return own + os.sep, (work + os.sep if os.path.basename(work) == "work" else None)


_JOB_FOLDERS = ("job-", "run")  # the job folders inside a spare's or a run's folder


def reads_others(full: str, own: str, others: str | None) -> bool:
    """Whether the absolute path `full` is another candidate's: in shared memory, or in
    the work folder (`others`) outside this candidate's job folder (`own`). The folder its
    process was started in (the job folder's parent: a spare's or a resident's) is its own
    too (Triton keeps its driver and kernel cache under that folder's HOME), except the
    other job folders there (earlier candidates of the same resident)."""
    if full.startswith(_SHARED_MEMORY):
        return True
    here = full.rstrip(os.sep) + os.sep  # the folder itself, listed or opened, is inside it
    if others is None or not here.startswith(others) or here.startswith(own):
        return False
    parent = os.path.dirname(own.rstrip(os.sep)) + os.sep
    if not here.startswith(parent) or parent == others:
        return True
    first = here[len(parent):].split(os.sep, 1)[0]
    return first.startswith(_JOB_FOLDERS)


def _words(args) -> list[str]:
    """The strings of an audit event's arguments, and of a list among them (a command line)."""
    out: list[str] = []
    for a in args:
        for x in (a if isinstance(a, (list, tuple)) else [a]):
            if isinstance(x, (str, bytes, os.PathLike)):
                out.append(os.fsdecode(x))
    return out


def _package_tool(words: list[str]) -> str | None:
    for w in words:
        for part in w.replace(";", " ").replace("&", " ").split():
            name = os.path.basename(part)
            if name in _PACKAGE_TOOLS or (name.startswith("python") and "-m" in words and "pip" in words):
                return part
    return None


def stack_reader(frame, own_files: tuple[str, ...]) -> bool:
    """Whether the code that asked for a frame (`frame`: the caller of `sys._getframe`)
    is the candidate's: walking outwards past `inspect` and code without a file of its
    own (`exec`/`compile` of a built string: "<...>"), the first frame with a real file
    is in `own_files` (its module, its folder). A library that reads frames for itself
    (typing, collections, logging, torch) stops the walk at its own file."""
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith("<") or name.endswith(_STACK_HELPERS)):
            return name.startswith(own_files)
        frame = frame.f_back
    return False


def install(facts: dict, harness_dirs: tuple[str, ...] = (), candidate_file: str | None = None) -> None:
    """Add the hook to this (the candidate's) process; findings go to `facts` lists
    `runtime_install`, `harness_tampering` and `shared_answers`. `harness_dirs`: the
    folders the harness itself hands tensors through (its exchange folder, which may be
    in /dev/shm); `candidate_file`: the candidate's module (its code is the stack reader
    looked for). Once per process."""
    global _installed
    if _installed:
        return
    _installed = True
    parent, roots = os.getppid(), _protected_roots()
    own, others = _own_and_others()
    mine = tuple(os.path.realpath(d) + os.sep for d in harness_dirs if d)
    parent_group = os.getpgid(parent) if parent > 1 else None
    own_files = tuple(p for p in (own, candidate_file and os.path.realpath(candidate_file), candidate_file) if p)
    busy = [False]  # the hook reads a frame itself: that read raises the same event

    def note(key: str, what: str):
        found = facts.setdefault(key, [])
        if len(found) < 5:
            found.append(what)
        raise PermissionError(f"kernelmill: refused in a candidate's process: {what}")

    def hook(event: str, args: tuple) -> None:
        if event not in _WATCHED:
            return
        if event == "object.__getattr__" and (len(args) < 2 or args[1] not in _FRAME_ATTRS):
            return
        if event.startswith(("sys._", "gc.", "object.")):
            if busy[0]:
                return
            busy[0] = True
            try:
                caller = sys._getframe(1)
                if stack_reader(caller, own_files):
                    what = ("walked the process's objects" if event.startswith("gc.") else
                            f"read {args[1]} (a frame, the way to the call stack)" if event.startswith("object.")
                            else "read the call stack")
                    note("harness_introspection", f"{event} from line {caller.f_lineno} of {caller.f_code.co_filename}: "
                                                  f"the candidate {what}")
            finally:
                busy[0] = False
            return
        if event == "open":
            path, mode = args[0], args[1] if len(args) > 1 else "r"
            flags = args[2] if len(args) > 2 else 0
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
                (isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT))
            if not isinstance(path, (str, bytes, os.PathLike)):
                return  # an open file descriptor
            full = os.path.abspath(os.fsdecode(path))
            if writes and full.startswith(roots):
                note("harness_tampering", f"opened {full} for writing")
            if full.startswith(mine):
                return
            if reads_others(full, own, others):
                note("shared_answers", f"opened {full}")
        elif event in ("os.kill", "os.killpg"):
            target, sig = args[0], args[1]
            if sig and (target == parent or (event == "os.killpg" and target == parent_group)
                        or (event == "os.kill" and target in (0, -1))):
                note("harness_tampering", f"{event}({target}, {sig}): a signal to the harness")
        elif event in ("socket.connect", "socket.getaddrinfo"):
            address = args[1] if event == "socket.connect" else args[0]
            if event == "socket.connect" and not isinstance(address, tuple):
                return  # a local (unix) socket
            host = address[0] if isinstance(address, tuple) else address
            if host not in (None, "localhost", "127.0.0.1", "::1"):
                note("runtime_install", f"a network connection to {host!r}")
        elif event == "urllib.Request":
            note("runtime_install", f"a URL fetched: {str(args[0])[:120]}")
        else:  # a process started
            tool = _package_tool(_words(args))
            if tool:
                note("runtime_install", f"{event} of {tool!r}")

    sys.addaudithook(hook)


def findings_of(facts: dict) -> list[tuple[str, str]]:
    """(flag, detail) of what the hook refused in the candidate's process (its facts)."""
    return [(key, "; ".join(facts[key][:3])) for key in ("harness_tampering", "runtime_install", "shared_answers",
                                                         "harness_introspection") if facts.get(key)]
