"""The sandboxed process that runs compiled harnesses (``python -m
kernelmill.ptx.evaluate.worker JOB.json``).

It takes a batch of jobs (reference library, candidate library, config) so
torch and the CUDA context start once per batch, not once per candidate. For
each job it writes a ``start`` event, then the ``cand`` event right before it
first touches the candidate's library (loading it runs the library's static
constructors), then a ``done`` event with the result, one JSON line each,
flushed, to the events file. The runner judges a job that started and never
finished by how this process ended (runner.py), and runs the jobs it never
started in a fresh process.

Per job: the inputs are drawn on the CPU from a generator seeded by (seed,
pair id), so both sides and every run see the same values; outputs start as
NaN (floats; -1 for integers) or zero as the config says. The reference runs
first on fresh device copies, its outputs go to the CPU, then the candidate
runs on fresh copies of the same inputs; every output is compared with the
max normalised absolute error (metrics.py). With ``timing`` in the job,
I/O-correct candidates are then timed against the reference in alternating
rounds with verify's timing utility (CUDA events, L2 flushed before each
call) under the GPU's timing lock; the pipeline asks for timing in a second
pass with a single worker, after the parallel checks, so nothing else of
ours runs on the GPU meanwhile (the lock also keeps other kernelmill runs out).

A hang is ended by SIGALRM (default action: the process dies) after the job's
time limit, whatever the GPU is doing; after a CUDA error the context may be
unusable, so the process writes the result and exits (code 3), and the runner
starts a fresh one for the rest. The job file is deleted once read.

In ``ncu`` mode each job's two kernels are launched once each (no checks, no
timing) under Nsight Compute, and a ``launch`` event records the order, which
is how ncu's rows are matched to jobs (ncu.py).
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import signal
import sys
import time
from typing import Any

EXIT_CONTEXT_LOST = 3


def _seed_of(seed: int, pair_id: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{pair_id}".encode()).digest()[:8], "big") & 0x7FFFFFFFFFFFFFFF


def make_buffers(cfg, seed: int, pair_id: str) -> list:
    """CPU tensors of the pointer parameters (None for scalars), in order."""
    import torch

    from .config import Param

    gen = torch.Generator().manual_seed(_seed_of(seed, pair_id))
    out = []
    for p in cfg.params:
        assert isinstance(p, Param)
        if p.role == "scalar":
            out.append(None)
            continue
        dt = getattr(torch, p.dtype)
        n = p.numel
        kind = p.init_kind()
        if kind == "random":
            if dt.is_floating_point:
                t = torch.randn(n, generator=gen, dtype=torch.float32).to(dt)
            elif dt == torch.bool:
                t = torch.randint(0, 2, (n,), generator=gen).to(torch.bool)
            else:
                lo, hi = (p.range or [0, 8])[:2]
                t = torch.randint(int(lo), int(hi), (n,), generator=gen, dtype=torch.int64).to(dt)
        elif kind == "nan" and dt.is_floating_point:
            t = torch.full((n,), float("nan"), dtype=dt)
        elif kind == "nan":
            t = torch.full((n,), -1 if dt != torch.bool else 0, dtype=dt)
        else:
            t = torch.zeros(n, dtype=dt)
        out.append(t)
    return out


class Lib:
    """One compiled harness."""

    def __init__(self, path: str):
        self.lib = ctypes.CDLL(path, mode=os.RTLD_LOCAL | os.RTLD_NOW)
        self.fn = self.lib.kmh_launch
        self.fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
        self.fn.restype = ctypes.c_int
        self.err = self.lib.kmh_error_string
        self.err.argtypes = [ctypes.c_int]
        self.err.restype = ctypes.c_char_p

    def launcher(self, device_bufs: list, stream: int):
        ptrs = [b.data_ptr() for b in device_bufs if b is not None]
        arr = (ctypes.c_void_p * max(1, len(ptrs)))(*ptrs)
        fn, err = self.fn, self.err

        def launch():
            rc = fn(arr, stream)
            if rc != 0:
                raise LaunchError(f"launch failed: {err(rc).decode(errors='replace')} (cudaError {rc})")
        return launch


class LaunchError(RuntimeError):
    pass


def _to_device(bufs: list, device: str) -> list:
    return [None if b is None else b.to(device, copy=True) for b in bufs]


def run_side(lib: Lib, cpu_bufs: list, cfg, device: str) -> tuple[list, list]:
    """Launch once on fresh device copies; (device buffers, CPU outputs)."""
    import torch

    dev = _to_device(cpu_bufs, device)
    stream = torch.cuda.current_stream().cuda_stream
    lib.launcher(dev, stream)()
    torch.cuda.synchronize()
    outs = [b.cpu() for b, p in zip(dev, cfg.params) if p.is_output]
    return dev, outs


def _emit(fh, obj: dict) -> None:
    fh.write(json.dumps(obj) + "\n")
    fh.flush()
    os.fsync(fh.fileno())


def _is_cuda_error(exc: BaseException) -> bool:
    text = f"{type(exc).__name__}: {exc}"
    return "CUDA" in text or "cuda" in text or "AcceleratorError" in text or isinstance(exc, LaunchError)


def _short(exc: BaseException, limit: int = 2000) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text if len(text) <= limit else text[:limit] + " [...]"


def run_job(job: dict, spec: dict, ref_cache: dict, fh) -> tuple[dict, bool]:
    """(result, context_lost) of one job."""
    import torch

    from ...verify import TIMING_LOCK_TIMEOUT_S, gpu_lock
    from .config import KernelConfig
    from .metrics import normalised_error, reference_unwritten

    device = spec["device"]
    cfg = KernelConfig.from_dict(job["config"])
    t0 = time.perf_counter()
    cpu = make_buffers(cfg, spec["seed"], job["pair_id"])
    key = (job["ref_so"], job["pair_id"])
    with gpu_lock(device, exclusive=False, timeout=TIMING_LOCK_TIMEOUT_S):
        if key not in ref_cache:
            try:
                ref = Lib(job["ref_so"])
                _, ref_out = run_side(ref, cpu, cfg, device)
                left = reference_unwritten(cfg.params, cpu, ref_out,
                                           lambda bufs: run_side(ref, bufs, cfg, device)[1])
                ref_cache[key] = (ref, ref_out, None, left)
            except Exception as exc:  # noqa: BLE001 - the reference failing is a result too
                ref_cache[key] = (None, None, _short(exc), {})
                return {"status": "reference_failed", "message": f"reference: {_short(exc)}"}, _is_cuda_error(exc)
        ref, ref_out, ref_err, ref_left = ref_cache[key]
        if ref_err:
            return {"status": "reference_failed", "message": f"reference: {ref_err}"}, False
        _emit(fh, {"id": job["id"], "event": "cand"})
        try:
            cand = Lib(job["cand_so"])
            cand_dev, cand_out = run_side(cand, cpu, cfg, device)
        except Exception as exc:  # noqa: BLE001 - any failure of the candidate is its result
            return {"status": "runtime_error", "compiled": True, "message": _short(exc)}, _is_cuda_error(exc)
    names = [p.name for p in cfg.params if p.is_output]
    errors = {n: normalised_error(r, c) for n, r, c in zip(names, ref_out, cand_out)}
    worst = max(errors.values()) if errors else 0.0
    io_ok = all(e <= spec["tol"] for e in errors.values())
    res: dict[str, Any] = {"status": "ok" if io_ok else "incorrect", "compiled": True, "ran": True,
                           "io_correct": io_ok, "errors": {k: (v if v != float("inf") else "inf")
                                                           for k, v in errors.items()},
                           "max_norm_err": worst if worst != float("inf") else "inf",
                           "check_s": round(time.perf_counter() - t0, 4)}
    if ref_left:  # output elements the reference's launch never wrote: its configuration is suspect
        res["ref_unwritten"] = ref_left
    if not io_ok:
        bad = [f"{n}: {e:.3g}" for n, e in errors.items() if not e <= spec["tol"]]
        res["message"] = f"max normalised abs error > {spec['tol']:g} in {', '.join(bad)}"
    if io_ok and spec.get("timing"):
        from ...verify import Bench, TimingConfig, compare_speed as compare
        tcfg = TimingConfig(**{"kb_trials": 0, **spec["timing"]})  # the evaluator reports no KernelBench figure
        ref_dev = _to_device(cpu, device)
        stream = torch.cuda.current_stream().cuda_stream
        try:
            with gpu_lock(device, exclusive=True, timeout=TIMING_LOCK_TIMEOUT_S / 12) as held:
                cmp = compare(Bench(ref.launcher(ref_dev, stream), device, tcfg),
                              Bench(cand.launcher(cand_dev, stream), device, tcfg), tcfg)
            res.update(ref_ms=cmp.reference.median_ms, cand_ms=cmp.candidate.median_ms,
                       timing_rounds=cmp.rounds, timing_lock_wait_s=round(held.wait_s, 4))
        except Exception as exc:  # noqa: BLE001 - a failure while timing ends the job, not the batch
            res.update(status="runtime_error", ran=False, io_correct=False,
                       message=f"failed while timing: {_short(exc)}")
            return res, _is_cuda_error(exc)
    return res, False


def ncu_job(job: dict, spec: dict, fh) -> None:
    """Launch the reference's kernel and the candidate's once each, in that order."""
    import torch

    from .config import KernelConfig

    cfg = KernelConfig.from_dict(job["config"])
    cpu = make_buffers(cfg, spec["seed"], job["pair_id"])
    for side, path in (("ref", job["ref_so"]), ("cand", job["cand_so"])):
        lib = Lib(path)
        dev = _to_device(cpu, spec["device"])
        torch.cuda.synchronize()
        _emit(fh, {"id": job["id"], "event": "launch", "side": side, "kernel": cfg.kernel})
        lib.launcher(dev, torch.cuda.current_stream().cuda_stream)()
        torch.cuda.synchronize()


def main(argv: list[str]) -> int:
    from ...verify import die_with_parent
    from ...verify import apply_rlimits

    with open(argv[0], encoding="utf-8") as f:
        spec = json.load(f)
    os.unlink(argv[0])
    apply_rlimits(spec.get("rlimits") or {})
    die_with_parent()
    signal.signal(signal.SIGALRM, signal.SIG_DFL)  # an expired alarm kills the process
    import torch

    torch.cuda.init()
    ref_cache: dict = {}
    with open(spec["events"], "a", encoding="utf-8") as fh:
        for job in spec["jobs"]:
            _emit(fh, {"id": job["id"], "event": "start"})
            ncu = spec.get("mode") == "ncu"  # a profiled launch replays the kernel many times
            signal.alarm(max(1, int(spec["job_timeout"] * (3 if ncu else 1))))
            if ncu:
                try:
                    ncu_job(job, spec, fh)
                    _emit(fh, {"id": job["id"], "event": "done", "status": "profiled"})
                except Exception as exc:  # noqa: BLE001
                    _emit(fh, {"id": job["id"], "event": "done", "status": "runtime_error",
                               "message": _short(exc)})
                    signal.alarm(0)
                    return EXIT_CONTEXT_LOST
                signal.alarm(0)
                continue
            res, lost = run_job(job, spec, ref_cache, fh)
            signal.alarm(0)
            _emit(fh, {"id": job["id"], "event": "done", **res})
            if lost:
                return EXIT_CONTEXT_LOST
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
