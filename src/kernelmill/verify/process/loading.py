"""Loading code and moving tensors, for the processes that run candidates
(`worker`, `supervisor`, `candidate`): one copy, public, so no process module
reaches into another's private helpers."""

from __future__ import annotations

import importlib.util
import os
import sys
import time
import traceback
from typing import Any


def load_module(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def module_from_source(code: str, name: str, label: str):
    """A module run from source text (the task: it reaches the run process in
    its job, never as a file a candidate could open). `label` names it in
    tracebacks, and linecache keeps its lines for them."""
    import linecache
    import types

    module = types.ModuleType(name)
    module.__file__ = label
    linecache.cache[label] = (len(code), None, code.splitlines(True), label)
    sys.modules[name] = module
    exec(compile(code, label, "exec"), module.__dict__)  # noqa: S102 - the task is trusted code
    return module


def error_text(exc: BaseException, limit: int) -> str:
    """The useful part of an exception: compiler errors, else the last frames."""
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    lines = text.splitlines()
    errors = [ln for ln in lines if " error" in ln or ln.startswith("error") or "Error" in ln]
    if len(text) > limit and errors:
        text = "\n".join(errors)
    if len(text) > limit:
        text = text[: limit // 2] + "\n[...]\n" + text[-limit // 2:]
    tb = traceback.extract_tb(exc.__traceback__)
    cand = [f for f in tb if f.filename.endswith("candidate.py")]
    if cand:
        text += f"\n(at candidate.py line {cand[-1].lineno}: {cand[-1].line})"
    return text


_BUILD_FAILURES: list[str] = []  # this process's candidate's failed load_inline/load calls (watch_builds)


def watch_builds() -> list[str]:
    """Note each call of torch's `load_inline`/`load` in this process that raises, as "name:
    first error line" in the list returned (emptied here), wherever the candidate makes it: at
    import, in ``ModelNew.__init__``, in forward. Called after the fast builder is installed
    (its `install` rebinds both). Left out: the builder's answer from its cache of failed
    builds, a failure the build phase (or a build the run asked for) met, which the runner
    notes from the build's log (runner._verdict's extension_build_failed). What this adds:
    a build the builder answered by fail_fast.py's checks outside its compile (a
    ``build_directory`` call), and one torch built itself (cuda-l1 a100-L1-35, l40-L1-95:
    CUDA source as cpp_sources with build_directory, failing in __init__)."""
    import functools

    import torch.utils.cpp_extension as ce

    from ..build import inline_build

    def wrap(fn):
        if getattr(fn, "_km_watched", False):
            return fn

        @functools.wraps(fn)
        def call(*args, **kwargs):
            before = inline_build.builder_log()
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                after = inline_build.builder_log()
                known = after.get("failed_before") and (not before.get("failed_before")
                                                        or after.get("failed") != before.get("failed"))
                if not known:
                    name = args[0] if args else kwargs.get("name", "?")
                    _BUILD_FAILURES.append(f"{str(name)[:80]}: {inline_build.first_error_line(str(exc))}")
                raise

        call._km_watched = True
        return call

    _BUILD_FAILURES.clear()
    ce.load_inline, ce.load = wrap(ce.load_inline), wrap(ce.load)
    return _BUILD_FAILURES


def load_reference(job):
    """The task module with its size profile applied, its init inputs, and
    `Model` built under the weight seed (the candidate is built under the same)."""
    import torch

    ref_mod = module_from_source(job.task_code, "reference", f"<task {job.task_id}>")
    for key, value in job.sizes.items():
        setattr(ref_mod, key, value)
    torch.manual_seed(job.weight_seed)
    init_inputs = ref_mod.get_init_inputs() if hasattr(ref_mod, "get_init_inputs") else []
    torch.manual_seed(job.weight_seed)
    return ref_mod, init_inputs, ref_mod.Model(*init_inputs)


def to_device(obj: Any, device):
    from ..measure.tree import map_tensors

    return map_tensors(obj, lambda t: t.to(device))


def clone(obj: Any):
    from ..measure.tree import map_tensors

    return map_tensors(obj, lambda t: t.clone())


def name_process(name: str) -> None:
    """Give this process a name `ps`, `top` and the CPU accounting see (/proc/PID/comm,
    15 bytes): a worker forked by a zygote otherwise shows the zygote's command line."""
    try:
        with open("/proc/self/comm", "w") as fh:
            fh.write(name[:15])
    except OSError:
        pass


def die_with_parent() -> None:
    """If the harness is killed (kill -9), take this worker down too."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass




def to_cpu(out: Any):
    """An output (a tensor or nested lists of them) as contiguous CPU tensors."""
    from ..measure.tree import map_tensors

    return map_tensors(out, lambda t: t.detach().cpu().contiguous(), lists=True)


def inputs_to_cpu(args: Any):
    """Inputs or init arguments as contiguous CPU tensors, their tuples kept tuples: a candidate
    gets what `get_inputs` / `get_init_inputs` returned, as KernelBench passes it (cuda-l1 L1-69
    tests `isinstance(kernel_size, tuple)`; given the list [3, 5] it failed to construct)."""
    from ..measure.tree import map_tensors

    return map_tensors(args, lambda t: t.detach().cpu().contiguous(), plain=True)


def fast_serialization() -> None:
    """The exchange files live for one candidate on a local disk: a CRC of
    gigabytes of tensors costs more than it protects (torch >= 2.6 has the knob)."""
    try:
        import torch.utils.serialization as ser

        ser.config.save.compute_crc32 = False
    except (ImportError, AttributeError):
        pass


def started_at() -> float:
    """When this process started (wall clock): its start in /proc/self/stat (clock ticks
    after boot) against /proc/uptime (seconds after boot, 10 ms steps); the time now where
    /proc cannot say (then the imports before it are missed)."""
    try:
        with open("/proc/self/stat") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as fh:
            up = float(fh.read().split()[0])
        return time.time() - max(0.0, up - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return time.time()
