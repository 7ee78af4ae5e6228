"""The typed records the harness hands to its processes.

`RunJob` goes from the runner to a worker (build, run or guarded), as a JSON
file the worker reads and deletes; `CandidateJob` goes from the supervisor to
the candidate's process, and holds nothing of the reference (no task code, no
seed, no sizes). Both refuse unknown or missing fields, so a typo in one
process is an error in the first candidate, not a silently ignored setting.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...records import unknown_fields
from ..measure.settings import CheckRule, TimingConfig


class JobError(ValueError):
    """A job file that does not describe a job."""


# fields that hold a record of their own, rebuilt (and checked) from their JSON object
_NESTED = {"timing": TimingConfig, "check": CheckRule}


def _from_dict(cls, data: dict[str, Any], where: str):
    unknown = unknown_fields(cls, data)
    if unknown:
        raise JobError(f"{where}: unknown field(s) {', '.join(unknown)}")
    data = dict(data)
    for name, record in _NESTED.items():
        if isinstance(data.get(name), dict):
            data[name] = _from_dict(record, data[name], f"{where}: {name}")
    try:
        return cls(**data)
    except TypeError as exc:
        raise JobError(f"{where}: {exc}") from None


@dataclass
class _Record:
    def to_json(self) -> str:
        return json.dumps(asdict(self))

    def write(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json())

    @classmethod
    def read(cls, path: str | Path, delete: bool = False):
        """The record in `path`; `delete` removes the file once read (a job may
        hold the input seed, which no candidate may find on disk)."""
        p = Path(path)
        data = json.loads(p.read_text())
        if delete:
            p.unlink()
        return _from_dict(cls, data, str(p))


@dataclass
class RunJob(_Record):
    """One phase of one candidate, as the runner describes it to a worker."""

    candidate: str  # path of the candidate's code
    result: str  # where the worker writes its result JSON
    rlimits: dict[str, Any]
    message_limit: int
    task_code: str = ""  # the reference's source (never written to a file of its own)
    task_id: str = ""
    build_cache: str | None = None  # the shared fast builder's cache, if on
    env: dict[str, str] | None = None  # the environment of a fresh process (for a spare started ahead)
    # run phases
    device: str = "cpu"
    sizes: dict[str, Any] = field(default_factory=dict)  # module globals of the size profile
    trials: int = 5
    input_seed: int = 0
    weight_seed: int = 42
    check: CheckRule = field(default_factory=CheckRule)  # the correctness rule (mode, tolerances)
    time: bool = True
    timing: TimingConfig = field(default_factory=TimingConfig)
    skip_timing_reason: str | None = None
    import_is_build: bool = False
    guards: str = "off"
    fallback: str = "reject"
    language: str = "torch"
    ref_profile: dict[str, Any] | None = None  # the task's reference profile, measured once per task
    # run phases: measure the reference under torch.compile too ({"mode", "backend", "timeout"}; verify/measure/compiled.py)
    compile_baseline: dict[str, Any] | None = None
    # build phases: load_inline arguments a run phase asked for (inline_build.defer_builds)
    build_requests: list[dict[str, Any]] | None = None
    # run phases: where an uncached load_inline writes its arguments instead of compiling
    defer_builds: str | None = None
    # run phases: "auto" lets a guarded GPU run exchange tensors through CUDA IPC; "file" never
    exchange: str = "auto"
    # build phases: the nice increment the worker applies to itself (and so to its compilers)
    nice: int = 0
    # the fast builder may compile a binding and a host unit as one (VerifyConfig.merge_units)
    merge_units: bool = True
    # the fast builder may compile a C++ extension as slim units (VerifyConfig.slim_units)
    slim_units: bool = True

    @property
    def timed(self) -> bool:
        return self.time and not self.skip_timing_reason


@dataclass
class CandidateJob(_Record):
    """What the supervisor tells the candidate's process: paths, the weight
    seed and the timing settings. Nothing of the reference."""

    candidate: str
    inputs: str  # inputs.pt: the input sets and init inputs (deleted once read)
    outputs: str  # where the candidate's outputs go
    device: str
    weight_seed: int
    message_limit: int
    rlimits: dict[str, Any]
    time: bool
    timing: TimingConfig
    guards: str
    skip_timing_reason: str | None = None
    import_is_build: bool = False
    build_cache: str | None = None
    env: dict[str, str] | None = None
    defer_builds: str | None = None  # see RunJob.defer_builds
    # how the tensors travel: "file" (inputs.pt / outputs.pt) or "cuda_ipc" (cuda_ipc.py)
    exchange: str = "file"
    merge_units: bool = True  # see RunJob.merge_units
    slim_units: bool = True  # see RunJob.slim_units

    @property
    def timed(self) -> bool:
        return self.time and not self.skip_timing_reason
