"""The candidate's process in a guarded run (``python -m kernelmill.verify.guards.candidate JOB DEVICE FD``).

Started by the worker before it reads its job (`guards.launch`), in a working
directory that holds only the candidate's code. It never holds anything of the
reference: not its module, its model, its source, its outputs, nor the input
seed. It gets the inputs (and the init inputs) in a file it deletes after
reading, builds ``ModelNew`` under the weight seed, runs the checks, then
serves timing rounds on the supervisor's command (`timing.Bench`; the
reference is timed by the supervisor in its own process, alternating round by
round). It reports *what happened* as JSON lines on a pipe and writes the
outputs to a file the supervisor reads after this process has exited.
Everything here is reachable by the candidate, so nothing here decides a verdict.
"""

from __future__ import annotations

import json
import math
import os
import random
import sys
import threading
import time

import torch

from ..measure.correctness import flatten_outputs
from ..measure.environment import backend_flags, modes_left_on, settle_process
from ..measure.kernel_time import own_kernel_names
from ..measure.smem_poison import SharedMemoryPoison
from ..measure.timing import Bench, snapshot, timing_numerics
from ..guards import audit_hook, cudart, trace
from ..measure.inputs import InputPool, tensors_in
from . import cuda_ipc
from ..measure.gpulock import wait_for_timing, warm_section
from .job import EARLY_FILE, CandidateJob
from .channel import WARM_LINE, Reporter
from .loading import (clone, die_with_parent, error_text, fast_serialization, load_module, name_process, to_cpu,
                      to_device, watch_builds)


def _write_outputs(job: CandidateJob, outputs: dict) -> None:
    fast_serialization()
    torch.save(outputs, job.outputs + ".tmp")
    os.replace(job.outputs + ".tmp", job.outputs)


def _leaf_report(out, args) -> tuple[str, bool]:
    """(why an output is not a plain dense tensor or '', whether one aliases an input)."""
    from ..measure.correctness import flatten_outputs

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


def _same(a, b) -> bool:
    ta, tb = tensors_in(a), tensors_in(b)
    return len(ta) == len(tb) and all(_equal(x, y) for x, y in zip(ta, tb))


def _equal(x: torch.Tensor, y: torch.Tensor) -> bool:
    """Bitwise the same values, NaN in the same places counting as the same: an honest
    output holding NaN (where the reference has it too) read as "changed after the call
    returned" (deferred_work) before, found by the wide-range trials of issue 42."""
    if torch.equal(x, y):
        return True
    if not (x.is_floating_point() and x.shape == y.shape and x.dtype == y.dtype and x.device == y.device):
        return False
    nx, ny = torch.isnan(x), torch.isnan(y)
    return bool(nx.any()) and torch.equal(nx, ny) and torch.equal(x.masked_fill(nx, 0), y.masked_fill(ny, 0))


def _poison(out, owned: set[int]) -> None:
    """Item 21: after its answer is copied, an output the candidate returned is
    filled with NaN, so a later call whose kernel never ran (a launch that
    failed silently) cannot hand back this answer from a recycled buffer.
    Tensors the module owns (parameters, buffers) are left alone. An output made
    under `torch.inference_mode()` (a candidate's forward may run in it) is filled
    in that mode: outside it PyTorch refuses in-place updates of such a tensor, and
    that refusal read as the candidate's own runtime error (cuda-l1 L3-20, GPU)."""
    for t in tensors_in(out):
        if (type(t) is torch.Tensor and t.is_floating_point() and t.numel()
                and t.untyped_storage().data_ptr() not in owned):
            if t.is_inference():
                with torch.inference_mode():
                    t.fill_(float("nan"))
            else:
                t.fill_(float("nan"))


def _owned(module: torch.nn.Module) -> set[int]:
    return {t.untyped_storage().data_ptr() for t in module.state_dict().values()
            if isinstance(t, torch.Tensor) and t.numel()}


_PROBE: list = []


def _launch_check(facts: dict, where: str) -> None:
    """Item 21: a launch that failed (bad configuration, too much shared memory)
    leaves an error that nothing raises until the next launch checks it. Read
    it through the runtimes we can see and through torch's own launch check
    (a one-element kernel), and clear it either way."""
    err = cudart.last_error()
    if err is None:
        if not _PROBE:
            _PROBE.append(torch.zeros(1, device="cuda"))
        try:
            _PROBE[0].add_(1)  # torch checks the launch: a pending error surfaces here
        except RuntimeError as exc:  # torch.AcceleratorError is a RuntimeError
            err = str(exc).splitlines()[0]
    if err and not facts.get("launch_error"):
        facts["launch_error"] = f"{where}: {err}"


