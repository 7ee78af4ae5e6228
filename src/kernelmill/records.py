"""The records that flow between stages, and their JSONL io.

One plain dataclass per arrow of the pipeline (`Task`, `Sample`, `Verdict`,
`Pair`). Files are the interface between stages, so the io here is careful:

* appends are one `write()` of one whole line on an `O_APPEND` descriptor, so
  concurrent writers and a `kill -9` leave at worst a truncated *last* line;
* readers keep every good line, and report (never silently drop) a malformed
  line by file and line number; a truncated last line is reported as such.
"""

from __future__ import annotations

import dataclasses
import json
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, TypeVar

from . import languages as _languages

# bumped when what a verdict means changes (its store key holds it): 0.2.0 = GPU time
# from the device's activity records, timed calls under PyTorch's numerics (issue 39);
# 0.3.0 = issue 42's guards decided by what the candidate's process did (runtime_install,
# harness_tampering, shared_answers), code patched in place (harness_patched), an honest
# NaN output no longer deferred_work, task policies (`kernelmill regrade` re-runs older verdicts);
# 0.4.0 = the call stack read by the candidate (harness_introspection at run time), a FLOPs
# floor (suspicious_speed), a harness patch that breaks the run still rejects, strict runs one
# trial of every draw (ties, sorted, offset, non-positive added) with the float64 budget on
# ill-conditioned draws, compute-sanitizer under strict on a GPU, failing builds answered
# before they compile (verify/build/fail_fast.py), Triton's caches no longer shared_answers;
# 0.5.0 = issue 42's classes 31 and 34: a low-precision task computed wider (precision_dressup,
# rejected; an int8 task in fp16 no longer precision_downgrade) and an approximation hidden in
# the output's small tail against the float64 reference (approximation, incorrect);
# 0.5.1 = an extension torch's own `load` imported counts as the candidate's code (no false
# torch_fallback), `load` of one C++/CUDA file built by the fast builder, CuTe DSL and TileLang
# kernels `own` in the provenance, strict no longer flags `open` with a write-only mode;
# 0.5.2 = the host half of a split CUDA unit includes cuda_runtime.h as nvcc would (a `load`ed
# .cu without it was a false compile_error on the GPU); strict adds two structured draws (rows
# ascending at the wide range, a small scale), 11 trials;
# 0.5.3 = strict repeats the first trial's inputs (up to 64 calls, 1 s) to catch a rare race;
# 0.5.4 = a `load_inline(build_directory=...)` call whose build surely fails is answered by
# fail_fast.py's checks before torch compiles it (same outcome, the builder's message);
# 0.5.5 = timed calls' inputs: each element times its own random factor (was one scale per
# call: a cache of answers up to a scale replayed them, measure/inputs.refill), and the checked
# timed calls' sets made the same way from the timing sets (their own plain draw told them apart);
# the KernelBench-convention figure takes at most 2 s of trials a side (at least 20);
# torch modes left on by a candidate and a raised CPU thread count are flagged;
# 0.5.6 = a guarded run's supervisor held to harness_memory_gb apart from the candidate's limit;
# profile auto is small wherever the candidate runs on a CPU; strict's three sanitizer tools side
# by side, each for at most sanitize_timeout;
# 0.5.7 = strict's watched call loads the extensions the build phase made (the run's builder;
# it compiled them again under each tool), and a tool that did not check the call gives the note
# sanitizer_incomplete;
# 0.5.8 = six checked timed calls where a timing set is at most 64 MB (two above): a candidate
# stale on every second call passed two checks half the time;
# 0.5.9 = harness_patched counts torch.library kernels only for operators that existed before the
# candidate loaded: torch.compile's inductor defines prims of its own (five cuda-l1 rows rejected);
# a build makes the header's identifiers itself while another process holds their lock (it
# compiled in full instead: cuda-l1's failing builds 30-50 s each from a cold machine)
# 0.5.10 = a candidate of any language whose source names torch's extension builder
# (`cpp_extension.load`, `load_inline`) has a build phase: labelled `torch`, it compiled in its run,
# holding a share of the GPU's lock, and another run's timing waited 70-74 s (cuda-l1 L2-35, L2-90);
# a build the fail-fast check answered is kept as a failure, so a run asking whether it is cached
# learns it fails (it was sent back to the build worker twice, then built it in the run: ~70 s)
# 0.5.11 = a split CUDA unit's host half starts with what nvcc's host pass has (CUDA's min/max
# overloads, the standard headers its headers include): a host wrapper calling `min(65535, n)`
# failed under the host compiler (cuda-l1 L2-90: its try/except ran the PyTorch fallback, ok
# instead of the CUDA kernel's incorrect); a build that failed to compile is kept as a failure
# (the run asked twice whether it was cached); the candidate's PYTHONPATH entries resolved where
# the harness was started (a relative one named a folder under the work folder: shared_answers
# on an honest torch.compile candidate); a build waits (<= 4 s) for the header identifiers another
# process is making instead of making its own copy at once (a cold run's 25 failing builds each ran one);
# the note extension_build_failed where a candidate caught its extension's compile error and ran on
# 0.5.12 = a build the run phase asked for (one the build process could not reach: cuda-l1 l40
# L1-31 builds behind torch.cuda.is_available()) that failed to compile gives the verdict its
# compiler's first error and the note extension_build_failed, as a build phase's failure does; a
# run makes the fail-fast check's header identifiers first, at the builds' priority (they were
# made last, at idle priority: a cold run's failing builds waited, then made their own); a
# `cpp_sources` that surely writes its own module beside `functions=` is answered from its text,
# with no -E of the torch header (3-6 s each in a cold run on the device)
# 0.5.13 = the run's identifiers process runs at the run's priority (it ran at build_nice: one -E
# beside a cold run's ~150 starting processes took 5-13 s) and holds a `maker` lock from its start,
# for which builds wait instead of making their own copy; a build waits up to 20 s (was 4) for a
# copy being made; prepare's idle-priority process leaves them to the identifiers process (0.5.12
# on the device: 14 failing builds each made their own after 4 s, 6.3-14 s to compile_error);
# measurement.build.idents_made says a build made its own
# 0.5.14 = strict on a GPU fills shared memory with a pattern before each checked call
# (measure/smem_poison.py: a kernel reading shared memory it never wrote was caught or missed by
# what the last kernel left there, 0.5.12 and 0.5.13 on the device); the runner works out the
# header identifiers' flags and keys, so their process imports no torch (on 0.5.13 it took ~10 s
# in a cold run and every failing build waited for it); measurement.build.idents_maker
# 0.5.15 = racecheck's own count decides when none of its report lines names a kernel (the
# calibration's in-place scan read "clean" beside 315728 counted errors, session_2026-11-30e), its
# hazard-mode wording is read, a tool stopped at the timeout keeps the hazards it printed, and
# racecheck runs in its analysis mode, errors only, its hazards capped (the hazard mode's report of
# every byte took 96 s and >120 s on two racy calibration kernels); the identifiers process makes
# its flag sets side by side (the needed one waited 3.9 s behind the others); the slim path's
# binding unit includes torch's pybind11 casters, not torch/extension.h (its longest unit cold)
# 0.5.16 = a slim build whose binding object another process is compiling waits for it when that
# process runs at the build's priority, and compiles its own copy beside an idle-priority maker;
# it gave up the slim path instead (11 of a cold run's 26 successful builds took torch/extension.h's
# merged unit, 24-31 s against 16-20 s, session_2026-11-30f); a cache lock records its holder's pid;
# a supervisor that keeps the reference's answers in host memory says so on stderr; a guarded verdict
# records each side's peak resident memory (measurement.peak_rss_mb), a harness kill's message its peak
# 0.5.17 = outputs are compared a chunk of 16M elements at a time (the same decisions and figures,
# temporaries bounded: a 256 MB output took 1.22 GB more whole, 0.17 GB in chunks); a run whose
# answers are kept in host memory judges there without its share of the GPU lock (a 1.07 GB-output
# task held it ~50 s, the others' timing waiting); the float64 budget and the tail check take
# outputs on another device than the float64 reference (an error under strict on such a run);
# exchange="host" asks for that path; verdicts say measurement.answers="host" and keep sigbind_own_copy
# 0.5.18 = a run the harness's own memory ended (the reference out of GPU memory, the supervisor past
# harness_memory_gb: reference_error) runs once more, after the others (local executor), the verdict saying
# so (measurement.retried_after); a run again in the same folder never reads the last run's result
# 0.5.19 = the comparison counts with count_nonzero, works in place and skips the NaN/infinity
# bookkeeping of a chunk whose sums are finite (the same decisions and figures on 4,000 random cases
# against 0.5.18's; 6x faster on the host, where a 1.07 GB output's judge took 96 s, session 25); a
# constant-output check looks at the head first; the weak-task note reads the output a chunk at a
# time (no float64 copy of it: 2.1 GB more for a 1.07 GB output, in a harness near its memory limit);
# a timed verdict says where its comparison's wall went (measurement.timing_stages), a GPU verdict the
# numbers its answers were placed on (measurement.answers_placement)
# 0.5.20 = a candidate gets its init arguments and inputs with their tuples kept tuples (through files
# and CUDA IPC), as get_init_inputs / get_inputs returned them and KernelBench passes them: cuda-l1
# L1-69 tests isinstance(kernel_size, tuple) and failed to construct on the list [3, 5] (session 26)
# 0.5.21 = the rounds' device records are read after the timing lock is let go: one profiler
# session across a batch of rounds (five pairs and the final checked one, the usual case), the
# device synchronized under the lock, its stop (kineto's host work, 25-60 us a device record)
# outside it; the rounds, calls and figures are those of 0.5.20 (session 27). 0.5.21's first form
# ended the session's device side with kineto's toggle, and lost every record (call b)
# 0.5.22 = 0.5.21 with the device synchronized instead of the toggle
# 0.5.23 = two sides in one process (guards off, the PTX evaluator, the compiled baseline) read each
# round at once again: one profiler session per process, so 0.5.22 timed them by their events (the GPU
# tests of call e); a guarded run (the reference here, the candidate in its own process) is as in 0.5.22
# 0.5.24 = the reference's input-reach probe (item 15, 33 reference calls) runs only for a timed
# candidate faster than the all-bytes bound, the one case where it can change the verdict; the
# same verdicts, a GPU verdict's guard_min_ms is then the all-bytes bound (session 28)
# 0.5.25 = a load_inline with with_cuda=True and no cuda_sources, which torch builds itself, gets the
# fail-fast checks first, as a build_directory call does: cuda-l1 l40-L1-95's "module twice" answered
# in ~2 s instead of torch's 18.5 s compile inside the run (its extension_build_failed note then
# quotes the check's error, not g++'s first one); the local executor starts runs whose source calls
# torch.compile before the others (order only); a GPU candidate that was not timed owes the reference's
# input-reach probe too (the judge checks no speed without a timing)
# 0.5.26 = a guarded GPU run that only waits for its candidate lends its share of the GPU lock to a
# timing that queues, the candidate's CUDA locked by the driver meanwhile (verify/measure/gpu_lend.py;
# --no-gpu-lend: as 0.5.25); the same measurements, other runs' timings no longer wait out a candidate's
# first call (session 29). The candidate's process starts kineto just before its timing (0.02-0.03 s)
# instead of in its warm-up, which loads CUPTI's library only: the driver refuses to lock a process
# in which kineto has started
# 0.5.27 = a candidate its source already rejects (guards/flags.rejections under the run's fallback
# policy) is checked but not timed (phases.timing_settled): the same statuses and flags, no timing
# holding the GPU for a speedup the verdict withdraws; nor is one whose first output (first call, first
# trial set), shared before the timing and compared by the supervisor, is already wrong (the judge
# decides on that copy; phases.timing_settled_check; --no-early-check: timed as before), nor one whose
# backend flags, sent with that output, already reject it (TF32 switched on at run time, once the
# reference's profile is known; phases.timing_settled). A wrong
# candidate that also tricks the timing is now incorrect where it was rejected. The judge out of GPU memory on outputs no
# larger than the reference's is the harness's side (reference_error, run once more), not the
# candidate's runtime_error (session 30: four runs on one H200)
HARNESS_VERSION = "0.5.27"

