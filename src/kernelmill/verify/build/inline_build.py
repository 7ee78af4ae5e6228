"""A drop-in ``load_inline`` that builds through the shared build cache.

Candidates call ``torch.utils.cpp_extension.load_inline`` at import time. The
build and run workers replace that function (`install`) with `load_inline`
below, which produces the same extension module from the same sources and the
same compiler flags, only faster:

* the sources are assembled exactly as torch assembles them (``main.cpp`` with
  the pybind11 bindings, ``cuda.cu`` with the implicit headers), and the flags
  come from torch's own ninja-file writer, so the compile commands are torch's;
* each translation unit is an object in the content-addressed `BuildCache`
  (keyed by source text, flags, compiler and torch identity): an identical
  binding unit (same ``cpp_sources`` and ``functions``) is compiled once for
  all candidates, and an identical source again is no compile at all;
* the binding unit is compiled against a precompiled ``torch/extension.h``
  (built once per flag set, in the cache: ahead of the candidates by
  `build_prepare` at a run's start, else lazily; skipped, not waited for,
  while another process builds it);
* the CUDA unit is split (`cuda_split`) into a kernel unit compiled by nvcc
  without the torch headers and a host unit compiled by the host compiler with
  the precompiled header, when that split provably keeps the meaning; else the
  unit is compiled whole, as torch does;
* a build that will surely fail says so before compiling (`fail_fast`), and units compile in
  parallel with the first deciding error stopping the rest (`InlineBuilder._compile`);
* the link is cached too, and names torch's own
  libraries through empty stand-ins with their SONAMEs (`link_stubs`: ld reads no
  0.4 GB symbol table; the import resolves against the loaded libraries as before).

Anything this module does not handle exactly (``is_python_module=False``, SYCL,
standalone builds, a machinery failure) goes to torch's ``load_inline``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

from .buildcache import MANIFEST, BuildCache, content_key
from .link_stubs import LinkStubs

_VERSION = "inline-build-1"
_PCH_HEADER = "#include <torch/extension.h>\n"
_TYPES_HEADER = "#include <torch/types.h>\n"  # the slim units' header (slim_units.py)
_PCH_AFTER_USES = int(os.environ.get("KERNELMILL_PCH_AFTER", "2"))


def unnamed(flags: list[str]) -> list[str]:
    """Flags without the module's name (``-DTORCH_EXTENSION_NAME=``): what a precompiled
    header or a shared binding object is keyed and built with, so candidates share them."""
    return [f for f in flags if not f.startswith("-DTORCH_EXTENSION_NAME=")]


class Unsupported(Exception):
    """This call is not one we reproduce exactly: use torch's load_inline."""


class CompileError(RuntimeError):
    """A unit or the link failed. `kinds`: the kinds of the units that failed to
    compile (empty for a link error)."""

    def __init__(self, message: str, kinds: tuple[str, ...] = ()):
        super().__init__(message)
        self.kinds = kinds


def assemble(name, cpp_sources, cuda_sources=None, functions=None, with_pytorch_error_handling=True,
             no_implicit_headers=False) -> tuple[str, str | None]:
    """main.cpp and cuda.cu as torch's load_inline writes them."""
    cpp = [cpp_sources] if isinstance(cpp_sources, str) else list(cpp_sources)
    cuda = [cuda_sources] if isinstance(cuda_sources, str) else list(cuda_sources or [])
    if not no_implicit_headers:
        cpp.insert(0, "#include <torch/extension.h>")
    if functions is not None:
        if isinstance(functions, str):
            functions = [functions]
        if isinstance(functions, list):
            functions = {f: f for f in functions}
        elif not isinstance(functions, dict):
            raise ValueError(f"Expected 'functions' to be a list or dict, but was {type(functions)}")
        cpp.append("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {")
        for fn, doc in functions.items():
            target = f"torch::wrap_pybind_function({fn})" if with_pytorch_error_handling else fn
            cpp.append(f'm.def("{fn}", {target}, "{doc}");')
        cpp.append("}")
    cu = None
    if cuda:
        if not no_implicit_headers:
            cuda[:0] = ["#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"]
        cu = "\n".join(cuda)
    return "\n".join(cpp), cu


def _ninja_vars(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if " = " in line and not line.startswith((" ", "rule", "build")):
            k, v = line.split(" = ", 1)
            out[k.strip()] = v.strip()
    return out


def torch_flags(name: str, with_cuda: bool, extra_cflags, extra_cuda_cflags, extra_ldflags,
                extra_include_paths) -> dict:
    """Compiler, flags and link flags exactly as torch's ninja file would have them."""
    import inspect

    import torch.utils.cpp_extension as ce

    try:
        prep = ce._prepare_ldflags
        params = inspect.signature(prep).parameters
        kw = {"extra_ldflags": list(extra_ldflags or []), "with_cuda": with_cuda, "verbose": False,
              "is_standalone": False}
        if "with_sycl" in params:
            kw["with_sycl"] = False
        ldflags = prep(**kw)
        writer = ce._write_ninja_file_to_build_library
        wparams = inspect.signature(writer).parameters
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "build.ninja")
            srcs = [os.path.join(tmp, "main.cpp")] + ([os.path.join(tmp, "cuda.cu")] if with_cuda else [])
            wk = dict(path=path, name=name, sources=srcs, extra_cflags=list(extra_cflags or []),
                      extra_cuda_cflags=list(extra_cuda_cflags or []), extra_ldflags=ldflags,
                      extra_include_paths=list(extra_include_paths or []), with_cuda=with_cuda,
                      is_standalone=False)
            if "extra_sycl_cflags" in wparams:
                wk["extra_sycl_cflags"] = []
            if "with_sycl" in wparams:
                wk["with_sycl"] = False
            writer(**{k: v for k, v in wk.items() if k in wparams})
            v = _ninja_vars(Path(path).read_text())
    except Exception as exc:  # noqa: BLE001 - torch internals moved: not ours to guess
        raise Unsupported(f"cannot read torch's build flags: {exc!r}") from None
    flags = {"cxx": v.get("cxx", "c++"), "cflags": shlex.split(v.get("cflags", "")),
             "post_cflags": shlex.split(v.get("post_cflags", "")), "ldflags": shlex.split(v.get("ldflags", ""))}
    if with_cuda:
        if "nvcc" not in v:
            raise Unsupported("torch wrote no nvcc rule")
        flags["nvcc"] = v["nvcc"]
        flags["cuda_cflags"] = shlex.split(v.get("cuda_cflags", ""))
        flags["cuda_post_cflags"] = shlex.split(v.get("cuda_post_cflags", ""))
    return flags


@functools.lru_cache(maxsize=8)
def tool_id(tool: str) -> str:
    """Version text of a compiler (part of every cache key)."""
    try:
        res = subprocess.run([*shlex.split(tool), "--version"], capture_output=True, text=True, timeout=60)
        return res.stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unsupported(f"cannot run {tool}: {exc}") from None


# the user include folders' listing of the call a thread is building (per thread: a build
# worker builds several lazy calls at once, verify/build/lazy_builds.py)
_TLS = threading.local()


