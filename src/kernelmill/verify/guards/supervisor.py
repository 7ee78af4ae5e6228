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
import time
from pathlib import Path

import torch

from ..correctness import flatten_outputs
from . import inputs as inp
from .flags import Findings
from .judge import judge
from .launch import Launched, launch, shm_exchange_dir
from .source import check_source
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


def run_guarded(job: dict) -> dict:
    level = job["guards"]
    device = torch.device(job["device"])
    findings = Findings()
    cand_code = Path(job["candidate"]).read_text(encoding="utf-8")
    launched = job.pop("_launched", None) or launch(job)  # started early by the worker on CUDA
    try:
        return _supervise(job, level, device, findings, cand_code, launched)
    finally:
        launched.close()


def _supervise(job, level, device, findings, cand_code, launched: Launched) -> dict:
    from ..worker import _clone, _error_text, _to_device, load_reference

    cdir, priv = launched.cdir, launched.priv
    for f in check_source(cand_code, level, job.get("language", "torch")):
        findings.add(f.flag, str(f))
    _no_dumping()
    fast_serialization()
    phases: dict[str, float] = {}
    t0 = time.perf_counter()
    if device.type == "cuda":  # fp32 means fp32: no TF32 in the reference either
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    try:
        ref_mod, _, ref = load_reference(job)
        ref = ref.to(device).eval()
        seed = job["input_seed"]
        # drawn on the device (the task's own get_inputs, with factories defaulting
        # to it): a CPU generator takes seconds for a full-size task's input sets
        with torch.device(device):
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
                for drawn in group:
                    dev_inputs = _to_device(drawn, device)
                    args = _clone(dev_inputs)
                    out = ref(*args)
                    ref_mutates |= any(not torch.equal(a, b) for a, b in zip(inp.tensors_in(args), inp.tensors_in(dev_inputs)))
                    ptrs = {t.untyped_storage().data_ptr() for t in inp.tensors_in(args) if t.numel()}
                    ref_aliases |= any(isinstance(o, torch.Tensor) and o.numel() and o.untyped_storage().data_ptr() in ptrs
                                       for _, o in flatten_outputs(out))
                    outs.append(_detached(out))
                expected[key] = outs
            sets = {key: [_cpu(s) for s in group] for key, group in sets.items()}  # what the candidate gets
            phases["guard_inputs_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            # the reference's kernels and ops depend on the task and its shapes only:
            # the runner passes the profile it got from this task's first candidate
            ref_profile, profiled = job.get("ref_profile"), False
            if ref_profile is None:
                args = _to_device(_clone(sets["trials"][0]), device)
                ref_profile, profiled = profile_call(lambda: ref(*args), device), True
            phases["guard_profile_s"] = time.perf_counter() - t0
        param_bytes = sum(t.numel() * t.element_size() for t in ref.state_dict().values())
        ref = args = dev_inputs = out = None  # noqa: F841 - free them before the candidate runs
        # compare where the answers are cheapest to compare: on the device, unless
        # keeping them there would crowd the candidate out of its memory
        expected = _placed(expected, device)
        if device.type == "cuda":
            torch.cuda.empty_cache()  # the candidate's process needs the GPU memory, not us
    except BaseException as exc:  # noqa: BLE001 - the task itself is broken
        return {"status": "runtime_error", "flags": ["reference_error"],
                "message": "the reference program failed: " + _error_text(exc, job["message_limit"])}

    t0 = time.perf_counter()
    xdir = _tensor_dir(priv, inp.nbytes(sets) + 2 * inp.nbytes(expected))
    torch.save(sets, xdir / "inputs.pt")
    child_job = {k: job[k] for k in ("device", "sizes", "weight_seed", "message_limit", "time", "timing",
                                     "guards", "build_cache", "rlimits", "env") if k in job}
    child_job.update(candidate=str(cdir / "candidate.py"), task=job["task"], inputs=str(xdir / "inputs.pt"),
                     outputs=str(xdir / "outputs.pt"), facts=str(priv / "facts.json"),
                     skip_timing_reason=job.get("skip_timing_reason"), import_is_build=job.get("import_is_build"),
                     copy_bytes=inp.nbytes(sets["timing"][0]) + inp.nbytes(expected["timing"][0]) + param_bytes)
    (priv / "job.json").write_text(json.dumps(child_job))
    status = launched.go()
    facts_path = priv / "facts.json"
    try:
        if not facts_path.exists():
            return {"status": "runtime_error", "compiled": True, "message": launched.failure(status)}
        facts = json.loads(facts_path.read_text())
        where = _where(expected)
        try:
            got = (torch.load(xdir / "outputs.pt", weights_only=True, map_location=where)
                   if (xdir / "outputs.pt").exists() else {})
        except Exception as exc:  # noqa: BLE001 - a file the candidate could have written
            got, facts["status"], facts["message"] = {}, "runtime_error", f"unreadable outputs: {exc}"
    finally:  # the folders themselves go with the run (runner: remove_exchange, cleanup)
        for d in {priv, xdir}:
            for p in d.iterdir():
                p.unlink()
    exchange_s = time.perf_counter() - t0
    phases.update(facts.get("phases") or {})
    phases["guard_exchange_s"] = max(0.0, exchange_s - sum(v for k, v in (facts.get("phases") or {}).items()))
    if facts["status"] != "ran":
        return {"status": facts["status"], "compiled": facts["status"] != "compile_error",
                "message": facts.get("message", ""), "phases": phases}
    t0 = time.perf_counter()
    verdict = judge(job, level, device, cand_code, facts, got, expected, sets, findings, phases,
                    ref_mutates=ref_mutates, ref_aliases=ref_aliases, ref_profile=ref_profile, param_bytes=param_bytes)
    phases["guard_judge_s"] = time.perf_counter() - t0
    if profiled:
        verdict["ref_profile"] = ref_profile
    return verdict


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


def fast_serialization() -> None:
    """The exchange files live for one candidate on a local disk: a CRC of
    gigabytes of tensors costs more than it protects (torch >= 2.6 has the knob)."""
    try:
        import torch.utils.serialization as ser

        ser.config.save.compute_crc32 = False
    except (ImportError, AttributeError):
        pass


def _detached(out):
    if isinstance(out, torch.Tensor):
        return out.detach().contiguous()
    if isinstance(out, (list, tuple)):
        return [_detached(o) for o in out]
    return out


def _placed(expected: dict, device: torch.device) -> dict:
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        if sum(inp.nbytes(group) for group in expected.values()) < free // 4:
            return expected
    return {key: [_cpu(o) for o in group] for key, group in expected.items()}


def _where(expected: dict) -> torch.device:
    for group in expected.values():
        for t in inp.tensors_in(group):
            return t.device
    return torch.device("cpu")


def _cpu(out):
    if isinstance(out, torch.Tensor):
        return out.detach().cpu().contiguous()
    if isinstance(out, (list, tuple)):
        return [_cpu(o) for o in out]
    return out