LANGUAGES = tuple(_languages.ALL)  # each a module of kernelmill/languages/
OP_TYPES = ("single", "fusion", "network")
STATUSES = ("ok", "incorrect", "compile_error", "runtime_error", "timeout", "rejected")


@dataclass
class Task:
    """A PyTorch reference program in KernelBench format."""

    task_id: str
    code: str
    name: str = ""
    level: int | None = None
    op_type: str | None = None
    source: str = ""
    # size profile name -> module globals to override before get_inputs()
    # (e.g. {"small": {"batch_size": 2}}); "full" is the file as written.
    sizes: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class Sample:
    """One generated candidate (and the reasoning that produced it)."""

    sample_id: str
    task_id: str
    language: str
    code: str
    reasoning: str | None = None
    reasoning_tokens: int | None = None
    model: str | None = None
    turn: int = 0
    parent_id: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Verdict:
    """What the harness concluded about one Sample."""

    sample_id: str
    task_id: str
    status: str
    compiled: bool = False
    correct: bool = False
    speedup: float | None = None  # reference time / candidate time (docs/SEMANTICS.md: GPU time)
    runtime_ms: float | None = None
    ref_runtime_ms: float | None = None
    # 95% interval of `speedup` ([low, high]) from the interleaved rounds; a
    # speedup whose interval holds 1.0 cannot be told from 1.0
    speedup_ci: list[float] | None = None
    # how the numbers were measured: timing method, repetitions, rounds, L2
    # policy, both processes' backend flags, dtypes, GPU, versions (docs/SEMANTICS.md)
    measurement: dict[str, Any] = field(default_factory=dict)
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    flags: list[str] = field(default_factory=list)
    message: str = ""
    device: str = ""
    harness_version: str = HARNESS_VERSION
    # seconds spent per phase (build, check, time) and other diagnostics
    phases: dict[str, float] = field(default_factory=dict)
    level: int | None = None
    cached: bool = False
    # the second baseline, with --compile-baseline (docs/SEMANTICS.md): the reference
    # under torch.compile, and reference-compiled time / candidate time
    ref_compiled_runtime_ms: float | None = None
    speedup_compiled: float | None = None
    # the same comparison in KernelBench's convention (events around each call after a
    # synchronize, launch overhead counted; the mean of 100 trials): docs/SEMANTICS.md
    speedup_kernelbench: float | None = None
    # what ran per timed call (GPU): each kernel's symbol, launches, time share and origin
    # (own, cublas, cudnn, cutlass, aten, triton, harness, other), launches and streams
    provenance: dict[str, Any] | None = None
    # the candidate's time against the task's lower bound (FLOPs and minimum bytes at the
    # GPU's peak rates): 1.0 is the speed of light
    sol_fraction: float | None = None
    # what this verdict answers (verify/store.py, input_key): the task, the code, the
    # settings; a verdicts file is resumed only where the sample's key is unchanged
    input_key: str = ""


