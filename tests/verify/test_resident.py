"""Resident supervisors (verify/pools/resident.py): one run worker takes guarded job
after job; every candidate still runs in a fresh process of its own, forked by a
launcher that never saw a task, and nothing of one job reaches the next."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from kernelmill.records import Task
from kernelmill.verify import verify_samples
from kernelmill.verify.runner import Verifier

from verify_support import RELU_TASK, candidate, fast_config, reporting_candidate, sample

sys.path.insert(0, str(Path(__file__).parents[1] / "guards"))


_reporting = reporting_candidate


def _config(tmp_path, **kw):
    return fast_config(tmp_path, guards="standard", resident="on", fork_workers=False, **kw)


def test_one_resident_supervises_fresh_candidate_processes(tmp_path):
    log = tmp_path / "pids.jsonl"
    samples = [sample(f"s{i}", _reporting(log) + f"# {i}\n") for i in range(4)]
    verdicts = verify_samples([RELU_TASK], samples, _config(tmp_path))
    assert [v.status for v in verdicts] == ["ok"] * 4, [v.message for v in verdicts]
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert len({s["pid"] for s in seen}) == 4  # no process ran two candidates
    assert len({s["ppid"] for s in seen}) == 1  # one supervisor for all four: its child each time
    assert sorted(v.phases["resident_jobs"] for v in verdicts) == [1, 2, 3, 4]
    # every candidate's process had been started ahead, for the folder its job came in
    assert not any(v.phases.get("resident_cand_fresh") for v in verdicts)
    for s in seen:  # the job's own folder and environment, not what the resident started with
        assert s["home"] == s["tmp"] and Path(s["home"]).name.startswith("job-"), s
        assert s["cwd"] == str(Path(s["home"]) / "candidate")
    assert len({s["home"] for s in seen}) == 4
    assert not list((tmp_path / "cache" / "work").iterdir())  # resident and job folders removed


# a task whose module changes process-wide settings when it is loaded (trusted code, but a
# fresh process per job never carried them to the next task)
SETTINGS_TASK = Task("level1/2_ReLUSettings", RELU_TASK.code + textwrap.dedent("""
    torch.backends.cudnn.benchmark = True
    torch.set_float32_matmul_precision("medium")
"""), name="ReLUSettings", level=1, op_type="single", sizes={"small": {"n": 64}})


def test_a_reference_settings_end_with_its_job(tmp_path):
    verifier = Verifier(_config(tmp_path), None)
    try:
        (first,) = verify_samples([SETTINGS_TASK], [sample("a", candidate("return x.clamp_min(0)"),
                                                           task_id=SETTINGS_TASK.task_id)], verifier=verifier)
        later = verify_samples([RELU_TASK], [sample(f"b{i}", candidate("return x.clamp_min(0)") + f"# {i}\n")
                                             for i in range(2)], verifier=verifier)
    finally:
        verifier.close()
    assert first.status == "ok" and all(v.status == "ok" for v in later), [v.message for v in [first, *later]]
    ref = first.measurement["flags"]["reference"]
    assert ref["cudnn_benchmark"] is True and ref["float32_matmul_precision"] == "medium"  # it did set them
    for v in later:  # the same resident, its settings as before the first job
        assert v.phases["resident_jobs"] >= 2
        ref = v.measurement["flags"]["reference"]
        assert ref["cudnn_benchmark"] is False and ref["float32_matmul_precision"] == "highest", ref


HONEST_SCALED = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class ModelNew(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.scale = nn.Parameter(torch.rand(d) + 0.5)

        def forward(self, x):
            return torch.relu(x) * self.scale
""")


def test_a_hunter_after_other_jobs_finds_no_reference(tmp_path):
    """The candidate's process of a resident's later job was forked from the launcher,
    which never held a task: the reference hunter (sys.modules, gc, frames, files, /proc,
    the parent's memory) finds nothing, as in a job of its own."""
    from reference_hunters import TASK, TORCH_HUNTER

    verifier = Verifier(_config(tmp_path, time=False), None)
    try:
        (honest,) = verify_samples([TASK], [sample("plain", HONEST_SCALED, task_id=TASK.task_id)], verifier=verifier)
        (hunter,) = verify_samples([TASK], [sample("hunt", TORCH_HUNTER, task_id=TASK.task_id)], verifier=verifier)
    finally:
        verifier.close()
    assert honest.status == "ok", honest.message[:500]
    assert hunter.phases["resident_jobs"] == 2
    # its answer is wrong, or its search was refused (the other processes' files: shared_answers;
    # the threads' frames: harness_introspection), and it found nothing by the other ways
    assert hunter.status == "incorrect" or (
        hunter.status == "rejected" and set(hunter.flags) & {"shared_answers", "harness_introspection"}
        and set(hunter.flags) <= {"shared_answers", "harness_introspection", "constant_output"}), \
        (hunter.status, hunter.flags, hunter.message[:500])


