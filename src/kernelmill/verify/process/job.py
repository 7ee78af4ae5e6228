"""The typed records the harness hands to its processes.

`RunJob` goes from the runner to a worker (build, run or guarded), as a JSON
file the worker reads and deletes, and `RunResult` comes back the same way (the
job's `result` file); `CandidateJob` goes from the supervisor to
the candidate's process, and holds nothing of the reference (no task code, no
seed, no sizes). All refuse unknown or missing fields, so a typo in one
process is an error in the first candidate, not a silently ignored setting.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...records import STATUSES, unknown_fields
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
    declared = cls.__dataclass_fields__
    for name, record in _NESTED.items():  # only where the field is declared as that record
        if name in declared and declared[name].type == record.__name__ and isinstance(data.get(name), dict):
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
    rlimits: dict[str, Any]  # the candidate's (a guarded run's candidate process applies them)
    message_limit: int
    # a guarded run's supervisor's own (sandbox.Sandbox.rlimits(harness=True)); None: `rlimits`
    harness_rlimits: dict[str, Any] | None = None
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
    policy: str = "flag"  # a task's library and launch policy: flag or reject (guards/policy.py)
    language: str = "torch"
    ref_profile: dict[str, Any] | None = None  # the task's reference profile, measured once per task
    # run phases: measure the reference under torch.compile too ({"mode", "backend", "timeout"}; verify/measure/compiled.py)
    compile_baseline: dict[str, Any] | None = None
    # build phases: load_inline arguments a run phase asked for (inline_build.defer_builds)
    build_requests: list[dict[str, Any]] | None = None
    # run phases: where an uncached load_inline writes its arguments instead of compiling
    defer_builds: str | None = None
    # run phases: "auto" lets a guarded GPU run exchange tensors through CUDA IPC; "file" never;
    # "host" never, and keeps the reference's answers in host memory (supervisor._placed)
    exchange: str = "auto"
    # build phases: the nice increment the worker applies to itself (and so to its compilers)
    nice: int = 0
    # the fast builder may compile a binding and a host unit as one (VerifyConfig.merge_units)
    merge_units: bool = True
    # the fast builder may compile a C++ extension as slim units (VerifyConfig.slim_units)
    slim_units: bool = True
    # a guarded GPU run lends its share of the GPU lock to a waiting timing (VerifyConfig.gpu_lend)
    gpu_lend: bool = True
    # a guarded run compares the first output before the timing (VerifyConfig.early_check)
    early_check: bool = True

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
    # share the first trial's first output before the timing and wait for the supervisor's word
    # whether to be timed (RunJob.early_check; candidate._early_check)
    early_check: bool = False

    @property
    def timed(self) -> bool:
        return self.time and not self.skip_timing_reason


# the file beside the outputs through which a candidate's process shares its first output before
# the timing where the run does not exchange through CUDA IPC (candidate._early_check)
EARLY_FILE = "early.pt"

# what a phase may answer besides a verdict's own statuses: a build phase's "built", a run
# phase that stopped for builds (`defer_builds`)
RESULT_STATUSES = STATUSES + ("built", "needs_build")


@dataclass
class RunResult(_Record):
    """What a worker's phase hands back to the runner (the job's `result` file): the
    way back of `RunJob`. Refuses unknown or missing fields and unknown statuses, so a
    worker that writes a misspelt key fails its first candidate, in the worker (where
    the traceback is), instead of the runner silently dropping the figure."""

    status: str
    compiled: bool | None = None
    correct: bool | None = None
    message: str = ""
    flags: list[str] = field(default_factory=list)
    phases: dict[str, Any] = field(default_factory=dict)  # seconds per phase, and a few counts
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    speedup: float | None = None
    speedup_ci: list[float] | None = None
    runtime_ms: float | None = None
    ref_runtime_ms: float | None = None
    speedup_kernelbench: float | None = None
    provenance: dict[str, Any] | None = None  # what ran (measure/kernel_time.py)
    measurement: dict[str, Any] | None = None  # how the figures were measured (supervisor.measurement)
    timing: dict[str, Any] | None = None  # both sides' timing summaries
    compiled_baseline: dict[str, Any] | None = None  # the reference under torch.compile (measure/compiled.py)
    ref_profile: dict[str, Any] | None = None  # the task's reference profile, measured by this run
    build_info: dict[str, Any] | None = None  # the builder's log (build/inline_build.builder_log)
    lazy_builds: dict[str, Any] | None = None  # extensions built at the candidate's first call
    failed: list[str] | None = None  # a deferred build phase: the extensions that did not build
    build_requests: list[dict[str, Any]] | None = None  # a run that stopped for builds
    worker_marks: dict[str, float] | None = None  # wall-clock marks of the worker (runner: run_head_s, run_tail_s)

    def __post_init__(self):
        if self.status not in RESULT_STATUSES:
            raise JobError(f"result: unknown status {self.status!r} (one of {', '.join(RESULT_STATUSES)})")

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "result") -> "RunResult":
        if not isinstance(data, dict):
            raise JobError(f"{where}: a result is a JSON object, got {type(data).__name__}")
        return _from_dict(cls, data, where)

    def to_dict(self) -> dict[str, Any]:
        """The fields that hold something (the runner's verdict is built from these)."""
        return {k: v for k, v in asdict(self).items() if v is not None}
