"""A candidate its own source already rejects is checked but not timed (supervisor._supervise,
guards/flags.rejections): no finding of the run can make its verdict ok, so a timing would hold
the GPU for a speedup the verdict withdraws (session 30: 32 of cuda-l1's 50 rejected candidates,
28.6 s of the ~93 s the timings held one H200). A fallback flag rejects only under the policy
``reject``: under ``flag`` the same candidate is timed as before.

Nor is a candidate whose first output is already wrong (`early_check`: the supervisor compares
it before the timing, judge.first_trial_fails, and the judge decides on that same copy): 8 of
cuda-l1's 9 incorrect candidates fail their first trial, 15.9 s of those timing holds."""

from __future__ import annotations

import pytest
from verify_support import RELU_TASK, fast_config, sample

from kernelmill.verify import verify_samples

# its ModelNew is a class named Model's subclass: calls_reference (a fallback flag), from the source
FALLS_BACK = """import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.clamp_min(0.0)


class ModelNew(Model):
    pass
"""

# TF32 switched on in an fp32 task: precision_downgrade, from the source
TF32 = """import torch
import torch.nn as nn

torch.backends.cuda.matmul.allow_tf32 = True


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0.0)
"""

PLAIN = """import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0.0)
"""


# wrong from the first call on
WRONG = """import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0.0) + 1.0
"""

# right on the first trial set, wrong on the others (their inputs differ: a constant it learned)
LATE_WRONG = """import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = None

    def forward(self, x):
        out = x.clamp_min(0.0)
        if self.first is None:
            self.first = out.clone()
        return self.first
"""


def _verify(tmp_path, code, **kw):
    cfg = fast_config(tmp_path, guards="standard", **kw)
    (v,) = verify_samples({RELU_TASK.task_id: RELU_TASK}, [sample("s", code)], cfg)
    return v


def test_a_candidate_its_source_rejects_is_not_timed(tmp_path):
    v = _verify(tmp_path / "a", FALLS_BACK)
    assert v.status == "rejected" and "calls_reference" in v.flags, (v.status, v.flags, v.message)
    assert v.phases.get("timing_settled") == 1
    assert "time_s" not in v.phases  # the candidate's process ran no timing
    assert "timing" not in (v.measurement or {}) and v.speedup is None
    assert "timing_skipped" not in v.flags  # that flag says "correct, speed not measured"
    assert v.max_abs_err is not None  # it was still checked


def test_under_the_flag_policy_the_same_candidate_is_timed(tmp_path):
    v = _verify(tmp_path / "b", FALLS_BACK, fallback="flag")
    assert v.status == "ok" and "calls_reference" in v.flags, (v.status, v.flags, v.message)
    assert "timing_settled" not in v.phases and v.phases.get("time_s", 0) > 0
    assert v.speedup is not None


def test_a_plain_candidate_is_timed(tmp_path):
    v = _verify(tmp_path / "c", PLAIN)
    assert v.status == "ok", v.message
    assert "timing_settled" not in v.phases and v.phases.get("time_s", 0) > 0 and v.speedup is not None


def test_a_precision_downgrade_in_the_source_is_not_timed(tmp_path):
    v = _verify(tmp_path / "d", TF32)
    assert v.status == "rejected" and "precision_downgrade" in v.flags, (v.status, v.flags, v.message)
    assert v.phases.get("timing_settled") == 1 and "time_s" not in v.phases


def test_a_candidate_wrong_on_its_first_output_is_not_timed(tmp_path):
    v = _verify(tmp_path / "e", WRONG)
    assert v.status == "incorrect" and "trial 1/" in v.message, (v.status, v.flags, v.message)
    assert v.phases.get("timing_settled_check") == 1 and "time_s" not in v.phases
    assert "timing_skipped" not in v.flags and v.max_abs_err == pytest.approx(1.0, abs=1e-6)


def test_without_the_early_check_it_is_timed(tmp_path):
    v = _verify(tmp_path / "f", WRONG, early_check=False)
    assert v.status == "incorrect", (v.status, v.message)
    assert "timing_settled_check" not in v.phases and v.phases.get("time_s", 0) > 0


def test_a_candidate_right_on_its_first_output_is_timed_and_still_judged(tmp_path):
    v = _verify(tmp_path / "g", LATE_WRONG)
    assert v.status == "incorrect" and "trial 1/" not in v.message, (v.status, v.flags, v.message)
    assert "timing_settled_check" not in v.phases and v.phases.get("time_s", 0) > 0


@pytest.mark.gpu
def test_on_a_gpu_the_rejected_one_is_not_timed_and_the_plain_one_is(tmp_path):
    # the GPU path differs: the candidate's profiled call comes before the timing only when it is
    # not timed (candidate.run_candidate), the reference's profile with it (_ReferenceWork)
    cfg = fast_config(tmp_path, guards="standard", device="cuda")
    got = {v.sample_id: v for v in verify_samples({RELU_TASK.task_id: RELU_TASK},
                                                  [sample("tf32", TF32), sample("plain", PLAIN),
                                                   sample("wrong", WRONG)], cfg)}
    tf32, plain, wrong = got["tf32"], got["plain"], got["wrong"]
    # through CUDA IPC: the first output shared before the timing, found wrong, kept for the judge
    assert wrong.status == "incorrect" and "trial 1/" in wrong.message, (wrong.status, wrong.message)
    assert wrong.phases.get("timing_settled_check") == 1 and "time_s" not in wrong.phases
    assert tf32.status == "rejected" and "precision_downgrade" in tf32.flags, (tf32.status, tf32.flags, tf32.message)
    assert tf32.phases.get("timing_settled") == 1 and "time_s" not in tf32.phases
    assert (tf32.provenance or {}).get("candidate")  # what its profiled check call ran
    assert plain.status == "ok" and plain.speedup is not None and plain.phases.get("time_s", 0) > 0, plain.message
    assert "timing_settled" not in plain.phases


# TF32 switched on at construction in a way the source check does not read: the process's backend
# flags, sent with the early output, show it before the timing
TF32_AT_RUN_TIME = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        backend = getattr(torch.backends, "cu" + "da").matmul
        setattr(backend, "allow_" + "tf32", True)

    def forward(self, x):
        return x.clamp_min(0.0)
"""


def test_precision_switched_on_at_run_time_is_not_timed_once_the_reference_is_profiled(tmp_path):
    # the task's first candidate makes the reference's profile (on a CPU before any timing); the
    # second, its TF32 seen in the early report, is then rejected without a timing
    cfg = fast_config(tmp_path / "h", guards="standard")
    got = {v.sample_id: v for v in verify_samples({RELU_TASK.task_id: RELU_TASK},
                                                  [sample("plain", PLAIN), sample("tf32", TF32_AT_RUN_TIME)], cfg)}
    v = got["tf32"]
    assert v.status == "rejected" and "precision_downgrade" in v.flags, (v.status, v.flags, v.message)
    assert "the candidate's process turned on" in v.message
    assert v.phases.get("timing_settled") == 1 and "time_s" not in v.phases
    assert got["plain"].status == "ok" and got["plain"].phases.get("time_s", 0) > 0
