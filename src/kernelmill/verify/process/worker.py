"""The process that builds or runs one candidate (``python -m kernelmill.verify.worker``).

It is started fresh for every phase of every candidate by `runner` through the
`sandbox`, so a crash, a hang or a broken CUDA context ends with this process.

Phases:
* ``build``: import the candidate (which compiles its extension with
  ``load_inline`` into the shared ``TORCH_EXTENSIONS_DIR``), check ``ModelNew``;
* ``run`` (guards off): import reference and candidate, build both under one
  seed in the mode a fresh module is in (no ``.eval()``, no weight copying:
  docs/SEMANTICS.md), check ``trials`` fresh input sets, then time both in
  alternating rounds with `timing`;
* ``guarded``: the candidate's process is started first (`guards.launch`),
  then this process reads its job and supervises (`guards.supervisor`).

The job file is deleted as soon as it is read, so the input seed is not left
on disk for the candidate to find. The result is written to a JSON file; a
process that dies before writing it is judged by its exit status in `runner`.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time

from ..measure.gpulock import TIMING_LOCK_TIMEOUT_S, SharedUse, gpu_lock
from ..measure.oracle import budget, reference_fp64
from .job import RunJob, RunResult
from .loading import (clone, die_with_parent, error_text, load_module, load_reference, name_process, started_at,
                      to_device)


def build(job: dict, lazy: bool = False) -> dict:
    """Import the candidate (its module-level builds run); with `lazy`, also
    build the ``load_inline`` calls its functions make later (lazy_builds), so
    the run phase finds them in the cache."""
    t0 = time.perf_counter()
    try:
        module = load_module(job.candidate, "candidate")
    except BaseException as exc:  # noqa: BLE001 - any failure to import is the candidate's
        return {"status": "compile_error", "message": error_text(exc, job.message_limit),
                "phases": {"build_s": time.perf_counter() - t0}}
    if not isinstance(getattr(module, "ModelNew", None), type):
        return {"status": "compile_error", "message": "the candidate defines no class ModelNew",
                "phases": {"build_s": time.perf_counter() - t0}}
    result = {"status": "built", "compiled": True, "phases": {}}
    if lazy and job.build_cache:
        from ..build.lazy_builds import prebuild

        with open(job.candidate, encoding="utf-8") as fh:
            report = prebuild(module, fh.read())
        if report.found:
            result["lazy_builds"] = report.to_dict()
            result["phases"]["lazy_build_s"] = report.seconds
    result["phases"]["build_s"] = time.perf_counter() - t0
    return result


def build_requested(requests: list[dict]) -> dict:
    """Build the extensions a run phase stopped for (inline_build.defer_builds), into
    the cache; a compile error is left for the run to meet and report."""
    from ..build.inline_build import CompileError, Unsupported, build_only
    from ..build.inline_build import first_error_line as first_error

    t0 = time.perf_counter()
    failed = []
    for req in requests:
        try:
            build_only(**req)
        except (CompileError, Unsupported) as exc:
            failed.append(f"{req.get('name')}: {first_error(str(exc))}")
    return {"status": "built", "compiled": True, "failed": failed,
            "phases": {"deferred_build_s": time.perf_counter() - t0}}


def run(job: dict) -> dict:
    """The unguarded run: reference and candidate in this one process; its GPU
    work outside the timed rounds holds the GPU's lock shared (gpulock.SharedUse)."""
    from .loading import watch_builds

    failures = watch_builds()  # the candidate's own failed builds (the note extension_build_failed)
    with SharedUse(str(job.device), label="run-pre") as share:
        result = _run(job, share)
    if failures and result.get("status") in ("ok", "incorrect"):
        from ..guards.judge import build_failed_note

        result = build_failed_note(result, failures)
    if str(job.device).startswith("cuda") and isinstance(result.get("phases"), dict):
        result["phases"]["gpu_share_wait_s"] = round(share.wait_s, 4)
    return result