def _run_trials(cand, sets: list, device, facts: dict, key: str, keep=to_cpu, poison=None) -> list:
    """Each set through the candidate twice (`poison`: strict's shared-memory fill before each
    call, measure/smem_poison.py)."""
    owned = _owned(cand)
    saved = []
    for i, cpu_inputs in enumerate(sets):
        inputs = to_device(cpu_inputs, device)
        runs = []
        for run in range(2):  # item 13: every check runs the candidate twice
            facts["stage"] = f"ModelNew forward, {key} {i + 1}, call {run + 1}"
            args = clone(inputs)
            py_before = set(threading.enumerate())
            if poison is not None:  # before the error read: a failed fill is the harness's, not the candidate's
                poison.fill(run)
            cudart.last_error()  # only the candidate's own launches count below
            out = cand(*args)
            if device.type == "cuda":
                torch.cuda.synchronize()  # device-wide, before anything reads the output
                _launch_check(facts, f"{key} {i + 1}")
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
            runs.append((out, snapshot(out)))
        # item 3: a result that keeps changing after return was not done when it returned
        # (reading the first call's output after the second: where the second call made it
        # unreadable, as torch.compile's CUDA graphs do, the error names this step)
        facts["stage"] = f"the harness's reading of {key} {i + 1}'s outputs after both calls (items 3, 13)"
        time.sleep(0.002)
        if device.type == "cuda":
            torch.cuda.synchronize()
        for out, snap in runs:
            if not _same(out, snap):
                facts["deferred_work"] = f"{key} {i + 1}: the output changed after the call returned"
        saved.append([keep(snap) for _, snap in runs])
        facts["stage"] = f"the harness's poisoning of the outputs of {key} {i + 1} (item 21)"
        for out, _ in runs:
            _poison(out, owned)
    if poison is not None:  # "on", or the failure that stopped the fill
        facts["smem_poison"] = poison.state
    return saved


REPEAT_CALLS = 64  # strict: the first trial's inputs this many more times at most ...
REPEAT_BUDGET_S = 1.0  # ... and for this long at most


def _repeat_first_trial(cand, inputs_cpu, device, facts: dict, saved: list, keep) -> None:
    """Strict: a race that shows once in many calls (item 13) escapes two calls a set. The first
    trial's inputs go through the candidate again up to REPEAT_CALLS times (REPEAT_BUDGET_S), and
    the call whose output lies farthest from the first call's joins that trial's runs as a third
    one: the supervisor compares it with the reference like the second (a failure there is
    `nondeterministic`), so an honest kernel whose atomics reorder a sum stays inside the tolerance.
    The distances are taken on the device; only the farthest output is kept."""
    if not saved or not saved[0]:
        return
    first = to_device(saved[0][0], device)
    inputs = to_device(inputs_cpu, device)
    worst, worst_gap = None, -1.0
    t0 = time.perf_counter()
    owned = _owned(cand)
    for n in range(REPEAT_CALLS):
        if n and time.perf_counter() - t0 > REPEAT_BUDGET_S:
            break
        facts["stage"] = f"ModelNew forward, trial 1 repeated, call {n + 3}"
        out = cand(*clone(inputs))
        if device.type == "cuda":
            torch.cuda.synchronize()
        snap = snapshot(out)
        gap = _gap(snap, first)
        if gap > worst_gap:
            worst, worst_gap = snap, gap
        _poison(out, owned)
    facts["repeated_calls"] = n + 1
    saved[0].append(keep(worst))


def _gap(a, b) -> float:
    """The largest elementwise difference between two outputs' leaves on one device (inf where
    they differ in structure, or where a difference is not a number)."""
    la, lb = flatten_outputs(a), flatten_outputs(b)
    if len(la) != len(lb):
        return math.inf
    gap = 0.0
    for (_, x), (_, y) in zip(la, lb):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.shape != y.shape:
                return math.inf
            if x.numel():
                d = float((x.double() - y.double()).abs().max())  # max propagates NaN
                gap = max(gap, math.inf if math.isnan(d) else d)
        elif x != y:
            return math.inf
    return gap