def test_a_killed_or_stuck_resident_is_replaced(tmp_path):
    """A candidate that kills its supervisor, and one that outlives the deadline (its
    group killed, the resident with it): each gets its verdict, the next jobs a new resident."""
    # the deadline covers a new resident's warm-up before it reads its job (one that has not
    # read it by then hands the job to a fresh process, runner._phase): 6 s was too short
    # for a cold start on a loaded 2-core CI machine, and ok3 came back without resident marks
    verifier = Verifier(_config(tmp_path, run_timeout=15), None)
    # through libc: os.kill of the parent is refused by the audit hook (harness_tampering,
    # tests/guards/test_runtime_hooks.py), a kill the hook does not see must still be survived
    killer = candidate("ctypes.CDLL(None).kill(os.getppid(), signal.SIGKILL)\nreturn x",
                       imports="import ctypes, os, signal")
    sleeper = candidate("time.sleep(120)\nreturn x", imports="import time")
    try:
        ok1 = verify_samples([RELU_TASK], [sample("ok1", candidate("return x.clamp_min(0)"))], verifier=verifier)[0]
        killed = verify_samples([RELU_TASK], [sample("killer", killer)], verifier=verifier)[0]
        ok2 = verify_samples([RELU_TASK], [sample("ok2", candidate("return x.clamp_min(0) # 2"))], verifier=verifier)[0]
        stuck = verify_samples([RELU_TASK], [sample("sleeper", sleeper)], verifier=verifier)[0]
        ok3 = verify_samples([RELU_TASK], [sample("ok3", candidate("return x.clamp_min(0) # 3"))], verifier=verifier)[0]
        started = verifier.standby.started
    finally:
        verifier.close()
    assert killed.status == "runtime_error", (killed.status, killed.message[:500])
    assert stuck.status == "timeout", (stuck.status, stuck.message[:500])
    for v in (ok1, ok2, ok3):
        assert v.status == "ok", v.message[:500]
    assert ok1.phases["resident_jobs"] == 1 and ok2.phases["resident_jobs"] == 1 and ok3.phases["resident_jobs"] == 1
    assert started == 3
    assert not list((tmp_path / "cache" / "work").iterdir())


def test_a_candidate_that_kills_its_siblings_costs_the_next_jobs_nothing(tmp_path):
    """The resident's other children (its launcher, the processes warming up for later
    jobs) share the candidate's user: one that kills them all gets its own verdict, and
    the later jobs get processes of their own all the same (started anew)."""
    killer = candidate(
        "me, parent = os.getpid(), os.getppid()\n"
        "for pid in [int(p) for p in os.listdir('/proc') if p.isdigit()]:\n"
        "    try:\n"
        "        with open(f'/proc/{pid}/stat') as fh:\n"
        "            ppid = int(fh.read().rsplit(')', 1)[1].split()[1])\n"
        "        if ppid == parent and pid != me:\n"
        "            os.kill(pid, signal.SIGKILL)\n"
        "    except (OSError, ValueError):\n"
        "        pass\n"
        "return x.clamp_min(0)", imports="import os, signal")
    log = tmp_path / "pids.jsonl"
    verifier = Verifier(_config(tmp_path), None)
    try:
        (first,) = verify_samples([RELU_TASK], [sample("killer", killer)], verifier=verifier)
        later = verify_samples([RELU_TASK], [sample(f"s{i}", _reporting(log) + f"# {i}\n") for i in range(3)],
                               verifier=verifier)
    finally:
        verifier.close()
    assert first.phases.get("resident_jobs") == 1  # it ran (its /proc reading is flagged: harness_introspection)
    assert [v.status for v in later] == ["ok"] * 3, [v.message[:500] for v in later]
    assert sorted(v.phases["resident_jobs"] for v in later) == [2, 3, 4]  # the same resident
    assert all(v.phases.get("resident_cand_fresh") for v in later)  # their processes were started anew
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert len({s["pid"] for s in seen}) == 3 and len({s["ppid"] for s in seen}) == 1