def _run(job, share: SharedUse) -> dict:
    import torch

    from ..measure.correctness import compare
    from ..measure.environment import backend_flags, settle_process
    from .supervisor import attach_timing, measurement, time_compiled
    from ..measure import gpu_clocks
    from ..measure.inputs import InputPool
    from ..measure.trivial import TrivialCheck, weak_note
    from ..measure.kernel_time import own_kernel_names
    from ..measure.timing import Bench, compare as compare_speed, timing_numerics

    device = torch.device(job.device)
    cfg = job.timing
    settle_process(device, cfg)
    phases: dict[str, float] = {}
    t0 = time.perf_counter()
    try:
        ref_mod, init_inputs, ref = load_reference(job)
    except BaseException as exc:  # noqa: BLE001 - the task itself is broken
        return {"status": "runtime_error", "flags": ["reference_error"],
                "message": "the reference program failed: " + error_text(exc, job.message_limit)}
    if job.import_is_build:
        # languages with nothing to compile ahead skip the build process: the
        # import here is their build, and its failures are compile errors
        built = build(job)
        if built["status"] != "built":
            return built
        cand_mod = sys.modules["candidate"]
        phases.update(built["phases"])
    else:
        try:
            cand_mod = load_module(job.candidate, "candidate")
        except BaseException as exc:  # noqa: BLE001
            return {"status": "runtime_error", "message": "import failed at run time: " + error_text(exc, job.message_limit)}
    phases["load_s"] = time.perf_counter() - t0 - phases.get("build_s", 0.0)

    t0 = time.perf_counter()
    stage = "constructing ModelNew"
    try:
        # both built under the weight seed, in the mode a fresh module is in; the
        # candidate's own state is never overwritten (docs/SEMANTICS.md)
        torch.manual_seed(job.weight_seed)
        cand = cand_mod.ModelNew(*init_inputs).to(device)
        ref = ref.to(device)
        rule = job.check
        worst_abs = worst_rel = 0.0
        trivial = TrivialCheck(rule)  # does the task's check also pass a candidate that computes nothing?
        with torch.no_grad():
            for trial in range(job.trials):
                stage = f"correctness trial {trial + 1}"
                torch.manual_seed(job.input_seed + trial)
                inputs = _draw(ref_mod, device)
                stage = f"reference forward, trial {trial + 1}"
                ref_out = ref(*clone(inputs))
                stage = f"ModelNew forward, trial {trial + 1}"
                cand_out = cand(*clone(inputs))
                if device.type == "cuda":
                    torch.cuda.synchronize()
                cmp = compare(ref_out, cand_out, rule)
                worst_abs, worst_rel = max(worst_abs, cmp.max_abs_err), max(worst_rel, cmp.max_rel_err)
                if trial == 0 and rule.fp64_k > 0:  # for the float64 error budget below
                    first = (inputs, ref_out, cand_out)
                if not trivial.sets or trivial.weak_by():  # while a trivial candidate still passes every trial
                    trivial.add(ref_out, next((x for x in inputs if isinstance(x, torch.Tensor)), None),
                                f"trial {trial + 1}")
                if not cmp.correct:
                    phases["check_s"] = time.perf_counter() - t0
                    return {"status": "incorrect", "compiled": True,
                            "message": f"trial {trial + 1}/{job.trials}: {cmp.message}",
                            "max_abs_err": worst_abs, "max_rel_err": worst_rel, "phases": phases}
            checks = None
            if rule.fp64_k > 0 and job.trials > 0:  # measure/oracle.py; the stricter decision decides
                stage = "reference forward in float64"
                with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
                    ref64 = reference_fp64(ref, clone(first[0]))
                b = budget(first[1], ref64, first[2], rule.fp64_k) if ref64 is not None else None
                checks = {"allclose": {"ok": True, "max_abs_err": worst_abs},
                          "fp64_budget": b.to_dict() if b else {"ok": None, "message": "not decided"}}
                if b is not None and not b.ok:
                    phases["check_s"] = time.perf_counter() - t0
                    return {"status": "incorrect", "compiled": True, "max_abs_err": worst_abs, "max_rel_err": worst_rel,
                            "message": f"trial 1 (float64 error budget): {b.message}", "phases": phases,
                            "measurement": {"checks": checks}}
            phases["check_s"] = time.perf_counter() - t0
            result = {"status": "ok", "compiled": True, "correct": True, "max_abs_err": worst_abs,
                      "max_rel_err": worst_rel, "phases": phases, "flags": []}
            weak = trivial.weak_by()
            if weak:
                result["flags"].append("weak_task")
                result["message"] = weak_note(weak)
            comp = None
            if job.timed:
                stage = "timing"
                t0 = time.perf_counter()
                torch.manual_seed(job.input_seed + job.trials)
                inputs = _draw(ref_mod, device)
                # fresh values at a fresh address every call, both sides (measure/inputs.py)
                rng = random.Random(int.from_bytes(os.urandom(8), "little"))
                ref_pool, cand_pool = InputPool(inputs), InputPool(inputs)
                ref_bench = Bench(lambda: ref(*ref_pool.current), device, cfg,
                                  prepare=lambda i: ref_pool.prepare(inputs, rng.uniform(0.5, 1.5)))
                cand_bench = Bench(lambda: cand(*cand_pool.current), device, cfg,
                                   prepare=lambda i: cand_pool.prepare(inputs, rng.uniform(0.5, 1.5)))
                cand_bench.own_kernels = own_kernel_names(open(job.candidate, encoding="utf-8").read())
                with share.pause(then="run-post"), timing_numerics(cfg, device), \
                        gpu_lock(str(device), exclusive=True, timeout=TIMING_LOCK_TIMEOUT_S, label="timing") as held:
                    before = gpu_clocks.read_device(device)
                    comp = compare_speed(ref_bench, cand_bench, cfg)
                    if device.type == "cuda":
                        comp.clocks = {"before": before, "after": gpu_clocks.read_device(device)}
                phases["time_s"] = time.perf_counter() - t0
                if device.type == "cuda":
                    phases["timing_lock_wait_s"] = round(held.wait_s, 4)
                result["timing"] = {"reference": comp.reference.to_dict(), "candidate": comp.candidate.to_dict(),
                                    "lock": {"wait_s": round(held.wait_s, 4), "acquired": held.acquired}}
                attach_timing(result, comp)
                if job.compile_baseline:  # the second baseline (verify/measure/compiled.py), on the timing inputs
                    t1 = time.perf_counter()
                    result["compiled_baseline"] = time_compiled(ref, [inputs], device, cfg, job.compile_baseline,
                                                                share)
                    phases["compile_baseline_s"] = time.perf_counter() - t1
            elif job.skip_timing_reason:
                result["flags"].append("timing_skipped")
                result["message"] = job.skip_timing_reason
            flags = backend_flags()
            result["measurement"] = measurement(device, cfg, comp, flags, flags, inputs, ref_out, guards="off")
            if checks is not None:
                result["measurement"]["checks"] = checks
            return result
    except BaseException as exc:  # noqa: BLE001 - the candidate failed while running
        # CUDA errors are sticky and asynchronous: one surfacing in the reference
        # was most likely caused by the candidate's previous launch
        return {"status": "runtime_error", "compiled": True,
                "message": f"{stage}: " + error_text(exc, job.message_limit), "phases": phases}