def _timing_bench(cand, data: dict, job: CandidateJob, device, facts: dict, l2_limit: int | None) -> Bench:
    """The candidate's side of the timing: every call sees new data (timing sets
    refilled at a random scale); a call the supervisor names gets a check set."""

    timing_sets = [to_device(s, device) for s in data["timing"]]
    check_sets = [to_device(s, device) for s in data["checks"]]
    # fresh values at a fresh address every call; the scales come from the supervisor
    # with each round (its per-run secret), this process's own draw only as a fallback
    pool = InputPool(timing_sets[0])
    rng = random.Random(int.from_bytes(os.urandom(8), "little"))

    def prep(i: int) -> None:
        pool.prepare(timing_sets[i % len(timing_sets)], rng.uniform(0.5, 1.5))

    def on_check(j: int) -> None:
        pool.prepare(check_sets[j], None, queued=False)

    def before_round() -> None:
        # item 16: persisting L2 lines survive the flush; none may carry over into a round
        if device.type != "cuda":
            return
        limit = cudart.persisting_l2_limit()
        window = cudart.access_policy_window(torch.cuda.current_stream().cuda_stream)
        if limit is not None and l2_limit is not None and limit != l2_limit:
            facts.setdefault("l2_persisting", f"the persisting-L2 limit was changed from {l2_limit} to {limit} bytes")
        elif window is not None:
            facts.setdefault("l2_persisting", f"an access-policy window of {window.num_bytes} bytes is set on the stream")
        else:
            return
        cudart.reset_persisting_l2(l2_limit or 0)

    bench = Bench(lambda: cand(*pool.current), device, job.timing, prepare=prep,
                  on_check=on_check, before_round=before_round)
    bench.pool = pool
    try:  # which kernels are the candidate's own, for the provenance of its timed calls
        bench.own_kernels = own_kernel_names(open(job.candidate, encoding="utf-8").read())
    except OSError:
        pass
    return bench


def _note_modes(facts: dict) -> None:
    """Add the torch modes on now (outside any call) to those seen before (the supervisor
    flags any: environment.modes_left_on)."""
    modes = modes_left_on()
    if modes:
        facts["modes"] = sorted(set(facts.get("modes") or ()) | set(modes))


def _serve_timing(bench: Bench, commands, report: Reporter, device, facts: dict) -> None:
    """Answer the supervisor's timing commands until it says ``end``."""
    facts["stage"] = "timing"
    report.send({"ready": True, "t": time.perf_counter()})  # when, for the supervisor's accounting
    with timing_numerics(bench.config, device):
        for line in commands:
            msg = json.loads(line)
            if msg["cmd"] == "warm":
                report.send({"est_ms": bench.warm(msg["ms"])})
            elif msg["cmd"] == "round":
                check = tuple(msg["check"]) if msg.get("check") else None
                if bench.pool is not None and msg.get("scales"):
                    bench.pool.next_scales([float(x) for x in msg["scales"]])
                _note_modes(facts)  # a mode on for some rounds only is seen too
                cudart.last_error()
                r = bench.round(msg["n"], check, defer=bool(msg.get("defer")))
                if device.type == "cuda":
                    _launch_check(facts, "timed call")
                report.send(r.to_msg())
            elif msg["cmd"] == "close":  # deferred rounds: records to the host, then read them, unlocked
                bench.close_rounds()
                report.send({"closed": True})
                report.send({"rounds": [r.to_msg() for r in bench.finish_rounds()]})
            elif msg["cmd"] == "kernelbench":
                report.send({"kb_ms": bench.kernelbench_round(int(msg["trials"])), "kb_host_ms": bench.kb_host_ms,
                             "kb_state": bench.kb_state})
            elif msg["cmd"] == "end":
                return
    raise EOFError("the supervisor closed the command pipe during timing")