@dataclass
class Pair:
    """A (source kernel, PTX) pair for decompilation data."""

    pair_id: str
    kernel_name: str
    source_language: str  # "cuda" | "triton"
    source: str
    ptx: str
    rolled_ptx: str | None = None
    target: str = ""
    options: list[str] = field(default_factory=list)
    launch: dict[str, Any] | None = None
    origin: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


R = TypeVar("R")


class RecordError(ValueError):
    """A record that cannot be built from its JSON (names file and line)."""


def to_dict(record: Any) -> dict[str, Any]:
    return dataclasses.asdict(record)


def unknown_fields(cls: type, data: dict[str, Any]) -> list[str]:
    """Keys of `data` that name no field of the dataclass `cls`, sorted (for the
    records that refuse them: settings and process jobs, where a typo must not
    be silently ignored)."""
    return sorted(set(data) - {f.name for f in dataclasses.fields(cls)})


# fields that must hold a number (or null) when read from JSON: a string there
# ("1.5x", "fast") would otherwise surface as a TypeError deep in the metrics
_NUMBER_FIELDS = {"Verdict": ("speedup", "runtime_ms", "ref_runtime_ms", "max_abs_err", "max_rel_err",
                              "speedup_kernelbench", "sol_fraction")}
_INTERVAL_FIELDS = {"Verdict": ("speedup_ci",)}


