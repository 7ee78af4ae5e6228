"""Settings of a verification run (one dataclass; the CLI fills the same fields)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ..languages import run_device_of
from ..records import HARNESS_VERSION, unknown_fields
from .measure.settings import DEFAULT_TOLERANCES, CheckRule, TimingConfig
from .paths import default_cache_dir  # noqa: F401  (imported from here by older code)


class ConfigError(ValueError):
    """A verify setting that cannot work (the message says which and why)."""


# What each setting is, in a user's words: the help of the command-line options that
# set it (cli/options.py derives the options of `verify`, `serve`, `refine` and
# `bootstrap` from the fields and this table). Timing settings are named "timing.<field>".
FIELD_HELP: dict[str, str] = {
    "device": "cpu, cuda, or auto (cuda when a GPU is visible).",
    "trials": "Correctness trials, each with fresh random inputs.",
    "build_timeout": "Seconds allowed to import/compile one candidate.",
    "run_timeout": "Seconds allowed to check and time one candidate (default: 60 on a CPU, 300 on a GPU).",
    "sanitize_timeout": "--guards strict on a GPU: seconds each compute-sanitizer tool may watch the candidate's call "
                        "(the three run side by side); a tool that takes longer is reported as timed out, and the verdict "
                        "carries the note sanitizer_incomplete "
                        "(racecheck over a full-size 4096^3 tiled matmul watches ~1e11 shared-memory accesses).",
    "workers": "Parallel build processes (0: one per CPU core).",
    "build_nice": "Lower CPU priority of build processes and their compilers (a nice increment, 0-19; 0: none), "
                  "so runs, whose host work the GPU waits for, get a core first.",
    "build_standby": "Build processes started ahead (torch and the builder imported), so a candidate whose "
                     "extension is cached waits for no start-up: -1 auto (4 on CUDA, none on CPU), 0 off.",
    "profile": "Task size profile: auto (small where a candidate runs on a CPU, CPU-only languages such as cpp "
               "included; full on a GPU), small, full.",
    "check": "Correctness rule: allclose (per-dtype atol/rtol, docs/SEMANTICS.md) or max_norm_abs "
             "(max|a-b| / max|ref| <= --norm-tol).",
    "norm_tol": "Tolerance of --check max_norm_abs.",
    "input_seed": "The seed of the input sets (default: a new secret one per run, which an incorrect verdict "
                  "records): give a recorded one to replay the inputs a candidate failed on.",
    "policy": "What a task's FORBID_LIBRARIES / MAX_LAUNCHES_PER_CALL do when what ran breaks them (GPU): flag the "
              "verdict, or reject it.",
    "fp64_k": "Also hold the first trial's output to k times the float32 reference's own error against the reference "
              "run in float64 (both decisions recorded, the stricter decides); 0: off.",
    "fast_build": "Build load_inline extensions with the cached fast builder.",
    "merge_units": "Let the fast builder compile a split CUDA extension's binding and host code as one unit where "
                   "that provably keeps the meaning (half the CPU of a cold build; docs/ARCHITECTURE.md).",
    "slim_units": "Let the fast builder compile an extension's own C++ code (a CUDA extension's host code) against "
                  "torch/types.h and reuse one pybind11 binding object per signature list (a cold CUDA build in ~3 s "
                  "instead of ~12 s on an H200; verify/build/slim_units.py).",
    "gpu_lend": "While a guarded GPU run only waits for its candidate (loading, first calls that compile), let "
                "another run's timing have the GPU, the candidate's CUDA calls held by the driver's checkpoint lock "
                "meanwhile (driver 570 or later; verify/measure/gpu_lend.py).",
    "early_check": "Before a guarded run's timing, compare the candidate's first output (its first call on the "
                   "first input set) with the reference's and read its process's backend flags; where the output "
                   "is already wrong or the flags already reject it (TF32 on in an fp32 task) the verdict cannot "
                   "be ok, and the candidate is not timed (its other checks still run; "
                   "verify/process/supervisor.py).",
    "executor": "local (this machine) or ray (a Ray cluster).",
    "address": "Ray cluster address for --executor ray (e.g. ray://head:10001 or auto).",
    "guards": "Reward-hacking guards: off, standard or strict (docs/guards.md).",
    "fallback": "Candidates that fall back to PyTorch: reject, flag or allow.",
    "standby": "Run processes started ahead per GPU, so their start-up overlaps earlier candidates (each still runs "
               "one candidate), where runs are not resident (--resident off, or --guards off): -1 auto (6 per run "
               "sharing a GPU, one forked from a process that imported torch on a CPU, none there without "
               "--fork-workers), 0 off (also no resident supervisors).",
    "standby_on_demand": "Start spare run processes only as the queued runs need them, not --standby at once "
                         "(spares warming up take the cores from the first candidates' builds).",
    "spare_lead_s": "With --standby-on-demand: a build running longer than this many seconds gets its run's spare "
                    "started, so it is warm when the build ends (0: spares only for queued runs).",
    "fork_workers": "Fork spare build and run processes from one process that imported torch once, instead of "
                    "starting each fresh (each fresh one imports torch: seconds of a core, per candidate).",
    "cpu_runners": "Candidates run at once on a CPU device (timings then share the cores); on CUDA see "
                   "--runs-per-gpu.",
    "runs_per_gpu": "Candidates run at once on one GPU: their start-up, inputs, reference runs and checks overlap, "
                    "their timed rounds never do (a timing lock). 0: auto (2: 1.24x the candidates per minute of 1 "
                    "on an H200, docs/results/benchmarks_history.md).",
    "gpus": "GPUs that run candidates, as indices of the visible GPUs (after CUDA_VISIBLE_DEVICES), "
            "comma-separated, e.g. 1 or 0,1; default all.",
    "compile_baseline": "Also time each task's reference under torch.compile (once per task, compile time left out "
                        "and recorded) and give every correct candidate its speedup over it too (speedup_compiled; "
                        "docs/SEMANTICS.md). Off by default: a compile per task can cost more than the run's "
                        "candidates.",
    "compile_mode": "torch.compile mode for --compile-baseline: default, reduce-overhead, max-autotune, "
                    "max-autotune-no-cudagraphs.",
    "compile_backend": "torch.compile backend for --compile-baseline.",
    "exchange": "How a guarded GPU run passes tensors to the candidate's process and back: auto (CUDA IPC, no host "
                "copies, when the input sets fit in a quarter of the free GPU memory; else files), file (always "
                "through /dev/shm) or host (files, and the reference's answers kept and compared in host memory, "
                "as auto does when they do not fit a quarter of the free GPU memory: the least GPU memory). CPU runs "
                "always use files.",
    "resident": "Supervise guarded runs with a process that stays for job after job (its CUDA context opened once; "
                "each candidate still gets a fresh process; 61-70 candidates/min on an H200 against 52-60): auto "
                "(with guards on, unless --standby 0), on, off (a new supervisor per candidate).",
    "timing.cpu_threads": "Intra-op threads of both the reference's and the candidate's process when timing on a "
                          "CPU (docs/SEMANTICS.md): the same on both sides.",
    "timing.numerics": "Numerics of the timed calls on a GPU: pytorch (PyTorch's defaults, as KernelBench times: "
                       "cuDNN may use TF32) or strict (TF32 off, as the correctness trials always run). "
                       "docs/SEMANTICS.md.",
    "timing.kernel_time": "Time GPU calls by the device's activity records (the GPU time of the work each call "
                          "launched, every stream); off: CUDA events around each call, which also count the "
                          "host's launch gaps.",
    "timing.round_ms": "Timed milliseconds per side in one round of the alternated timing (calls per round = this / "
                       "a call's time, 3 to 1000). Fewer: cheaper rounds, each less precise; the rounds go on until the "
                       "speedup's error is under 1% either way. On issue 40's cold cuda-l1 run (20, the default) all 87 "
                       "timed verdicts stopped at the fewest rounds, their error a median 0.09% (max 0.42%), and the "
                       "rounds cost 9x their timed calls (docs/results/session_2026-11-30i).",
    "timing.deferred_records": "Read the timed rounds' device records after the GPU's timing lock is let go (one "
                               "profiler session per batch of rounds; the same rounds and figures). Off: each round's "
                               "session stops under the lock, as before 0.5.21: cuda-l1's cold run took 178.6 s that "
                               "way and 136.1 s this way (docs/results/session_2026-11-30j).",
    "timing.kb_budget_ms": "GPU milliseconds per side of the KernelBench-convention trials (speedup_kernelbench): "
                           "100 trials, fewer where a call is slow (never under 20); 0: no cap. They held the GPU 42 s "
                           "of the 88 s of timings in cuda-l1's cold run (docs/results/session_2026-11-30j).",
}


def _refuse_unknown(cls: type, data: dict, where: str) -> None:
    unknown = unknown_fields(cls, data)
    if unknown:
        known = sorted(f.name for f in fields(cls))
        raise ConfigError(f"{where}unknown setting(s) {', '.join(unknown)} (known: {', '.join(known)})")


def _timing_from_dict(data: dict) -> TimingConfig:
    _refuse_unknown(TimingConfig, data, "timing: ")
    return TimingConfig(**data)


@dataclass
class VerifyConfig:
    device: str = "auto"  # auto | cpu | cuda
    trials: int = 5  # correctness trials, each with fresh inputs
    build_timeout: float = 600.0  # seconds for importing/compiling a candidate
    run_timeout: float = 300.0  # seconds for checking and timing it
    sanitize_timeout: float = 120.0  # seconds for each compute-sanitizer tool (strict, GPU)
    workers: int = 0  # build processes; 0 = one per CPU core
    # CPU priority of build processes and their compilers, as a nice increment (0-19;
    # 0 = as this process): builds fill every core, while a run's host work (a spare's
    # start-up, loading, checks) is on the GPU's critical path and should not queue
    # behind a compiler for a core (docs/results/benchmarks_history.md, issue 14)
    build_nice: int = 10
    # build workers started ahead (torch and the builder imported: 2.5-4 s a build process
    # otherwise spends first; for a cached extension that is the whole build phase):
    # -1 = auto (4 on CUDA, none on a CPU, where they would share the cores with a timing);
    # 0 = start each build process when its job comes
    build_standby: int = -1
    profile: str = "auto"  # size profile: auto (small on CPU, full on GPU) | small | full
    check: str = "allclose"  # allclose | max_norm_abs
    tolerances: dict[str, tuple[float, float]] = field(default_factory=lambda: dict(DEFAULT_TOLERANCES))
    norm_tol: float = 1e-3
    fp64_k: float = 0.0  # the float64 error budget (verify/measure/oracle.py); 0: off
    policy: str = "flag"  # a task's library and launch policy (guards/policy.py): "flag" or "reject"
    input_seed: int | None = None  # None: a secret per run; a number replays a recorded failure
    time: bool = True  # measure speed of correct candidates
    timing: TimingConfig = field(default_factory=TimingConfig)  # or a dict of its fields
    weight_seed: int = 42  # both models are built under this seed
    memory_limit_gb: float = 16.0  # host memory of one candidate's process tree
    # host memory of a guarded run's own side (the supervisor: the reference, the input sets and
    # their answers; under strict, 11 trials of a full-size task), counted apart from the candidate's
    harness_memory_gb: float = 32.0
    max_procs: int = 128  # processes of one candidate's tree (fork bombs)
    output_limit: int = 8192  # bytes of stdout/stderr kept per phase
    cache_dir: str = field(default_factory=lambda: str(default_cache_dir()))
    fast_build: bool = True  # route load_inline through the shared cached builder (verify/build/inline_build.py)
    # the fast builder compiles a split CUDA extension's binding and host units as one where
    # that provably keeps the meaning (verify/build/unit_merge.py); False: always the separate units
    merge_units: bool = True
    # an extension whose bindings are functions bound by name compiles its own C++ code
    # against torch/types.h and shares a binding object per signature list
    # (verify/build/slim_units.py); False: torch's units
    slim_units: bool = True
    # a guarded GPU run lends its share of the GPU lock to a timing that queues while the run only
    # waits for its candidate, the candidate's CUDA locked by the driver meanwhile (measure/gpu_lend.py)
    gpu_lend: bool = True
    # a guarded run compares the candidate's first output before its timing and does not time one
    # already wrong (process/supervisor.py, judge.first_trial_fails)
    early_check: bool = True
    executor: str = "local"  # local | ray
    address: str | None = None  # Ray cluster address for executor=ray (None: start or join a local one)
    # reward-hacking guards (docs/guards.md): off | standard | strict
    guards: str = "standard"
    # candidates that fall back to PyTorch (item 7/8): reject | flag | allow
    fallback: str = "reject"
    # run workers started ahead per GPU (verify/standby.py) where runs are not resident
    # (`resident` off, guards off): their start-up overlaps the previous candidates'
    # runs; -1 = auto (6 per run sharing a GPU, fewer on a host short of memory:
    # standby.auto_depth; on a CPU one forked spare, none without fork_workers: runner.py);
    # 0 = start each run process when its job comes
    # (no resident supervisors either)
    standby: int = -1
    # start spares only when none is left, `standby` at once (True), or one for
    # each job taken (False, the default)
    standby_groups: bool = False
    # fill the spares only up to what the runs queued for a GPU need (runs per GPU plus
    # the queued runs), not to `standby` at once: spares warming up while the first
    # candidates build take the cores from the builds (standby.Standby.demand). Local executor
    standby_on_demand: bool = True
    # with standby_on_demand: a build running longer than this many seconds counts as a
    # run about to queue, so its spare warms up while it builds (a spare started when the
    # build ended made the run wait ~12 s for it on an H100, issue 14). 0: only queued runs
    spare_lead_s: float = 15.0
    # spare build and run workers forked from a process that imported torch once
    # (verify/pools/zygote.py), not fresh interpreters that each import it: 14 builds
    # started at once each spent ~8 s importing on an H100's 16 cores (issue 14)
    fork_workers: bool = True
    # run workers on a CPU device: 1 (default) so that no two timed runs share the
    # cores; more for correctness-heavy runs on many-core machines (timings are then
    # contended: the CLI warns). On CUDA see runs_per_gpu.
    cpu_runners: int = 1
    # runs that share one GPU at a time: their start-up, inputs, references and
    # checks overlap, their timed rounds never do (verify/measure/gpulock.py).
    # 0 = auto: 2. On an H200 (builtin tasks, guards on) 2 gave 20.5 candidates/min
    # against 16.6 for 1, speedups within 1.3% of 1's, once spares' warm-ups held the
    # GPU lock only for their GPU steps; before that, 3 on an H100 (full-size tasks)
    # made each timing wait 16-55 s for spares and the throughput fell
    # (docs/results/benchmarks_history.md, issue 14)
    runs_per_gpu: int = 0
    # which GPUs run candidates, as indices of the GPUs this process sees (after
    # CUDA_VISIBLE_DEVICES); None = all of them. A GRPO trainer on GPU 0 keeps its
    # verifier off that GPU with [1]; a scaling measurement runs [0] and then [0, 1].
    gpus: list[int] | None = None
    # the second baseline (verify/measure/compiled.py): the reference under torch.compile,
    # measured once per task and run; off by default (a compile per task costs
    # more than most runs' candidates: see docs/SEMANTICS.md)
    compile_baseline: bool = False
    compile_mode: str = "default"  # torch.compile mode (KernelBench's default)
    compile_backend: str = "inductor"  # torch.compile backend (KernelBench's default)
    compile_timeout: float = 600.0  # seconds for one task's compile, added to that run's run_timeout
    # how a guarded GPU run hands tensors to the candidate's process and back: "auto" =
    # CUDA IPC (no host copies; verify/process/cuda_ipc.py) when the input sets fit in a
    # quarter of the free GPU memory, else files; "file" = always through files. On an H100
    # (docs/results/benchmarks_history.md) "auto" gave the same verdicts as "file" and cut the guarded
    # exchange of 15 KernelBench-sized candidates from a median 5.5 s to 0.18 s.
    # "host" = files, and the reference's answers kept in host memory and judged there
    # (what "auto" does when they take over a quarter of the free GPU memory)
    exchange: str = "auto"
    # guarded runs supervised by a process that stays for job after job (verify/process/
    # resident.py): its CUDA context, cuBLAS and cuDNN open once, not once per candidate;
    # each candidate still runs in a fresh process of its own. "auto": with guards on,
    # unless `standby` is 0 (no process started ahead); "on": with guards on; "off": a
    # spare per run on a GPU (verify/pools/standby.py), a new run process per candidate
    # on a CPU. On an H200 61-70 candidates/min against 52-60 with spares; on a CPU (no
    # torch import per run) 112 against 40 (docs/results/benchmarks_history.md, issue 14)
    resident: str = "auto"

    def __post_init__(self) -> None:
        if isinstance(self.timing, dict):
            self.timing = _timing_from_dict(self.timing)
        self.tolerances = {k: tuple(v) for k, v in self.tolerances.items()}
        problems = self.problems()
        if problems:
            raise ConfigError("; ".join(problems))

    def problems(self) -> list[str]:
        """Every setting that cannot work, in words a user can act on."""
        out = []

        def one_of(name: str, allowed: tuple) -> None:
            if getattr(self, name) not in allowed:
                out.append(f"{name} must be one of {', '.join(map(str, allowed))}, not {getattr(self, name)!r}")

        for f in fields(self):  # a config file's "no" is a true string: on/off settings take booleans only
            if f.type == "bool" and not isinstance(getattr(self, f.name), bool):
                out.append(f"{f.name} must be true or false, not {getattr(self, f.name)!r}")
        one_of("device", ("auto", "cpu", "cuda"))
        one_of("profile", ("auto", "small", "full"))
        one_of("check", ("allclose", "max_norm_abs"))
        one_of("executor", ("local", "ray"))
        one_of("guards", ("off", "standard", "strict"))
        one_of("fallback", ("reject", "flag", "allow"))
        one_of("policy", ("flag", "reject"))
        one_of("exchange", ("auto", "file", "host"))
        one_of("resident", ("auto", "on", "off"))
        for name in ("trials", "max_procs", "cpu_runners", "output_limit"):
            if getattr(self, name) < 1:
                out.append(f"{name} must be at least 1, not {getattr(self, name)}")
        one_of("compile_mode", ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"))
        if not self.compile_backend.strip():
            out.append("compile_backend must name a torch.compile backend (e.g. inductor)")
        for name in ("build_timeout", "run_timeout", "sanitize_timeout", "memory_limit_gb", "harness_memory_gb",
                     "norm_tol", "compile_timeout"):
            if not getattr(self, name) > 0:
                out.append(f"{name} must be positive, not {getattr(self, name)}")
        if self.input_seed is not None and (isinstance(self.input_seed, bool) or not isinstance(self.input_seed, int)
                                            or not 0 <= self.input_seed < 2**31):
            out.append(f"input_seed must be an integer from 0 to 2**31-1 (or unset), not {self.input_seed!r}")
        if not (isinstance(self.fp64_k, (int, float)) and self.fp64_k >= 0):
            out.append(f"fp64_k must be 0 (off) or a positive factor, not {self.fp64_k}")
        if not 0 <= self.build_nice <= 19:
            out.append(f"build_nice must be a nice increment from 0 (off) to 19, not {self.build_nice}")
        if isinstance(self.spare_lead_s, bool) or not isinstance(self.spare_lead_s, (int, float)) \
                or not self.spare_lead_s >= 0:
            out.append(f"spare_lead_s must be seconds (0 or more), not {self.spare_lead_s!r}")
        if self.build_standby < -1:
            out.append(f"build_standby must be -1 (auto), 0 (off) or a number of spares, not {self.build_standby}")
        if self.workers < 0:
            out.append(f"workers must be 0 (one per core) or more, not {self.workers}")
        if self.runs_per_gpu < 0:
            out.append(f"runs_per_gpu must be 0 (auto) or a number of runs, not {self.runs_per_gpu}")
        if self.gpus is not None:
            if (not isinstance(self.gpus, (list, tuple)) or not self.gpus
                    or not all(isinstance(g, int) and not isinstance(g, bool) and g >= 0 for g in self.gpus)):
                out.append(f"gpus must be a non-empty list of GPU indices (0, 1, ...) or None for all, not {self.gpus!r}")
            elif len(set(self.gpus)) != len(self.gpus):
                out.append(f"gpus names a GPU twice: {self.gpus!r}")
        if self.standby < -1:
            out.append(f"standby must be -1 (auto), 0 (off) or a number of spares, not {self.standby}")
        if self.address and self.executor != "ray":
            out.append("address is a Ray cluster's address: it goes with executor ray")
        t = self.timing
        if t.min_rounds < 2 or t.max_rounds < t.min_rounds:
            out.append(f"timing: need 2 <= min_rounds <= max_rounds, not {t.min_rounds} and {t.max_rounds}")
        if t.min_calls < 1 or t.max_calls < t.min_calls:
            out.append(f"timing: need 1 <= min_calls <= max_calls, not {t.min_calls} and {t.max_calls}")
        if not (t.round_ms > 0 and t.budget_ms > 0 and t.warmup_ms >= 0 and 0 < t.target_rse < 1):
            out.append("timing: round_ms and budget_ms must be positive, warmup_ms >= 0 and 0 < target_rse < 1")
        if t.cpu_threads < 1:
            out.append(f"timing: cpu_threads must be at least 1, not {t.cpu_threads}")
        if t.numerics not in ("pytorch", "strict"):
            out.append(f"timing: numerics must be pytorch or strict, not {t.numerics!r}")
        if not t.events_margin >= 1.0:
            out.append(f"timing: events_margin must be a factor of at least 1, not {t.events_margin}")
        if t.kb_trials < 0 or not t.process_spread >= 0 or not t.kb_budget_ms >= 0:
            out.append(f"timing: kb_trials, kb_budget_ms and process_spread must be 0 or more, not "
                       f"{t.kb_trials}, {t.kb_budget_ms} and {t.process_spread}")
        if t.kb_min_trials < 1:
            out.append(f"timing: kb_min_trials must be 1 or more, not {t.kb_min_trials}")
        for dtype, tol in self.tolerances.items():
            if len(tol) != 2 or any(float(x) < 0 for x in tol):
                out.append(f"tolerances[{dtype!r}] must be (atol, rtol) >= 0, not {tol!r}")
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "verify settings") -> "VerifyConfig":
        """The one way to build a config from plain data (the CLI, `kernelmill
        serve`, the GRPO reward's YAML, Ray nodes): unknown keys and bad values
        are errors that name `where`."""
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: expected a mapping of settings, not {type(data).__name__}")
        _refuse_unknown(cls, data, f"{where}: ")
        try:
            return cls(**data)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        except TypeError as exc:
            raise ConfigError(f"{where}: {exc}") from None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["tolerances"] = {k: list(v) for k, v in self.tolerances.items()}
        return d

    def resolved_device(self) -> str:
        if self.device != "auto":
            return self.device
        from .devices import cuda_devices

        return "cuda" if cuda_devices() else "cpu"

    def selected_gpus(self, visible: list[int]) -> list[int]:
        """The GPUs that run candidates, of the `visible` indices: all, or those
        `gpus` names (a GPU that is not visible is an error naming what is)."""
        if self.gpus is None:
            return list(visible)
        missing = [g for g in self.gpus if g not in visible]
        if missing:
            raise ConfigError(f"gpus {self.gpus} asked for, but GPU {', '.join(map(str, missing))} is not visible "
                              f"(visible: {', '.join(map(str, visible)) or 'none'}; indices count after "
                              "CUDA_VISIBLE_DEVICES)")
        return list(self.gpus)

    def resolved_runs_per_gpu(self) -> int:
        return self.runs_per_gpu or 2

    def resolved_profile(self, device: str, language: str | None = None) -> str:
        """The size profile a candidate of `language` runs at on a run of `device`: "auto" is
        small wherever it runs on a CPU, a CPU-only language's (cpp) on a GPU run too (a naive
        C++ GEMM at KernelBench's full size took over 300 s a call under strict, session 14)."""
        if self.profile != "auto":
            return self.profile
        if language is not None:
            device = run_device_of(language, device)
        return "full" if device == "cuda" else "small"

    def check_rule(self) -> CheckRule:
        """The correctness rule the run phases apply (a job carries it)."""
        return CheckRule(mode=self.check, tolerances={k: tuple(v) for k, v in self.tolerances.items()},
                         norm_tol=self.norm_tol, fp64_k=self.fp64_k)

    def answer_key(self, device: str) -> str:
        """Hash of the settings that can change a verdict: the checks, the timing, the
        guards, the harness's version, and the limits (a timeout or a memory kill under
        one limit is no answer under another); not worker counts or scheduling."""
        relevant = {
            "limits": [self.build_timeout, self.run_timeout, self.memory_limit_gb, self.max_procs,
                       self.harness_memory_gb, self.sanitize_timeout],
            "trials": self.trials, "profile": self.resolved_profile(device), "check": self.check,
            "tolerances": {k: list(v) for k, v in sorted(self.tolerances.items())},
            "norm_tol": self.norm_tol, "fp64_k": self.fp64_k, "policy": self.policy, "time": self.time, "timing": asdict(self.timing),
            "weight_seed": self.weight_seed, "harness": HARNESS_VERSION,
            "guards": self.guards, "fallback": self.fallback,
        }
        if self.input_seed is not None:  # a replay draws other inputs than a run with a secret seed
            relevant["input_seed"] = self.input_seed
        if self.compile_baseline:  # verdicts then carry the compiled baseline too
            relevant["compiled"] = [self.compile_mode, self.compile_backend]
        return hashlib.sha256(json.dumps(relevant, sort_keys=True).encode()).hexdigest()[:16]