def _draw(ref_mod, device):
    """The task's inputs, drawn on the device as the guarded run draws them (its
    factories default to it; a CPU generator took 2.3-2.4 s of a run's 5 s on full-size
    builtin tasks, H200, issue 14), and whatever get_inputs put elsewhere moved there."""
    import torch

    with torch.device(device):
        return to_device(ref_mod.get_inputs(), device)


def _standby(phase_dir: str, device: str, t_start: float) -> tuple[dict, object, dict] | None:
    """A spare run worker (verify/standby.py): start the candidate's process and
    warm up both before the job exists, then wait for the job's path on stdin.
    Returns (job, the candidate's started process, its marks); None on EOF.
    Marks (wall seconds, for the verdict's phases): `spare_warm_s`, this process's
    start-up (interpreter, the candidate's process started, torch, the CUDA warm-up;
    `spare_delay_s` of it waiting to start (a staggered fill, standby.STAGGER_S),
    `spare_gate_s` of it waiting for the running candidate's timing, gpulock.py;
    `spare_gpu_s` of it in the warm-up's GPU steps, the lock held shared or waited for);
    `spare_wait_s`, how long the job waited for it (from the job file's writing,
    just before its hand-over, to this process reading it; 0 when the spare was
    warm first): the part of a run's wall time that no other phase holds."""
    from .launch import become_subreaper, prestart

    started_with = dict(os.environ)
    become_subreaper()
    delay_s = _delay(sys.stdin.fileno())  # a spare of a staggered fill (standby.STAGGER_S)
    started = prestart(phase_dir, device)
    gate_s, gpu_s = warm_supervisor(device, gate_fd=sys.stdin.fileno())
    got = await_job(started_with)
    if got is None:
        started.close()
        return None
    job, warm, waited = got
    marks = {"spare_warm_s": round(warm - t_start, 4), "spare_wait_s": round(waited, 4),
             "spare_gate_s": round(gate_s, 4), "spare_gpu_s": round(gpu_s, 4)}
    if delay_s:
        marks["spare_delay_s"] = round(delay_s, 4)
    return job, started, marks