def from_dict(cls: type[R], data: dict[str, Any], where: str = "") -> R:
    """Build `cls` from a dict, ignoring unknown keys, naming missing ones."""
    names = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    required = [
        n for n, f in names.items()
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    missing = [n for n in required if n not in data]
    if missing:
        raise RecordError(f"{where}: {cls.__name__} is missing {', '.join(missing)}")
    for name in _NUMBER_FIELDS.get(cls.__name__, ()):
        value = data.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise RecordError(f"{where}: {cls.__name__}.{name} must be a number or null, got {value!r:.60}")
    for name in _INTERVAL_FIELDS.get(cls.__name__, ()):
        value = data.get(name)
        if value is not None and not (isinstance(value, list) and len(value) == 2 and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in value)):
            raise RecordError(f"{where}: {cls.__name__}.{name} must be [low, high] numbers or null, got {value!r:.60}")
    extra = {k: v for k, v in data.items() if k not in names}
    kwargs = {k: v for k, v in data.items() if k in names}
    if extra and "meta" in names:
        kwargs["meta"] = {**extra, **(kwargs.get("meta") or {})}
    return cls(**kwargs)  # type: ignore[call-arg]


def dumps(record: Any) -> str:
    data = record if isinstance(record, dict) else to_dict(record)
    return json.dumps(data, ensure_ascii=False, allow_nan=True)


