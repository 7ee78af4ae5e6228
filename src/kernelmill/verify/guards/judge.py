"""Deciding a guarded run: compare the candidate's outputs with the reference's
(tolerances scaled to the reference output), then turn the facts its process
reported and the speed bound into flags (`flags.decide`)."""

from __future__ import annotations

import math
from dataclasses import replace

import torch

from ..measure.correctness import CheckRule, compare, flatten_outputs
from ..measure.oracle import approximated, budget
from ..measure.trivial import weak_by, weak_note
from ..measure import inputs as inp
from .audit_hook import findings_of
from .flags import FLAGS, Findings, decide
from .source import own_kernel_names
from .speed import fastest_possible_ms, needed_bytes
from .trace import precision_rank


def _constant(t: torch.Tensor) -> bool:
    if not t.is_floating_point() or t.numel() < 2:
        return False
    flat = t.flatten()
    # a varying output varies early: its head decides without a pass over the whole (a 1.07 GB
    # output judged on the host, session 25)
    return bool(torch.all(flat[:1 << 16] == flat[0])) and bool(torch.all(flat == flat[0]))


def _weak_output(t: torch.Tensor, chunk: int = 1 << 24) -> bool:
    """The reference output is tiny (max |x| < 1e-3) or near-constant (float64 std < 1e-6),
    taken a chunk at a time: whole, a 1.07 GB output's float64 copy and its abs took 3 GB more of
    a harness near its memory limit (session 25: peak 32.9 GB judging on the host). The std is
    the two-pass one, in float64 (torch's own differs in the last bits: this only writes a note)."""
    lo, hi = torch.aminmax(t.detach())
    if max(abs(float(lo)), abs(float(hi))) < 1e-3:
        return True
    flat = t.detach().reshape(-1)
    n = flat.numel()
    mean = sum(float(flat[i:i + chunk].sum(dtype=torch.float64)) for i in range(0, n, chunk)) / n
    sq = sum(float((flat[i:i + chunk].to(torch.float64) - mean).square_().sum()) for i in range(0, n, chunk))
    return math.sqrt(sq / (n - 1)) < 1e-6


def fp32_task(ref_profile: dict, expected: dict) -> bool:
    """The reference computes in fp32 (or fp64) only: lower precision anywhere
    in the candidate is then a downgrade."""
    return not ref_profile.get("low_precision") and all(
        t.dtype in (torch.float32, torch.float64) for _, t in flatten_outputs(expected["trials"][0])
        if isinstance(t, torch.Tensor) and t.is_floating_point())


def rule_for(job: dict, ref_out, norm_wise: bool = False) -> CheckRule:
    """Tolerances relative to the reference output's scale: an atol of 1e-4
    lets zeros pass for an output whose values are all below 1e-4. `norm_wise`
    (a structured draw of large dynamic range): the atol also grows with a scale
    above 1, as float32's own error of a cancelling sum does."""
    scale = max((float(t.abs().max()) for _, t in flatten_outputs(ref_out)
                 if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel()
                 and bool(torch.isfinite(t).all())), default=1.0)
    tol = {k: (v[0] * (scale if norm_wise else min(1.0, scale)), v[1]) for k, v in job.check.tolerances.items()}
    return CheckRule(mode=job.check.mode, tolerances=tol, norm_tol=job.check.norm_tol)


# fp32 tolerance of the checked *timed* calls when they run under PyTorch's numerics and
# the reference convolves through cuDNN, which may then use TF32 (10-bit mantissa): the
# convolution's result moves by ~1e-3 relative with the algorithm (NCDHW vs channels_last
# measured 1.0e-3 to 3.6e-3 on the dev corpus). KernelBench's fp32 tolerance. The plain
# trials stay strict (TF32 off, the job's tolerances): these calls only have to show that
# the timed path computes what the checked path did.
TF32_TIMED_TOL = (1e-2, 1e-2)


STRUCTURED_K = 8.0  # the float64 budget's k on a structured trial when --fp64-k is not given


def process_tricks(facts: dict, findings: Findings) -> None:
    """What the candidate's process did to the harness, whether its run went on or failed
    (a refused or broken harness call is often the failure itself, and a rejection
    outranks it): the audit hook's refusals (items 24, 28, 36, 23/29) and harness
    callables rebound or patched in place (items 6, 25)."""
    for flag, detail in findings_of(facts):
        findings.add(flag, detail)
    if facts.get("rebound"):
        findings.add("harness_patched", "rebound in the candidate's process: " + ", ".join(facts["rebound"][:5]))


