"""The supervisor out of GPU memory copying a candidate's outputs (supervisor._receive_outputs):
the harness's side when the outputs are no larger than the reference's, so the executors run
the candidate once more (runner.harness_out_of_memory); the candidate's when it shared far more.
Session 29's one-GPU run of cuda-l1: a100-L1-72's 1 GiB copy failed with 99 GB of the H200 taken
by other runs and was judged the candidate's runtime_error."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from kernelmill.verify.process import supervisor
from kernelmill.verify.runner import harness_out_of_memory


class _Launched:
    def __init__(self):
        self.sent = []

    def send(self, msg):
        self.sent.append(msg)


def _receive(monkeypatch, size, expected):
    def oom(*a, **k):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 1024.00 MiB")

    monkeypatch.setattr(supervisor.cuda_ipc, "receive", oom)
    launched = _Launched()
    got = supervisor._receive_outputs({"ipc_outputs": {"handle": "00", "size": size}}, launched,
                                      torch.device("cpu"), torch.device("cpu"), expected)
    assert launched.sent == [{"cmd": "released"}]  # the candidate's process is told either way
    return got


def test_an_oom_copying_outputs_the_reference_size_is_the_harness_s(monkeypatch):
    got = _receive(monkeypatch, size=1 << 30, expected=1 << 30)
    assert isinstance(got, supervisor.HarnessOutOfMemory) and "1024 MiB" in str(got)
    verdict = SimpleNamespace(flags=["reference_error"], message=str(got))
    assert harness_out_of_memory(verdict)  # the executors run it again, after the others


def test_an_oom_copying_far_more_than_the_reference_s_outputs_stays_the_candidate_s(monkeypatch):
    got = _receive(monkeypatch, size=40 << 30, expected=1 << 30)
    assert isinstance(got, torch.OutOfMemoryError) and not isinstance(got, supervisor.HarnessOutOfMemory)
    assert isinstance(_receive(monkeypatch, size="big", expected=1 << 30), torch.OutOfMemoryError)


def _oom():
    return torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 200.00 MiB")


def test_an_oom_in_the_judge_with_reference_sized_outputs_is_the_harness_s():
    # session 30: four runs on one H200, judge.rule_for out of GPU memory on the reference's
    # outputs; the supervisor ended without a verdict and the runner blamed the candidate
    got = {"out": torch.zeros(1 << 20)}  # 4 MiB, as the reference's
    verdict = supervisor._judge_out_of_memory(_oom(), got, expected_bytes=4 << 20)
    assert verdict["status"] == "runtime_error" and verdict["flags"] == ["reference_error"]
    assert "judging the candidate's outputs" in verdict["message"] and "4 MiB" in verdict["message"]
    assert harness_out_of_memory(SimpleNamespace(**verdict))


def test_an_oom_in_the_judge_with_far_larger_outputs_is_the_candidate_s():
    got = [torch.zeros(64 << 20, dtype=torch.uint8), torch.zeros(16 << 20, dtype=torch.uint8)]  # 80 MiB
    verdict = supervisor._judge_out_of_memory(_oom(), got, expected_bytes=1 << 20)
    assert verdict["status"] == "runtime_error" and not verdict.get("flags")
    assert "80 MiB" in verdict["message"]
    assert not harness_out_of_memory(SimpleNamespace(flags=verdict.get("flags"), message=verdict["message"]))


def test_the_supervisor_catches_the_judge_s_oom():
    # the call site, not only the helper: the judge's call is inside the handler
    import inspect
    src = inspect.getsource(supervisor._supervise)
    call = src.index("verdict = judge(")
    handler = src.index("except torch.OutOfMemoryError as exc:", call)
    assert src.index("_judge_out_of_memory(exc", handler) > handler