def run_candidate(job: CandidateJob, commands, report: Reporter) -> None:

    facts: dict = {"status": "ran", "stage": "loading", "phases": {}, "input_mutation": [],
                   "output_aliases_input": False}
    outputs: dict = {}
    device = torch.device(job.device)
    protected = trace.protected_callables(sys.modules[__name__])
    l2_limit = cudart.persisting_l2_limit() if device.type == "cuda" else None  # before the candidate runs
    settle_process(device, job.timing)
    t0 = time.perf_counter()
    if job.guards != "off":  # items 28 and 36: what the process does, whatever the text says
        audit_hook.install(facts, (os.path.dirname(job.inputs), os.path.dirname(job.outputs)), job.candidate)
    facts["build_failures"] = watch_builds()  # its own failed builds, caught or not (the note extension_build_failed)
    try:
        trace.record_extension_imports()  # what torch's own build path imports is the candidate's too
        before = set(sys.modules)
        try:
            cand_mod = load_module(job.candidate, "candidate")
            if not isinstance(getattr(cand_mod, "ModelNew", None), type):
                raise ImportError("the candidate defines no class ModelNew")
        except BaseException as exc:  # noqa: BLE001 - the candidate's failure to import
            status = "compile_error" if job.import_is_build else "runtime_error"
            prefix = "" if job.import_is_build else "import failed at run time: "
            facts.update(status=status, message=prefix + error_text(exc, job.message_limit))
            return _finish(job, outputs, facts, report, commands)
        facts["phases"]["build_s" if job.import_is_build else "load_s"] = time.perf_counter() - t0
        cudart.runtimes(refresh=True)  # the candidate's extensions may have brought their own
        t1 = time.perf_counter()
        if job.exchange == "cuda_ipc":  # copied out of the supervisor's allocation, which is then unmapped
            desc = json.loads(open(job.inputs, encoding="utf-8").read())
            os.unlink(job.inputs)
            data = cuda_ipc.receive(desc, device)
        else:
            data = torch.load(job.inputs, weights_only=True, mmap=True)  # pages are read as the sets are used
            os.unlink(job.inputs)  # nothing of the harness is left to read
        keep = (lambda out: out) if job.exchange == "cuda_ipc" else to_cpu  # outputs stay on the GPU
        facts["phases"]["inputs_s"] = time.perf_counter() - t1
        t0 = time.perf_counter()
        facts["stage"] = "constructing ModelNew"
        # the candidate's own state is never overwritten: built under the weight
        # seed, in the mode a fresh module is in (docs/SEMANTICS.md)
        torch.manual_seed(job.weight_seed)
        cand = cand_mod.ModelNew(*data["init"]).to(device)
        torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
        trace.warm_thread_pools(device)
        poison = None
        if job.guards == "strict" and device.type == "cuda":  # uninitialised shared memory reads as garbage
            poison = SharedMemoryPoison(device)
            facts["smem_poison"] = poison.state
        with torch.no_grad():
            outputs["trials"] = _run_trials(cand, data["trials"], device, facts, "trial", keep, poison)
            if facts.get("lazy_output"):
                return _finish(job, outputs, facts, report, commands)
            if job.guards == "strict" and data["trials"]:
                _repeat_first_trial(cand, data["trials"][0], device, facts, outputs["trials"], keep)
            try:
                outputs["variants"] = _run_trials(cand, data["variants"], device, facts, "shape variant", keep,
                                                  poison)
            except Exception as exc:  # noqa: BLE001 - failing on another shape is a wrong answer
                facts["variant_error"] = f"{facts['stage']}: " + error_text(exc, 600)
            tracer = trace.OwnCodeTracer(trace.extension_modules(before), trace.jit_functions(cand_mod))
            args = to_device(clone(data["trials"][0]), device)
            facts["phases"]["check_s"] = time.perf_counter() - t0
            timed = job.timed
            if timed and job.early_check and outputs["trials"] and outputs["trials"][0]:
                # the supervisor compares the first output before the timing: none for one already wrong
                timed = _early_check(job, outputs["trials"][0][0], device, report, commands)

            def profiled() -> None:
                facts["stage"] = "profiled ModelNew forward"
                t2 = time.perf_counter()
                facts["profile"] = trace.profile_call(lambda: cand(*args), device, tracer)
                facts["phases"]["profile_s"] = time.perf_counter() - t2

            # on a GPU the profiled call comes after the timing: the timing's KernelBench-
            # convention rounds must run before this process's first CUDA profiler session
            # (it leaves CUPTI's callbacks behind: timing.compare)
            late_profile = timed and device.type == "cuda"
            if not late_profile:
                profiled()
            facts["backend_flags"] = backend_flags()
            _note_modes(facts)
            if timed:
                t0 = time.perf_counter()
                if device.type == "cuda":  # the profiler's host start-up, left out of the warm-up (_warm_up)
                    trace.start_profiler()
                bench = _timing_bench(cand, data, job, device, facts, l2_limit)
                _serve_timing(bench, commands, report, device, facts)
                facts["post_loop_changed"] = [f"timed call with check set {j + 1}" for j in bench.changed_after_return()]
                outputs["checks"] = [keep(bench.kept.get(j)) for j in range(len(data["checks"]))]
                facts["phases"]["time_s"] = time.perf_counter() - t0
                if late_profile:
                    profiled()
                facts["backend_flags"] = backend_flags()
                _note_modes(facts)
            args = None
        facts["rebound"] = trace.rebound(protected, sys.modules[__name__])
    except BaseException as exc:  # noqa: BLE001 - the candidate failed while running
        facts.update(status="runtime_error", message=f"{facts['stage']}: " + error_text(exc, job.message_limit))
        facts["rebound"] = trace.rebound(protected, sys.modules[__name__])
    _finish(job, outputs, facts, report, commands)


