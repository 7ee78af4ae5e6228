"""The driver's own count of a GPU's busy time, sampled beside a run (issues 14, 40).

`nvidia-smi`'s utilization.gpu is the share of its last sample period in which a kernel ran:
the figure issue 40's target 3 names ("kernels running >= 70% of the wall time, nvidia-smi or
CUPTI, not a lock's hold time"). Used by verify_throughput.py and vs_kernelbench.py.
"""

from __future__ import annotations

import subprocess
import time


class SmiSampler:
    """The driver's own figure beside the lock's: `nvidia-smi`'s utilization.gpu (the share
    of its last sample period in which a kernel ran) every 100 ms, each line stamped with
    time.monotonic() as it arrives. Nothing where nvidia-smi is missing."""

    def __init__(self, gpu: int):
        import shutil
        import threading

        self.rows: list[tuple[float, float]] = []
        self.proc = None
        if shutil.which("nvidia-smi") is None:
            return
        self.proc = subprocess.Popen(["nvidia-smi", "-i", str(gpu), "--query-gpu=utilization.gpu",
                                      "--format=csv,noheader,nounits", "-lms", "100"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                self.rows.append((time.monotonic(), float(line.strip())))
            except ValueError:
                pass

    def stop(self) -> list[tuple[float, float]]:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
            self.thread.join(timeout=5)
        return self.rows


def busy_mean(rows: list[tuple[float, float]], start: float, end: float) -> dict:
    """Over [start, end] (time.monotonic): the mean of the samples (percent) and their count."""
    inside = [u for t, u in rows if start <= t <= end]
    return {"smi_util_mean": round(sum(inside) / len(inside), 1) if inside else None, "smi_samples": len(inside)}
