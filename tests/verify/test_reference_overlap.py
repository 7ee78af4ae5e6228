"""The reference's work beside the candidate's checks (CUDA IPC runs, supervisor):
what the candidate's own work hid is no guard cost; what it did not hide is counted
once, in guard_inputs_s, and taken out of the exchange's residual. The overlap itself
runs on the GPU (tests/guards/test_gpu_corpus.py, tests/verify/test_cuda_ipc.py)."""

import pytest
import torch

from kernelmill.verify.measure.settings import CheckRule
from kernelmill.verify.process import supervisor as sv


def test_unhidden_reference_time_is_not_also_an_exchange_cost():
    # go at 10.0; the candidate loaded and checked for 0.30 s of phases and said "ready";
    # the reference's work ended 0.10 s after that ready, read at 10.42
    marks = {"go": 10.0, "ref_done": 10.40, "ready": 10.42, "timed": 11.0, "final": 11.01,
             "outputs": 11.02, "exited": 11.03, "unhidden": 0.10}
    parts = sv._exchange_parts(9.9, marks, {"load_s": 0.02, "inputs_s": 0.01, "check_s": 0.25, "profile_s": 0.02})
    assert parts["xchg_setup_s"] == pytest.approx(0.1)
    # 0.42 s from go to ready, 0.30 s of the candidate's phases, 0.10 s the reference's
    assert parts["xchg_ready_s"] == pytest.approx(0.02, abs=1e-4)
    hidden = sv._exchange_parts(9.9, {**marks, "unhidden": 0.0}, {"check_s": 0.30})
    assert hidden["xchg_ready_s"] == pytest.approx(0.12, abs=1e-4)


def test_reference_work_finds_mutation_aliasing_and_profile_once():
    class Ref(torch.nn.Module):
        def forward(self, x, y):
            y.add_(1)  # writes into an input
            return x  # and returns one

    sets = {"trials": [[torch.ones(3), torch.zeros(3)]], "checks": [], "timing": [[torch.ones(3), torch.ones(3)]],
            "variants": []}

    class Job:
        guards = "standard"
        exchange = "auto"
        ref_profile = {"given": True}
        check = CheckRule(tolerances={"float32": (1e-4, 1e-4)})  # the job's check rule (the weak-task check reads it)

    work = sv._ReferenceWork(Job(), Ref(), sets, torch.device("cpu"))
    assert work.mutates and work.aliases
    assert work.profile == {"given": True} and not work.profiled  # the runner's profile is used as is
    assert torch.equal(work.expected["trials"][0], torch.ones(3))
    assert sets["trials"][0][1].sum() == 0  # the reference ran on clones
    assert work.outputs_s >= 0 and work.nbytes == 24  # a trial's and a timing set's output


def test_answers_kept_in_host_memory_are_said_on_stderr(monkeypatch, capsys):
    """A crowded GPU sends the reference's answers to host memory, where the harness's memory
    limit applies; the line on stderr is what a verdict killed for that memory shows."""
    import torch

    from kernelmill.verify.process import supervisor

    answers = {"trials": [torch.ones(1024)], "timing": [torch.zeros(256)]}
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (4 * 5120 + 4, 1 << 40))
    kept = supervisor._placed(answers, torch.device("cuda", 0))  # 5120 B of answers < free / 4: stays
    assert kept is answers and capsys.readouterr().err == ""
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (4 * 5120, 1 << 40))
    moved = supervisor._placed(answers, torch.device("cuda", 0))
    assert moved is not answers and torch.equal(moved["trials"][0], answers["trials"][0])
    err = capsys.readouterr().err
    assert "kept in host memory" in err and "0.00 GiB" in err and "cuda:0" in err
    # the numbers of the choice go to the verdict (measurement.answers_placement)
    info: dict = {}
    supervisor._placed(answers, torch.device("cuda", 0), info=info)
    assert info == {"answers_gb": round(5120 / 2**30, 3), "gpu_free_gb": round(4 * 5120 / 2**30, 2), "where": "host"}
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (1 << 40, 1 << 40))
    supervisor._placed(answers, torch.device("cuda", 0), info=info)
    assert info["where"] == "device" and info["gpu_free_gb"] == 1024.0
    capsys.readouterr()