_TRITON_OOB = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl

    @triton.jit
    def _far(ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(ptr + offs + (1 << 40), tl.zeros([BLOCK], tl.float32), mask=offs < n)

    class ModelNew(nn.Module):
        def __init__(self, *args):
            super().__init__()

        def forward(self, x):
            out = torch.relu(x)
            _far[(triton.cdiv(out.numel(), 1024),)](out, out.numel(), BLOCK=1024)
            return out
""")


@pytest.mark.gpu
def test_gpu_resident_outlives_a_candidate_that_faults(tmp_path):
    """On a GPU: the candidates' processes open their own contexts (forked by a launcher
    that never touched CUDA), and an illegal address in one candidate's context ends
    that candidate only: the resident's own context times the next ones."""
    log = tmp_path / "pids.jsonl"
    verifier = Verifier(fast_config(tmp_path, device="cuda", guards="standard", resident="auto", runs_per_gpu=1,
                                    run_timeout=120), None)
    try:
        assert verifier.uses_residents()
        first = verify_samples([RELU_TASK], [sample(f"a{i}", _reporting(log) + f"# {i}\n") for i in range(3)],
                               verifier=verifier)
        (bad,) = verify_samples([RELU_TASK], [sample("oob", _TRITON_OOB, language="triton")], verifier=verifier)
        after = verify_samples([RELU_TASK], [sample(f"b{i}", _reporting(log) + f"# b{i}\n") for i in range(2)],
                               verifier=verifier)
    finally:
        verifier.close()
    print("bad:", bad.status, bad.flags, bad.message[:300])
    assert [v.status for v in first + after] == ["ok"] * 5, [v.message[:300] for v in first + after]
    assert bad.status != "ok"
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert len({s["pid"] for s in seen}) == 5 and len({s["ppid"] for s in seen}) == 1
    assert sorted(v.phases["resident_jobs"] for v in first + after) == [1, 2, 3, 5, 6]
    assert not any(v.phases.get("resident_cand_fresh") for v in first + after)
    for v in first + after:  # timed on the GPU, the resident's context reused
        assert v.speedup and v.measurement["device"].startswith("cuda")


def test_a_job_handed_to_a_resident_that_was_ending_runs_in_a_fresh_process(tmp_path, monkeypatch):
    """A resident leaves after a job that broke its CUDA context; a job handed to it as it
    ends is never read (its file is still there): the runner gives it to a fresh worker."""
    import os
    import signal

    from kernelmill.verify.pools import resident_pool

    real = resident_pool.Lease.hand_over

    def ending(self, job_path):
        # the second job: the resident goes before reading it. Stopped before the job is written,
        # so it cannot read it first (killed after the write, a fast resident had sometimes read
        # it already, and then the job died mid-run: runtime_error, the right verdict for that)
        second = self.resident.jobs == 2
        if second:
            os.killpg(self.proc.pid, signal.SIGSTOP)
        ok = real(self, job_path)
        if second:
            os.killpg(self.proc.pid, signal.SIGKILL)
        return ok

    monkeypatch.setattr(resident_pool.Lease, "hand_over", ending)
    verifier = Verifier(_config(tmp_path), None)
    try:
        got = [verify_samples([RELU_TASK], [sample(f"s{i}", candidate("return x.clamp_min(0)") + f"# {i}\n")],
                              verifier=verifier)[0] for i in range(3)]
    finally:
        verifier.close()
    assert [v.status for v in got] == ["ok"] * 3, [v.message[:300] for v in got]
    assert got[0].phases["resident_jobs"] == 1 and got[2].phases["resident_jobs"] == 1  # a new resident after
    assert "resident_jobs" not in got[1].phases  # a fresh guarded worker ran it


def test_a_launcher_that_stops_answering_is_killed_not_waited_for(tmp_path):
    """A candidate can stop the launcher (SIGSTOP: same user); the resident's next launch
    times out and the launcher is killed, so the resident goes on (fresh processes)."""
    import os
    import signal
    import socket
    import time

    from kernelmill.verify.pools.resident import Launcher

    (tmp_path / "job-1").mkdir()
    launcher = Launcher()
    os.kill(launcher.pid, signal.SIGSTOP)
    launcher.sock.settimeout(0.5)
    t0 = time.monotonic()
    try:
        launcher.launch(tmp_path / "job-1", "cpu")
        raise AssertionError("a stopped launcher answered")
    except socket.timeout:
        pass
    launcher.close(kill=True)
    assert time.monotonic() - t0 < 10
    with pytest.raises(ChildProcessError):
        os.waitpid(launcher.pid, os.WNOHANG)  # reaped
