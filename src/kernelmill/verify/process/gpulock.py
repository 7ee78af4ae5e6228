"""The timing lock: nothing else of ours runs on a GPU while it is being timed.

A GPU shared by several CUDA contexts time-slices between them: while the
next candidate's spare process opened its context and started the profiler
(`standby.py`, a few seconds of GPU work), the current candidate's timed calls
waited for the other context's slices. Measured on an H100 with guards on, a
10 us three-kernel candidate read 32 us: its rounds alternated between stretches
at 10 us and stretches at 60 us while spares warmed up (docs/benchmarks.md).

One lock file per GPU, taken with ``flock``: timing holds it exclusively (the
reference's and the candidate's rounds, driven by one process); GPU work that
may overlap other GPU work (spares opening their context and warming the
profiler) holds it shared, so warm-ups run side by side but never during a
timed round. The kernel drops a lock when its holder dies. The lock is only
taken by harness code, before a candidate's code is loaded, and released
before it is (a candidate cannot hold it). Timed work of another program on
the same GPU is not covered.

The folder is ``KERNELMILL_GPU_LOCK_DIR`` or /dev/shm (the system temporary
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


def lock_path(device: str) -> Path | None:
    """The lock file of a CUDA device string ("cuda", "cuda:1"); None for a CPU."""
    device = str(device)
    if not device.startswith("cuda"):
        return None
    index = device.split(":", 1)[1] if ":" in device else "0"
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "all").replace(",", "_").replace("/", "_") or "none"
    root = Path(os.environ.get("KERNELMILL_GPU_LOCK_DIR")
                or ("/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()))
    return root / f"kernelmill-gpu-{visible}-{index}.lock"


class Held:
    """What taking the lock cost: `wait_s` seconds, and whether it was `acquired`
    (False on a CPU, or after `timeout`: the block then runs without it)."""

    def __init__(self) -> None:
        self.wait_s = 0.0
        self.acquired = False


@contextmanager
def gpu_lock(device: str, exclusive: bool, timeout: float | None = None) -> Iterator[Held]:
    """Hold the device's timing lock (exclusive for timing, shared for other GPU
    work) for the block; a no-op for a CPU or where the file cannot be made.
    With `timeout`, a holder that never lets go (a spare's warm-up stuck in the
    driver) costs at most that long: the block then runs unlocked and says so."""
    held = Held()
    path = lock_path(device)
    fd = None
    if path is not None:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError:
            fd = None
    if fd is None:
        yield held
        return
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    t0 = time.monotonic()
    try:
        if timeout is None:
            fcntl.flock(fd, mode)
            held.acquired = True
        else:
            while True:
                try:
                    fcntl.flock(fd, mode | fcntl.LOCK_NB)
                    held.acquired = True
                    break
                except BlockingIOError:
                    if time.monotonic() - t0 >= timeout:
                        break
                    time.sleep(0.005)
        held.wait_s = time.monotonic() - t0
        yield held
    finally:
        os.close(fd)  # closing drops the lock
