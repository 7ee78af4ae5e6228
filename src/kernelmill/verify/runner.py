"""Verifying many samples: cache lookups, a build pool, run workers, the store.

Candidate failures become `Verdict`s; our own failures (no worker can start,
the store cannot be written) raise. The pipeline:

    samples --(static checks, store lookup)--> build pool (all CPU cores, GPUs hidden)
            --> run queue --> one run worker per GPU (or one on CPU) --> store + JSONL

Identical (task, code, settings, device) keys are run once and shared.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import os
import secrets
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..languages import get_language, import_env
from .guards.flags import Findings, decide
from .measure.kernel_time import own_kernel_names
from .measure.gpulock import gpu_lock
from .measure.sanitizer import sanitize, unfinished
from .measure.sol import arithmetic_floor_ms, sol_fraction
from ..records import LANGUAGES, Sample, Task, Verdict
from .measure.compiled import attach as attach_compiled
from .config import ConfigError, VerifyConfig
from . import early as early_start
from .devices import cuda_devices, device_name, driver_lists_gpus, physical_gpu
from .sandbox import PhaseResult, Sandbox, python_argv, scrubbed_env
from .process.job import JobError, RunJob, RunResult
from .process.launch import remove_exchange
from .pools.resident_pool import Lease, Residents
from .pools.standby import Standby, auto_depth, close_started, start_zygote
from .store import ResultStore, result_key


class HarnessError(RuntimeError):
    """Our machinery failed (not the candidate): raised, never a verdict."""


@dataclass
class RunnerJob:
    key: str
    task: Task
    sample: Sample
    workdir: Path | None = None
    build: dict | None = None
    requeues: int = 0  # runs that stopped for a build (NeedsBuild)
    retry_reason: str = ""  # why its run was queued again (executors: harness_out_of_memory)
    # (phase, start, end) in time.monotonic(), and when the job was made (its batch's
    # start, near enough: a batch's jobs are made in one loop): measurement.timeline
    spans: list = field(default_factory=list)
    t0: float = field(default_factory=time.monotonic)


def harness_out_of_memory(verdict) -> bool:
    """A run the harness's own side ended for memory: the reference out of GPU memory, or the
    supervisor past harness_memory_gb. Transient on a crowded machine (a cold start's ~150 new
    CUDA contexts: session_2026-11-30f's a100-L1-72, session_2026-11-30g's crowded-GPU test),
    so the executors run such a candidate once more, after the others."""
    if "reference_error" not in (getattr(verdict, "flags", None) or []):
        return False
    msg = str(getattr(verdict, "message", "") or "")
    return "out of memory" in msg.lower() or "exceeded its host memory limit" in msg


# build spares by default on CUDA (VerifyConfig.build_standby): enough for a service's
# requests one at a time; a batch's other builds start fresh processes as before
BUILD_SPARES = 4

# a run that still meets uncached builds after this many rounds compiles them in place
MAX_BUILD_REQUEUES = 2


@dataclass
class NeedsBuild:
    """A run phase stopped at a ``load_inline`` whose extension was not in the
    cache (inline_build.defer_builds): the executor builds `requests` on a CPU
    worker and runs the candidate again."""

    requests: list[dict]


def builds_extension(sample: Sample) -> bool:
    """Whether `sample` compiles a C++/CUDA extension: then it has a build phase (a CPU
    process, the builder's cache) and its run imports what that made (Language.builds_extension)."""
    return get_language(sample.language).builds_extension(sample.code)


def compiles_on_first_call(code: str) -> bool:
    """Whether a candidate's source `code` calls `torch.compile` (a call or a decorator): its first call
    then compiles (inductor and Triton, host work of 9-14 s on cuda-l1, session 28) inside its
    run's share of the GPU lock, which no timing on that GPU may overlap. The executors start
    such runs first, so that two of them share that time on a GPU rather than each holding it
    alone later (executors/local.RunQueue). Read from the source, nothing run; False where it
    does not parse."""
    import ast

    if "compile" not in code:
        return False
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(n, ast.Attribute) and n.attr == "compile" and isinstance(n.value, ast.Name)
               and n.value.id == "torch" for n in ast.walk(tree))


def static_verdict(sample: Sample, task: Task | None, device: str) -> Verdict | None:
    """Verdicts that need no process: unknown task, language, unparsable code."""
    def v(status: str, message: str, flags: list[str] | None = None) -> Verdict:
        return Verdict(sample.sample_id, sample.task_id, status, message=message, flags=flags or [],
                       level=task.level if task else None)

    if task is None:
        return v("runtime_error", f"unknown task {sample.task_id!r}: not in the task source", ["unknown_task"])
    backend = get_language(sample.language)
    if backend is None:
        return v("compile_error", f"unknown language {sample.language!r} (expected one of {', '.join(LANGUAGES)})")
    if not sample.code or not sample.code.strip():
        return v("compile_error", "empty candidate code")
    try:
        ast.parse(sample.code)
    except SyntaxError as exc:
        return v("compile_error", f"not valid Python: line {exc.lineno}, column {exc.offset}: {exc.msg}")
    reason = backend.unsupported(device)
    if reason:
        return v("runtime_error", reason, ["unsupported_device"])
    return None


