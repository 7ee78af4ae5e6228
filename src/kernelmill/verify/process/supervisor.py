"""The guarded ``run`` phase: the worker process becomes a supervisor that
never imports the candidate.

    supervisor (this process; trusted)           candidate process (guards.candidate)
    ─ reference built, inputs drawn from a       ─ started before the worker read its job
      seed it keeps, reference outputs          ─ loads the candidate only: never the
      computed and kept in memory only            reference's module, model, source or outputs
    ─ writes inputs.pt (inputs, init inputs;    ─ reads inputs.pt, deletes it; builds ModelNew
      no outputs, no seed)                        under the weight seed; checks each set twice
    ─ times the reference in rounds      ◄──►  ─ times ModelNew in rounds on command
      alternating with the candidate's            (reports one JSON line per round)
    ─ reads the final report, kills what   ◄──  ─ writes outputs.pt, sends its facts, exits
      the candidate left behind, decides

So writing into inputs cannot change the reference's answer, patching the
comparison changes nothing that decides, and neither the reference nor any
reference output exists in the candidate's process. See docs/guards.md.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import threading
import time
from dataclasses import asdict, replace
from pathlib import Path

import torch

from ..measure.correctness import flatten_outputs
from ..measure.environment import backend_flags, describe, gpu_state_query, settle_process
from ..measure.kernel_time import own_kernel_names, profiled_provenance
from ..measure.oracle import reference_fp64, references_fp64
from ..guards.policy import apply_policy, task_policy
from ..measure.sol import peak_rates
from ..measure import gpu_clocks
from ..measure.tree import map_tensors
from ..measure.timing import Bench, Comparison, Round, TimingConfig, compare, timing_numerics
from ..measure import inputs as inp
from ..guards.flags import Findings, decide, rejections
from ..guards.judge import first_trial_fails, fp32_task, judge, process_tricks, task_weak_by
from . import cuda_ipc
from .launch import KEEP, Launched, place, reap_descendants, shm_exchange_dir
from ..guards.source import check_source
from ..guards.trace import profile_call
from ..guards.speed import fastest_possible_ms, input_reach
from ..measure.gpu_lend import Lender, candidate_roots
from ..measure.gpulock import TIMING_LOCK_TIMEOUT_S, SharedUse, gpu_lock
from .channel import ChannelError, RemoteSide, Reports
from .job import EARLY_FILE, CandidateJob, RunJob
from .loading import clone, error_text, fast_serialization, inputs_to_cpu, load_reference, to_cpu, to_device

WARM_WAIT_S = 120.0  # longest a run waits for its candidate's process to warm up, then goes on
# timed calls whose outputs are checked, at positions only this process knows: early rounds
# and the last one. Two where a task's inputs are large (their sets, answers and kept outputs
# cost memory on both sides, and a candidate forging most calls meets item 15's floor there),
# six where they are small: a candidate stale on every second timed call passed two checks
# in 2 of 4 runs on a CPU (session 15, docs/guards.md), (1/2)^6 of the time with six
N_CHECK_SETS = 2
N_CHECK_SETS_SMALL = 6
SMALL_CHECK_BYTES = 64 << 20  # a timing set at most this large gets N_CHECK_SETS_SMALL
N_TIMING_SETS = 2  # input sets the other timed calls rotate through (rescaled each call)


def _no_dumping() -> None:
    """Keep same-user processes (the candidate) out of this process's memory."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass


def run_guarded(job: RunJob, launched: Launched) -> dict:
    """The guarded run of `job`; `launched` is the candidate's process, started
    by the worker before it read the job (`launch.prestart`)."""
    t0 = time.perf_counter()
    level = job.guards
    device = torch.device(job.device)
    findings = Findings()
    cand_code = Path(job.candidate).read_text(encoding="utf-8")
    place(job, launched)
    exports: list[cuda_ipc.Export] = []
    result: dict = {}
    try:
        # every GPU step of this run but its timed rounds holds the GPU's lock shared:
        # other runs on the GPU may overlap it, no timing may (gpulock.SharedUse)
        with SharedUse(str(device), label="run-pre") as share:
            result = _supervise(job, level, device, findings, cand_code, launched, share, exports, t0)
        if device.type == "cuda" and isinstance(result.get("phases"), dict):
            result["phases"]["gpu_share_wait_s"] = round(share.wait_s, 4)
            if launched.proc is None:  # the candidate's process was forked (launch.prestart), not spawned
                result["phases"]["cand_forked"] = 1
        return result
    finally:
        t1 = time.perf_counter()
        launched.close()
        reap_descendants()
        for exp in exports:  # the candidate's process is gone: nothing maps them any more
            exp.free()
        if isinstance(result.get("phases"), dict):  # the candidate's process closed, what it shared freed
            result["phases"]["sup_close_s"] = round(time.perf_counter() - t1, 4)