def warm_supervisor(device: str, gate_fd: int | None = None) -> tuple[float, float]:
    """A supervisor's start-up before its job (a spare's, a resident's): the guarded flow's
    imports, its CUDA context and libraries, the facts each verdict describes. `gate_fd`:
    wait first for the running candidate's timing (gpulock.wait_for_timing; the fd readable
    ends the wait). Returns (seconds gated, seconds in the GPU steps); a failure is printed
    and left for the job to meet and report."""
    gate_s = gpu_s = 0.0
    try:
        import torch
        import torch.utils.cpp_extension  # noqa: F401 - what install() (inline_build) needs: 0.1-0.4 s

        from . import supervisor  # noqa: F401 - the guarded flow's imports, off the clock
        from ..build import inline_build  # noqa: F401
        from ..measure.environment import warm_facts
        from ..guards.trace import warm_cuda
        from ..measure.gpulock import wait_for_timing, warm_section

        if gate_fd is not None:
            gate_s = wait_for_timing(device, gate_fd)  # after the running candidate's timing
        # its GPU steps never while a candidate is timed, nor ahead of a waiting timing
        gpu_s = warm_cuda(torch.device(device), lambda part: warm_section(device, part, "spare"), draws=True)
        warm_facts(torch.device(device))  # what each verdict's measurement describes: versions, the GPU
        if str(device).startswith("cuda"):
            from ..measure.gpu_lend import driver_freeze

            driver_freeze().available  # noqa: B018 - the lender's helper process, started off the clock
    except Exception as exc:  # noqa: BLE001 - the job itself will meet and report the same failure
        print(f"supervisor warm-up failed: {exc}", file=sys.stderr)
    return gate_s, gpu_s


def await_job(started_with: dict) -> tuple[RunJob, float, float] | None:
    """A warm spare's wait for the path of its job file on stdin: (the job, in the
    job's environment from now on; when the spare was ready; how long the job waited
    for it: from the file's writing, just before the hand-over, to then). None on EOF."""
    from ..pools.standby import adopt_env

    warm = time.time()
    line = sys.stdin.readline().strip()
    if not line:
        return None
    try:
        written = os.stat(line).st_mtime
    except OSError:
        written = warm
    job = RunJob.read(line, delete=True)
    adopt_env(job.env or {}, started_with)
    return job, warm, max(0.0, warm - written)


def _build_standby(phase_dir: str, nice: int, t_start: float) -> tuple[dict, dict] | None:
    """A spare build worker (standby.Standby, mode "build"): torch and the cached
    builder imported, at the build's CPU priority, then the job's path read from
    stdin. Returns (job, marks: `build_spare_warm_s` its start-up, `build_spare_wait_s`
    how long the job waited for it); None on EOF."""
    from ..sandbox import lower_priority

    started_with = dict(os.environ)
    lower_priority(nice)
    try:
        import torch  # noqa: F401
        import torch.utils.cpp_extension  # noqa: F401 - load_inline's module, what install() patches

        from ..build import inline_build, lazy_builds  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - the job itself will meet and report the same failure
        print(f"build standby warm-up failed: {exc}", file=sys.stderr)
    got = await_job(started_with)
    if got is None:
        return None
    job, warm, waited = got
    return job, {"build_spare_warm_s": round(warm - t_start, 4), "build_spare_wait_s": round(waited, 4)}


def _delay(stdin_fd: int) -> float:
    """Before a spare's start-up: wait the seconds its environment asks for
    (standby.DELAY_ENV), or until its job comes (stdin readable). Returns the wait."""
    import select

    from ..pools.standby import DELAY_ENV

    try:
        want = float(os.environ.get(DELAY_ENV) or 0.0)
    except ValueError:
        return 0.0
    if want <= 0:
        return 0.0
    t0 = time.monotonic()
    select.select([stdin_fd], [], [], want)
    return time.monotonic() - t0