def task_weak_by(job, expected_trials: list, trial_inputs: list) -> list[str]:
    """The trivial candidates (verify/measure/trivial.py) the task's check lets through on every
    trial set: computed once per job from the reference's own outputs, before the input
    sets are dropped (the judge then sees only their shapes)."""
    if not expected_trials:
        return []
    return weak_by(expected_trials, trial_inputs, rule_for(job, expected_trials[0]))


def timed_rule(job, ref_out, ref_profile: dict | None) -> CheckRule:
    """`rule_for` of a checked timed call: widened for float32 to `TF32_TIMED_TOL` when
    the timed calls run under PyTorch's numerics and the reference ran a cuDNN kernel."""
    from ..measure.kernel_time import origin

    rule = rule_for(job, ref_out)
    numerics = job.timing.numerics
    if numerics == "pytorch" and any(origin(k) == "cudnn" for k in (ref_profile or {}).get("kernels", {})):
        a, r = rule.tolerances.get("float32", (1e-4, 1e-4))
        rule.tolerances["float32"] = (max(a, TF32_TIMED_TOL[0]), max(r, TF32_TIMED_TOL[1]))
    return rule


def _not_finite(out) -> bool:
    return any(isinstance(t, torch.Tensor) and t.is_floating_point() and not bool(torch.isfinite(t).all())
               for _, t in flatten_outputs(out))


def fp64_budget(job, expected: dict, got: dict, ref_fp64, result: dict) -> None:
    """The float64 error budget on the first trial (measure/oracle.py), beside the
    allclose rule: both decisions go to `result["checks"]`; a failed budget makes an
    ok verdict incorrect (the stricter decides)."""
    if job.check.fp64_k <= 0:
        return
    checks = result["checks"] = {"allclose": {"ok": result["status"] == "ok", "max_abs_err": result.get("max_abs_err")}}
    runs = (got.get("trials") or [None])[0]
    if ref_fp64 is None or not runs or not expected.get("trials"):
        checks["fp64_budget"] = {"ok": None, "message": "not decided: the reference did not run in float64"}
        return
    b = budget(expected["trials"][0], ref_fp64, runs[0], job.check.fp64_k)
    checks["fp64_budget"] = b.to_dict() if b else {"ok": None, "message": "not decided: no float output to compare"}
    if b is not None and not b.ok and result["status"] == "ok":
        result.update(status="incorrect", correct=False, message=f"trial 1 (float64 error budget): {b.message}")


def first_trial_fails(job, level: str, exp, out, ref_fp64_structured: dict | None = None) -> bool:
    """Whether the candidate's first call on the first trial set fails the check `judge` makes of
    it (the same comparison, `_trial_check`): then `judge`, given that output, answers incorrect
    or worse, whatever else it finds. The supervisor asks before the timing (`early_check`)."""
    structured = inp.distribution_for(0, level == "strict") in inp.STRUCTURED
    if structured and _not_finite(exp):
        return False  # a draw the reference itself does not define: judge asks nothing of it
    return not _trial_check(job, exp, out, structured, (ref_fp64_structured or {}).get(0)).correct


def _trial_check(job, exp, out, structured: bool, ref64):
    """A trial's comparison: allclose under `rule_for`, and on a structured draw the float64
    budget where allclose fails (condition-aware, measure/oracle.py): where the draw is
    ill-conditioned for the task itself (attention on x64 logits), the fp32 reference's own
    error against float64 says how far off an honest kernel may be."""
    cmp = compare(exp, out, rule_for(job, exp, structured))
    if not cmp.correct and structured and ref64 is not None:
        b = budget(exp, ref64, out, job.check.fp64_k or STRUCTURED_K)
        if b is not None and b.ok:
            cmp = replace(cmp, correct=True)
    return cmp