def set_fingerprint(fingerprint: str) -> None:
    _TLS.fingerprint = fingerprint


def _env_id(arch: str | None = None, fingerprint: str | None = None) -> str:
    """What every entry's key holds of the software. `arch`, `fingerprint`: the builds' own
    where they are not this process's and thread's (the runner keys the identifiers for its
    builds: build_prepare.identifier_jobs)."""
    import torch

    return "|".join([_VERSION, getattr(_TLS, "fingerprint", "") if fingerprint is None else fingerprint,
                     torch.__version__, str(torch.version.cuda), sys.version.split()[0],
                     os.environ.get("TORCH_CUDA_ARCH_LIST", "") if arch is None else arch])


def _include_dirs_id(paths) -> str:
    """User include folders change compiled code: hash their listing (names, sizes, mtimes)."""
    parts = []
    for p in paths or []:
        n = 0
        for root, _dirs, files in os.walk(p):
            for f in sorted(files):
                st = os.stat(os.path.join(root, f))
                parts.append(f"{root}/{f}:{st.st_size}:{st.st_mtime_ns}")
                n += 1
                if n > 5000:
                    raise Unsupported(f"include folder {p} is too large to fingerprint")
    return "\n".join(parts)


def _opens_with(source: str, header: str) -> bool:
    """Whether `source`'s first line that is not blank or a comment is `header`'s one
    include line (torch/extension.h or torch/types.h, as the precompiled headers hold)."""
    want = header.strip()
    if "\n" in want or not want.startswith("#include"):
        return False
    text = source.lstrip()
    while text.startswith(("//", "/*")):
        end = text.find("\n") if text.startswith("//") else text.find("*/")
        if end < 0:
            return False
        text = text[end + (1 if text.startswith("//") else 2):].lstrip()
    first = text.split("\n", 1)[0].strip()
    return " ".join(first.split()) == " ".join(want.split())


def _run(cmd: list[str], cwd: Path) -> tuple[int, str]:
    stop = getattr(_TLS, "stop", None)
    if stop is None:
        res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        return res.returncode, (res.stdout + res.stderr)
    # a unit of a build that may be stopped (_Stop): the compiler is killed, tree and all, when
    # another unit's error has decided the build
    with subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        stop.add(proc)
        try:
            out, err = proc.communicate()
        finally:
            stop.discard(proc)
    return proc.returncode, (out + err)


class _Cancelled(Exception):
    """A unit stopped because the build's outcome was decided without it (nothing is cached)."""


def _descendants(pid: int) -> list[int]:
    """The processes below `pid` (the compiler's cc1plus, cicc, ptxas...)."""
    from ..sandbox import processes_below

    return sorted(processes_below([pid]) - {pid})


def _kill_tree(proc: subprocess.Popen) -> None:
    """Stop the compiler (it starts no more stages), then kill it and what it started. The
    processes stay in the build's process group (the sandbox's watchdog and kill see them)."""
    import signal

    if proc.poll() is not None:
        return
    try:
        os.kill(proc.pid, signal.SIGSTOP)
    except OSError:
        return
    below = _descendants(proc.pid)
    for pid in below:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGSTOP)
    below = list(dict.fromkeys(below + _descendants(proc.pid)))
    for pid in [*below, proc.pid]:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


class _Stop:
    """The compilers of one build: `set` kills those running and marks the build decided, so
    units still to start or finishing raise `_Cancelled` and cache nothing."""

    def __init__(self):
        self._lock = threading.Lock()
        self._procs: set = set()
        self.stopped = False

    def add(self, proc) -> None:
        with self._lock:
            self._procs.add(proc)
            stopped = self.stopped
        if stopped:
            _kill_tree(proc)

    def discard(self, proc) -> None:
        with self._lock:
            self._procs.discard(proc)

    def set(self) -> None:
        with self._lock:
            self.stopped = True
            procs = list(self._procs)
        for proc in procs:
            _kill_tree(proc)


def _check_stop() -> None:
    stop = getattr(_TLS, "stop", None)
    if stop is not None and stop.stopped:
        raise _Cancelled()


