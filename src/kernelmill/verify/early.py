"""The fork servers of a `kernelmill verify` on a GPU, started before the command's own
imports.

The command process imports torch and the rest of kernelmill before it parses its
options (4-5 s on the GPU machine's host, issue 14), and each zygote
(pools/zygote.py) imports torch too before the first build or run can fork from it.
Started one after the other, the first builds waited for both. So the entry point
(`kernelmill.entry`) reads the arguments for what it needs to guess, starts the two
zygotes, and only then imports the command; the `Verifier` adopts them
(`adopt`) where its settings match the guess: the same cache folder, spares and forked
workers not switched off. A zygote nobody adopted is closed when the verifier's own
start-up decides it is not needed, and dies with this process in any case
(PR_SET_PDEATHSIG); a command that ends before its verifier started (bad arguments, a
task file that does not load) removes their folders as it exits.

This module imports no torch.
"""

from __future__ import annotations

import atexit
import shutil
from concurrent.futures import Future
from pathlib import Path

from .devices import driver_lists_gpus, physical_gpu
from .paths import default_cache_dir
from .sandbox import scrubbed_env
from .pools.standby import close_started, start_zygote, zygote_folder

# (mode, work folder) -> the zygote's future and its own folder
_started: dict[tuple[str, str], tuple[Future, Path]] = {}


def run_zygote_env(first_gpu: int = 0) -> dict[str, str]:
    """The run zygote's environment: a spare's, on the first GPU the run uses (the zygote
    itself never opens CUDA; each worker gets its own GPU's environment at the fork)."""
    return scrubbed_env({"CUDA_VISIBLE_DEVICES": physical_gpu(first_gpu)})


def build_zygote_env() -> dict[str, str]:
    return scrubbed_env({"CUDA_VISIBLE_DEVICES": ""})


def start(work_dir: Path, modes: tuple[str, ...] = ("run", "build"), first_gpu: int = 0) -> None:
    """Start the zygotes of `modes` for a verifier whose work folder is `work_dir`."""
    work_dir.mkdir(parents=True, exist_ok=True)
    for mode in modes:
        key = (mode, str(work_dir.resolve()))
        if key not in _started:
            env = run_zygote_env(first_gpu) if mode == "run" else build_zygote_env()
            folder = zygote_folder(mode, work_dir)
            _started[key] = (start_zygote(mode, work_dir, env, folder), folder)


def adopt(mode: str, work_dir: Path) -> Future | None:
    """The zygote started early for this mode and work folder (once), or None."""
    started = _started.pop((mode, str(Path(work_dir).resolve())), None)
    return started[0] if started else None


def close_unadopted() -> None:
    while _started:  # close_started removes each folder once its zygote has started
        close_started(_started.popitem()[1][0])


@atexit.register
def _close_at_exit() -> None:
    """The command ends with zygotes nobody adopted or closed: close those that have
    started and remove every such folder now (close_started's callbacks may never run
    once the interpreter is going; the zygotes die with this process anyway)."""
    while _started:
        future, folder = _started.popitem()[1]
        if future.done() and not future.cancelled() and future.exception() is None:
            future.result().close()
        shutil.rmtree(folder, ignore_errors=True)


def _option(args: list[str], name: str) -> str | None:
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def start_from_argv(argv: list[str]) -> None:
    """For ``kernelmill verify ...`` that will fork its workers on a GPU (its --device is
    not cpu, the driver lists a GPU, --no-fork-workers is not given and neither spares
    nor build spares are switched off), start its zygotes now. A guess that cannot
    hurt: nothing starts unless all of that holds, and what starts is adopted or closed."""
    if not argv or argv[0] != "verify" or "--help" in argv or "--dry-run" in argv:
        return
    args = argv[1:]
    if (_option(args, "--device") or "auto") == "cpu" or "--no-fork-workers" in args:
        return
    if not driver_lists_gpus():
        return
    modes = tuple(m for m, flag in (("run", "--standby"), ("build", "--build-standby")) if _option(args, flag) != "0")
    gpus = _option(args, "--gpus")
    try:
        first = int(gpus.split(",")[0]) if gpus else 0
    except ValueError:
        first = 0
    try:
        start(default_cache_dir() / "work", modes, first)
    except OSError:
        return  # the verifier reports what is wrong with the cache folder