RELEASE_WAIT_S = 120.0  # how long shared outputs are kept for the supervisor to copy


def _early_check(job: CandidateJob, out, device: torch.device, report: Reporter, commands) -> bool:
    """Share the first trial's first output with the supervisor before the timing (through CUDA
    IPC where the run exchanges that way, else a file beside the outputs), with the process's
    backend flags, and return its word: whether to be timed. The supervisor keeps its copy for
    the verdict (supervisor._early_check)."""
    shared, msg = None, {}
    try:
        if job.exchange == "cuda_ipc" and tensors_in(out):
            shared = cuda_ipc.export({"out": out}, device)
            msg = {"ipc": shared.description}
        else:
            torch.save({"out": to_cpu(out)}, os.path.join(os.path.dirname(job.outputs), EARLY_FILE))
            msg = {"file": EARLY_FILE}
    except Exception as exc:  # noqa: BLE001 - then the supervisor times it, as without the check
        msg = {"error": error_text(exc, 300)}
    msg["backend_flags"] = backend_flags()  # as its checks ran: TF32 switched on, say (supervisor)
    report.send({"early": msg})
    try:
        line = commands.readline()
    finally:
        if shared is not None:
            shared.free()
    if not line:
        raise EOFError("the supervisor closed the command pipe before the timing")
    return bool(json.loads(line).get("time", True))


def _finish(job: CandidateJob, outputs: dict, facts: dict, report: Reporter, commands=None) -> None:
    """Write (or share) the outputs and send the final facts, with the compiles this
    process did (the build phase should have left none: verify/build/lazy_builds.py)."""
    if job.build_cache:
        from ..build.inline_build import builder_log

        log = builder_log()
        if log.get("compiles"):
            facts["phases"]["run_compiles"] = log["compiles"]
            facts["phases"]["run_compile_s"] = log.get("compile_s", 0.0)
    shared = None
    if job.exchange == "cuda_ipc" and tensors_in(outputs):
        try:
            shared = cuda_ipc.export(outputs, torch.device(job.device))
            facts["ipc_outputs"] = shared.description
        except Exception as exc:  # noqa: BLE001 - then through the file, as without IPC
            facts["ipc_error"] = str(exc)[:300]
    if shared is None:
        try:
            _write_outputs(job, to_cpu(outputs) if job.exchange == "cuda_ipc" else outputs)
        except Exception as exc:  # noqa: BLE001 - the facts still go out; the outputs are missing
            facts["outputs_error"] = error_text(exc, 300)
    report.send({"facts": facts})
    if shared is not None and commands is not None:
        _wait_for_release(commands)
        shared.free()


def _wait_for_release(commands) -> None:
    """Keep the shared outputs mapped until the supervisor says it copied them (or the
    command pipe closes, or RELEASE_WAIT_S pass)."""
    import select

    deadline = time.monotonic() + RELEASE_WAIT_S
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([commands], [], [], left)
        if not ready:
            return
        line = commands.readline()
        if not line or '"released"' in line:
            return


