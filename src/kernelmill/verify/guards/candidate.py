"""The candidate's process in a guarded run (``python -m kernelmill.verify.guards.candidate JOB``).

Started by the supervisor (`guards.supervisor`), in a working directory that
holds only the candidate's code. It never sees the input seed (inputs arrive
in a file it deletes after reading) nor any reference output of a checked
input: it runs the candidate and reports *what happened*, writing the outputs
to a file the supervisor reads after this process has exited. Everything here
is reachable by the candidate, so nothing here decides a verdict.
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
from pathlib import Path

import torch

from . import trace
from .inputs import refill, tensors_in


def _write_outputs(job: dict, facts: dict, outputs: dict) -> None:
    from .supervisor import fast_serialization

    fast_serialization()
    torch.save(outputs, job["outputs"] + ".tmp")
    os.replace(job["outputs"] + ".tmp", job["outputs"])
    with open(job["facts"] + ".tmp", "w") as fh:
        json.dump(facts, fh, default=float)
    os.replace(job["facts"] + ".tmp", job["facts"])


def _leaf_report(out, args) -> tuple[str, bool]:
    """(why an output is not a plain dense tensor or '', whether one aliases an input)."""
    from ..correctness import flatten_outputs

    arg_ptrs = set()
    for t in tensors_in(args):
        if type(t) is torch.Tensor and t.layout == torch.strided and t.numel():
            arg_ptrs.add(t.untyped_storage().data_ptr())
    aliases = False
    for where, leaf in flatten_outputs(out):
        if isinstance(leaf, torch.Tensor):
            if type(leaf) is not torch.Tensor:
                return f"{where} is a {type(leaf).__module__}.{type(leaf).__name__}, not a torch.Tensor", aliases
            if leaf.layout != torch.strided or leaf.device.type == "meta" or leaf.is_sparse:
                return f"{where} has layout {leaf.layout} on {leaf.device}", aliases
            if leaf.numel() and leaf.untyped_storage().data_ptr() in arg_ptrs:
                aliases = True
        elif not isinstance(leaf, (int, float, bool, str, type(None))):
            return f"{where} is a {type(leaf).__name__}", aliases
    return "", aliases


def _snapshot(out):
    if isinstance(out, torch.Tensor):
        return out.detach().clone()
    if isinstance(out, (list, tuple)):
        return [_snapshot(o) for o in out]
    return out


def _cpu(out):
    if isinstance(out, torch.Tensor):
        return out.detach().cpu().contiguous()
    if isinstance(out, (list, tuple)):
        return [_cpu(o) for o in out]
    return out


def _same(a, b) -> bool:
    ta, tb = tensors_in(a), tensors_in(b)
    return len(ta) == len(tb) and all(torch.equal(x, y) for x, y in zip(ta, tb))


def _run_trials(cand, sets: list, device, facts: dict, key: str) -> list:
    from ..worker import _clone, _to_device

    saved = []
    for i, cpu_inputs in enumerate(sets):
        inputs = _to_device(cpu_inputs, device)
        runs = []
        for run in range(2):  # item 13: every check runs the candidate twice
            facts["stage"] = f"ModelNew forward, {key} {i + 1}, call {run + 1}"
            args = _clone(inputs)
            py_before = set(threading.enumerate())
            out = cand(*args)
            if device.type == "cuda":
                torch.cuda.synchronize()  # device-wide, before anything reads the output
            lazy, aliases = _leaf_report(out, args)
            if lazy:
                facts["lazy_output"] = lazy
                return saved
            facts["output_aliases_input"] |= aliases
            if run == 1:  # a pool started by the first call is not a leftover
                # (native threads are not counted: OpenMP starts a team per calling thread)
                new = [t for t in threading.enumerate() if t not in py_before and t.is_alive()]
                if new:
                    facts["background_thread"] = f"thread {new[0].name!r} alive after the call"
            if not _same(args, inputs) and f"{key} {i + 1}" not in facts["input_mutation"]:
                facts["input_mutation"].append(f"{key} {i + 1}")
            runs.append((out, _snapshot(out)))
        # item 3: a result that keeps changing after return was not done when it returned
        time.sleep(0.002)
        if device.type == "cuda":
            torch.cuda.synchronize()
        for out, snap in runs:
            if not _same(out, snap):
                facts["deferred_work"] = f"{key} {i + 1}: the output changed after the call returned"
        saved.append([_cpu(snap) for _, snap in runs])
    return saved


def _time_candidate(ref, cand, data: dict, job: dict, device, facts: dict) -> list:
    """Interleaved timing where every call sees new data and a few randomly
    chosen candidate calls get the check sets, whose outputs are kept."""
    from ..timing import TimingConfig, time_interleaved
    from ..worker import _clone, _to_device

    timing_sets = [_to_device(s, device) for s in data["timing"]]
    check_sets = [_to_device(s, device) for s in data["checks"]]
    ref_in, cand_in = _clone(timing_sets[0]), _clone(timing_sets[0])
    rng = random.Random(int.from_bytes(os.urandom(8), "little"))
    cfg = TimingConfig(**job["timing"])
    check_reps = sorted(rng.sample(range(cfg.min_reps), min(len(check_sets), cfg.min_reps)))
    which = dict(zip(check_reps, range(len(check_sets))))

    def prep(buffers):
        def go(i: int) -> None:
            refill(buffers, timing_sets[i % len(timing_sets)], rng.uniform(0.5, 1.5))
        return go

    def prep_cand(i: int) -> None:
        if i in which:
            refill(cand_in, check_sets[which[i]], None)
        else:
            prep(cand_in)(i)

    keep = {"candidate": {r: None for r in check_reps}}
    fns = {"reference": lambda: ref(*ref_in), "candidate": lambda: cand(*cand_in)}
    if device.type == "cpu":
        # item 15 on a CPU: a copy_ of the task's bytes, timed in the same loop
        # (same load, same caches) as the two models
        n = max(1, int(job.get("copy_bytes", 0)) // 8)
        src, dst = torch.randn(n), torch.empty(n)
        fns["copy"] = lambda: dst.copy_(src)
    facts["stage"] = "timing"
    timings = time_interleaved(fns, device, cfg, prepare={"reference": prep(ref_in), "candidate": prep_cand},
                               keep=keep)
    facts["timing"] = {k: v.to_dict() for k, v in timings.items()}
    return [_cpu(keep["candidate"][r]) for r in check_reps]


def run_candidate(job: dict) -> None:
    from ..worker import _copy_weights, _error_text, _load_module

    facts: dict = {"status": "ran", "stage": "loading", "phases": {}, "input_mutation": [],
                   "output_aliases_input": False}
    outputs: dict = {}
    device = torch.device(job["device"])
    protected = trace.protected_callables()
    t0 = time.perf_counter()
    try:
        ref_mod = _load_module(job["task"], "reference")
        for key, value in job["sizes"].items():
            setattr(ref_mod, key, value)
        before = set(sys.modules)
        try:
            cand_mod = _load_module(job["candidate"], "candidate")
            if not isinstance(getattr(cand_mod, "ModelNew", None), type):
                raise ImportError("the candidate defines no class ModelNew")
        except BaseException as exc:  # noqa: BLE001 - the candidate's failure to import
            status = "compile_error" if job.get("import_is_build") else "runtime_error"
            prefix = "" if job.get("import_is_build") else "import failed at run time: "
            facts.update(status=status, message=prefix + _error_text(exc, job["message_limit"]))
            return _write_outputs(job, facts, outputs)
        facts["phases"]["build_s" if job.get("import_is_build") else "load_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        data = torch.load(job["inputs"], weights_only=True, mmap=True)  # pages are read as the sets are used
        os.unlink(job["inputs"])  # nothing of the harness is left to read
        facts["phases"]["inputs_s"] = time.perf_counter() - t1
        if device.type == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
        t0 = time.perf_counter()
        facts["stage"] = "constructing ModelNew"
        torch.manual_seed(job["weight_seed"])
        init_inputs = ref_mod.get_init_inputs() if hasattr(ref_mod, "get_init_inputs") else []
        torch.manual_seed(job["weight_seed"])
        ref = ref_mod.Model(*init_inputs)
        torch.manual_seed(job["weight_seed"])
        cand = cand_mod.ModelNew(*init_inputs)
        _copy_weights(ref, cand)
        ref, cand = ref.to(device).eval(), cand.to(device).eval()
        torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
        trace.warm_thread_pools(device)
        with torch.no_grad():
            outputs["trials"] = _run_trials(cand, data["trials"], device, facts, "trial")
            if facts.get("lazy_output"):
                return _write_outputs(job, facts, outputs)
            try:
                outputs["variants"] = _run_trials(cand, data["variants"], device, facts, "shape variant")
            except Exception as exc:  # noqa: BLE001 - failing on another shape is a wrong answer
                facts["variant_error"] = f"{facts['stage']}: " + _error_text(exc, 600)
            facts["stage"] = "profiled ModelNew forward"
            from ..worker import _clone, _to_device

            tracer = trace.OwnCodeTracer(trace.extension_modules(before), trace.jit_functions(cand_mod))
            args = _to_device(_clone(data["trials"][0]), device)
            t2 = time.perf_counter()
            facts["profile"] = trace.profile_call(lambda: cand(*args), device, tracer)
            facts["phases"]["profile_s"] = time.perf_counter() - t2
            facts["phases"]["check_s"] = t2 - t0
            if job["time"] and not job.get("skip_timing_reason"):
                t0 = time.perf_counter()
                outputs["checks"] = _time_candidate(ref, cand, data, job, device, facts)
                facts["phases"]["time_s"] = time.perf_counter() - t0
        facts["rebound"] = trace.rebound(protected)
    except BaseException as exc:  # noqa: BLE001 - the candidate failed while running
        facts.update(status="runtime_error", message=f"{facts['stage']}: " + _error_text(exc, job["message_limit"]))
        facts["rebound"] = trace.rebound(protected)
    _write_outputs(job, facts, outputs)


def main_forked(job_path: str) -> None:
    """Entry of the process the supervisor forked (torch already imported)."""
    from ..worker import _die_with_parent

    _die_with_parent()
    job = json.loads(Path(job_path).read_text())
    os.unlink(job_path)
    run_candidate(job)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _warm_up(device: torch.device) -> None:
    """What every candidate needs, done while the supervisor is still busy with
    the reference: the CUDA context and the profiler's start-up."""
    from .. import correctness, timing, worker  # noqa: F401 - imported now, not on the clock

    trace.warm_cuda(device)


def main() -> None:
    """Entry of the process the supervisor starts on CUDA (``candidate JOB DEVICE``),
    before the inputs exist: it warms up, then waits for b"1" on stdin."""
    from ..sandbox import apply_rlimits
    from ..worker import _die_with_parent

    _die_with_parent()
    job_path = sys.argv[1]
    started_with = dict(os.environ)
    try:
        _warm_up(torch.device(sys.argv[2] if len(sys.argv) > 2 else "cpu"))
    except Exception as exc:  # noqa: BLE001 - the run below reports the same failure with context
        print(f"warm-up failed: {exc}", file=sys.stderr)
    if os.read(0, 1) != b"1":
        os._exit(0)
    job = json.loads(Path(job_path).read_text())
    os.unlink(job_path)
    apply_rlimits(job.get("rlimits") or {})
    if "env" in job:  # started before its job was known (verify/standby.py)
        from ..standby import adopt_env

        adopt_env(job["env"], started_with)
    if job.get("build_cache"):
        from ..inline_build import install

        install(job["build_cache"])
    run_candidate(job)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