def tail_approximation(job, strict: bool, expected: dict, got: dict, ref_fp64, ref_fp64_structured: dict | None,
                       findings: Findings, checked: dict[int, bool] | None = None) -> None:
    """Class 34: on every trial with a float64 reference (the first one with --fp64-k, the
    structured draws under strict) whose check the candidate passed, an approximation whose
    error hides under the atol in the output's small tail (`oracle.approximated`). Only
    passed trials: the flag names an error the tolerance let through, and a kernel already
    wrong there (a shifted padding) is not an approximation. `checked`: trial -> whether its
    first call passed, where the judge already compared it (not compared twice)."""
    refs = dict(ref_fp64_structured or {})
    if ref_fp64 is not None and job.check.fp64_k > 0:
        refs.setdefault(0, ref_fp64)
    trials, runs = expected.get("trials") or [], got.get("trials") or []
    for i in sorted(refs):
        if i >= len(trials) or i >= len(runs) or not runs[i] or refs[i] is None:
            continue
        exp, out = trials[i], runs[i][0]
        structured = inp.distribution_for(i, strict) in inp.STRUCTURED
        if structured and _not_finite(exp):
            continue
        ok = (checked or {}).get(i)
        if ok is None:
            ok = _trial_check(job, exp, out, structured, refs[i] if structured else None).correct
        if not ok:
            continue
        found = approximated(exp, refs[i], out, job.check.fp64_k or STRUCTURED_K)
        if found is not None:
            findings.add("approximation", f"trial {i + 1} ({inp.distribution_for(i, strict)} inputs) passed the "
                                          f"tolerance check, but {found.message()}")
            return


def precision_dressup(ref_profile: dict | None, prof: dict | None) -> str:
    """Class 31: the reference's heavy ops (GEMMs, convolutions, attention: `trace.HEAVY`)
    compute in fp8/fp16/bf16/integers only, and the candidate's compute in a wider float
    (an fp16 GEMM in fp32, an int8 one in fp16): the low-precision task is not what it
    solved. An integer reference counts as narrower than any float of 16 bits or more; a
    candidate at fp8 is never wider. "" when not, or when a profile (an older stored one)
    does not say."""
    ref, cand = (ref_profile or {}).get("heavy_dtypes"), (prof or {}).get("heavy_dtypes")
    if not ref or not cand:
        return ""
    ref_top = max(precision_rank(d) for ds in ref.values() for d in ds)
    if ref_top >= precision_rank(torch.float32) or ref_top < 0:
        return ""  # an fp32/fp64 task (precision_downgrade's side), or dtypes this torch does not know
    wider = [(precision_rank(d), op, d) for op, ds in cand.items() for d in ds
             if precision_rank(d) > ref_top and precision_rank(d) >= precision_rank(torch.float16)]
    if not wider:
        return ""
    _, op, dtype = max(wider)
    ref_desc = ", ".join(f"{o} in {'/'.join(ds)}" for o, ds in sorted(ref.items()))
    return f"{op} computed in {dtype}, where the reference computes {ref_desc}"