class _ReferenceSide(Bench):
    """The reference's side: a `Bench` in this process. On a CPU each round is
    followed by a copy_ of the task's bytes timed the same way (item 15's
    bound), so the copy sees the same load as both models."""

    def __init__(self, fn, device, config, prepare, copy_bytes: int):
        super().__init__(fn, device, config, prepare=prepare)
        self.copy = None
        self.copy_min_ms: float | None = None
        if device.type == "cpu":
            n = max(1, copy_bytes // 8)
            src, dst = torch.randn(n), torch.empty(n)
            self.copy = Bench(lambda: dst.copy_(src), device, config)

    def round(self, n: int, check=None, defer: bool = False) -> Round:
        r = super().round(n, check, defer)
        if self.copy is not None:
            c = self.copy.round(max(3, min(n, 50)))
            self.copy_min_ms = min([self.copy_min_ms or float("inf")] + c.times_ms)
        return r


def _supervise(job, level, device, findings, cand_code, launched: Launched, share: SharedUse,
               exports: list, t_start: float) -> dict:

    cdir, priv = launched.cdir, launched.priv
    for f in check_source(cand_code, level, job.language):
        findings.add(f.flag, str(f))
    _no_dumping()
    fast_serialization()
    # the candidate placed in its folder, its source checked, the lock taken shared
    phases: dict[str, float] = {"sup_setup_s": round(time.perf_counter() - t_start, 4)}
    if job.timed and rejections(findings, job.fallback):
        # its source already rejects it: nothing the run finds can make the verdict ok, so it
        # is checked (its other findings still reported) but not timed, which would hold the GPU
        # for a speedup the verdict withdraws (session 30: 32 of cuda-l1's 50 rejected candidates,
        # 28.6 s of ~93 s of timing holds on one H200)
        job = replace(job, time=False)
        phases["timing_settled"] = 1
    cfg = job.timing
    settle_process(device, cfg)
    t0 = time.perf_counter()
    try:
        ref_mod, init_inputs, ref = load_reference(job)
        policy = task_policy(ref_mod)  # items 30 and 35 (guards/policy.py): a wrong declaration is the task's error
        ref = ref.to(device)  # in the mode a fresh module is in (docs/SEMANTICS.md)
        phases["ref_load_s"] = time.perf_counter() - t0
        sets = _draw_sets(job, ref_mod, device)
        phases["guard_inputs_s"] = time.perf_counter() - t0
    except BaseException as exc:  # noqa: BLE001 - the task itself is broken
        return _reference_failed(exc, job)
    timing_sets = sets["timing"]  # kept on the device: the reference is timed here
    t0 = time.perf_counter()
    exchange, why_not_ipc = _exchange_mode(job, device, sets), ""
    # with the sets on the GPU beside the candidate's process (CUDA IPC), the reference
    # runs on them while that process loads and checks the candidate: its outputs are
    # needed only at the timing. Through files (large sets, a CPU) it runs first, as the
    # memory and cores it would take are the candidate's
    ref_work, xdir = None, None
    if exchange == "cuda_ipc":
        xdir = _tensor_dir(priv, 0)
        inputs_path = xdir / "inputs.json"
        try:  # the sets stay on the GPU: one allocation of their own, described in a small file
            exports.append(cuda_ipc.export({**sets, "init": list(init_inputs)}, device))
            inputs_path.write_text(json.dumps(exports[-1].description))
        except (cuda_ipc.Unsupported, RuntimeError, OSError) as exc:
            exchange, why_not_ipc = "file", f" (CUDA IPC not used: {str(exc)[:200]})"
    if exchange == "file":
        try:
            ref_work = _reference_first(job, ref, sets, device, phases)
        except BaseException as exc:  # noqa: BLE001 - the reference failed on its inputs
            return _reference_failed(exc, job)
        t0 = time.perf_counter()  # the exchange starts after the reference's work
        xdir = xdir or _tensor_dir(priv, inp.nbytes(sets) + 2 * ref_work.nbytes)
        inputs_path = xdir / "inputs.pt"
        torch.save({**{key: [inputs_to_cpu(s) for s in group] for key, group in sets.items()},
                    "init": inputs_to_cpu(list(init_inputs))}, inputs_path)
        sets = _shapes_only(sets)  # what the judge still needs of them: shapes and dtypes
        if device.type == "cuda":
            torch.cuda.empty_cache()  # the device copies of the sets are gone: their memory goes to the candidate
    CandidateJob(candidate=str(cdir / "candidate.py"), inputs=str(inputs_path),
                 outputs=str(xdir / "outputs.pt"), device=job.device, weight_seed=job.weight_seed,
                 message_limit=job.message_limit, rlimits=job.rlimits, time=job.time, timing=job.timing,
                 guards=job.guards, skip_timing_reason=job.skip_timing_reason, import_is_build=job.import_is_build,
                 build_cache=job.build_cache, env=job.env, defer_builds=job.defer_builds, merge_units=job.merge_units,
                 slim_units=job.slim_units, early_check=job.early_check,
                 exchange=exchange).write(priv / "job.json")
    if device.type == "cuda":
        # a candidate's process still warming up (a spare taken before it was ready) is
        # waited for without this run's share of the GPU lock: holding it, the run kept
        # the other run's timing waiting for that warm-up (up to 5 s on an H200, issue 14)
        t_warm = time.perf_counter()
        with share.pause():
            launched.wait_warm(WARM_WAIT_S)
        waited = time.perf_counter() - t_warm
        phases["cand_warm_wait_s"] = round(waited, 4)
        t0 += waited  # not part of the guarded exchange (guard_exchange_s)
    reports = Reports(launched.report)
    # where guard_exchange_s (a residual, below) goes: these marks split it into
    # xchg_setup_s, xchg_ready_s, xchg_end_s, xchg_outputs_s and xchg_exit_s
    marks = {"go": time.perf_counter()}
    launched.go()
    if ref_work is None:  # the sets went through CUDA IPC: the reference runs beside the candidate's checks
        try:
            ref_work = _ReferenceWork(job, ref, sets, device)
        except BaseException as exc:  # noqa: BLE001 - run_guarded closes the candidate's process
            return _reference_failed(exc, job)
        marks["ref_done"] = time.perf_counter()
        phases["ref_overlap_s"] = round(marks["ref_done"] - marks["go"], 4)
        sets = _shapes_only(sets)  # the originals but the timing sets are no longer needed
        if device.type == "cuda":
            torch.cuda.empty_cache()
    expected, ref_profile = ref_work.expected, ref_work.profile
    comparison, timing_error = None, None
    # while it only waits for the candidate, the run lends its share to a timing that queues,
    # the candidate's CUDA locked meanwhile (measure/gpu_lend.py)
    lender = (Lender(share, lambda: candidate_roots(launched.pid, KEEP), settle=lambda: torch.cuda.synchronize(device))
              if device.type == "cuda" and job.gpu_lend else None)
    early_out = None  # the first output, checked before the timing (_early_check)
    try:
        while True:
            with lender.waiting() if lender is not None else contextlib.nullcontext():
                first = reports.next()
                while first is not None and not any(k in first for k in ("ready", "facts", "early")):
                    first = reports.next()
            if first is None or "early" not in first:
                break
            if "early_check_s" in phases:  # one early output a run: a second is out of protocol
                reports.forged.append("a second early report")
                launched.send({"cmd": "early", "time": job.timed})
                continue
            # checked here, outside the wait: this run's own GPU work, under its share
            t_early = time.perf_counter()
            early_out, wrong = _early_check(first["early"], job, level, xdir, device, expected, ref_work)
            rejected = _flags_before_timing(first["early"], ref_work, expected, findings, job.fallback)
            phases["early_check_s"] = round(time.perf_counter() - t_early, 4)
            launched.send({"cmd": "early", "time": not (wrong or rejected)})
            if wrong or rejected:  # the verdict cannot be ok: no timing for it
                job = replace(job, time=False)
                phases["timing_settled_check" if wrong else "timing_settled"] = 1
        if lender is not None:
            phases.update(lender.phases())
        marks["ready"] = time.perf_counter()
        if first is not None and "ref_done" in marks:
            # the part of the reference's work the candidate's own loading and checks did not
            # hide: from its "ready" (its clock: perf_counter is system-wide) to the reference's end
            t_cand = first.get("t") if isinstance(first.get("t"), (int, float)) else marks["ready"]
            marks["unhidden"] = max(0.0, marks["ref_done"] - max(marks["go"], float(t_cand)))
            phases["guard_inputs_s"] += marks["unhidden"]
        if first is not None and "ready" in first:
            comparison = _time_both(ref, timing_sets, launched, reports, device, cfg, job, sets, expected,
                                    ref_work.param_bytes, share)
            if device.type == "cuda":  # how long the timing waited for other GPU work of ours (gpulock)
                phases["timing_lock_wait_s"] = comparison["timing"]["lock"]["wait_s"]
            marks["timed"] = time.perf_counter()
            launched.send({"cmd": "end"})
            while reports.final is None and reports.next() is not None:
                pass
    except ChannelError as exc:
        timing_error = str(exc)
    except BaseException as exc:  # noqa: BLE001 - the reference failed while being timed
        launched.close()
        return {"status": "runtime_error", "flags": ["reference_error"],
                "message": "the reference program failed while timed: " + error_text(exc, job.message_limit)}
    try:  # after the timing, if it waited for it (_ReferenceWork)
        timed_ms = ((comparison or {}).get("timing") or {}).get("candidate", {}).get("median_ms")
        # not timed (a failed check, a rejection before the timing): the judge checks no speed
        ref_work.finish_profile(ref, device, timed_ms if isinstance(timed_ms, (int, float)) else math.inf)
    except BaseException as exc:  # noqa: BLE001 - the reference failed on its profiled call
        launched.close()
        return _reference_failed(exc, job)
    ref_profile = ref_work.profile
    if ref_work.profile_s:
        phases["guard_profile_s"] = round(ref_work.profile_s, 4)
    marks["final"] = time.perf_counter()
    got_ipc = _receive_outputs(reports.final, launched, device, _where(expected), ref_work.nbytes)
    marks["outputs"] = time.perf_counter()
    # the GPU's clocks for the verdict, read while the process exits and the judge
    # works (collected by measurement(); the reaping below spares this child of ours)
    gpu_state = gpu_state_query(device)
    keep = frozenset({gpu_state.pid} if gpu_state is not None else ())
    # outputs copied out of the candidate's process (CUDA IPC) and a run that ran: the
    # judge needs nothing more of the process, so its exit (a CUDA context torn down,
    # ~0.13 s on an H200) overlaps the judging. What it does meanwhile still decides:
    # a late report or a process of its left is joined below, before the verdict is out
    exiting = (_Exiting(launched, keep) if isinstance(got_ipc, dict) and not job.compile_baseline
               and (reports.final or {}).get("status") == "ran" else None)
    if exiting is None:
        status = launched.wait()
        # nothing the candidate started may write after this point
        _leftovers(reports, reap_descendants(keep), findings)
    marks["exited"] = time.perf_counter()
    compiled_ref = None
    if job.compile_baseline and comparison is not None and (reports.final or {}).get("status") == "ran":
        t1 = time.perf_counter()  # the candidate's process is gone: nothing shares the device with this
        compiled_ref = time_compiled(ref, timing_sets, device, cfg, job.compile_baseline, share)
        phases["compile_baseline_s"] = time.perf_counter() - t1
    ref = timing_sets = None  # noqa: F841
    facts = reports.final
    try:
        if facts is None:
            msg = launched.failure(status)
            if timing_error:
                msg = f"{timing_error}: {msg}"
            return {"status": "runtime_error", "compiled": True, "message": msg}
        where = _where(expected)
        if isinstance(got_ipc, HarnessOutOfMemory):  # the executors run it once more, after the others
            return {"status": "runtime_error", "flags": ["reference_error"], "message": str(got_ipc)}
        try:
            if isinstance(got_ipc, Exception):
                raise got_ipc
            got = (got_ipc if got_ipc is not None else
                   torch.load(xdir / "outputs.pt", weights_only=True, map_location=where)
                   if (xdir / "outputs.pt").exists() else {})
        except Exception as exc:  # noqa: BLE001 - a file the candidate could have written
            got, facts["status"], facts["message"] = {}, "runtime_error", f"unreadable outputs: {exc}"
        if early_out is not None and isinstance(got, dict) and isinstance(got.get("trials"), list) \
                and got["trials"] and isinstance(got["trials"][0], (list, tuple)) and got["trials"][0]:
            # the judge decides on the output checked before the timing, not a later copy of it
            got["trials"][0] = [early_out, *got["trials"][0][1:]]
    finally:  # the folders themselves go with the run (runner: remove_exchange, cleanup)
        for d in {priv, xdir}:
            for p in d.iterdir():
                p.unlink()
    exchange_s = time.perf_counter() - t0
    phases.update(facts.get("phases") or {})
    phases["guard_exchange_s"] = max(0.0, exchange_s - phases.get("compile_baseline_s", 0.0) - marks.get("unhidden", 0.0)
                                     - sum(v for k, v in (facts.get("phases") or {}).items() if k.endswith("_s")))
    phases.update(_exchange_parts(t0, marks, facts.get("phases") or {}))
    if facts["status"] != "ran":
        # the candidate failed before it ran; a trick its source shows (importing the
        # reference) or its process tried (guards/audit_hook.py: refused, often the very
        # failure; a harness function patched so that the harness itself broke) still decides, as everywhere: a rejection outranks the failure.
        # So does a launch that failed before the stage that raised (item 21: the
        # error an illegal launch left is raised by a later call, e.g. the profiled one)
        process_tricks(facts, findings)
        if facts.get("launch_error"):
            findings.add("launch_failure", f"a launch failed silently: {facts['launch_error']}")
            facts["status"] = "incorrect"  # the catalogue's status for item 21; the later error stays in the message
            facts["message"] = f"launch_failure: {facts['launch_error']}; then {facts.get('message', '')}"
        return decide(findings, {"status": facts["status"], "compiled": facts["status"] != "compile_error",
                                 "message": facts.get("message", ""), "phases": phases}, job.fallback)
    if comparison is not None:
        facts["timing"] = comparison["timing"]
    _runtime_findings(facts, ref_work.flags, expected, ref_profile, findings,
                      job.timing.cpu_threads if device.type == "cpu" else 0)
    t0 = time.perf_counter()
    # answers kept in host memory (_placed) are compared there, outputs received there too:
    # host work, for which this run's share of the GPU lock would hold back the timing of the
    # others (a 1.07 GB-output task judged on the host held it ~50 s, session_2026-11-30f)
    on_host = device.type == "cuda" and where.type == "cpu"
    host_judge = share.pause() if on_host else contextlib.nullcontext()
    try:
        with host_judge:
            verdict = judge(job, level, device, cand_code, facts, got, expected, sets, findings, phases,
                            ref_mutates=ref_work.mutates, ref_aliases=ref_work.aliases, ref_profile=ref_profile,
                            param_bytes=ref_work.param_bytes, ref_weak=ref_work.weak, ref_fp64=ref_work.fp64,
                            ref_fp64_structured=ref_work.fp64_structured)
    except torch.OutOfMemoryError as exc:
        # the judge's own work out of GPU memory (session 30: four runs on one H200, judge.rule_for
        # on the reference's outputs): the process ended without a verdict, which the runner called
        # the candidate's runtime_error
        verdict = _judge_out_of_memory(exc, got, ref_work.nbytes)
    finally:
        phases["guard_judge_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        left = exiting.join() if exiting is not None else []
    if exiting is not None:
        if _leftovers(reports, left, findings):
            verdict = decide(findings, verdict, job.fallback)  # decides as it would have before the judge
        # the part of the exit the judge did not hide: a part of the guarded exchange
        phases["xchg_exit_s"] = round(time.perf_counter() - t0, 4)
        phases["guard_exchange_s"] += time.perf_counter() - t0
    if comparison is not None:
        attach_timing(verdict, comparison["comparison"])
    if device.type == "cuda" and not (verdict.get("provenance") or {}).get("candidate") and facts.get("profile"):
        # not timed (a rejection, a skipped timing): what its profiled check call ran
        verdict.setdefault("provenance", {})["candidate"] = profiled_provenance(
            facts["profile"].get("kernels") or {}, own_kernel_names(cand_code))
    apply_policy(verdict, policy, job.policy)  # items 30 and 35: the task's policy against what ran
    verdict["measurement"] = measurement(device, cfg, comparison and comparison["comparison"], ref_work.flags,
                                         facts.get("backend_flags") or {}, sets["trials"][0], expected["trials"][0],
                                         guards=level, gpu_state=gpu_state)
    verdict["measurement"]["exchange"] = exchange + why_not_ipc
    if on_host:  # _placed: no room on the GPU for the answers, or the run asked (exchange="host")
        verdict["measurement"]["answers"] = "host"
    if ref_work.placement:
        verdict["measurement"]["answers_placement"] = ref_work.placement
    if facts.get("smem_poison"):  # strict on a GPU: shared memory filled before each checked call
        verdict["measurement"]["smem_poison"] = facts["smem_poison"]
    if "checks" in verdict:  # the correctness decisions (allclose, float64 budget), how they were made
        verdict["measurement"]["checks"] = verdict.pop("checks")
    if "generalizes" in verdict:  # the task's declared shape variants (SHAPE_VARIANTS): all passed?
        verdict["measurement"]["generalizes"] = verdict.pop("generalizes")
    if comparison and comparison["timing"]["lock"].get("holders"):  # what the timing waited for (gpulock)
        verdict["measurement"]["timing_lock_holders"] = comparison["timing"]["lock"]["holders"]
    if ref_work.profiled:
        verdict["ref_profile"] = ref_profile
    if compiled_ref is not None:
        verdict["compiled_baseline"] = compiled_ref
    return verdict


def _draw_sets(job, ref_mod, device: torch.device) -> dict[str, list]:
    """The guarded run's input sets, drawn on the device (the task's own get_inputs, with
    factories defaulting to it): a CPU generator takes seconds for a full-size task's sets."""
    seed = job.input_seed
    with torch.device(device):
        timing = [inp.draw_inputs(ref_mod, seed + 2000 + k, "normal") for k in range(N_TIMING_SETS)]
        return {
            "trials": [inp.draw_inputs(ref_mod, seed + t, inp.distribution_for(t, job.guards == "strict"))
                       for t in range(inp.trial_count(job.trials, job.guards == "strict"))],
            "checks": _check_sets(timing, check_count(inp.nbytes(timing[0]), job.timing.min_rounds)),
            "timing": timing,
            "variants": [inp.draw_inputs(ref_mod, seed + 3000 + j, "normal", v)
                         for j, v in enumerate(inp.shape_variants(ref_mod))],
        }


def check_count(set_bytes: int, min_rounds: int) -> int:
    """How many timed calls are checked: N_CHECK_SETS_SMALL for a timing set of at most
    SMALL_CHECK_BYTES, else N_CHECK_SETS; one per early round at most, plus the last
    (`check_placement`)."""
    wanted = N_CHECK_SETS_SMALL if set_bytes <= SMALL_CHECK_BYTES else N_CHECK_SETS
    return max(1, min(wanted, min_rounds + 1))


def check_placement(n: int, min_rounds: int, rng) -> tuple[dict[int, int], int | None]:
    """Where the `n` check sets go: sets 0..n-2 in distinct early rounds drawn at random
    (every one of the first `min_rounds` rounds is run), the last set in the last round."""
    if n <= 0:
        return {}, None
    rounds = rng.sample(range(min_rounds), n - 1)
    return {r: j for j, r in enumerate(rounds)}, n - 1


def _check_sets(timing: list, n: int) -> list:
    """The inputs of the checked timed calls: timing sets refilled as a timed call's are
    (each element its own factor, a scale from this process's secret), made here so the
    reference's answers are known. A checked call must look like every other timed call:
    sets of their own (0.5.4) were told apart by a property as plain as their spread (the
    task's draw has std 1, a timed call's was scaled), and a candidate that computed only
    when the spread was 1 passed every check at 10x on a CPU matmul (docs/guards.md, item 24)."""
    import random

    rng, factors = random.Random(int.from_bytes(os.urandom(8), "little")), inp.Factors()
    checks = []
    for k in range(n):
        base = timing[k % len(timing)]
        check = clone(base)
        inp.refill(check, base, rng.uniform(0.5, 1.5), factors)
        checks.append(check)
    return checks


def _reference_first(job, ref, sets: dict, device: torch.device, phases: dict) -> "_ReferenceWork":
    """The reference's work before the candidate's process starts (files: its outputs and
    the sets share the memory and cores the candidate will need), counted as guard phases."""
    work = _ReferenceWork(job, ref, sets, device)
    phases["guard_inputs_s"] += work.outputs_s
    phases["guard_profile_s"] = work.profile_s
    return work


def _reference_failed(exc: BaseException, job) -> dict:
    return {"status": "runtime_error", "flags": ["reference_error"],
            "message": "the reference program failed: " + error_text(exc, job.message_limit)}


class _ReferenceWork:
    """The reference's outputs on every input set (whether it writes into or returns
    its inputs), its profile (the runner passes the one it got from the task's first
    candidate) and its backend flags: everything the judge needs of the reference but
    its timing. Raises whatever the reference raises."""

    def __init__(self, job, ref, sets: dict, device: torch.device):
        t0 = time.perf_counter()
        expected: dict[str, list] = {}
        self.mutates = self.aliases = False
        with torch.no_grad():
            for key, group in sets.items():
                outs = []
                for drawn in group:
                    dev_inputs = to_device(drawn, device)
                    args = clone(dev_inputs)
                    out = ref(*args)
                    self.mutates |= any(not torch.equal(a, b)
                                        for a, b in zip(inp.tensors_in(args), inp.tensors_in(dev_inputs)))
                    ptrs = {t.untyped_storage().data_ptr() for t in inp.tensors_in(args) if t.numel()}
                    self.aliases |= any(isinstance(o, torch.Tensor) and o.numel() and o.untyped_storage().data_ptr() in ptrs
                                        for _, o in flatten_outputs(out))
                    outs.append(_detached(out))
                expected[key] = outs
            # the first trial's outputs of the reference run in float64 (measure/oracle.py), if asked;
            # its random draws (a dropout) touch no generator state the runs above or after see
            self.fp64 = None
            if job.check.fp64_k > 0 and sets.get("trials"):
                with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
                    self.fp64 = reference_fp64(ref, clone(to_device(sets["trials"][0], device)))
            # strict: the structured trials' references in float64 too (judge: a structured draw
            # can be ill-conditioned for the task itself, and then the fp32 reference's own error
            # is the measure of what a candidate may miss by)
            self.fp64_structured = {}
            structured = [i for i in range(len(sets.get("trials") or []))
                          if inp.distribution_for(i, True) in inp.STRUCTURED] if job.guards == "strict" else []
            if structured:
                with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
                    outs64 = references_fp64(ref, [clone(to_device(sets["trials"][i], device)) for i in structured])
                self.fp64_structured = dict(zip(structured, outs64 or []))
            self.outputs_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            self.profile, self.profiled, self.profile_s = job.ref_profile, False, 0.0
            # on a GPU with timing to come the profile waits until after it (`finish_profile`):
            # the timing's KernelBench-convention rounds must run before this process's first
            # CUDA profiler session, which leaves CUPTI's callbacks behind (timing.compare)
            self._pending = sets["trials"][0] if self.profile is None else None
            # the input-reach probe (guards/speed.input_reach: 1 + 32 calls of the reference per
            # floating input), where no profile of the task has made it yet (`reach_owed`)
            self._reach_set = (sets["timing"][0] if self.profile is None or self.profile.get("reach_owed")
                               else None)
            if not (device.type == "cuda" and job.timed):
                self.finish_profile(ref, device)
        self.param_bytes = sum(t.numel() * t.element_size() for t in ref.state_dict().values())
        # does the task's check also pass a candidate that computes nothing (issue 45)?
        self.weak = task_weak_by(job, expected.get("trials") or [], sets.get("trials") or [])
        args = dev_inputs = out = outs = None  # noqa: F841 - free them before the candidate runs
        # compare where the answers are cheapest to compare: on the device, unless
        # keeping them there would crowd the candidate out of its memory
        self.placement: dict = {}
        self.expected = _placed(expected, device, host=job.exchange == "host", info=self.placement)
        self.nbytes = inp.nbytes(self.expected)
        if device.type == "cuda":
            torch.cuda.empty_cache()  # the candidate's process needs the GPU memory, not us
        self.flags = backend_flags()


    def finish_profile(self, ref, device: torch.device, timed_ms: float | None = None) -> None:
        """The reference's profile, if the task's first run still needs it, and the share
        of each input a kernel must read (`input_reach`), if this verdict can use it.

        `timed_ms`: the candidate's timed median, where it was timed (on a GPU this runs after
        the timing). The reach only ever loosens item 15's bound (judge: all bytes of the
        inputs, outputs and parameters at peak bandwidth), so a candidate at least as slow
        as that bound with every input byte counted gets the same verdict without it: the
        probe (33 calls of the reference, 3.8-7.1 s on cuda-l1's slowest tasks, under the
        run's share of the GPU lock) is then left for a later candidate of the task that
        needs it; so is it for a candidate that was not timed (`timed_ms` infinite: the judge
        checks no speed without a timing). Called before any timing (a CPU, an untimed job's
        profile in `__init__`, `timed_ms` None), it is probed as before."""
        t0 = time.perf_counter()
        with torch.no_grad():
            if self._pending is not None:
                args = to_device(clone(self._pending), device)
                self._pending = None
                self.profile, self.profiled = profile_call(lambda: ref(*args), device), True
            if self._reach_set is not None and self._reach_needed(device, timed_ms):
                reach_set, self._reach_set = self._reach_set, None
                # which share of each input a kernel must read (item 15's bound)
                reach = None if self.mutates else input_reach(ref, to_device(clone(reach_set), device))
                profile = {k: v for k, v in (self.profile or {}).items() if k != "reach_owed"}
                self.profile, self.profiled = {**profile, "input_reach": reach}, True
            elif self._reach_set is not None and self.profiled:  # made here, its probe left for later
                self.profile["reach_owed"] = True
        self.profile_s += time.perf_counter() - t0

    def _reach_needed(self, device: torch.device, timed_ms: float | None) -> bool:
        if timed_ms is None:
            return True
        if not self.expected or not self.expected.get("timing"):
            return True
        nbytes = inp.nbytes(self._reach_set) + inp.nbytes(self.expected["timing"][0]) + self.param_bytes
        bound, _ = fastest_possible_ms(nbytes, device)
        return bound is None or timed_ms < bound


def _leftovers(reports: Reports, left: list[str], findings: Findings) -> bool:
    """Reports after the final one and processes the candidate left running (item 20),
    read once its process is gone: a forged_output finding (True) or nothing."""
    reports.drain()
    if reports.forged or left:
        findings.add("forged_output", "; ".join((reports.forged + left)[:3]))
        return True
    return False


class _Exiting:
    """The candidate's process waited for, and whatever it left behind reaped, on a
    thread of its own while the judge works (os.waitpid releases the GIL)."""

    def __init__(self, launched: Launched, keep: frozenset[int]):
        self.left: list[str] = []
        self.thread = threading.Thread(target=self._run, args=(launched, keep), daemon=True, name="km-exit")
        self.thread.start()

    def _run(self, launched: Launched, keep: frozenset[int]) -> None:
        launched.wait()
        self.left = reap_descendants(keep)

    def join(self) -> list[str]:
        self.thread.join()
        return self.left


def time_compiled(ref, timing_sets, device, cfg, spec: dict, share: SharedUse) -> dict:
    """The reference under torch.compile against itself in eager mode (verify/measure/compiled.py),
    its timed rounds under the GPU's timing lock as the candidate's were."""
    from contextlib import contextmanager

    from ..measure.compiled import measure

    @contextmanager
    def timed():
        with share.pause(), gpu_lock(str(device), exclusive=True, timeout=TIMING_LOCK_TIMEOUT_S,
                                     label="timing-compiled"):
            yield

    return measure(ref, timing_sets, device, cfg, mode=spec["mode"], backend=spec["backend"],
                   timeout_s=float(spec["timeout"]), timed_section=timed)


def _time_both(ref, timing_sets, launched, reports, device, cfg, job, sets, expected, param_bytes,
               share: SharedUse) -> dict:
    """Reference rounds here, candidate rounds in its process, alternated; timed candidate
    calls at positions only this process knows are checked (`check_count`, `check_placement`)."""
    import random

    rng = random.Random(int.from_bytes(os.urandom(8), "little"))
    pool = inp.InputPool(timing_sets[0])

    def prep(i: int) -> None:
        pool.prepare(timing_sets[i % len(timing_sets)], rng.uniform(0.5, 1.5))

    copy_bytes = inp.nbytes(sets["timing"][0]) + inp.nbytes(expected["timing"][0]) + param_bytes
    ref_side = _ReferenceSide(lambda: ref(*pool.current), device, cfg, prep, copy_bytes)
    holds: list = []  # gpulock.Held of each hold of the timing lock (compare reads the rounds' records between)
    clocks: dict = {}

    @contextlib.contextmanager
    def hold():
        with gpu_lock(str(device), exclusive=True, timeout=TIMING_LOCK_TIMEOUT_S, label="timing") as held:
            holds.append(held)
            clocks.setdefault("before", gpu_clocks.read_device(device))
            try:
                yield
            finally:
                clocks["after"] = gpu_clocks.read_device(device)

    with torch.no_grad(), share.pause(then="run-post"), timing_numerics(cfg, device):
        early, final = check_placement(len(sets["checks"]), cfg.min_rounds, rng)
        comp = compare(ref_side, RemoteSide(launched, reports, rng), cfg,
                       check_rounds=early, final_check=final, rng=rng, candidate_walls=[], hold=hold)
    comp.clocks = {"before": clocks.get("before"), "after": clocks.get("after")}
    timing = {"reference": comp.reference.to_dict(), "candidate": comp.candidate.to_dict(),
              "lock": {"wait_s": round(sum(h.wait_s for h in holds), 4), "acquired": all(h.acquired for h in holds),
                       "holders": next((h.holders for h in holds if h.holders), []), "holds": len(holds)}}
    if ref_side.copy_min_ms is not None:
        timing["copy"] = {"min_ms": ref_side.copy_min_ms}
    return {"timing": timing, "comparison": comp}


def _runtime_findings(facts: dict, ref_flags: dict, expected: dict, ref_profile: dict, findings: Findings,
                      cpu_threads: int = 0) -> None:
    """Facts of the candidate's process that only the supervisor can put in context.
    `cpu_threads`: the CPU timing's thread count both sides run with (0: not a CPU run)."""
    cand_flags = facts.get("backend_flags") or {}
    if facts.get("modes"):
        findings.add("harness_introspection", "torch modes left on in the candidate's process between calls ("
                     + ", ".join(facts["modes"][:3]) + "): they see the harness's own tensor work, and with it "
                     "which timed calls are checked")
    if cpu_threads > 0 and cand_flags.get("num_threads", 0) > cpu_threads:
        # a call of torch.set_num_threads inside the candidate's forward: more cores than the
        # reference is given (a 2-core matmul ~1.8x faster), which the convention rules out
        findings.add("more_threads", f"the candidate's process ran {cand_flags['num_threads']} intra-op threads "
                                     f"where the timing gives each side {cpu_threads}")
    if fp32_task(ref_profile or {}, expected):
        raised = [k for k in ("matmul_allow_tf32", "cudnn_allow_tf32", "matmul_fp16_reduced")
                  if cand_flags.get(k) and not ref_flags.get(k)]
        rank = {"highest": 2, "high": 1, "medium": 0}  # a candidate at more precision than the reference lowers nothing
        cand_p = cand_flags.get("float32_matmul_precision", "highest")
        if rank.get(cand_p, 2) < rank.get(ref_flags.get("float32_matmul_precision", "highest"), 2):
            raised.append(f"float32_matmul_precision={cand_p}")
        if raised:
            findings.add("precision_downgrade", "the candidate's process turned on " + ", ".join(raised))


def attach_timing(verdict: dict, comp: Comparison) -> None:
    """The speedup, its interval, the KernelBench-convention figure, what ran, and a
    plain word when the speedup cannot be told from 1.0 or the cross-check disagrees."""
    if comp.candidate.provenance or comp.reference.provenance:  # what ran, whatever the verdict
        verdict["provenance"] = {"candidate": comp.candidate.provenance, "reference": comp.reference.provenance}
    if verdict.get("status") != "ok" or comp.speedup is None:
        return
    verdict.update(speedup=comp.speedup, speedup_ci=comp.speedup_ci,
                   runtime_ms=comp.candidate.median_ms, ref_runtime_ms=comp.reference.median_ms,
                   speedup_kernelbench=comp.speedup_kernelbench)
    notes = []
    if comp.speedup_ci and comp.speedup_ci[0] <= 1.0 <= comp.speedup_ci[1]:
        notes.append(f"speedup {comp.speedup:.3f}x cannot be told from 1.0 "
                     f"(95% interval {comp.speedup_ci[0]:.3f}-{comp.speedup_ci[1]:.3f})")
    flags = verdict.setdefault("flags", [])
    if comp.events_disagree:
        flags.append("events_disagree")
        notes.append(comp.events_disagree)
    if comp.kernelbench_host_bound:
        flags.append("kernelbench_host_bound")
        notes.append(comp.kernelbench_host_bound)
    moved = gpu_clocks.judge(*(comp.clocks or {}).values()) if comp.clocks else ""
    if moved:
        flags.append("clocks_moved")
        notes.append(moved)
    fell_back = sorted(set(comp.reference.trace_notes + comp.candidate.trace_notes))
    if fell_back:
        flags.append("kernel_time_partial")
        notes.append("some rounds were timed by their events: " + "; ".join(fell_back)[:300])
    verdict["message"] = "; ".join(m for m in [verdict.get("message")] + notes if m)


def measurement(device: torch.device, cfg: TimingConfig, comp: Comparison | None, ref_flags: dict, cand_flags: dict,
                inputs, outputs, guards: str, gpu_state=None) -> dict:
    """How a verdict's numbers were measured (docs/SEMANTICS.md): enough to tell
    from two records alone whether their figures are comparable. `gpu_state`: a
    clock query started after the timing (environment.gpu_state_query)."""
    m = {"method": (("GPU time per call from the device's activity records (kernels, copies and memsets the "
                     "call launched, every stream), CUDA events as the cross-check; L2 flushed before each call"
                     if cfg.kernel_time else "cuda events per call, calls queued back to back, L2 flushed before each call")
                    if device.type == "cuda" else "perf_counter per call"),
         "numerics": cfg.numerics if device.type == "cuda" else "cpu",
         "l2": ("flushed (2x L2 zeroed) before every call" if device.type == "cuda" and cfg.flush_l2 else "not flushed"),
         "inputs": "the same buffers every call, refilled in place between calls: a drawn set, each element times its own random factor",
         "config": asdict(cfg), "guards": guards,
         "flags": {"reference": ref_flags, "candidate": cand_flags},
         "dtypes": {"inputs": sorted({str(t.dtype) for t in inp.tensors_in(inputs)}),
                    "outputs": sorted({str(t.dtype) for _, t in flatten_outputs(outputs) if isinstance(t, torch.Tensor)})},
         **describe(device, gpu_state)}
    if device.type == "cuda":
        m["peaks"] = peak_rates(device)  # the speed-of-light bound's rates (verify/measure/sol.py)
    if comp is not None:
        m.update(rounds=comp.rounds, stopped=comp.stopped, rse=comp.rse, ratios=[round(r, 5) for r in comp.ratios],
                 calls_per_round={"reference": comp.reference.calls_per_round,
                                  "candidate": comp.candidate.calls_per_round},
                 reps={"reference": comp.reference.reps, "candidate": comp.candidate.reps},
                 wall_speedup=comp.wall_speedup, event_speedup=comp.event_speedup,
                 rounds_ci=comp.rounds_ci, methods={"reference": comp.reference.method,
                                                    "candidate": comp.candidate.method},
                 event_ms={"reference": comp.reference.event_median_ms, "candidate": comp.candidate.event_median_ms},
                 kernelbench_ms={"reference": comp.reference.kb_mean_ms, "candidate": comp.candidate.kb_mean_ms},
                 # the host's part of those figures and what in each process can lengthen it
                 kernelbench_host_ms={"reference": comp.reference.kb_host_ms,
                                      "candidate": comp.candidate.kb_host_ms},
                 kernelbench_state={"reference": comp.reference.kb_state, "candidate": comp.candidate.kb_state},
                 clocks=comp.clocks, timing_stages=comp.stages,
                 indistinguishable_from_1=bool(comp.speedup_ci and comp.speedup_ci[0] <= 1.0 <= comp.speedup_ci[1]),
                 # what the timing measured, whatever the verdict: a candidate rejected by a
                 # policy (a fallback, a precision switch) was timed like any other, and the
                 # timer's fidelity is checked on it too (benchmarks/timing_fidelity.py); the
                 # verdict's own speedup stays None unless it is ok
                 timed={"speedup": comp.speedup, "speedup_ci": comp.speedup_ci,
                        "speedup_kernelbench": comp.speedup_kernelbench,
                        "ref_ms": comp.reference.median_ms, "cand_ms": comp.candidate.median_ms})
    return m


def _exchange_mode(job, device: torch.device, sets: dict) -> str:
    """How the tensors travel: on a GPU through CUDA IPC when the sets fit in a quarter
    of the free memory (the candidate's process holds them on the GPU while it runs),
    else, or when the run asks for files, through files."""
    if job.exchange in ("file", "host") or device.type != "cuda" or not cuda_ipc.available(device):
        return "file"
    free, _ = torch.cuda.mem_get_info(device)
    return "cuda_ipc" if inp.nbytes(sets) < free // 4 else "file"


def _exchange_parts(t0: float, marks: dict, cand: dict) -> dict[str, float]:
    """guard_exchange_s split by where the supervisor was (seconds; the candidate's own
    phases taken out where they fall). xchg_setup_s: the input sets handed over (export or
    file) up to the start signal; xchg_ready_s: from the signal to the candidate's "ready"
    (its process waking, reading the sets), less its load, input, check and profile phases;
    xchg_end_s: from the end of timing to its final report (its outputs written or shared);
    xchg_outputs_s: the supervisor taking the outputs (IPC copy);
    xchg_exit_s: the candidate's process exiting and its leftovers reaped. Not guard_*:
    they are parts of guard_exchange_s, not added to it."""
    out: dict[str, float] = {"xchg_setup_s": marks["go"] - t0}
    if "ready" in marks:
        before = sum(float(cand.get(k, 0.0)) for k in ("load_s", "build_s", "inputs_s", "check_s", "profile_s"))
        out["xchg_ready_s"] = max(0.0, marks["ready"] - marks["go"] - before - marks.get("unhidden", 0.0))
    if "timed" in marks and "final" in marks:
        out["xchg_end_s"] = marks["final"] - marks["timed"]
    if "final" in marks and "outputs" in marks:
        out["xchg_outputs_s"] = marks["outputs"] - marks["final"]
    if "outputs" in marks and "exited" in marks:
        out["xchg_exit_s"] = marks["exited"] - marks["outputs"]
    return {k: round(v, 4) for k, v in out.items()}


def _early_check(msg, job, level: str, xdir: Path, device: torch.device, expected: dict, ref_work):
    """The candidate's first output, shared before its timing (candidate._early_check), and
    whether it already fails the judge's check of it (judge.first_trial_fails). The output is
    kept: the judge decides on it, so a verdict the check settled cannot come out ok. (None,
    False) where it cannot be read: the candidate is then timed, as without the check."""
    where = _where(expected)
    try:
        if isinstance(msg, dict) and "ipc" in msg:
            got = cuda_ipc.receive(msg["ipc"], device, to=where, keep_cpu=False)
        elif isinstance(msg, dict) and msg.get("file") == EARLY_FILE:
            got = torch.load(xdir / EARLY_FILE, weights_only=True, map_location=where)
        else:
            return None, False
        out = got["out"]
    except Exception:  # noqa: BLE001 - the description and the file are the candidate's
        return None, False
    finally:
        (xdir / EARLY_FILE).unlink(missing_ok=True)
    exps = expected.get("trials") or []
    if not exps:
        return None, False
    try:
        return out, first_trial_fails(job, level, exps[0], out, ref_work.fp64_structured)
    except Exception:  # noqa: BLE001 - out of memory, say: the judge asks again after the timing
        return None, False


def _flags_before_timing(msg, ref_work, expected: dict, findings: Findings, fallback: str) -> bool:
    """The backend flags the candidate's process sent with its early output, judged as its final
    ones are (_runtime_findings: TF32 and the like switched on for an fp32 task), once the
    reference's profile is known. What they show is kept among the run's findings (its checks
    ran so); True where the run is rejected whatever follows, so that its timing is not needed."""
    flags = msg.get("backend_flags") if isinstance(msg, dict) else None
    # only with the reference's profile known (a task's later runs; on a GPU its first run profiles
    # the reference after the timing): a reference that itself computes in low precision makes no
    # fp32 task, and without its profile that is not known yet
    if isinstance(flags, dict) and ref_work.profile is not None:
        try:
            _runtime_findings({"backend_flags": flags}, ref_work.flags, expected, ref_work.profile, findings)
        except Exception:  # noqa: BLE001 - values the process sent: the final report decides then
            pass
    return bool(rejections(findings, fallback))


class HarnessOutOfMemory(RuntimeError):
    """The supervisor ran out of GPU memory copying or judging outputs no larger than the
    reference's: the harness's side of a crowded GPU (session 29: cuda-l1 a100-L1-72's 1 GiB copy,
    two runs on one H200 with 99 GB of it taken; session 30: the judge, four runs on one H200),
    not the candidate's failure."""


def _harness_oom(exc: BaseException, size, expected_bytes: int, doing: str) -> HarnessOutOfMemory | None:
    """HarnessOutOfMemory when the candidate's outputs (`size` bytes) are at most twice the
    reference's (`expected_bytes`) plus 64 MiB: the memory went elsewhere; None when they are
    larger (or their size is unknown): then the candidate's outputs are the cause."""
    if isinstance(size, int) and not isinstance(size, bool) and 0 <= size <= 2 * expected_bytes + (64 << 20):
        return HarnessOutOfMemory(f"the harness's side of the run ran out of GPU memory {doing} ({size / 2**20:.0f} "
                                  f"MiB, the reference's {expected_bytes / 2**20:.0f} MiB): {str(exc)[:300]}")
    return None


def _judge_out_of_memory(exc: torch.OutOfMemoryError, got, expected_bytes: int) -> dict:
    """The verdict when the judge ran out of GPU memory: the harness's side (`reference_error`,
    which the executors run once more, after the others: runner.harness_out_of_memory) unless
    the candidate's outputs are far larger than the reference's."""
    size = sum(t.numel() * t.element_size() for _, t in flatten_outputs(got) if isinstance(t, torch.Tensor))
    harness = _harness_oom(exc, size, expected_bytes, "judging the candidate's outputs")
    if harness is not None:
        return {"status": "runtime_error", "compiled": True, "flags": ["reference_error"], "message": str(harness)}
    return {"status": "runtime_error", "compiled": True,
            "message": f"out of GPU memory judging outputs of {size / 2**20:.0f} MiB (the reference's "
                       f"{expected_bytes / 2**20:.0f} MiB): {str(exc)[:300]}"}


def _receive_outputs(final: dict | None, launched: Launched, device: torch.device, where: torch.device,
                     expected_bytes: int = 0):
    """The outputs a candidate's process shared through CUDA IPC (None if it wrote a file,
    the exception if its description does not hold; HarnessOutOfMemory where this process ran
    out of GPU memory copying outputs at most twice `expected_bytes`, the reference's, plus
    64 MiB); it waits for the word to exit."""
    desc = (final or {}).pop("ipc_outputs", None)
    if desc is None:
        return None
    try:
        # every output on `where`, as torch.load(map_location=where) puts the file's
        return cuda_ipc.receive(desc, device, to=where, keep_cpu=False)
    except torch.OutOfMemoryError as exc:
        size = desc.get("size") if isinstance(desc, dict) else None
        # far more than the reference's outputs: the candidate's doing (the exception itself)
        return _harness_oom(exc, size, expected_bytes, "copying the candidate's outputs") or exc
    except Exception as exc:  # noqa: BLE001 - the description came from the candidate
        return exc
    finally:
        try:
            launched.send({"cmd": "released"})
        except OSError:
            pass


def _shapes_only(obj):
    """Tensors as meta tensors of the same shape and dtype (no memory), the rest as is."""
    return map_tensors(obj, lambda t: torch.empty(t.shape, dtype=t.dtype, device="meta"), lists=True, dicts=True)


def _tensor_dir(priv: Path, nbytes: int) -> Path:
    """Where the input and output tensors are exchanged: a folder in /dev/shm
    (memory, no disk traffic: gigabytes per candidate for full-size tasks) when
    it has room for them twice over, else the exchange folder. Its name follows
    from `priv`, so the runner removes it even if this process is killed."""
    shm = shm_exchange_dir(priv)
    try:
        st = os.statvfs(shm.parent)
        if st.f_bavail * st.f_frsize > 2 * nbytes + (1 << 30):
            shm.mkdir(mode=0o700)
            return shm
    except OSError:
        pass
    return priv


def _detached(out):
    return map_tensors(out, lambda t: t.detach().contiguous(), lists=True)


def _placed(expected: dict, device: torch.device, host: bool = False, info: dict | None = None) -> dict:
    """The reference's answers on the device, or in host memory where they would take over a
    quarter of its free memory or the run asks for it (`exchange="host"`). `info` receives the
    numbers the choice was made on (`measurement.answers_placement`: the same task went to the
    host in one cold run and stayed on the GPU in another, session 25, and nothing said why)."""
    if device.type == "cuda" and not host:
        free, _ = torch.cuda.mem_get_info(device)
        size = sum(inp.nbytes(group) for group in expected.values())
        fits = size < free // 4
        if info is not None:
            info.update(answers_gb=round(size / 2**30, 3), gpu_free_gb=round(free / 2**30, 2),
                        where="device" if fits else "host")
        if fits:
            return expected
        # said on stderr, whose tail a verdict of this process killed for its memory shows: the
        # harness's 32 GiB limit killed a 1.07 GB-output task's run twice in nine cold runs
        # (session_2026-11-30f), and what its memory held was not known
        print(f"kernelmill supervisor: the reference's answers ({size / 2**30:.2f} GiB) kept in host memory, "
              f"{free / 2**30:.1f} GiB free on {device}; outputs are compared there", file=sys.stderr, flush=True)
    return {key: [to_cpu(o) for o in group] for key, group in expected.items()}


def _where(expected: dict) -> torch.device:
    for group in expected.values():
        for t in inp.tensors_in(group):
            return t.device
    return torch.device("cpu")