def main() -> None:
    """``worker build JOB`` | ``worker run JOB`` | ``worker guarded JOB DEVICE`` |
    ``worker standby DIR DEVICE`` (a spare that takes a run or guarded job on stdin) |
    ``worker buildstandby DIR NICE`` (a spare that takes a build job on stdin). A resident
    supervisor (job after job) starts as ``python -m kernelmill.verify.pools.resident``."""
    t_start = started_at()
    die_with_parent()
    name_process(f"km {sys.argv[1]}")
    started = None
    spare_marks: dict = {}
    niced = 0  # the nice increment this process already took (a build spare takes it at its start)
    if sys.argv[1] == "standby":
        handed = _standby(sys.argv[2], sys.argv[3], t_start)
        if handed is None:
            os._exit(0)
        phase, (job, started, spare_marks) = "run", handed
    elif sys.argv[1] == "buildstandby":
        niced = int(sys.argv[3])
        handed = _build_standby(sys.argv[2], niced, t_start)
        if handed is None:
            os._exit(0)
        phase, (job, spare_marks) = "build", handed
    else:
        phase, job_path = sys.argv[1], sys.argv[2]
        if phase == "guarded":
            # the candidate's process starts before this one has read anything of
            # the task, so a forked child inherits no trace of it
            from .launch import become_subreaper, prestart

            become_subreaper()
            started = prestart(os.getcwd(), sys.argv[3])
            phase = "run"
        job = RunJob.read(job_path, delete=True)
    t_job = time.time()  # the job read: what the runner's hand-over cost before it is run_head_s
    result = do_job(phase, job, started, spare_marks, niced)
    write_result(job, result, t_job)
    # skip interpreter teardown: candidate destructors and atexit hooks must not
    # change an outcome that is already written
    os._exit(0)


def do_job(phase: str, job: RunJob, started, spare_marks: dict, niced: int = 0) -> dict:
    """One phase of one job in this process (`started`: the candidate's process of a
    guarded run); returns its result."""
    from ..sandbox import apply_rlimits, lower_priority

    guarded = phase == "run" and job.guards != "off"
    # a guarded run's supervisor holds the harness's limits; its candidate's process the job's
    apply_rlimits(job.harness_rlimits if guarded and job.harness_rlimits is not None else job.rlimits)
    lower_priority(job.nice - niced)  # a build's compilers inherit it (VerifyConfig.build_nice); 0 for a run
    if guarded and started is None:
        raise SystemExit("a guarded run is started as 'worker guarded JOB DEVICE' (or handed to a spare)")
    if not guarded and started is not None:
        started.close()
    if job.build_cache:
        # candidates' load_inline calls go through the shared, cached fast builder
        from ..build.inline_build import defer_builds, install

        install(job.build_cache, merge=job.merge_units, slim=job.slim_units)
        if phase == "run":
            defer_builds(job.defer_builds)
    if phase == "build" and job.build_requests is not None:
        result = build_requested(job.build_requests)
    elif phase == "build":
        result = build(job, lazy=True)
    elif guarded:
        from .supervisor import run_guarded

        result = run_guarded(job, started)
    else:
        result = run(job)
    if spare_marks:
        from ..pools import zygote

        if zygote.FORKED:  # forked by the fork server, not a fresh interpreter (pools/zygote.py)
            spare_marks["build_spare_forked" if phase == "build" else "spare_forked"] = 1
        result.setdefault("phases", {}).update(spare_marks)
    if job.build_cache:
        from ..build.inline_build import builder_log

        result["build_info"] = builder_log()
        if result.get("lazy_builds"):
            result["build_info"]["lazy_built"] = result["lazy_builds"]["built"]
        if phase == "run" and result["build_info"].get("compiles"):  # the unguarded run's own compiles
            result.setdefault("phases", {})["run_compiles"] = result["build_info"]["compiles"]
            result["phases"]["run_compile_s"] = result["build_info"].get("compile_s", 0.0)
    return result


def write_result(job: RunJob, result: dict, t_job: float) -> None:
    """The result where the runner looks for it, written last and at once (os.replace):
    the runner's watch ends when it appears (sandbox.watch's `done`)."""
    # wall clock (the runner's is the same machine's): the runner splits run_wall_s into the
    # hand-over before t_job (run_head_s), this process's work, and the exit after it (run_tail_s)
    result["worker_marks"] = {"job": t_job, "written": time.time()}
    record = RunResult.from_dict(result, f"the {job.result} this worker was about to write")  # raises here, with the traceback
    tmp = job.result + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(record.to_dict(), fh, default=float)
    sys.stdout.flush()  # before the result: a runner reads both once the result is there
    sys.stderr.flush()
    os.replace(tmp, job.result)


if __name__ == "__main__":
    main()
