"""The runner's side of resident supervisors (resident.py): one per run slot of a GPU,
each taking job after job, in place of a spare per job (standby.py).

`take` hands out an idle resident's next job folder (a `Lease`: the n-th job of a
resident goes to DIR/job-n, where the resident started that job's candidate process
ahead); `give_back` returns the resident to the idle ones once the job's result is
written, or drops it if its process is gone (a deadline or watchdog killed its group,
a candidate killed it). Started like spares (the run zygote's forks, the same
environment, from one long-lived thread: PR_SET_PDEATHSIG), so the rest of the
runner treats a lease as it treats a spare. This module imports no torch.
"""

from __future__ import annotations

import math
import shutil
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from .standby import Spare, Standby

# candidates' processes each resident keeps warming up ahead of its jobs: a candidate's
# warm-up (imports, its context in turn, cuBLAS/cuDNN, the check kernels) took 3-5 s under
# load on an H200 and a guarded run ~1.9 s (issue 14), so two jobs' worth plus one
AHEAD = 3


@dataclass
class Resident:
    spare: Spare  # its process (stdin: one job path per line) and folder
    jobs: int = 0  # jobs handed to it


@dataclass
class Lease:
    """One job of a resident: what the runner needs of a spare (`proc`, `dir`,
    `hand_over`), with `dir` the job's own folder."""

    resident: Resident
    gpu: int | None
    dir: Path

    @property
    def proc(self):
        return self.resident.spare.proc

    def hand_over(self, job_path: Path) -> bool:
        return self.resident.spare.hand_over(job_path, last=False)


class Residents(Standby):
    """Up to `slots` resident supervisors per GPU (the runs that share it)."""

    def __init__(self, *args, slots: int = 1, ahead: int = AHEAD, **kwargs):
        super().__init__(*args, depth=slots, mode="resident", **kwargs)
        self.ahead = max(1, ahead)
        self._idle: dict[int | None, deque[Resident]] = {}
        self._count: dict[int | None, int] = {}  # residents alive (idle or busy) per GPU

    module = "kernelmill.verify.pools.resident"  # its own entry point (resident.main)

    def _args(self, folder: Path) -> tuple[str, ...]:
        return (str(folder), self.device, str(self.ahead))

    def take(self, gpu: int | None) -> Lease:
        """The next job folder of an idle resident for `gpu`; one is started if none
        is idle (its warm-up then comes before the job)."""
        with self._lock:
            idle = self._idle.setdefault(gpu, deque())
            resident = None
            while idle and resident is None:
                r = idle.popleft()
                if r.spare.proc.poll() is None:
                    resident = r
                else:
                    self._gone(gpu, r)
            if resident is None:
                resident = Resident(self._start(gpu))
                self._count[gpu] = self._count.get(gpu, 0) + 1
            resident.jobs += 1
            folder = resident.spare.dir / f"job-{resident.jobs}"
            return Lease(resident, gpu, folder)

    def give_back(self, lease: Lease) -> None:
        """After the job: the resident waits for the next one, or is dropped if its
        process is gone (or this pool is closed)."""
        shutil.rmtree(lease.dir, ignore_errors=True)
        with self._lock:
            if self._closed or lease.proc.poll() is not None:
                self._gone(lease.gpu, lease.resident)
            else:
                self._idle.setdefault(lease.gpu, deque()).append(lease.resident)

    def top_up(self, gpu: int | None) -> None:
        """Start residents for `gpu` up to its run slots (capped by the jobs left, with
        `demand`), so their warm-up overlaps the builds."""
        if self._closed:
            return
        with self._lock:
            target = self.depth if self.demand is None else min(self.depth, math.ceil(max(0, self.demand())))
            while self._count.get(gpu, 0) < target:
                self._idle.setdefault(gpu, deque()).append(Resident(self._start(gpu)))
                self._count[gpu] = self._count.get(gpu, 0) + 1

    def _gone(self, gpu: int | None, resident: Resident) -> None:
        self._count[gpu] = max(0, self._count.get(gpu, 0) - 1)
        self._drop(resident.spare)

    def drop_gpu(self, gpu: int | None) -> None:
        with self._lock:
            for r in self._idle.pop(gpu, deque()):
                self._gone(gpu, r)

    def close(self) -> None:
        with self._lock:
            # idle residents join the spares Standby.close kills; busy ones die with
            # their watch (the runner kills a group whose job ends any other way)
            for gpu, idle in self._idle.items():
                self._spares.setdefault(gpu, deque()).extend(r.spare for r in idle)
            self._idle.clear()
        super().close()
