"""The guarded ``run`` phase: the worker process becomes a supervisor that
never imports the candidate.

    supervisor (this process; trusted)           candidate process (guards.candidate)
    ─ reference built, inputs drawn from a       ─ loads candidate + reference (for timing)
      seed it keeps, reference outputs          ─ reads inputs.pt, deletes it
      computed and kept in memory only          ─ runs each input set twice, profiles one
    ─ writes inputs.pt (no outputs, no seed)      call, times with fresh data per call
    ─ starts the candidate process, waits  ──►  ─ writes outputs.pt + facts.json, exits
    ─ compares outputs, reads facts, decides ◄──

So writing into inputs cannot change the reference's answer, patching the
comparison changes nothing that decides, and no reference output of a checked
input ever exists in the candidate's process. See docs/guards.md.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import torch

from ..correctness import CheckRule, compare, flatten_outputs
from . import inputs as inp
from .flags import Findings, decide
from .source import check_source, own_kernel_names
from .speed import CPU_MARGIN, fastest_possible_ms
from .trace import profile_call

N_CHECK_SETS = 2  # timed calls whose outputs are checked
N_TIMING_SETS = 2  # input sets the other timed calls rotate through (rescaled each call)


def _no_dumping() -> None:
    """Keep same-user processes (the candidate) out of this process's memory."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass


def _constant(t: torch.Tensor) -> bool:
    if not t.is_floating_point() or t.numel() < 2:
        return False
    flat = t.flatten()
    return bool(torch.all(flat == flat[0]))


def _child_failure(status: int, stderr_path: Path) -> str:
    import signal

    if os.WIFSIGNALED(status):
        try:
            name = signal.Signals(os.WTERMSIG(status)).name
        except ValueError:
            name = f"signal {os.WTERMSIG(status)}"
        msg = f"run process crashed with {name}"
    else:
        msg = f"run process exited with code {os.waitstatus_to_exitcode(status)} before reporting a result"
    try:
        tail = stderr_path.read_text(errors="replace")[-2000:].strip()
    except OSError:
        tail = ""
    return msg + ("\n" + tail if tail else "")