def test_a_run_may_ask_for_its_answers_in_host_memory(monkeypatch, capsys):
    """`exchange="host"`: answers in host memory however much the GPU has free (nothing said:
    nothing crowded), the sets through files."""
    import torch

    from kernelmill.verify.process import supervisor

    answers = {"trials": [torch.ones(1024)]}
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (1 << 40, 1 << 40))
    moved = supervisor._placed(answers, torch.device("cuda", 0), host=True)
    assert moved is not answers and moved["trials"][0].device.type == "cpu"
    assert capsys.readouterr().err == ""

    class Job:
        exchange = "host"

    assert supervisor._exchange_mode(Job(), torch.device("cuda", 0), {"trials": [answers["trials"]]}) == "file"


def _lazy_work(monkeypatch, profile, bound_ms=1.0):
    """A `_ReferenceWork` as the GPU path leaves it before `finish_profile` (timing done),
    with item 15's all-bytes bound fixed at `bound_ms` and the probe counted."""
    probes = []
    monkeypatch.setattr(sv, "fastest_possible_ms", lambda nbytes, device, copy=None: (bound_ms, "fixed"))
    monkeypatch.setattr(sv, "input_reach", lambda ref, args: probes.append(len(args)) or [0.5])
    monkeypatch.setattr(sv, "profile_call", lambda fn, device: {"ops": ["aten::relu"]})
    work = sv._ReferenceWork.__new__(sv._ReferenceWork)
    x = torch.ones(4)
    work.profile, work.profiled, work.profile_s, work.mutates = profile, False, 0.0, False
    work._pending = [x] if profile is None else None
    work._reach_set = [x] if profile is None or profile.get("reach_owed") else None
    work.expected, work.param_bytes = {"timing": [torch.ones(4)]}, 0
    return work, probes


def test_the_reach_probe_waits_for_a_candidate_it_can_change_the_verdict_of(monkeypatch):
    # slower than the all-bytes bound: the reach could only loosen it, the verdict is the same without
    work, probes = _lazy_work(monkeypatch, None)
    work.finish_profile(torch.relu, torch.device("cpu"), timed_ms=2.0)
    assert probes == [] and work.profiled
    assert work.profile == {"ops": ["aten::relu"], "reach_owed": True}  # the runner keeps it, owing the probe
    # the next candidate of the task is faster than the bound: it probes, and its profile replaces the first
    work, probes = _lazy_work(monkeypatch, {"ops": ["aten::relu"], "reach_owed": True})
    work.finish_profile(torch.relu, torch.device("cpu"), timed_ms=0.5)
    assert probes == [1] and work.profiled
    assert work.profile == {"ops": ["aten::relu"], "input_reach": [0.5]}
    # no timing to compare (a CPU's profile made before it, an untimed run): probed as before
    work, probes = _lazy_work(monkeypatch, None)
    work.finish_profile(torch.relu, torch.device("cpu"))
    assert probes == [1] and work.profile["input_reach"] == [0.5] and "reach_owed" not in work.profile
    # a candidate that was not timed (the judge checks no speed): left owed
    work, probes = _lazy_work(monkeypatch, None)
    work.finish_profile(torch.relu, torch.device("cpu"), timed_ms=float("inf"))
    assert probes == [] and work.profile.get("reach_owed")
    # a profile that has the reach is used as is
    work, probes = _lazy_work(monkeypatch, {"ops": [], "input_reach": [1.0]})
    work.finish_profile(torch.relu, torch.device("cpu"), timed_ms=0.1)
    assert probes == [] and not work.profiled


def test_the_runner_keeps_the_first_profile_unless_a_later_one_made_the_owed_probe():
    from kernelmill.verify.runner import newer_profile

    assert newer_profile(None, {"ops": [], "reach_owed": True})
    assert not newer_profile({"ops": [], "input_reach": [1.0]}, {"ops": [], "input_reach": [0.5]})
    assert newer_profile({"ops": [], "reach_owed": True}, {"ops": [], "input_reach": [0.5]})
    assert not newer_profile({"ops": [], "reach_owed": True}, {"ops": [], "reach_owed": True})