def _serve(job_path: str, cmd_fd: int, report_fd: int, started_with: dict | None = None) -> None:
    """Read the job, take on its environment (`started_with`: what this process had
    before anything of the job, when not the environment now), run the candidate."""
    started_with = dict(os.environ) if started_with is None else started_with
    job = CandidateJob.read(job_path, delete=True)
    if job.env is not None:  # started before its job was known (standby.py, resident.py)
        from ..pools.standby import adopt_env

        adopt_env(job.env, started_with)
    commands = os.fdopen(cmd_fd, "r")
    report = Reporter(report_fd)
    from ..sandbox import apply_rlimits

    apply_rlimits(job.rlimits or {})
    if job.build_cache:
        from ..build.inline_build import defer_builds, install

        install(job.build_cache, merge=job.merge_units, slim=job.slim_units)
        defer_builds(job.defer_builds)
    run_candidate(job, commands, report)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def main_forked(job_path: str, cmd_fd: int, report_fd: int) -> None:
    """Entry of the process the worker forked (torch already imported)."""

    die_with_parent()
    name_process("km candidate")
    drop_ptrace()
    _serve(job_path, cmd_fd, report_fd)


def drop_ptrace() -> None:
    """Give up CAP_SYS_PTRACE (root has it): without it this process cannot read
    the non-dumpable supervisor's memory through /proc/PID/mem or
    process_vm_readv, even as root."""
    import ctypes

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(24, 19, 0, 0, 0)  # PR_CAPBSET_DROP, CAP_SYS_PTRACE (fails harmlessly without CAP_SETPCAP)
        hdr, data = Header(0x20080522, 0), (Data * 2)()  # _LINUX_CAPABILITY_VERSION_3
        if libc.capget(ctypes.byref(hdr), data) == 0:
            bit = ~(1 << 19) & 0xFFFFFFFF
            data[0].effective &= bit
            data[0].permitted &= bit
            data[0].inheritable &= bit
            libc.capset(ctypes.byref(hdr), data)
    except (OSError, AttributeError):
        pass


def _warm_up(device: torch.device, cmd_fd: int = 0) -> None:
    """What every candidate needs, done while the supervisor is still busy with
    the reference: the CUDA context and the profiler's start-up."""
    import torch.utils.cpp_extension  # noqa: F401 - what install() (inline_build) needs: 0.1-0.4 s

    from ..build import inline_build  # noqa: F401
    from ..measure import correctness, timing  # noqa: F401
    from . import loading  # noqa: F401 - imported now, not on the clock

    from ...languages import warm_imports

    warm_imports()  # a language's package imported ahead (Triton's: 0.15 s of a run, issue 14)

    # a spare's: after the running candidate's timing (gpulock.wait_for_timing; the command pipe says when its job came)
    wait_for_timing(str(device), cmd_fd)
    # its GPU steps never while timed; behind a waiting timing for 2 s at most (its supervisor may wait for it)
    # kineto is started before the timing instead (run_candidate): until then the driver can lock
    # this process's CUDA while its supervisor lends the GPU to another run's timing (gpu_lend.py)
    trace.warm_cuda(device, lambda part: warm_section(str(device), part, "cand", behind_timing_s=2.0), checks=True,
                    profiler=False)


def main_forked_cuda(job_path: str, device: str, cmd_fd: int, report_fd: int) -> None:
    """Entry of a candidate's process forked on CUDA by a worker the zygote forked
    (launch.prestart: torch imported, CUDA never initialised above it): what `main`
    does, with the command pipe on `cmd_fd` instead of stdin."""
    die_with_parent()
    name_process("km candidate")
    drop_ptrace()
    _await_and_serve(job_path, device, cmd_fd, report_fd)


def _await_and_serve(job_path: str, device: str, cmd_fd: int, report_fd: int) -> None:
    started_with = dict(os.environ)
    try:
        _warm_up(torch.device(device), cmd_fd)
    except Exception as exc:  # noqa: BLE001 - the run below reports the same failure with context
        print(f"warm-up failed: {exc}", file=sys.stderr)
    # warm (or failed): the supervisor, waiting without its share of the GPU lock, may go on
    os.write(report_fd, WARM_LINE + b"\n")
    if os.read(cmd_fd, 1) != b"1":
        os._exit(0)
    _serve(job_path, cmd_fd, report_fd, started_with)


def main() -> None:
    """Entry of the process started fresh on CUDA (``candidate JOB DEVICE REPORT_FD``),
    before the job exists: it warms up, then waits for b"1" on stdin."""

    die_with_parent()
    name_process("km candidate")
    drop_ptrace()
    job_path, device, report_fd = sys.argv[1], sys.argv[2], int(sys.argv[3])
    _await_and_serve(job_path, device, 0, report_fd)


if __name__ == "__main__":
    main()