def _fork_candidate(job: dict, cdir: Path, child_job_path: Path) -> tuple[int, int]:
    """Fork the candidate's process now, before this one holds a seed-derived
    input or a reference output, so it starts with torch imported (saving a
    second per candidate) and nothing to find. It waits for a byte on a pipe:
    b"1" = inputs are ready, anything else = exit."""
    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        os.close(r)
        return pid, w
    try:
        os.close(w)
        job.pop("input_seed", None)  # our copy of the job is the only one left in this process
        go = os.read(r, 1)
        os.close(r)
        if go != b"1":
            os._exit(0)
        fd = os.open(cdir / "stderr.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 2)
        os.chdir(cdir)
        sys.path[:] = [p for p in sys.path if p not in ("", ".")]
        from . import candidate

        candidate.main_forked(str(child_job_path))
    finally:
        os._exit(70)


def run_guarded(job: dict) -> dict:

    level = job["guards"]
    device = torch.device(job["device"])
    findings = Findings()
    cand_code = Path(job["candidate"]).read_text(encoding="utf-8")
    # the candidate's process gets a directory holding only its own code
    cdir = Path(job["result"]).parent / "candidate"
    cdir.mkdir(exist_ok=True)
    shutil.copy(job["candidate"], cdir / "candidate.py")
    priv = Path(job["result"]).parent / "exchange"
    priv.mkdir(exist_ok=True)
    pid, go = _fork_candidate(job, cdir, priv / "job.json")
    try:
        return _supervise(job, level, device, findings, cand_code, cdir, priv, pid, go)
    finally:
        try:
            os.close(go)
        except OSError:
            pass
        try:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


def _supervise(job, level, device, findings, cand_code, cdir, priv, pid, go) -> dict:
    from ..worker import _clone, _error_text, _load_module, _to_device

    for f in check_source(cand_code, level, job.get("language", "torch")):
        findings.add(f.flag, str(f))
    _no_dumping()
    t0 = time.perf_counter()
    if device.type == "cuda":  # fp32 means fp32: no TF32 in the reference either
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    try:
        ref_mod = _load_module(job["task"], "reference")
        for key, value in job["sizes"].items():
            setattr(ref_mod, key, value)
        torch.manual_seed(job["weight_seed"])
        init_inputs = ref_mod.get_init_inputs() if hasattr(ref_mod, "get_init_inputs") else []
        torch.manual_seed(job["weight_seed"])
        ref = ref_mod.Model(*init_inputs).to(device).eval()
        seed = job["input_seed"]
        sets = {
            "trials": [inp.draw_inputs(ref_mod, seed + t, inp.distribution_for(t)) for t in range(job["trials"])],
            "checks": [inp.draw_inputs(ref_mod, seed + 1000 + k, "normal") for k in range(N_CHECK_SETS)],
            "timing": [inp.draw_inputs(ref_mod, seed + 2000 + k, "normal") for k in range(N_TIMING_SETS)],
            "variants": [inp.draw_inputs(ref_mod, seed + 3000 + j, "normal", v)
                         for j, v in enumerate(inp.shape_variants(ref_mod))],
        }
        expected: dict[str, list] = {}
        ref_mutates = ref_aliases = False
        with torch.no_grad():
            for key, group in sets.items():
                outs = []
                for cpu_inputs in group:
                    dev_inputs = _to_device(cpu_inputs, device)
                    args = _clone(dev_inputs)
                    out = ref(*args)
                    ref_mutates |= any(not torch.equal(a, b) for a, b in zip(inp.tensors_in(args), inp.tensors_in(dev_inputs)))
                    ptrs = {t.untyped_storage().data_ptr() for t in inp.tensors_in(args) if t.numel()}
                    ref_aliases |= any(isinstance(o, torch.Tensor) and o.numel() and o.untyped_storage().data_ptr() in ptrs
                                       for _, o in flatten_outputs(out))
                    outs.append(_cpu(out))
                expected[key] = outs
            args = _to_device(_clone(sets["trials"][0]), device)
            ref_profile = profile_call(lambda: ref(*args), device)
        param_bytes = sum(t.numel() * t.element_size() for t in ref.state_dict().values())
    except BaseException as exc:  # noqa: BLE001 - the task itself is broken
        return {"status": "runtime_error", "flags": ["reference_error"],
                "message": "the reference program failed: " + _error_text(exc, job["message_limit"])}
    ref_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    torch.save(sets, priv / "inputs.pt")
    child_job = {k: job[k] for k in ("device", "sizes", "weight_seed", "message_limit", "time", "timing",
                                     "guards") if k in job}
    child_job.update(candidate=str(cdir / "candidate.py"), task=job["task"], inputs=str(priv / "inputs.pt"),
                     outputs=str(priv / "outputs.pt"), facts=str(priv / "facts.json"),
                     skip_timing_reason=job.get("skip_timing_reason"), import_is_build=job.get("import_is_build"),
                     copy_bytes=inp.nbytes(sets["timing"][0]) + inp.nbytes(expected["timing"][0]) + param_bytes)
    (priv / "job.json").write_text(json.dumps(child_job))
    os.write(go, b"1")
    _, status = os.waitpid(pid, 0)
    facts_path = priv / "facts.json"
    if not facts_path.exists():
        return {"status": "runtime_error", "compiled": True, "message": _child_failure(status, cdir / "stderr.txt")}
    facts = json.loads(facts_path.read_text())
    try:
        got = torch.load(priv / "outputs.pt", weights_only=True) if (priv / "outputs.pt").exists() else {}
    except Exception as exc:  # noqa: BLE001 - a file the candidate could have written
        got, facts["status"], facts["message"] = {}, "runtime_error", f"unreadable outputs: {exc}"
    for p in priv.iterdir():
        p.unlink()
    exchange_s = time.perf_counter() - t0
    phases = dict(facts.get("phases") or {})
    phases.update(guard_ref_s=ref_s, guard_exchange_s=max(0.0, exchange_s - sum(phases.values())))
    if facts["status"] != "ran":
        return {"status": facts["status"], "compiled": facts["status"] != "compile_error",
                "message": facts.get("message", ""), "phases": phases}
    return _judge(job, level, device, cand_code, facts, got, expected, sets, findings, phases,
                  ref_mutates=ref_mutates, ref_aliases=ref_aliases, ref_profile=ref_profile, param_bytes=param_bytes)


def _cpu(out):
    if isinstance(out, torch.Tensor):
        return out.detach().cpu().contiguous()
    if isinstance(out, (list, tuple)):
        return [_cpu(o) for o in out]
    return out


def _rule(job: dict, ref_out) -> CheckRule:
    """Tolerances relative to the reference output's scale: an atol of 1e-4
    lets zeros pass for an output whose values are all below 1e-4."""
    scale = max((float(t.abs().max()) for _, t in flatten_outputs(ref_out)
                 if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel()
                 and bool(torch.isfinite(t).all())), default=1.0)
    tol = {k: (v[0] * min(1.0, scale), v[1]) for k, v in job["tolerances"].items()}
    return CheckRule(mode=job["check"], tolerances=tol, norm_tol=job["norm_tol"])


def _judge(job, level, device, cand_code, facts, got, expected, sets, findings, phases, *, ref_mutates, ref_aliases,
           ref_profile, param_bytes) -> dict:
    strict = level == "strict"
    result = {"status": "ok", "compiled": True, "correct": True, "flags": [], "phases": phases}
    worst_abs = worst_rel = 0.0
    notes = []
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
                if key == "checks" and not (job["time"] and not job.get("skip_timing_reason")):
                    continue
                if facts.get("lazy_output"):
                    break
                result.update(status="incorrect", correct=False, message=f"no output for {label} {i + 1}")
                break
            if key == "checks" and result["status"] != "ok":
                break  # already wrong on plain trials: a failed timed call says nothing more
            runs = runs if key != "checks" else [runs]
            rule = _rule(job, exp)
            for r, out in enumerate(runs):
                cmp = compare(exp, out, rule)
                worst_abs, worst_rel = max(worst_abs, cmp.max_abs_err), max(worst_rel, cmp.max_rel_err)
                leaves = [(a, b) for (_, a), (_, b) in zip(flatten_outputs(exp), flatten_outputs(out))
                          if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape]
                if any(_constant(b) and not _constant(a) for a, b in leaves):
                    findings.add("constant_output", f"{label} {i + 1}: every element of the output is the same value")
                if not cmp.correct:
                    if r == 1:
                        findings.add("nondeterministic", f"{label} {i + 1}: the first call passed, the second did not ({cmp.message})")
                    elif flag:
                        findings.add(flag, f"{label} {i + 1}: {cmp.message}")
                    elif result["status"] == "ok":
                        if any(compare(other, out, rule).correct for other in expected[key][:i]):
                            findings.add("cached_output", f"{label} {i + 1}: the output is the answer to "
                                                          "an earlier input set")
                        result.update(status="incorrect", correct=False,
                                      message=f"{label} {i + 1}/{len(expected[key])} "
                                              f"({inp.distribution_for(i)} inputs): {cmp.message}")
                    break
        for exp in expected.get(key, [])[:1]:
            for _, t in flatten_outputs(exp):
                if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel() > 1 and key == "trials":
                    if float(t.abs().max()) < 1e-3 or float(t.double().std()) < 1e-6:
                        notes.append("warning: weak task (the reference output is tiny or near-constant; "
                                     "tolerances are scaled to it)")
    result.update(max_abs_err=worst_abs, max_rel_err=worst_rel)

    # facts from the candidate's process
    if facts["input_mutation"] and not ref_mutates:
        findings.add("input_mutation", f"inputs changed by the call ({', '.join(facts['input_mutation'][:3])})")
    if facts["output_aliases_input"] and not ref_aliases:
        findings.add("output_aliases_input", "an output is a view of an input")
    for key in ("background_thread", "deferred_work"):
        if facts.get(key):
            findings.add(key, facts[key])
    if facts.get("rebound"):
        findings.add("harness_patched", "rebound in the candidate's process: " + ", ".join(facts["rebound"][:5]))

    prof = facts.get("profile") or {}
    language = job.get("language", "torch")
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
        fp32_task = not ref_profile["low_precision"] and all(
            t.dtype in (torch.float32, torch.float64) for _, t in flatten_outputs(expected["trials"][0])
            if isinstance(t, torch.Tensor) and t.is_floating_point())
        if fp32_task and prof["low_precision"]:
            findings.add("precision_downgrade", f"ops ran on {', '.join(prof['low_precision'])} data in an fp32 task")
        if fp32_task and strict and device.type == "cuda":
            lowk = [k for k in prof.get("kernels", {}) if any(s in k.lower() for s in ("tf32", "bf16", "f16", "h884", "h1688", "hmma"))]
            refk = [k for k in ref_profile.get("kernels", {}) if any(s in k.lower() for s in ("tf32", "bf16", "f16"))]
            if lowk and not refk:
                findings.add("precision_downgrade", f"kernel {lowk[0]!r} computes in reduced precision")

    timing = facts.get("timing")
    if timing and result["status"] == "ok":
        r, c = timing["reference"], timing["candidate"]
        result.update(ref_runtime_ms=r["median_ms"], runtime_ms=c["median_ms"],
                      speedup=r["median_ms"] / c["median_ms"] if c["median_ms"] > 0 else None, timing=timing)
        if device.type == "cuda" and c.get("wall_median_ms") is not None:
            hidden = (c["wall_median_ms"] - c["median_ms"]) - (r["wall_median_ms"] - r["median_ms"])
            if hidden > max(0.05, c["median_ms"]):
                findings.add("unsynced_work", f"each call took {c['wall_median_ms']:.3f} ms of wall time but "
                                              f"{c['median_ms']:.3f} ms on the timed stream")
        nbytes = inp.nbytes(sets["timing"][0]) + inp.nbytes(expected["timing"][0]) + param_bytes
        if device.type == "cuda":
            bound, how = fastest_possible_ms(nbytes, device)
        elif "copy" in timing:
            copy_ms = timing["copy"]["median_ms"]
            bound, how = copy_ms / CPU_MARGIN, f"a copy_ of {nbytes} bytes ({copy_ms:.4f} ms, same loop) / {CPU_MARGIN:g}"
        else:
            bound, how = None, ""
        phases["guard_min_ms"] = bound or 0.0
        if bound is not None and c["median_ms"] < bound:
            findings.add("suspicious_speed", f"{c['median_ms']:.5f} ms per call; the task moves at least "
                                             f"{how} = {bound:.5f} ms")
    elif job.get("skip_timing_reason"):
        result["flags"].append("timing_skipped")
        notes.append(job["skip_timing_reason"])
    result["message"] = "; ".join(([result["message"]] if result.get("message") else []) + notes)
    return decide(findings, result, job.get("fallback", "reject"))