def append_jsonl(path: str | os.PathLike, records: Iterable[Any]) -> int:
    """Append records, one atomic write per line. Returns the count written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    n = 0
    try:
        _heal_truncated_tail(fd, path)
        for rec in records:
            data = (dumps(rec) + "\n").encode()
            written = os.write(fd, data)
            if written != len(data):  # a full disk shows up here
                raise OSError(f"{path}: short write ({written} of {len(data)} bytes)")
            n += 1
    finally:
        os.close(fd)
    return n


def _heal_truncated_tail(fd: int, path: Path) -> None:
    """A file that ends mid-line lost its last record to a killed writer (each
    record is one write, so only the last line can be partial): cut that
    fragment off, with a warning, so new records do not follow garbage."""
    size = os.fstat(fd).st_size
    if size == 0:
        return
    with open(path, "rb") as fh:
        fh.seek(max(0, size - (1 << 20)))
        tail = fh.read()
    if tail.endswith(b"\n"):
        return
    cut = tail.rfind(b"\n")
    keep = size - len(tail) + cut + 1 if cut >= 0 else (size - len(tail) if size > len(tail) else 0)
    os.ftruncate(fd, keep)
    warnings.warn(f"{path}: removed a truncated last line ({size - keep} bytes) left by an interrupted writer",
                  stacklevel=3)


def write_jsonl(path: str | os.PathLike, records: Iterable[Any]) -> int:
    """Replace the file atomically (temp file + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    n = 0
    with open(tmp, "w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(dumps(rec) + "\n")
            n += 1
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return n


@dataclass
class ReadProblem:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def iter_jsonl(
    path: str | os.PathLike, problems: list[ReadProblem] | None = None
) -> Iterator[dict[str, Any]]:
    """Yield each good JSON object; report bad lines into `problems` (or warn)."""
    for _, obj in iter_jsonl_numbered(path, problems):
        yield obj


def read_bytes(path: str | os.PathLike) -> bytes:
    """A file's bytes, gzip-decompressed where its name ends in `.gz` (the raw files of
    earlier sessions under docs/results are kept so)."""
    path = Path(path)
    if path.suffix == ".gz":
        import gzip

        with gzip.open(path, "rb") as fh:
            return fh.read()
    return path.read_bytes()


def iter_jsonl_numbered(
    path: str | os.PathLike, problems: list[ReadProblem] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Like `iter_jsonl`, with the 1-based line number of each object."""
    path = Path(path)
    raw = read_bytes(path)
    lines = raw.split(b"\n")
    last = len(lines)
    if lines and lines[-1] == b"":
        lines.pop()
        last = len(lines) + 1  # file ended with a newline: no partial line
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise ValueError("a line must hold a JSON object")
        except (ValueError, UnicodeDecodeError) as exc:
            truncated = i == last and i == len(lines)
            msg = ("truncated last line (writer interrupted?), ignored"
                   if truncated else f"malformed JSON line, skipped: {exc}")
            _report(problems, ReadProblem(str(path), i, msg))
            continue
        yield i, obj


def read_jsonl(
    path: str | os.PathLike, cls: type[R], problems: list[ReadProblem] | None = None
) -> list[R]:
    """Read records of type `cls`; lines that do not fit are reported and skipped."""
    out: list[R] = []
    local: list[ReadProblem] = []
    for i, obj in iter_jsonl_numbered(path, local):
        try:
            out.append(from_dict(cls, obj, where=f"{path}:{i}"))
        except (RecordError, TypeError) as exc:
            local.append(ReadProblem(str(path), i, str(exc)))
    for p in local:
        _report(problems, p)
    return out


def _report(problems: list[ReadProblem] | None, problem: ReadProblem) -> None:
    if problems is None:
        warnings.warn(str(problem), stacklevel=3)
    else:
        problems.append(problem)