class InlineBuilder:
    def __init__(self, cache_root: str | Path):
        self.cache = BuildCache(cache_root)
        self.stubs = LinkStubs(self.cache)
        self.log: dict[str, object] = {}  # what happened, for the worker's phases/flags
        self.times: dict = {}  # where the last calls' time went (benchmarks/build_speed.py)

    # -- objects -------------------------------------------------------------
    def _pch(self, cxx: str, cflags: list[str], eager: bool = False, header: str = _PCH_HEADER) -> Path | None:
        """The precompiled torch/extension.h for these flags, or None when it is not
        built yet (we never wait for it). A flag set seen `_PCH_AFTER_USES` times gets
        its header built by a process of its own in the background: a build that built
        it first (about two plain compiles) was the last of its batch (issue 14: 57 s
        against 24-34 s for the others on an H100). `eager` builds it now, in this
        process, whatever the use count (`build_prepare.prepare_pch`). `header`: the
        header's text (torch/extension.h, or torch/types.h for the slim units)."""
        flags = unnamed(cflags)
        key = self._pch_key(cxx, flags, header)
        entry = self.cache.get("pch", key)
        if entry is not None:
            return entry / "torch_ext.h"
        # a PCH costs about two plain compiles to build: only for flag sets seen before
        if not eager and self.cache.count_use("pch", key) < _PCH_AFTER_USES:
            return None
        if not eager:
            self._pch_in_background(cxx, flags, key, header)
            return None
        lock = self.cache.try_lock("pch", key)
        if lock is None:
            return None
        with lock:
            return self._make_pch(cxx, flags, key, header)

    @staticmethod
    def _pch_key(cxx: str, flags: list[str], header: str = _PCH_HEADER, env_id: str | None = None) -> str:
        return content_key("pch", env_id or _env_id(), tool_id(cxx), *flags,
                           *([] if header == _PCH_HEADER else [header]))

    # -- fail fast (fail_fast.py) ----------------------------------------------
    def header_identifiers(self, cxx: str, cflags: list[str], make: bool = True,
                           defer: bool = True) -> set[str] | None:
        """The identifiers of torch/extension.h preprocessed with these flags (macro
        definitions kept), kept in the cache under the precompiled header's key; made here
        when missing (one ``-E``: ~1 s on an idle host). None when they cannot be made.
        `defer`: while the run's identifiers process lives (it holds the ``maker`` lock,
        build_prepare.start_identifiers), wait for its copy rather than make one."""
        flags = unnamed(cflags)
        key = self._pch_key(cxx, flags)
        entry = self.cache.get("idents", key)
        if entry is not None:
            self.log.setdefault("idents_s", 0.0)  # ready: what the verdict's build facts show
        if entry is None and make:
            t0 = time.perf_counter()
            deadline = t0 + _IDENTS_WAIT_S
            # the run's identifiers process runs at the run's priority, the builds at build_nice:
            # a build that took the key's lock first made them at nice 10 beside a cold run's
            # ~150 starting processes (5-13 s, session_2026-11-30c), so a build leaves it to that
            # process while it lives (flock: a dead one holds nothing)
            while defer and entry is None and time.perf_counter() < deadline and self.identifiers_maker_busy():
                time.sleep(0.05)
                entry = self.cache.get("idents", key)
            if entry is None:
                entry, made = self._identifiers_entry(cxx, flags, key, deadline)
                if made:
                    self.log["idents_made"] = True
            self.times["idents_s"] = round(time.perf_counter() - t0, 3)
            self.log["idents_s"] = round(float(self.log.get("idents_s", 0.0)) + self.times["idents_s"], 3)
        if entry is None:
            return None
        if self.times.get("idents_s", 0.0) > 0:  # waited: what the maker took, for the verdict
            try:
                maker = json.loads((entry / MANIFEST).read_text())["meta"].get("maker")
            except (OSError, ValueError, KeyError, AttributeError):
                maker = None
            if maker:
                self.log["idents_maker"] = maker
        return set((entry / "idents.txt").read_text().split())

    def identifiers_for(self, cxx: str, flags: list[str], key: str, env_id: str,
                        facts: dict | None = None) -> Path | None:
        """The run's identifiers process (build_prepare.start_identifiers): the entry of
        `header_identifiers` under a key its caller computed with torch already imported, so
        this process imports none (a cold import beside a cold run's ~150 starting processes
        was most of the 10 s its builds waited, session_2026-11-30d). `facts`: its timings."""
        return self._identifiers_entry(cxx, flags, key, None, env_id, facts)[0]

    def _identifiers_entry(self, cxx: str, flags: list[str], key: str, deadline: float | None,
                           env_id: str | None = None, facts: dict | None = None) -> tuple[Path | None, bool]:
        """The identifiers' entry under `key`, made here under its lock unless another process
        holding the lock publishes it first; (entry, whether made here). Another process making
        them is a build of this flag set, or the run's identifiers process. A cold run starts all
        its builds at once; skipping the check sent every failing build that started meanwhile to
        a full compile (30-50 s each, session_2026-11-29h), and a copy of one's own beside the
        one being made only adds to the burst: with a 4 s wait, 14 failing builds each made their
        own after it, finishing 6.3-14 s in (session_2026-11-30c). So the copy being made is
        waited for; past `deadline` (a maker stuck or starved) one -E of our own (`publish`
        keeps whichever copy lands first); no deadline: the run's identifiers process waits."""
        entry = self.cache.get("idents", key)
        while entry is None:
            lock = self.cache.try_lock("idents", key)
            if lock is not None:
                with lock:
                    entry = self.cache.get("idents", key)
                    if entry is None:
                        return self._make_identifiers(cxx, flags, key, env_id, facts), True
                break
            if deadline is not None and time.perf_counter() > deadline:
                return self._make_identifiers(cxx, flags, key, env_id, facts), True
            time.sleep(0.05)
            entry = self.cache.get("idents", key)
        return entry, False

    def identifiers_maker_busy(self) -> bool:
        """Whether the run's identifiers process still holds the ``maker`` lock."""
        fd = self.cache.try_lock_fd("idents", IDENTS_MAKER)
        if fd is None:
            return True
        os.close(fd)  # closing the descriptor releases the lock: it was free
        return False

    def _make_identifiers(self, cxx: str, flags: list[str], key: str, env_id: str | None = None,
                          facts: dict | None = None) -> Path | None:
        from .fail_fast import identifiers

        t0 = time.perf_counter()
        stage = self.cache.staging("idents")
        (stage / "torch_ext.h").write_text(_PCH_HEADER)
        rc, out = _run([*shlex.split(cxx), *flags, "-E", "-dD", "-x", "c++", "torch_ext.h", "-o", "torch_ext.ii"], stage)
        if rc != 0:
            self.log["idents_error"] = out[-500:]
            shutil.rmtree(stage, ignore_errors=True)
            return None
        words = sorted(identifiers((stage / "torch_ext.ii").read_text(errors="replace")))
        (stage / "torch_ext.ii").unlink()
        (stage / "idents.txt").write_text("\n".join(words) + "\n")
        meta = {"env": env_id or _env_id(), "cxx": cxx, "flags": flags}
        if facts is not None:
            meta["maker"] = {**facts, "make_s": round(time.perf_counter() - t0, 3)}
        return self.cache.publish("idents", key, stage, meta)

    def precheck(self, main_cpp: str, cuda_cu: str | None, flags: dict) -> None:
        """Raise CompileError where the build surely fails before any unit compiles (the
        binding names nothing declared, or the module is defined twice); return otherwise."""
        self._check_bindings(main_cpp, flags, shlex.split(flags["cxx"]))
        self._check_cuda_module(main_cpp, cuda_cu, flags)

    def _check_bindings(self, main_cpp: str, flags: dict, cxx: list[str]) -> None:
        """Raise the compiler's CompileError where torch's generated binding surely does not
        compile (fail_fast.py says why each answer is sure): a name nothing declares, or a
        second definition of the module; return when it is not sure."""
        from . import fail_fast

        found = fail_fast.binding_block(main_cpp)
        if found is None:
            return
        prefix, names = found
        if not prefix.startswith(_PCH_HEADER):
            return  # no_implicit_headers: what precedes the block is not the header
        # a name spelled in cpp_sources' code (the usual case: declared there) is not judged, so
        # a build that will compile pays no compiler call here (comments dropped by a rough cut:
        # what it gets wrong only sends the text to the preprocessor, which decides)
        code = re.sub(r"//[^\n]*|/\*.*?\*/", " ", prefix, flags=re.S)
        spelled = fail_fast.identifiers(code)
        names = [n for n in names if fail_fast.answerable(n[1]) and n[1] not in spelled]
        module = fail_fast.module_name(flags["cflags"]) if "PYBIND11_MODULE" in spelled else None
        if not names and module is None:
            return
        t0 = time.perf_counter()
        try:
            if module is not None and fail_fast.prefix_writes_module(prefix):
                self.log["fail_fast"] = "module twice"
                raise CompileError("[main.cpp]\n" + fail_fast.module_message(prefix, module), ("binding",))
            if names:
                known = self.header_identifiers(flags["cxx"], flags["cflags"])
                names = [n for n in names if known is not None and n[1] not in known]
            if not names and module is None:
                return  # every name is spelled in the header: not ours to judge
            if fail_fast.needs_preprocessing(prefix):
                text = self._prefix_text(prefix, flags, cxx)
                if text is None:
                    return
                if module is not None and fail_fast.defines_module(text, module):
                    self.log["fail_fast"] = "module twice"
                    raise CompileError("[main.cpp]\n" + fail_fast.module_message(prefix, module), ("binding",))
                known = fail_fast.identifiers(text)
                names = [n for n in names if n[1] not in known]
        finally:
            self.times["check_s"] = round(time.perf_counter() - t0, 3)
            self.log["check_s"] = round(float(self.log.get("check_s", 0.0)) + self.times["check_s"], 3)
        if names:
            self.log["fail_fast"] = "unbound: " + ", ".join(n[1] for n in names)
            raise CompileError("[main.cpp]\n" + fail_fast.message(names), ("binding",))

    def _check_cuda_module(self, main_cpp: str, cuda_cu: str | None, flags: dict) -> None:
        """Raise CompileError where ``cuda_sources`` writes the module that torch's generated
        block in main.cpp writes too (fail_fast.cuda_module_line says why that is sure)."""
        from . import fail_fast

        found = fail_fast.binding_block(main_cpp) if cuda_cu else None
        module = fail_fast.module_name(flags["cflags"])
        if found is None or module is None or module != fail_fast.module_name(flags.get("cuda_cflags", [])):
            return
        if not found[0].startswith(_PCH_HEADER) or not fail_fast.plain_prefix(found[0]):
            return
        if any("muldefs" in f or "allow-multiple-definition" in f for f in flags.get("ldflags", [])):
            return  # a link told to take the first of two definitions
        line = fail_fast.cuda_module_line(cuda_cu)
        if line is None:
            return
        known = self.header_identifiers(flags["cxx"], flags["cflags"])
        if known is None or "TORCH_EXTENSION_NAME" in known:
            return  # the header would name the module's macro: not ours to judge
        self.log["fail_fast"] = "module in cuda_sources"
        raise CompileError("[cuda.cu]\n" + fail_fast.cuda_module_message(line, module), ("cuda",))

    def _prefix_text(self, prefix: str, flags: dict, cxx: list[str]) -> str | None:
        """main.cpp's text before the generated block, preprocessed after the torch header
        (its precompiled form: the header's macros and include guards, not its text; ``-dD``
        keeps the macros defined here); without a precompiled header for these flags, with the
        header's text (one ``-E`` of it: ~1 s on an idle host, still far less than a compile).
        A preprocessing error is the compile's error: raised as it is."""
        pch = self.cache.get("pch", self._pch_key(flags["cxx"], unnamed(flags["cflags"])))
        ahead = ["-include", str(pch / "torch_ext.h"), "-fpch-preprocess"] if pch is not None else []
        stage = self.cache.staging("pre")
        try:
            (stage / "main.cpp").write_text(prefix)
            rc, out = _run([*cxx, *flags["cflags"], *ahead, "-E", "-dD", "main.cpp", "-o", "main.ii",
                            *flags["post_cflags"]], stage)
            if rc != 0:
                if re.search(r"^main\.cpp:\d+:\d+: (?:fatal )?error:", out, re.M):
                    self.log["fail_fast"] = "preprocessing"
                    raise CompileError("[main.cpp]\n" + out, ("binding",))
                return None
            return (stage / "main.ii").read_text(errors="replace")
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    def _make_pch(self, cxx: str, flags: list[str], key: str, header: str = _PCH_HEADER) -> Path | None:
        """Build and publish the header (the caller holds its lock)."""
        entry = self.cache.get("pch", key)
        if entry is None:
            stage = self.cache.staging("pch")
            (stage / "torch_ext.h").write_text(header)
            rc, out = _run([*shlex.split(cxx), *flags, "-x", "c++-header", "torch_ext.h",
                            "-o", "torch_ext.h.gch"], stage)
            if rc != 0:
                self.log["pch_error"] = out[-500:]
                return None
            # what the key was made of, for telling why a prepared header was not found
            entry = self.cache.publish("pch", key, stage, {"env": _env_id(), "cxx": cxx, "flags": flags,
                                                           "header": header})
            self.log["pch_built"] = True
        return entry / "torch_ext.h"

    def _pch_in_background(self, cxx: str, flags: list[str], key: str, header: str = _PCH_HEADER) -> None:
        """Start a process of its own session (it outlives this build's process group)
        that builds the header under its lock; the lock is taken here first, so one
        process builds it however many builds ask, and it passes to that process."""
        fd = self.cache.try_lock_fd("pch", key)
        if fd is None:
            return  # being built
        try:
            subprocess.Popen([sys.executable, "-m", "kernelmill.verify.build.inline_build", "pch", str(self.cache.root),
                              key, cxx, json.dumps(flags), str(fd), header], pass_fds=(fd,), start_new_session=True,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.log["pch_background"] = True
        except OSError:
            pass
        finally:
            os.close(fd)  # the child's copy holds the lock now

    @staticmethod
    def unit_key(kind: str, source: str, cmd_prefix: list[str], flags: list[str], post: list[str]) -> str:
        return content_key(kind, _env_id(), tool_id(cmd_prefix[0] if len(cmd_prefix) == 1 else " ".join(cmd_prefix)),
                           *flags, "--", *post, source)

    def compile_unit(self, kind: str, filename: str, source: str, cmd_prefix: list[str],
                     flags: list[str], post: list[str], pch=None, wait: bool = True) -> Path:
        """Object file for one translation unit (cached); raises CompileError. `pch`: the
        precompiled header's path, or a function giving it, asked only when the unit is
        compiled (a cached unit does not look the header up). `wait=False`: a unit whose
        lock another process holds is compiled here too, not waited for."""
        key = self.unit_key(kind, source, cmd_prefix, flags, post)
        hit = self.cache.get("obj", key)
        if hit is not None:
            self.log.setdefault("reused", []).append(kind)  # type: ignore[union-attr]
            return hit / "unit.o"
        err = self.cache.get("err", key)
        if err is not None:
            raise CompileError((err / "log.txt").read_text())
        held = self.cache.lock("obj", key) if wait else (self.cache.try_lock("obj", key) or contextlib.nullcontext())
        with held:
            hit = self.cache.get("obj", key)
            if hit is not None:  # made by the process whose lock this build waited for
                self.log.setdefault("reused", []).append(kind)  # type: ignore[union-attr]
                return hit / "unit.o"
            err = self.cache.get("err", key)  # another thread or process failed it while we waited
            if err is not None:
                raise CompileError((err / "log.txt").read_text())
            t0 = time.perf_counter()
            if callable(pch):
                pch = pch()
            _check_stop()  # a unit that starts after its build was decided starts no compiler
            stage = self.cache.staging("obj")
            (stage / filename).write_text(source)
            base = [*cmd_prefix, *flags]
            rc, out = 1, ""
            if pch is not None:
                rc, out = _run([*base, "-include", str(pch), "-Winvalid-pch", "-c", filename, "-o", "unit.o", *post], stage)
                self.log.setdefault("pch_used", []).append(kind)  # type: ignore[union-attr]
                _check_stop()
                if rc != 0 and _FAIL_FAST and _opens_with(source, Path(pch).read_text()):
                    # the unit includes that very header first: with the header forced in ahead
                    # it reads the same (the header is guarded, GCC uses a precompiled one only
                    # where it reads as the text), so this error is the plain command's too
                    self.log.setdefault("pch_error_kept", []).append(kind)  # type: ignore[union-attr]
                    pch = "kept"
            if rc != 0 and pch != "kept":  # without the PCH (or it was not there): torch's exact command
                rc, out = _run([*base, "-c", filename, "-o", "unit.o", *post], stage)
                _check_stop()
            if rc != 0:
                (stage / "unit.o").unlink(missing_ok=True)
                (stage / "log.txt").write_text(out)
                # compile errors are content-addressed too: the same bad source fails at once
                self.cache.publish("err", key, stage)
                raise CompileError(out)
            (stage / filename).unlink()
            self.log.setdefault("compiled", []).append(kind)  # type: ignore[union-attr]
            self.times.setdefault("unit_s", {})[kind] = round(time.perf_counter() - t0, 3)
            # what the key was made of, for telling why a prepared object was not found
            return self.cache.publish("obj", key, stage, {"kind": kind, "env": _env_id(),
                                                          "command": [*base, *post]}) / "unit.o"

    # -- the whole extension -------------------------------------------------
    def build(self, name: str, main_cpp: str, cuda_cu: str | None, flags: dict, compile: bool = True) -> Path | None:
        """Folder holding ``{name}.so`` (None on a cache miss with `compile` off)."""
        from .cuda_split import split_cuda_unit

        cxx = shlex.split(flags["cxx"])
        units = []  # (kind, filename, source, prefix, flags, post, use_pch)
        units.append(("binding", "main.cpp", main_cpp, cxx, flags["cflags"], flags["post_cflags"], True))
        split = None
        if cuda_cu is not None:
            nvcc = shlex.split(flags["nvcc"])
            split = split_cuda_unit(cuda_cu)
            if split is None:
                units.append(("cuda", "cuda.cu", cuda_cu, nvcc, flags["cuda_cflags"], flags["cuda_post_cflags"], False))
                self.log["cuda_split"] = False
            else:
                from .cuda_split import host_flags

                units.append(("kernel", "kernel.cu", split.kernel_unit, nvcc, flags["cuda_cflags"],
                              flags["cuda_post_cflags"], False))
                units.append(("host", "host.cpp", split.host_unit, cxx, host_flags(flags["cuda_cflags"]),
                              flags["post_cflags"], True))
                self.log["cuda_split"] = True
        # bindings torch generates (or the candidate wrote, by name): its code against
        # torch/types.h, the binding made once per signature list (slim_units.py); its own .so
        slim = _slim_plan(name, main_cpp, split, flags) if _SLIM else None
        key = content_key("so", _env_id(), name, *flags["ldflags"], *[u[2] for u in units],
                          *[" ".join(u[3] + u[4] + u[5]) for u in units], *(["slim"] if slim else []),
                          *(["stublink"] if _STUB_LINK else []))
        hit = self.cache.get("so", key)
        if hit is not None:
            self.log["warm"] = True
            return hit
        known = self.cache.get("soerr", key) if _FAIL_FAST else None
        if known is not None:  # failed before (or answered by fail_fast.py): the same answer, asked or not
            why = (known / "why.txt").read_text()
            if why:
                self.log["fail_fast"] = why
            self.log["failed_before"] = True
            exc = CompileError((known / "log.txt").read_text(), tuple((known / "kinds.txt").read_text().split()))
            self.log["failed"] = first_error_line(str(exc))
            raise exc
        if not compile:
            return None
        self.log["warm"] = False
        t_compile = time.perf_counter()
        stop = _Stop() if _FAIL_FAST else None
        try:
            if _FAIL_FAST:
                self.precheck(main_cpp, cuda_cu, flags)
            binding = self._binding_state(slim, flags, cxx) if slim is not None else None
            if binding == "failed":
                slim = None  # its binding failed to compile before: torch's units at once
                self.log["slim"] = False
            elif binding == "own_copy":
                self.log["sigbind_own_copy"] = True
            if slim is not None:
                try:
                    folder = self._compile(name, _slim_units(slim, flags, cxx, units), flags, cxx, key, stop,
                                           _NVCC_UNITS, own_copy=("sigbind",) if binding == "own_copy" else ())
                    self.log["slim"] = True
                    return folder
                except CompileError as exc:
                    self.log["slim"] = False  # torch's own units, whose errors are the ones shown
                    self.log["slim_error"] = str(exc)[-600:]
                    if exc.kinds and set(exc.kinds) <= {"kernel", "cuda"}:
                        raise  # nvcc's unit, the same in both: torch's units would fail alike
            merged = _merged_units(units) if _MERGE and not self._binding_cached(units) else None
            if merged is not None:
                try:
                    folder = self._compile(name, merged, flags, cxx, key, stop, _NVCC_UNITS)
                    self.log["merged"] = True
                    return folder
                except CompileError as exc:
                    if exc.kinds and "merged" not in exc.kinds:
                        raise  # the kernel unit failed, the merged one compiled: the two would too
                    self.log["merged"] = False  # the two units, whose errors are the ones torch would show
            return self._compile(name, units, flags, cxx, key, stop)
        except CompileError as exc:
            # kept, as a unit's compile error is: a run that asks whether this build is cached
            # (`cached`, lazy_builds.py) learns it fails instead of having it built elsewhere
            # again. cuda-l1 L1-2 and L3-45 (answered by the precheck): two requeues of ~15 s
            # each, then a 40 s build in the run, holding the GPU's share (session_2026-11-29i);
            # L2-90 (its host unit failed; the candidate's try/except took the error, so its
            # build phase read "built"): the same two requeues (session_2026-11-30)
            if _FAIL_FAST:
                self._keep_failure(key, exc)
            # said in the verdict even where the candidate catches the error and runs something
            # else (`extension_build_failed`)
            self.log["failed"] = first_error_line(str(exc))
            raise
        finally:
            if stop is not None:
                stop.set()  # what an earlier path left compiling is not needed now
            # every compile this process did (the run phase should have none: verify/build/lazy_builds.py)
            self.log["compiles"] = self.log.get("compiles", 0) + 1
            self.log["compile_s"] = self.log.get("compile_s", 0.0) + time.perf_counter() - t_compile

    def _keep_failure(self, key: str, exc: CompileError) -> None:
        stage = self.cache.staging("soerr")
        (stage / "log.txt").write_text(str(exc))
        (stage / "kinds.txt").write_text(" ".join(exc.kinds))
        (stage / "why.txt").write_text(str(self.log.get("fail_fast", "")))
        self.cache.publish("soerr", key, stage)

    def _binding_state(self, plan, flags: dict, cxx: list[str]) -> str:
        """How the slim path gets its binding object: "ready" (in the cache), "failed" (it
        failed to compile before: a pybind11 this path does not know, so no slim unit is
        compiled in vain), "wait" (free, or being compiled by a process at this one's
        priority: another build of the cold batch, done before this build's own slim unit),
        "own_copy" (being compiled at idle priority, build_prepare's, which a busy machine may
        not run for a long time, or by a holder not known: this build compiles its own copy
        beside it, the cache keeping whichever lands first).
        Giving up the slim path whenever another process held the lock sent 11 of a cold run's
        26 successful builds to the merged unit of torch/extension.h (24-31 s against 16-20 s,
        session_2026-11-30f)."""
        _k, _f, src, prefix, fl, post, _p = sigbind_unit(plan.binding, flags, cxx)
        key = self.unit_key("sigbind", src, prefix, fl, post)
        if self.cache.get("obj", key) is not None:
            return "ready"
        if self.cache.get("err", key) is not None:
            return "failed"
        free = self.cache.try_lock("obj", key)
        if free is not None:
            with free:
                return "wait"
        pid = self.cache.holder("obj", key)
        return "wait" if pid is not None and _runs_like_us(pid) else "own_copy"

    def _binding_cached(self, units: list) -> bool:
        """Whether the binding unit's object exists (then only the host unit is compiled:
        many candidates of one task share a binding unit, merging would compile it again)."""
        for kind, _f, src, prefix, fl, post, _p in units:
            if kind == "binding":
                return self.cache.get("obj", self.unit_key(kind, src, prefix, fl, post)) is not None
        return False

    def _compile(self, name: str, units: list, flags: dict, cxx: list[str], key: str, stop: _Stop | None = None,
                 final: frozenset | None = None, own_copy: tuple = ()) -> Path:
        """Compile `units` at once and link them. With `stop` (fail-fast, the default) the
        first error decides: one of a unit whose kind is in `final` (None: any), whose build
        has no other path, kills the compilers still running (`_Stop`) and raises at once;
        one of a unit with another path after it (the slim and merged units) raises at once
        too, leaving the units still compiling to go on (the next path waits for them in the
        cache; what is shared is compiled once). Without `stop`: every unit, then every error.
        `own_copy`: kinds of unit compiled here even while another process holds their lock."""
        fingerprint = getattr(_TLS, "fingerprint", "")
        # each unit's seconds (its precompiled header's wait apart), for the verdict: a cold
        # build's 30 s on a busy GPU host could not be told apart into its units (issue 40)
        seconds = threading.Lock()

        def tally(field: str, kind: str, s: float) -> None:
            with seconds:
                d = self.log.setdefault(field, {})
                d[kind] = round(d.get(kind, 0.0) + s, 3)

        def one(u):
            set_fingerprint(fingerprint)  # a pool thread: the caller's call
            _TLS.stop = stop
            kind, fname, src, prefix, fl, post, use_pch = u
            header = _TYPES_HEADER if use_pch == "types" else _PCH_HEADER

            def pch():
                t = time.perf_counter()
                try:
                    return self._pch(flags["cxx"], fl, header=header)
                finally:
                    tally("pch_wait_s", kind, time.perf_counter() - t)

            t0 = time.perf_counter()
            try:
                return self.compile_unit(kind, fname, src, prefix, fl, post, pch if use_pch else None,
                                         wait=kind not in own_copy)
            finally:
                _TLS.stop = None
                tally("unit_s", kind, time.perf_counter() - t0)

        if stop is not None:  # a unit whose error is cached decides before anything starts
            for u in units:
                err = self.cache.get("err", self.unit_key(u[0], u[2], u[3], u[4], u[5]))
                if err is not None:
                    raise CompileError(f"[{u[1]}]\n{(err / 'log.txt').read_text()}", (u[0],))
        pool = ThreadPoolExecutor(max_workers=len(units))
        futures = [pool.submit(one, u) for u in units]
        errors, failed, objects = [], [], {}
        try:
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in sorted(done, key=futures.index):
                    u = units[futures.index(f)]
                    try:
                        objects[f] = f.result()
                    except CompileError as exc:
                        errors.append(f"[{u[1]}]\n{exc}")
                        failed.append(u[0])
                    except _Cancelled:
                        pass
                if errors and stop is not None and pending:
                    if final is None or set(failed) & final:
                        # decided: the others' compilers are killed (one still waiting for a
                        # unit's lock is killed as it starts; not waited for)
                        stop.set()
                        self.log["stopped"] = sorted(self.log.get("stopped", []) +  # type: ignore[operator]
                                                     [units[futures.index(f)][0] for f in pending])
                    else:
                        self.log["left_running"] = [units[futures.index(f)][0] for f in pending]
                    break
        finally:
            pool.shutdown(wait=False)
        if errors:
            raise CompileError("\n".join(errors), tuple(failed))
        if len(objects) != len(futures):
            raise _Cancelled()  # stopped from outside this path (not reached in one build)
        objects = [objects[f] for f in futures]
        with self.cache.lock("so", key):
            hit = self.cache.get("so", key)
            if hit is not None:
                return hit
            stage = self.cache.staging("so")
            t0 = time.perf_counter()
            # torch's link command, torch's libraries as stubs (link_stubs.py). GNU gold linked
            # 2.4x faster on the CPU machine but slower on the GPU machine (0.54 s against 0.45 s,
            # docs/results/benchmarks_history.md, issue 14, sixteenth session): the linker stays torch's
            objs = [*cxx, *[str(o) for o in objects]]
            try:
                stubbed = self.stubs.ldflags(flags["ldflags"], cxx) if _STUB_LINK else None
            except Exception as exc:  # noqa: BLE001 - any machinery failure keeps torch's link
                stubbed, self.log["link_stubs_error"] = None, repr(exc)[-600:]
            rc, out = _run([*objs, *(stubbed or flags["ldflags"]), "-o", f"{name}.so"], stage)
            self.log["link_stubs"] = stubbed is not None and rc == 0
            if rc != 0 and stubbed is not None:
                self.log["link_stubs_error"] = out[-600:]
                rc, out = _run([*objs, *flags["ldflags"], "-o", f"{name}.so"], stage)  # its errors are shown
            if rc != 0:
                raise CompileError(out)
            self.times["link_s"] = round(time.perf_counter() - t0, 3)
            return self.cache.publish("so", key, stage, {"name": name})


def first_error_line(message: str) -> str:
    """The first line of a build's message that names an error (the compiler's
    `file:line:col: error: ...`, nvcc's `file(line): error: ...`; not an `In file included
    from .../error.h` line), else its first line; at most 300 characters."""
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    hit = next((ln for ln in lines if "error:" in ln or " error " in ln), lines[0] if lines else "")
    return hit[:300]


IDENTS_MAKER = "maker"  # the lock the run's identifiers process holds while it lives
_IDENTS_WAIT_S = 20.0  # how long a build waits for the header identifiers another process is making
_NVCC_UNITS = frozenset({"kernel", "cuda"})  # the same unit on every path: its error decides the build
_FAIL_FAST = True  # fail_fast.py's checks, and a build's first deciding error stops its other units


def fail_fast_checks(on: bool) -> None:
    """Turn the fail-fast checks on or off in this process (benchmarks/build_fail_fast.py's "before")."""
    global _FAIL_FAST
    _FAIL_FAST = bool(on)


_MERGE = True  # binding and host units may compile as one (install(merge=...), VerifyConfig.merge_units)
_STUB_LINK = True  # link against stubs of torch's libraries (link_stubs.py; install(stub_link=...))
_SLIM = True  # extensions may compile as slim units (slim_units.py; install(slim=...), VerifyConfig.slim_units)


def _slim_plan(name: str, main_cpp: str, split, flags: dict):
    """slim_units' plan for this extension (None: torch's units). A CUDA extension's
    kernel unit stays as it is; a split one's host unit joins the plan."""
    from . import slim_units

    if split is None:
        return slim_units.plan(main_cpp, name)
    from .cuda_split import host_flags
    from .unit_merge import flags_match

    return slim_units.plan(main_cpp, name, split.host_unit,
                           flags_match(flags["cflags"], host_flags(flags["cuda_cflags"])))


def _slim_units(plan, flags: dict, cxx: list[str], units: list | None = None) -> list:
    """The slim path's units: the candidate's code (torch's flags, or the host unit's
    where it holds the host code too; the torch/types.h header precompiled), the
    signature list's binding (the binding unit's flags less the module name, so
    candidates share its object), the module's entry point (no header), and of torch's
    `units` the CUDA kernel unit (nvcc) as it is."""
    from .cuda_split import host_flags

    fl, post = flags["cflags"], flags["post_cflags"]
    host = host_flags(flags["cuda_cflags"]) if "cuda_cflags" in flags else fl  # the split's host unit's, as `build` has them
    out = [("slim", "slim.cpp", plan.slim, cxx, host if plan.merged else fl, post, "types"),
           sigbind_unit(plan.binding, flags, cxx),
           ("shim", "shim.cpp", plan.shim, cxx, ["-fPIC"], [], False)]
    if plan.host is not None:
        out.append(("slimhost", "host.cpp", plan.host, cxx, host, post, "types"))
    return out + [u for u in units or [] if u[0] in ("kernel", "cuda")]


def _runs_like_us(pid: int) -> bool:
    """Whether process `pid` gets the CPU as this one does: not at idle priority
    (sandbox.idle_priority) nor niced below this process. False when it cannot be told."""
    try:
        if os.sched_getscheduler(pid) == os.SCHED_IDLE and os.sched_getscheduler(0) != os.SCHED_IDLE:
            return False
        return os.getpriority(os.PRIO_PROCESS, pid) <= os.getpriority(os.PRIO_PROCESS, 0)
    except (OSError, AttributeError):
        return False


def sigbind_unit(binding: str, flags: dict, cxx: list[str]) -> tuple:
    """The slim path's binding unit: the binding unit's flags less the module's name, so
    every candidate with the signature list (and flag set) shares its object. No precompiled
    header: it includes torch's pybind11 casters alone (`slim_units.BINDING_HEADERS`), cheaper
    than torch/extension.h's header even precompiled."""
    return ("sigbind", "bind.cpp", binding, cxx, unnamed(flags["cflags"]), flags["post_cflags"], False)


def _merged_units(units: list) -> list | None:
    """The units with the binding and host units compiled as one (`unit_merge`), or None."""
    from .unit_merge import flags_match, merge

    kinds = {u[0]: u for u in units}
    binding, host = kinds.get("binding"), kinds.get("host")
    if binding is None or host is None or binding[3] != host[3] or binding[5] != host[5]:
        return None
    if not flags_match(binding[4], host[4]):
        return None
    text = merge(binding[2], host[2])
    if text is None:
        return None
    return [u for u in units if u[0] not in ("binding", "host")] + [("merged", "unit.cpp", text, *host[3:])]


_ORIGINAL = None
_BUILDER: InlineBuilder | None = None


def load_inline(name, cpp_sources, cuda_sources=None, sycl_sources=None, functions=None, extra_cflags=None,
                extra_cuda_cflags=None, extra_sycl_cflags=None, extra_ldflags=None, extra_include_paths=None,
                build_directory=None, verbose=False, with_cuda=None, with_sycl=None, is_python_module=True,
                with_pytorch_error_handling=True, keep_intermediates=True, use_pch=False,
                no_implicit_headers=False, **unknown):
    """Same signature and result as torch's; see the module docstring."""
    args = dict(locals())
    args.pop("unknown")
    t0 = time.perf_counter()
    try:
        _defer_if_uncached(args, unknown)
        folder = build_only(**args, **unknown)
    except CompileError as exc:
        raise RuntimeError(f"Error building extension '{name}':\n{exc}") from None
    except Unsupported as exc:
        return _fallback(args, unknown, str(exc))
    import torch.utils.cpp_extension as ce

    t1 = time.perf_counter()
    module = ce._import_module_from_library(name, str(folder), True)
    if _BUILDER is not None:  # where a call's time went (benchmarks/build_speed.py)
        _BUILDER.times["call_build_s"] = round(t1 - t0, 3)
        _BUILDER.times["call_import_s"] = round(time.perf_counter() - t1, 3)
    # registered like any imported extension (torch's own build path does not: guards/trace.py
    # notes what it imports)
    sys.modules.setdefault(name, module)
    return module


# torch's `load` of source files, routed to `load_inline` where that builds the same thing
_ORIGINAL_LOAD = None
_FILE_KINDS = {".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".cu": "cuda"}


def load_as_inline(name, sources, extra_cflags=None, extra_cuda_cflags=None, extra_sycl_cflags=None,
                   extra_ldflags=None, extra_include_paths=None, build_directory=None, verbose=False,
                   with_cuda=None, with_sycl=None, is_python_module=True, is_standalone=False,
                   keep_intermediates=True, **unknown) -> dict | None:
    """The `load_inline` arguments that build what torch's `load(name, sources, ...)` builds,
    or None where they would not be the same build.

    `load` compiles each file as it is; `load_inline(no_implicit_headers=True)` compiles its
    C++ text as main.cpp and its CUDA text as cuda.cu, adding nothing. So one C++ file and/or
    one CUDA file map exactly (a CUDA file alone gets an empty main.cpp, which compiles to
    nothing). Not mapped: two files of a kind (one TU each under `load`), a quoted `#include`
    (resolved beside the original file), other file kinds, and what `load_inline` of this
    builder does not reproduce either (build_directory, SYCL, standalone, unknown arguments)."""
    if unknown or build_directory or extra_sycl_cflags or with_sycl or is_standalone or not is_python_module:
        return None
    files = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    texts: dict[str, str] = {}
    for f in files:
        kind = _FILE_KINDS.get(os.path.splitext(str(f))[1].lower())
        if kind is None or kind in texts:
            return None
        try:
            with open(f, encoding="utf-8") as fh:
                texts[kind] = fh.read()
        except (OSError, UnicodeDecodeError):
            return None  # torch's own error, from torch
    if not texts or any(re.search(r'^\s*#\s*include\s*"', t, re.M) for t in texts.values()):
        return None
    return dict(name=name, cpp_sources=texts.get("cpp", ""), cuda_sources=texts.get("cuda"),
                extra_cflags=extra_cflags, extra_cuda_cflags=extra_cuda_cflags, extra_ldflags=extra_ldflags,
                extra_include_paths=extra_include_paths, verbose=verbose, with_cuda=with_cuda,
                keep_intermediates=keep_intermediates, no_implicit_headers=True)


def load(name, sources, *args, **kwargs):
    """torch's `load`, built by this builder where `load_as_inline` maps it (cached, and the
    same build found again by the run process: torch's own path compiles it in each process,
    since the candidate's source file lies in a new temporary folder each time), else torch's."""
    if args:  # positional options: as torch reads them
        return _ORIGINAL_LOAD(name, sources, *args, **kwargs)
    inline = load_as_inline(name, sources, **kwargs)
    if inline is None:
        return _ORIGINAL_LOAD(name, sources, **kwargs)
    _BUILDER.log["load"] = "as load_inline"  # installed with the builder (`install`)
    return load_inline(**inline)


DEFER_EXIT = 75  # the exit code of a run process that stopped to have a build done elsewhere
_DEFER_PATH: str | None = None  # set in run phases (`defer_builds`): where a needed build is requested


def defer_builds(path: str | None) -> None:
    """In this process, write uncached builds' arguments to `path` and exit
    instead of compiling (the run phase's job says where; not an environment
    variable, which the candidate would see)."""
    global _DEFER_PATH
    _DEFER_PATH = path


def _defer_if_uncached(args: dict, unknown: dict) -> None:
    """In a run phase (`defer_builds`), a build that is not in the cache is not
    compiled here: its arguments are written to that file and the process
    exits with `DEFER_EXIT` at once (no exception the candidate's try/except
    could swallow into a fallback). The runner builds it on a CPU build worker
    and runs the candidate again (verify/build/lazy_builds.py)."""
    path = _DEFER_PATH
    if (not path or _BUILDER is None or unknown or args.get("build_directory") or args.get("sycl_sources")
            or args.get("with_sycl") or not args.get("is_python_module", True)):
        return  # what this builder does not reproduce goes to torch's load_inline, here
    import json

    try:
        request = json.dumps({**args, **unknown})
    except (TypeError, ValueError):
        return  # arguments that cannot travel: built here
    try:
        if cached(**args, **unknown):
            return
    except (Unsupported, CompileError):
        return  # torch's own path, or the compile error, met here as before
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(request + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(DEFER_EXIT)


def cached(name, cpp_sources, cuda_sources=None, functions=None, extra_cflags=None, extra_cuda_cflags=None,
           extra_ldflags=None, extra_include_paths=None, with_cuda=None, with_pytorch_error_handling=True,
           no_implicit_headers=False, **_ignored) -> bool:
    """Whether `load_inline` with these arguments would find its extension in the cache."""
    main_cpp, cuda_cu = assemble(name, cpp_sources, cuda_sources, functions, with_pytorch_error_handling,
                                 no_implicit_headers)
    use_cuda = bool(cuda_cu) if with_cuda is None else bool(with_cuda)
    flags = torch_flags(name, use_cuda, extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths)
    flags["fingerprint"] = _include_dirs_id(extra_include_paths)
    set_fingerprint(flags["fingerprint"])
    return _BUILDER.build(name, main_cpp, cuda_cu, flags, compile=False) is not None


def build_only(name, cpp_sources, cuda_sources=None, sycl_sources=None, functions=None, extra_cflags=None,
               extra_cuda_cflags=None, extra_sycl_cflags=None, extra_ldflags=None, extra_include_paths=None,
               build_directory=None, verbose=False, with_cuda=None, with_sycl=None, is_python_module=True,
               with_pytorch_error_handling=True, keep_intermediates=True, use_pch=False,
               no_implicit_headers=False, **unknown) -> Path:
    """What `load_inline` builds, built into the cache and not imported: the
    folder holding ``{name}.so``. Raises Unsupported for arguments this builder
    does not reproduce, CompileError when the source does not compile."""
    if _BUILDER is None or unknown or sycl_sources or with_sycl or not is_python_module:
        raise Unsupported("arguments this builder does not reproduce")
    main_cpp, cuda_cu = assemble(name, cpp_sources, cuda_sources, functions, with_pytorch_error_handling,
                                 no_implicit_headers)
    use_cuda = bool(cuda_cu) if with_cuda is None else bool(with_cuda)
    t0 = time.perf_counter()
    flags = torch_flags(name, use_cuda, extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths)
    flags["fingerprint"] = _include_dirs_id(extra_include_paths)
    _BUILDER.times["flags_s"] = round(time.perf_counter() - t0, 3)
    set_fingerprint(flags.get("fingerprint", ""))
    torch_builds = ("with_cuda=True without CUDA sources" if use_cuda and cuda_cu is None else
                    "build_directory: torch builds in the candidate's folder" if build_directory else "")
    if torch_builds:
        # torch builds these itself (in the candidate's folder, or a C++-only unit linked for
        # CUDA); its main.cpp is this one, so a build that surely fails is answered here, before
        # torch compiles it (CUDA-L1's L1-83: 18 s of torch's compile -> 1.8 s on 2 cores; l40-L1-95,
        # with_cuda=True beside CUDA code in cpp_sources and its own module: 18.5 s of torch's
        # compile inside a run, holding its GPU from other runs' timings, session 28; issue 40)
        if _FAIL_FAST:
            _BUILDER.precheck(main_cpp, cuda_cu, flags)
        raise Unsupported(torch_builds)
    return _BUILDER.build(name, main_cpp, cuda_cu, flags)


def _fallback(args: dict, unknown: dict, reason: str):
    print(f"kernelmill: using torch's load_inline ({reason})", file=sys.stderr)
    if _BUILDER is not None:
        _BUILDER.log["fallback"] = reason
    return _ORIGINAL(**args, **unknown)


def install(cache_root: str | Path, merge: bool | None = None, slim: bool | None = None,
            stub_link: bool | None = None, fail_fast: bool | None = None) -> InlineBuilder:
    """Route ``torch.utils.cpp_extension.load_inline`` (and ``load`` where `load_as_inline`
    maps it) to the cached builder (in this process only; called by the worker before the
    candidate is imported).
    `merge`: whether binding and host units may compile as one; `slim`: whether an
    extension may compile as slim units (slim_units.py); `stub_link`: whether the link
    names torch's libraries through stubs (link_stubs.py); `fail_fast`: fail_fast.py's checks
    and stopping a build's units at its first deciding error; None: as it was."""
    global _ORIGINAL, _ORIGINAL_LOAD, _BUILDER, _MERGE, _SLIM, _STUB_LINK
    if fail_fast is not None:
        fail_fast_checks(fail_fast)
    if stub_link is not None:
        _STUB_LINK = bool(stub_link)
    if merge is not None:
        _MERGE = bool(merge)
    if slim is not None:
        _SLIM = bool(slim)
    import torch.utils.cpp_extension as ce

    if _ORIGINAL is None:
        _ORIGINAL, _ORIGINAL_LOAD = ce.load_inline, ce.load
    _BUILDER = InlineBuilder(cache_root)
    ce.load_inline, ce.load = load_inline, load
    return _BUILDER


def builder_log() -> dict:
    return dict(_BUILDER.log) if _BUILDER is not None else {}


def builder_times() -> dict:
    return dict(_BUILDER.times) if _BUILDER is not None else {}


def _pch_main(argv: list[str]) -> None:
    """``python -m kernelmill.verify.build.inline_build pch CACHE KEY CXX FLAGS_JSON LOCK_FD [HEADER]``:
    build one precompiled header (InlineBuilder._pch_in_background); the lock
    descriptor is held until this process ends."""
    from ..sandbox import idle_priority

    cache_root, key, cxx, flags, _fd, *header = argv
    idle_priority()  # no build waits for it: on idle CPU time only
    InlineBuilder(cache_root)._make_pch(cxx, json.loads(flags), key, header[0] if header else _PCH_HEADER)


if __name__ == "__main__":
    if len(sys.argv) in (7, 8) and sys.argv[1] == "pch":
        _pch_main(sys.argv[2:])
    else:
        raise SystemExit("usage: python -m kernelmill.verify.build.inline_build pch CACHE KEY CXX FLAGS_JSON LOCK_FD [HEADER]")