class Verifier:
    """One verification run's machinery (device, sandbox, store, workers)."""

    def __init__(self, config: VerifyConfig, store: ResultStore | None):
        self.config = config
        self.store = store
        self.cache_dir = Path(config.cache_dir)
        try:
            (self.cache_dir / "work").mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise HarnessError(f"cannot create the cache directory {self.cache_dir}: {exc}") from None
        # the fork servers import torch while this process probes the GPUs (each 2-3 s)
        early = self._early_zygotes()
        early_start.close_unadopted()  # started by the entry point for settings other than these
        try:
            self._init_devices_and_workers(early)
        except BaseException:
            for future in early.values():
                close_started(future)
            raise

    def _early_zygotes(self) -> dict:
        """Start the run and build zygotes now (standby.start_zygote) when this run will
        fork its workers on a GPU: on CUDA (or `auto` where the NVIDIA driver lists a
        GPU), with spares not switched off."""
        config = self.config
        gpu_likely = config.device == "cuda" or (config.device == "auto" and driver_lists_gpus())
        if not (config.fork_workers and gpu_likely):
            return {}
        work = self.cache_dir / "work"
        early = {}
        # what the command's entry point started before its imports (verify/early.py), else now
        if config.standby != 0:
            early["run"] = (early_start.adopt("run", work) or
                            start_zygote("run", work, early_start.run_zygote_env(config.gpus[0] if config.gpus else 0)))
        if config.build_standby != 0:
            early["build"] = early_start.adopt("build", work) or start_zygote("build", work,
                                                                              early_start.build_zygote_env())
        return early

    def _init_devices_and_workers(self, early: dict) -> None:
        config = self.config
        self.device = config.resolved_device()
        self.device_name = device_name(self.device)
        self._feature_cache: dict = {}  # task id -> dsl.features.Features (sol_fraction)
        self.answer_key = config.answer_key(self.device)
        visible = [d["index"] for d in cuda_devices()] if self.device == "cuda" else []
        try:
            self.gpus = config.selected_gpus(visible) if visible else []
        except ConfigError as exc:
            raise HarnessError(str(exc)) from None
        # on a CPU device no probe at all: it is a process importing torch (~2 s before any build)
        caps = {d["capability"] for d in cuda_devices() if d["index"] in self.gpus} if self.gpus else set()
        self.cuda_arch = ";".join(sorted(caps)) or None
        self.build_workers = config.workers or os.cpu_count() or 1
        self.cpu_runners = max(1, config.cpu_runners)
        self.sandbox = Sandbox(config.memory_limit_gb, config.max_procs, config.output_limit,
                               limit_address_space=self.device == "cpu", harness_memory_gb=config.harness_memory_gb)
        # the reference's profile per task (its kernels and ops depend on the task's
        # code and shapes only): measured by a task's first guarded candidate, then
        # handed to the others. Kept in this process, never in a file a candidate
        # could rewrite.
        self.ref_profiles: dict[tuple[str, str, str], dict] = {}
        # the compiled reference's record per task (verify/measure/compiled.py), measured by the
        # task's first timed candidate, the same way and kept the same way
        self.compiled_refs: dict[tuple[str, str, str], dict] = {}
        # spares per GPU (standby.auto_depth; docs/results/benchmarks_history.md, issue 14). On a CPU one,
        # forked from the run zygote (torch imported once): a spare importing torch would share
        # the cores with the candidate being timed for seconds, a forked one warms up in ~0.1 s,
        # before the run it overlaps reaches its timing. Unguarded CPU runs (guarded ones go to
        # residents) had a fresh process importing torch each: 24 builtin candidates 34 s, 44
        # CPU-s -> 9.7 s, 15 CPU-s, the guarded path's cost (issue 45)
        self.runs_per_gpu = config.resolved_runs_per_gpu() if self.device == "cuda" else 1
        depth = (config.standby if config.standby >= 0 else
                 auto_depth(self.runs_per_gpu, len(self.gpus)) if self.device == "cuda" else
                 1 if config.fork_workers else 0)
        self.defer_builds = False  # set by executors that hand NeedsBuild runs back to a build worker
        # runs queued for a GPU and not started (kept by the local executor): how many
        # spares the GPUs can use now (config.standby_on_demand)
        self.runs_waiting = 0
        self._building: dict[str, float] = {}  # builds in flight: key -> when they started
        # a one-shot run's candidates not yet done, and those in their run now: no more spares
        # wait than runs can still come (None: a long-lived verifier keeps its spares warm)
        self._open_jobs: int | None = None
        self._in_run = 0
        self._waiting_lock = threading.Lock()
        demand = (self._spare_demand if config.standby_on_demand and config.executor == "local" else None)
        if self.uses_residents():  # a supervisor per run slot for job after job (pools/resident.py)
            self.standby = Residents(self.sandbox, self.cache_dir / "work", self.device, self._visible,
                                     slots=self.runs_per_gpu if self.device == "cuda" else self.cpu_runners,
                                     demand=demand, zygote=early.pop("run", config.fork_workers))
        else:
            self.standby = (Standby(self.sandbox, self.cache_dir / "work", self.device, self._spare_env,
                                    depth=depth, groups=config.standby_groups, demand=demand,
                                    zygote=early.pop("run", config.fork_workers)) if depth > 0 else None)
        # build workers started ahead; none are started before a candidate that compiles comes
        bdepth = (config.build_standby if config.build_standby >= 0 else
                  min(BUILD_SPARES, self.build_workers) if self.device == "cuda" else 0)
        self.build_standby = (Standby(self.sandbox, self.cache_dir / "work", "cpu",
                                      lambda gpu: self._visible(None), depth=bdepth, mode="build",
                                      nice=config.build_nice, zygote=early.pop("build", config.fork_workers))
                              if bdepth > 0 else None)
        for future in early.values():  # started early, but this run has no such spares (a CPU device)
            close_started(future)

    def uses_residents(self) -> bool:
        """Whether guarded runs go to resident supervisors (VerifyConfig.resident)."""
        c = self.config
        if c.guards == "off" or c.resident == "off":
            return False
        return c.resident == "on" or c.standby != 0

    def _spare_demand(self) -> int:
        """Spares one GPU can use now: one per run slot, plus its share of the queued runs
        and of the builds that have run longer than `spare_lead_s` (their runs come soon)."""
        lead = self.config.spare_lead_s
        now = time.monotonic()
        with self._waiting_lock:
            soon = sum(1 for t in self._building.values() if lead > 0 and now - t >= lead)
            waiting = self.runs_waiting
            still = None if self._open_jobs is None else max(0, self._open_jobs - self._in_run)
        want = self.runs_per_gpu + math.ceil((waiting + soon) / max(1, len(self.gpus)))
        # spares left over when the batch ends were each a warm-up's CPU (11 of 25 in a
        # 14-candidate batch on an H200) taken from the builds still running
        return want if still is None else min(want, math.ceil(still / max(1, len(self.gpus))))

    def expect_jobs(self, n: int) -> None:
        """A one-shot run: `n` candidates will build and run; spares are capped by those left."""
        with self._waiting_lock:
            self._open_jobs = (self._open_jobs or 0) + n

    def job_done(self) -> None:
        with self._waiting_lock:
            if self._open_jobs is not None:
                self._open_jobs = max(0, self._open_jobs - 1)

    def refresh_spares(self) -> None:
        """Top the spares up to what the queue and the long-running builds need now
        (the local executor calls it about once a second)."""
        if self.standby is not None and self.standby.demand is not None:
            for gpu in self.gpus or [None]:
                self.standby.top_up(gpu)

    def queued_runs(self, change: int) -> None:
        """The local executor: `change` runs joined (+) or left (-) the run queue. A run
        that joins tops the spares up to what the queue needs now."""
        with self._waiting_lock:
            self.runs_waiting = max(0, self.runs_waiting + change)
        if change > 0 and self.standby is not None:
            for gpu in self.gpus or [None]:
                self.standby.top_up(gpu)

    def _visible(self, gpu: int | None) -> dict[str, str]:
        """What a process for `gpu` sees of the GPUs (none for CPU work)."""
        return {"CUDA_VISIBLE_DEVICES": "" if gpu is None else self.physical_gpu(gpu)}

    def _spare_env(self, gpu: int | None) -> dict[str, str]:
        """A run spare's start-up environment: with what the languages' packages read at
        import (languages.import_env: Triton's interpreter on a CPU), since the spare's
        warm-up imports them before its job and an unguarded run executes the candidate in
        the spare itself. adopt_env takes away what a job's own environment lacks."""
        return {**self._visible(gpu), **import_env(self.device)}

    def close(self) -> None:
        """Stop the spares; nothing else outlives a run."""
        for standby in (self.standby, self.build_standby):
            if standby is not None:
                standby.close()

    def physical_gpu(self, gpu: int) -> str:
        """Our GPU index as the parent's CUDA_VISIBLE_DEVICES names it (devices.physical_gpu)."""
        return physical_gpu(gpu)

    def gpu_env(self, gpu: int) -> dict[str, str]:
        return scrubbed_env(self._visible(gpu))

    def prepare_builds(self, jobs: list) -> None:
        """Start building the precompiled torch headers for the flag sets this run's
        compiled candidates use, in the background (verify/build/build_prepare.py), so no
        candidate waits for one; only for flag sets used often enough to repay it. C++
        candidates' binding objects (the slim path's) too."""
        from .build import build_prepare

        if not self.config.fast_build:
            return
        by_lang: dict[str, list[str]] = {}
        for j in jobs:
            if builds_extension(j.sample):
                by_lang.setdefault(j.sample.language, []).append(j.sample.code)
        for lang, codes in sorted(by_lang.items()):
            backend = get_language(lang)
            env = backend.env(backend.run_device(self.device), self.cache_dir, self.cache_dir / "ext",
                              self.cuda_arch, build_jobs=1, compiles=True)
            # the fail-fast check's header identifiers for every flag set in use (one -E each),
            # at once and at the run's own priority, not build_nice: every failing build waits for
            # them, and at nice 10 beside a cold run's ~150 starting processes one -E took 5-13 s
            # (session_2026-11-30c); it is one process for a few seconds
            every = build_prepare.run_specs(codes, min_uses=1)
            # worked out here, where torch is imported already: the process imports none
            build_env = scrubbed_env(env)
            idents = every and build_prepare.identifier_jobs(every, build_env.get("TORCH_CUDA_ARCH_LIST", ""))
            making = bool(idents) and build_prepare.start_identifiers(self.cache_dir / "build", every, env=build_env,
                                                                    nice=0, jobs=idents) is not None
            specs = build_prepare.run_specs(codes)
            # the slim path's binding objects, one per signature list (verify/build/slim_units.py)
            bindings = ([b for code in codes for b in build_prepare.binding_specs(code)]
                        if self.config.slim_units else [])
            if not specs and not bindings:
                continue
            build_prepare.start_background(self.cache_dir / "build", specs, env=scrubbed_env(env),
                                           nice=self.config.build_nice, merged=self.config.merge_units,
                                           slim=self.config.slim_units, bindings=bindings,
                                           identifiers=not making)

    # -- one candidate ------------------------------------------------------
    def _prepare(self, job: RunnerJob) -> None:
        job.workdir = Path(tempfile.mkdtemp(prefix=job.key[:12] + "-", dir=self.cache_dir / "work"))
        (job.workdir / "candidate.py").write_text(job.sample.code, encoding="utf-8")
        # the task's code travels inside the job file (read and deleted by the
        # run process), never as a file beside the candidate

    def _env(self, job: RunnerJob, run_device: str, gpu: int | None, home: Path) -> dict[str, str]:
        """The environment of a process for `job` on `run_device`: its language's caches and
        build folder (shared by its build, run and sanitizer processes), the GPU it may see."""
        backend = get_language(job.sample.language)
        ext_dir = self.cache_dir / "ext" / result_key(Task("", ""), job.sample, "", "")[:20]
        env = backend.env(run_device, self.cache_dir, ext_dir, self.cuda_arch,
                          build_jobs=max(1, (os.cpu_count() or 1) // max(1, self.build_workers)),
                          compiles=builds_extension(job.sample))
        return scrubbed_env({**env, **self._visible(gpu)}, home=str(home))

    def _sanitize(self, job: RunnerJob, gpu: int | None, extra: dict, data: dict) -> dict:
        """`--guards strict` on a GPU: compute-sanitizer's memcheck, racecheck and initcheck
        over one call of an ok candidate with kernels of its own (measure/sanitizer.py);
        an error inside them makes the verdict incorrect with the tool's flag (`decide`)."""
        own = own_kernel_names(job.sample.code)
        if not own:
            return data
        home = job.workdir / "sanitize"
        home.mkdir(exist_ok=True)
        spec = {"task_code": job.task.code, "candidate": str(job.workdir / "candidate.py"),
                "input_seed": extra["input_seed"], "weight_seed": extra.get("weight_seed") or 0,
                "sizes": extra.get("sizes") or {}}
        if self.config.fast_build and builds_extension(job.sample):
            # the watched call loads the extensions the build phase made, as the run did: without
            # the builder, torch's own load_inline compiled each one again under the tool
            # (93-121 s of every CUDA candidate's strict verdict on an H200, session 15)
            spec["build"] = {"cache": str(self.cache_dir / "build"), "merge": self.config.merge_units,
                             "slim": self.config.slim_units}
        env = self._env(job, "cuda", gpu, home)
        report = sanitize(spec, env, own, timeout=self.config.sanitize_timeout,
                          gpu_section=lambda: gpu_lock("cuda:0", exclusive=False, label="sanitize", env=env))
        data = {**data, "measurement": {**(data.get("measurement") or {}), "sanitizer": report["tools"],
                                        "sanitizer_s": report.get("seconds") or {},
                                        "sanitizer_summary": report.get("summary") or {},
                                        **({"sanitizer_unattributed": report["unattributed"]}
                                           if report.get("unattributed") else {})}}
        unchecked = unfinished(report)
        if unchecked:  # strict promised these tools' checks: the verdict says which did not happen
            data["flags"] = [*(data.get("flags") or []), "sanitizer_incomplete"]
            note = "not checked by " + "; ".join(f"{tool} ({why})" for tool, why in unchecked.items())
            data["message"] = "; ".join(m for m in (data.get("message"), note) if m)
        findings = Findings()
        for flag, detail in report["findings"]:
            findings.add(flag, detail)
        return decide(findings, data, self.config.fallback)

    def _phase(self, job: RunnerJob, phase: str, run_device: str, gpu: int | None, extra: dict) -> tuple[PhaseResult, dict | None]:
        # a run on the run device goes to a spare started ahead (verify/standby.py)
        spare = (self.standby.take(gpu) if self.standby is not None and phase == "run" and run_device == self.device
                 else self.build_standby.take(None) if self.build_standby is not None and phase == "build" else None)
        phase_dir = spare.dir if spare is not None else job.workdir / phase
        phase_dir.mkdir(exist_ok=True)
        env = self._env(job, run_device, gpu, phase_dir)
        requests_path = phase_dir / "build_requests.jsonl"
        defer = (phase == "run" and self.defer_builds and job.requeues < MAX_BUILD_REQUEUES
                 and self.config.fast_build and builds_extension(job.sample))
        if defer:  # the run worker compiles nothing (lazy_builds.py)
            extra = {**extra, "defer_builds": str(requests_path)}
        result_path = phase_dir / "result.json"
        for stale in (result_path, requests_path):  # a run again in the same folder (NeedsBuild, a retry)
            stale.unlink(missing_ok=True)
        # a guarded run's supervisor (the group's leader) is harness code: its memory apart (sandbox.watch)
        guarded = phase == "run" and self.config.guards != "off"
        job_file = RunJob(
            candidate=str(job.workdir / "candidate.py"), result=str(result_path), rlimits=self.sandbox.rlimits(),
            harness_rlimits=self.sandbox.rlimits(harness=True) if guarded else None,
            message_limit=self.config.output_limit // 2, task_id=job.task.task_id,
            # the build process imports the candidate: it gets no task code to find
            task_code=job.task.code if phase == "run" else "",
            nice=self.config.build_nice if phase == "build" else 0, merge_units=self.config.merge_units,
            slim_units=self.config.slim_units, gpu_lend=self.config.gpu_lend,
            early_check=self.config.early_check,
            build_cache=str(self.cache_dir / "build") if self.config.fast_build and builds_extension(job.sample) else None,
            env=env if spare is not None else None,  # what a fresh process would have been started with
            **extra)
        job_path = phase_dir / "job.json"
        job_file.write(job_path)
        timeout = self.config.build_timeout if phase == "build" else self.config.run_timeout
        if phase == "run" and extra.get("compile_baseline"):
            timeout += extra["compile_baseline"]["timeout"]
        try:
            handed = spare is not None and spare.hand_over(job_path)
            if handed:
                # a run slot is free once the result is written, not once the worker's
                # CUDA context is torn down (sandbox.watch's `done`)
                res = self.sandbox.watch(spare.proc, timeout, done=result_path if phase == "run" else None,
                                         stays=isinstance(spare, Lease), harness_leader=guarded)
                # a resident that ended before it read this job (it was ending as the job came:
                # resident.py leaves after a job that broke its CUDA context) never ran it
                handed = not (isinstance(spare, Lease) and not result_path.exists() and job_path.exists())
            if not handed:
                if spare is not None:  # it died waiting: a fresh process takes the job
                    self.sandbox.discard(spare.proc)
                args = [phase, str(job_path)]
                if guarded:
                    args = ["guarded", str(job_path), run_device]
                res = self.sandbox.run(python_argv("kernelmill.verify.process.worker", *args),
                                       cwd=phase_dir, env=env, timeout=timeout, harness_leader=guarded)
            data = None
            if result_path.exists():
                try:
                    raw = json.loads(result_path.read_text())
                except ValueError:
                    raw = None
                if raw is not None:  # a result the worker wrote but we cannot read is our bug: say so
                    try:
                        data = RunResult.from_dict(raw, str(result_path)).to_dict()
                    except JobError as exc:
                        raise RuntimeError(f"kernelmill's {phase} worker wrote a result this runner does not "
                                           f"understand ({exc}); the verdicts so far are kept") from None
            if defer and requests_path.exists():
                requests = _read_requests(requests_path)
                if requests:
                    data = {"status": "needs_build", "build_requests": requests}
        finally:
            if phase == "run":
                remove_exchange(phase_dir)
            if isinstance(spare, Lease):  # the resident waits for its next job, or is dropped
                self.standby.give_back(spare)
            elif spare is not None:
                shutil.rmtree(spare.dir, ignore_errors=True)
        return res, data

    def _failure(self, job: RunnerJob, phase: str, res: PhaseResult) -> Verdict:
        """A phase that wrote no result: judge it by how the process ended."""
        limit = self.config.build_timeout if phase == "build" else self.config.run_timeout
        status, compiled, flags = "runtime_error", phase == "run", []
        if res.timed_out:
            status, msg = "timeout", f"{phase} did not finish within {limit:g} s (process group killed)"
        elif res.killed_reason == "memory":
            msg = f"exceeded the host memory limit of {self.config.memory_limit_gb:g} GiB during {phase} (killed)"
        elif res.killed_reason == "harness_memory":  # the task's side, not the candidate's: no candidate verdict
            seen = res.peak_by_side.get("harness")
            msg = (f"the harness's side of the run (the reference, the input sets and their answers) exceeded "
                   f"its host memory limit of {self.config.harness_memory_gb:g} GiB (killed"
                   + (f" at {seen / 1024:.1f} GiB resident" if seen else "") + "): fewer trials, "
                   "a smaller size profile or a larger harness_memory_gb")
            flags = ["reference_error"]  # not run through a fault of its own (report/metrics.NOT_RUN_FLAGS)
        elif res.killed_reason == "procs":
            msg = f"started more than {self.config.max_procs} processes during {phase} (killed)"
        elif res.killed_reason == "interrupted":
            raise KeyboardInterrupt
        elif res.signal_name:
            msg = f"{phase} process crashed with {res.signal_name}"
        else:
            msg = f"{phase} process exited with code {res.returncode} before reporting a result"
        tail = (res.stderr or res.stdout).strip()
        if tail:
            msg += "\n" + tail[-2000:]
        return self._verdict(job, {"status": status, "compiled": compiled, "message": msg, "flags": flags})

    def _speed_of_light(self, job: RunnerJob, data: dict) -> dict:
        """An ok GPU verdict's `sol_fraction`, and item 22's FLOPs floor (issue 42): a call
        faster than the task's traced FLOPs allow at this GPU's fastest rate is
        suspicious_speed (`decide`, as the judge's bytes floor is)."""
        peaks = (data.get("measurement") or {}).get("peaks")
        if data["status"] != "ok" or not peaks or not data.get("runtime_ms"):
            return data
        features = self._features(job.task)
        ms = data["runtime_ms"]
        data = {**data, "sol_fraction": sol_fraction(features, peaks, ms)}
        floor = None if features is None or getattr(features, "error", None) else \
            arithmetic_floor_ms(features.flops, peaks)
        if floor is None or ms >= floor or self.config.guards == "off":
            return data
        findings = Findings()
        findings.add("suspicious_speed", f"{ms:.5f} ms per call; the task's {features.flops:.3g} FLOPs take at "
                                         f"least {floor:.5f} ms at this GPU's fastest rate")
        return decide(findings, data, self.config.fallback)

    def _profile(self, job: RunnerJob) -> str:
        """The size profile of `job`'s candidate (VerifyConfig.resolved_profile)."""
        return self.config.resolved_profile(self.device, job.sample.language)

    def _verdict(self, job: RunnerJob, data: dict) -> Verdict:
        data = self._speed_of_light(job, data)
        fields = {k: data[k] for k in ("compiled", "correct", "speedup", "runtime_ms", "ref_runtime_ms",
                                       "max_abs_err", "max_rel_err", "speedup_ci", "measurement",
                                       "ref_compiled_runtime_ms", "speedup_compiled", "speedup_kernelbench",
                                       "provenance", "sol_fraction")
                  if data.get(k) is not None}
        phases = dict(job.build.get("phases", {})) if job.build else {}
        phases.update(data.get("phases") or {})
        built = _build_facts((job.build or {}).get("build_info"))
        if built:
            fields["measurement"] = {**(fields.get("measurement") or {}), "build": built}
        if built.get("failed") and data.get("status") in ("ok", "incorrect", "rejected") \
                and "extension_build_failed" not in (data.get("flags") or []):  # the run's own note came first
            # its build phase imported it, yet an extension its source builds did not compile:
            # where the candidate caught the error, the verdict is of what it ran instead (cuda-l1
            # L2-90 ran its PyTorch fallback, and 0.5.10 said ok, session_2026-11-30). A note, not
            # a finding: a candidate labelled torch may fall back; one labelled cuda is torch_fallback too
            data = {**data, "flags": [*(data.get("flags") or []), "extension_build_failed"],
                    "message": "; ".join(m for m in (data.get("message"), "extension_build_failed: "
                                                     + built["failed"]) if m)}
        if job.spans:
            fields["measurement"] = {**(fields.get("measurement") or {}), "timeline": self._timeline(job)}
        if job.retry_reason:  # a first run the harness's own memory ended: what it said
            fields["measurement"] = {**(fields.get("measurement") or {}), "retried_after": job.retry_reason}
        profile = self._profile(job)
        if profile != "full" and job.task.sizes.get(profile):
            fields["measurement"] = {**(fields.get("measurement") or {}), "sizes": {
                "profile": profile, "overrides": job.task.sizes[profile],
                "rule": _size_rule(job.task)}}
        return Verdict(sample_id=job.sample.sample_id, task_id=job.sample.task_id, status=data["status"],
                       message=str(data.get("message") or "")[: self.config.output_limit],
                       flags=list(data.get("flags") or []), device=self.device_name,
                       level=job.task.level, phases={k: round(v, 4) for k, v in phases.items()}, **fields)

    def _features(self, task: Task):
        """The task's FLOPs and minimum bytes (dsl.features, traced on the meta device at
        full size), once per task: the speed-of-light bound of `sol_fraction`."""
        if task.task_id not in self._feature_cache:
            from ..dsl.features import task_features

            self._feature_cache[task.task_id] = task_features(task)
        return self._feature_cache[task.task_id]

    def _timeline(self, job: RunnerJob) -> dict:
        """When the candidate's phases ran, in seconds since its job was made (when its
        batch began): {"build": [[start, end]], "run": [[start, end], ...], ...}.
        A run that stopped for a build (NeedsBuild) has a "rebuild" and a second "run"."""
        out: dict[str, list] = {}
        for phase, start, end in job.spans:
            out.setdefault(phase, []).append([round(start - job.t0, 3), round(end - job.t0, 3)])
        return out

    def build(self, job: RunnerJob) -> Verdict | None:
        """Build phase; returns a verdict if the candidate ends here."""
        self._prepare(job)
        if not builds_extension(job.sample):
            return None  # nothing to compile ahead: the run process imports it
        m0 = time.monotonic()
        with self._waiting_lock:
            self._building[job.key] = m0
        try:
            res, data = self._phase(job, "build", "cpu", None, {})
        finally:
            with self._waiting_lock:
                self._building.pop(job.key, None)
        job.spans.append(("build", m0, time.monotonic()))
        if data is None:
            return self._failure(job, "build", res)
        data.pop("worker_marks", None)  # a run's split (_head_and_tail); a build's wall is build_wall_s
        # the whole build process (its start-up and torch's import included; build_s is the
        # candidate's import inside it): what a candidate waits before its run can start
        data.setdefault("phases", {})["build_wall_s"] = job.spans[-1][2] - m0
        job.build = data
        if data["status"] != "built":
            return self._verdict(job, data)
        return None

    def build_requested(self, job: RunnerJob, requests: list[dict]) -> None:
        """Build what a run phase stopped for, in a CPU build process (the cache
        keeps it); the next run of `job` finds it."""
        job.requeues += 1
        m0 = time.monotonic()
        res, data = self._phase(job, "build", "cpu", None, {"build_requests": requests})
        job.spans.append(("rebuild", m0, time.monotonic()))
        phases = (job.build or {}).setdefault("phases", {}) if job.build is not None else None
        if phases is None:
            job.build = {"phases": {}}
            phases = job.build["phases"]
        phases["deferred_build_s"] = phases.get("deferred_build_s", 0.0) + ((data or {}).get("phases") or {}).get(
            "deferred_build_s", 0.0)
        phases["deferred_builds"] = phases.get("deferred_builds", 0) + len(requests)
        failed = [f for f in ((data or {}).get("failed") or []) if isinstance(f, str) and f]
        if failed:
            # what the build phase could not see (cuda-l1 l40 L1-31 builds behind
            # torch.cuda.is_available()): its compiler's word reaches the verdict as the build
            # phase's does (_verdict's extension_build_failed)
            info = job.build.setdefault("build_info", {})
            if isinstance(info, dict) and not info.get("failed"):
                info["failed"] = "; ".join(failed)

    def run(self, job: RunnerJob, gpu: int | None) -> Verdict | NeedsBuild:
        backend = get_language(job.sample.language)
        run_device = backend.run_device(self.device)
        profile = self._profile(job)
        extra = {
            "device": run_device, "sizes": job.task.sizes.get(profile, {}) if profile != "full" else {},
            # a secret per run (no candidate can read it); a fixed one replays a failure (--input-seed)
            "trials": self.config.trials,
            "input_seed": self.config.input_seed if self.config.input_seed is not None else secrets.randbelow(2**31),
            "weight_seed": self.config.weight_seed, "check": self.config.check_rule(), "time": self.config.time,
            "timing": self.config.timing, "skip_timing_reason": backend.timing_skip_reason(run_device),
            "import_is_build": not builds_extension(job.sample),
            # reward-hacking guards (kernelmill.verify.guards): the run phase supervises
            "guards": self.config.guards, "fallback": self.config.fallback, "policy": self.config.policy,
            "language": job.sample.language,
            "exchange": self.config.exchange,
        }
        pkey = (job.task.task_id, hashlib.sha256(job.task.code.encode()).hexdigest(), profile)
        if self.config.guards != "off" and pkey in self.ref_profiles:
            extra["ref_profile"] = self.ref_profiles[pkey]
        c = self.config
        if c.compile_baseline and pkey not in self.compiled_refs:
            extra["compile_baseline"] = {"mode": c.compile_mode, "backend": c.compile_backend,
                                         "timeout": c.compile_timeout}
        m0, w0 = time.monotonic(), time.time()
        with self._waiting_lock:
            self._in_run += 1
        try:
            res, data = self._phase(job, "run", run_device, gpu if run_device == "cuda" else None, extra)
        finally:
            with self._waiting_lock:
                self._in_run -= 1
        job.spans.append(("run", m0, time.monotonic()))
        _head_and_tail(data, w0, time.time())
        if data is not None and data.get("status") == "needs_build":
            return NeedsBuild(data["build_requests"])
        if data is None:
            return self._failure(job, "run", res)
        if isinstance(data.get("ref_profile"), dict):
            made = data.pop("ref_profile")
            if newer_profile(self.ref_profiles.get(pkey), made):
                self.ref_profiles[pkey] = made
        if self.config.compile_baseline:
            measured = data.pop("compiled_baseline", None)
            if isinstance(measured, dict):
                self.compiled_refs.setdefault(pkey, measured)
            attach_compiled(data, measured if isinstance(measured, dict) else self.compiled_refs.get(pkey),
                            measured_here=isinstance(measured, dict))
        # the whole run process (start-up and imports included): the GPU's time on this candidate
        data.setdefault("phases", {})["run_wall_s"] = job.spans[-1][2] - m0
        if res.peak_by_side:  # each side's most resident memory (the harness's is held to harness_memory_gb)
            data["measurement"] = {**(data.get("measurement") or {}), "peak_rss_mb": res.peak_by_side}
        if data.get("status") == "ok" and self.config.guards == "strict" and run_device == "cuda":
            m1 = time.monotonic()
            data = self._sanitize(job, gpu, extra, data)
            data["phases"]["sanitize_s"] = time.monotonic() - m1
        if data.get("status") == "incorrect":  # the inputs it failed on replay from this seed (kernelmill show)
            data["measurement"] = {**(data.get("measurement") or {}),
                                   "replay": {"input_seed": extra["input_seed"], "trials": extra["trials"]}}
        return self._verdict(job, data)

    def cleanup(self, job: RunnerJob) -> None:
        if job.workdir is not None:
            shutil.rmtree(job.workdir, ignore_errors=True)


def newer_profile(cached: dict | None, made: dict) -> bool:
    """Whether a run's reference profile replaces the task's cached one: the first stays,
    unless a later run added the input-reach probe it was made without (`reach_owed`,
    supervisor._ReferenceWork.finish_profile)."""
    return cached is None or bool(cached.get("reach_owed")) and not made.get("reach_owed")


def _head_and_tail(data: dict | None, start: float, end: float) -> None:
    """run_head_s: from the run's start here (a spare taken, its job written and handed
    over) to the worker's reading of it; run_tail_s: from its result written to the
    phase's end here (the worker's exit, its process group reaped, the folders removed).
    Wall clock on both sides (one machine); the marks come from the worker's result."""
    marks = (data or {}).pop("worker_marks", None)
    if not isinstance(marks, dict) or not all(isinstance(marks.get(k), (int, float)) for k in ("job", "written")):
        return
    phases = data.setdefault("phases", {})
    phases["run_head_s"] = round(min(max(0.0, marks["job"] - start), end - start), 4)
    phases["run_tail_s"] = round(min(max(0.0, end - marks["written"]), end - start), 4)


# what the fast builder's log (inline_build.InlineBuilder.log) says of a candidate's build
_BUILD_FACTS = ("warm", "cuda_split", "merged", "slim", "pch_used", "compiled", "reused", "compiles", "compile_s",
                "lazy_built", "fallback", "fail_fast", "unit_s", "pch_wait_s", "failed", "check_s", "idents_s", "idents_made",
                "idents_maker", "sigbind_own_copy")


def _build_facts(info) -> dict:
    """How the build phase built the candidate's extensions, for the verdict's measurement."""
    if not isinstance(info, dict):
        return {}
    out = {k: info[k] for k in _BUILD_FACTS if k in info}
    if isinstance(out.get("compile_s"), (int, float)):
        out["compile_s"] = round(float(out["compile_s"]), 3)
    for k in ("fallback", "fail_fast", "failed"):
        if isinstance(out.get(k), str):
            out[k] = out[k][:300]
    for k in ("unit_s", "pch_wait_s"):  # {unit kind: seconds}, as the builder wrote them
        if k in out and not (isinstance(out[k], dict) and all(isinstance(v, (int, float)) for v in out[k].values())):
            del out[k]
    return out


def _read_requests(path: Path) -> list[dict]:
    """The build requests a run phase wrote (one JSON object per line); lines
    that are not objects are ignored (the candidate could write the file too)."""
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if isinstance(req, dict) and isinstance(req.get("name"), str):
            out.append(req)
    return out[:16]


def _size_rule(task: Task) -> str:
    """Whose rule a task's small profile follows: its file's own, or tasks/scaling.py's."""
    from ..tasks.scaling import RULE

    return "the task's SIZE_PROFILES" if "SIZE_PROFILES" in task.code else RULE


def sized_tasks(task_map: dict[str, Task], samples: list[Sample], config: VerifyConfig,
                device: str) -> dict[str, Task]:
    """The samples' tasks with the sizes their runs need: a task a sample runs at the small
    profile (VerifyConfig.resolved_profile: a CPU run, or a CPU-only language on a GPU run)
    without a small profile of its own (KernelBench's files) gets one derived by
    tasks/scaling.py's rule."""
    small = {s.task_id for s in samples if config.resolved_profile(device, s.language) == "small"}
    if not small:
        return task_map
    from ..tasks.scaling import with_small_profile

    out = dict(task_map)
    for tid in small:
        if tid in out:
            out[tid] = with_small_profile(out[tid])
    return out