def judge(job, level, device, cand_code, facts, got, expected, sets, findings, phases, *, ref_mutates, ref_aliases,
           ref_profile, param_bytes, ref_weak: list[str] | None = None, ref_fp64=None,
           ref_fp64_structured: dict | None = None) -> dict:
    strict = level == "strict"
    result = {"status": "ok", "compiled": True, "correct": True, "flags": [], "phases": phases}
    worst_abs = worst_rel = 0.0
    notes = []
    checked: dict[int, bool] = {}  # trial -> its first call passed (tail_approximation reads it)
    if facts.get("lazy_output"):
        findings.add("lazy_output", facts["lazy_output"])
    if facts.get("variant_error"):
        findings.add("shape_specialised", facts["variant_error"])
    for key, label, flag in (("trials", "trial", None), ("variants", "shape variant", "shape_specialised"),
                             ("checks", "timed call with new data", "cached_output")):
        for i, exp in enumerate(expected.get(key, [])):
            runs = (got.get(key) or [])[i] if i < len(got.get(key) or []) else None
            if runs is None and key == "variants" and facts.get("variant_error"):
                break
            if runs is None:
                if key == "checks" and not job.timed:
                    continue
                if facts.get("lazy_output"):
                    break
                result.update(status="incorrect", correct=False, message=f"no output for {label} {i + 1}")
                break
            if key == "checks" and (result["status"] != "ok" or
                                    any(FLAGS[f][0] == "incorrect" for f in findings.flags())):
                break  # already wrong on plain trials: a failed timed call says nothing more
            runs = runs if key != "checks" else [runs]
            structured = key == "trials" and inp.distribution_for(i, strict) in inp.STRUCTURED
            if structured and _not_finite(exp):
                continue  # a structured draw the reference itself does not define (it overflows): no question asked
            rule = rule_for(job, exp, structured) if key != "checks" else timed_rule(job, exp, ref_profile)
            for r, out in enumerate(runs):
                if key == "trials":
                    cmp = _trial_check(job, exp, out, structured, (ref_fp64_structured or {}).get(i))
                    if r == 0:
                        checked[i] = cmp.correct
                else:
                    cmp = compare(exp, out, rule)
                worst_abs, worst_rel = max(worst_abs, cmp.max_abs_err), max(worst_rel, cmp.max_rel_err)
                leaves = [(a, b) for (_, a), (_, b) in zip(flatten_outputs(exp), flatten_outputs(out))
                          if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape]
                if any(_constant(b) and not _constant(a) for a, b in leaves):
                    findings.add("constant_output", f"{label} {i + 1}: every element of the output is the same value")
                if not cmp.correct:
                    if r >= 1:  # the second call, or (strict) the farthest of the first trial's repeats
                        which = "the second" if r == 1 else f"one of {facts.get('repeated_calls', 'its')} repeated calls"
                        findings.add("nondeterministic", f"{label} {i + 1}: the first call passed, {which} did not "
                                                         f"({cmp.message})")
                    elif flag:
                        findings.add(flag, f"{label} {i + 1}: {cmp.message}")
                    elif result["status"] == "ok":
                        if any(compare(other, out, rule).correct for other in expected[key][:i]):
                            findings.add("cached_output", f"{label} {i + 1}: the output is the answer to "
                                                          "an earlier input set")
                        result.update(status="incorrect", correct=False,
                                      message=f"{label} {i + 1}/{len(expected[key])} "
                                              f"({inp.distribution_for(i, strict)} inputs): {cmp.message}")
                    break
        for exp in expected.get(key, [])[:1]:
            for _, t in flatten_outputs(exp):
                if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel() > 1 and key == "trials":
                    if _weak_output(t):
                        notes.append("warning: weak task (the reference output is tiny or near-constant; "
                                     "tolerances are scaled to it)")
    result.update(max_abs_err=worst_abs, max_rel_err=worst_rel)
    if expected.get("variants") or facts.get("variant_error"):  # the task's other valid shapes (held out)
        result["generalizes"] = {"variants": len(expected.get("variants") or []),
                                 "ok": "shape_specialised" not in findings.flags()}
    fp64_budget(job, expected, got, ref_fp64, result)
    tail_approximation(job, strict, expected, got, ref_fp64, ref_fp64_structured, findings, checked)

    # facts from the candidate's process
    if facts["input_mutation"] and not ref_mutates:
        findings.add("input_mutation", f"inputs changed by the call ({', '.join(facts['input_mutation'][:3])})")
    if facts["output_aliases_input"] and not ref_aliases:
        findings.add("output_aliases_input", "an output is a view of an input")
    for key in ("background_thread", "deferred_work"):
        if facts.get(key):
            findings.add(key, facts[key])
    if facts.get("post_loop_changed"):  # items 17/18: work of timed calls done by later calls
        changed = facts["post_loop_changed"]
        findings.add("deferred_work", f"outputs of timed calls changed before the timing loop ended "
                                      f"({', '.join(map(str, changed[:3]))}{', ...' if len(changed) > 3 else ''})")
    if facts.get("launch_error"):  # item 21
        findings.add("launch_failure", f"a launch failed silently: {facts['launch_error']}")
    if facts.get("l2_persisting"):  # item 16
        findings.add("l2_persistence", facts["l2_persisting"])
    process_tricks(facts, findings)

    prof = facts.get("profile") or {}
    language = job.language
    if prof.get("unsynced"):  # item 3: work on a stream the timed stream never waited for
        findings.add("unsynced_work", f"{len(prof['unsynced'])} GPU operation(s) outside the timed stream: "
                                      f"{prof['unsynced'][0]}")
    if prof and language != "torch":
        if prof["own_calls"] == 0:
            findings.add("torch_fallback", "no call into its own compiled module or Triton kernel was seen")
        else:
            kern = prof.get("kernels") or {}
            total = sum(kern.values())
            if device.type == "cuda" and total > 0:
                share = sum(t for k, t in kern.items() if any(n in k for n in own_kernel_names(cand_code))) / total
            else:
                share = prof["own_s"] / prof["wall_s"] if prof["wall_s"] > 0 else 0.0
            phases["own_share"] = share
            ref_work = set(ref_profile["leaf_compute_ops"])
            replays = bool(ref_work) and ref_work <= set(prof["ops"])
            # standard: the returned tensor itself was written by a torch function
            # called from Python, which also called every compute op of the reference
            if replays and prof.get("output_from_torch"):
                findings.add("decoy_kernel", f"its own code ran, but the output was computed by torch "
                                             f"({', '.join(sorted(ref_work)[:4])}), as in the reference")
            # strict, on GPUs (CPU shares are dominated by call overhead): little own kernel time
            elif strict and replays and device.type == "cuda" and share < 0.5:
                findings.add("decoy_kernel", f"its own kernels took {share:.0%} of the GPU time and it also "
                                             f"ran the reference's ops ({', '.join(sorted(ref_work)[:4])})")
    if prof:
        fp32 = fp32_task(ref_profile, expected)
        # an integer task (int8 GEMM) has no fp16 data in its reference, so `fp32_task` holds;
        # fp16 there is its dress-up, not a downgrade, and is named as that
        dressed = precision_dressup(ref_profile, prof)
        if dressed:
            findings.add("precision_dressup", dressed)
        elif fp32 and prof["low_precision"]:
            findings.add("precision_downgrade", f"ops ran on {', '.join(prof['low_precision'])} data in an fp32 task")
        if fp32 and not dressed and strict and device.type == "cuda":
            lowk = [k for k in prof.get("kernels", {}) if any(s in k.lower() for s in ("tf32", "bf16", "f16", "h884", "h1688", "hmma"))]
            refk = [k for k in ref_profile.get("kernels", {}) if any(s in k.lower() for s in ("tf32", "bf16", "f16"))]
            if lowk and not refk:
                findings.add("precision_downgrade", f"kernel {lowk[0]!r} computes in reduced precision")

    if result["status"] == "ok" and ref_weak:  # information beside the verdict, not a finding against it
        result["flags"].append("weak_task")
        notes.append(weak_note(ref_weak))
    timing = facts.get("timing")
    if timing and result["status"] == "ok":
        r, c = timing["reference"], timing["candidate"]
        result.update(ref_runtime_ms=r["median_ms"], runtime_ms=c["median_ms"],
                      speedup=r["median_ms"] / c["median_ms"] if c["median_ms"] > 0 else None, timing=timing)
        # GPU work the timed stream's events did not see: how long the device-wide
        # synchronize at the end of a round still waited after the timed stream's
        # last event (host overhead does not count here, so a host-bound honest
        # candidate is not mistaken for one)
        if device.type == "cuda" and c.get("tail_median_ms") is not None:
            hidden = c["tail_median_ms"] - (r.get("tail_median_ms") or 0.0)
            if hidden > max(0.05, c["median_ms"]):
                findings.add("unsynced_work", f"each call left {hidden:.3f} ms of GPU work running after its "
                                              f"timed stream finished ({c['median_ms']:.3f} ms on the timed stream)")
        nbytes = (needed_bytes(sets["timing"][0], (ref_profile or {}).get("input_reach"))
                  + inp.nbytes(expected["timing"][0]) + param_bytes)
        bound, how = fastest_possible_ms(nbytes, device, timing.get("copy"))
        phases["guard_min_ms"] = bound or 0.0
        if bound is not None and c["median_ms"] < bound:
            findings.add("suspicious_speed", f"{c['median_ms']:.5f} ms per call; the task moves at least "
                                             f"{how} = {bound:.5f} ms")
    elif job.skip_timing_reason:
        result["flags"].append("timing_skipped")
        notes.append(job.skip_timing_reason)
    result["message"] = "; ".join(([result["message"]] if result.get("message") else []) + notes)
    return build_failed_note(decide(findings, result, job.fallback), facts.get("build_failures"))


def build_failed_note(result: dict, failures) -> dict:
    """The note extension_build_failed for the candidate's own load_inline/load calls that
    failed in its process (loading.watch_builds: in __init__ or forward too, where the candidate
    caught the error and ran something else); a note beside the verdict, as the runner's for a
    failure the build phase met, not a finding."""
    failed = [f for f in (failures or []) if isinstance(f, str) and f]
    if not failed:
        return result
    text = "; ".join(failed[:2]) + (f" (and {len(failed) - 2} more)" if len(failed) > 2 else "")
    flags = list(result.get("flags") or [])
    return {**result, "flags": flags + ([] if "extension_build_failed" in flags else ["extension_build_failed"]),
            "message": "; ".join(m for m in (result.get("message"), "extension_build_failed: " + text[:700]) if m)}
