"""A run the harness's own memory ended (the reference out of GPU memory on a crowded machine,
the supervisor past harness_memory_gb) is not the candidate's doing: the executor runs it once
more, after the others, and the verdict says it did (measurement.retried_after)."""

from __future__ import annotations

from pathlib import Path

from kernelmill.records import Sample, Task
from kernelmill.verify import VerifyConfig, verify_samples
from kernelmill.verify.runner import harness_out_of_memory

# the reference runs out of memory the first `fails` times it is built (each run builds it once
# in its supervisor); a counter file outside the sandbox's folders says how many runs there were
TASK = """import torch
import torch.nn as nn
from pathlib import Path

COUNT = Path({count!r})


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        n = int(COUNT.read_text()) if COUNT.exists() else 0
        COUNT.write_text(str(n + 1))
        if n < {fails}:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 256.00 MiB")

    def forward(self, x):
        return x * 2 + 1


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
"""
CAND = """import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x * 2 + 1
"""


def _verify(tmp_path: Path, fails: int):
    count = tmp_path / "runs.txt"
    task = Task(task_id="t/oom", code=TASK.format(count=str(count), fails=fails), name="oom", level=1)
    cfg = VerifyConfig(device="cpu", trials=2, time=False, guards="standard", cache_dir=str(tmp_path / "c"))
    (v,) = verify_samples({task.task_id: task}, [Sample("s", task.task_id, "torch", CAND)], cfg)
    return v, int(count.read_text())


def test_a_reference_out_of_memory_once_is_run_again(tmp_path):
    v, runs = _verify(tmp_path, fails=1)
    assert v.status == "ok", v.message
    assert "out of memory" in v.measurement["retried_after"] and "reference" in v.measurement["retried_after"]
    assert len(v.measurement["timeline"]["run"]) == 2


def test_a_reference_out_of_memory_every_time_is_run_twice_and_says_so(tmp_path):
    v, runs = _verify(tmp_path, fails=99)
    assert v.status == "runtime_error" and "reference_error" in v.flags and "out of memory" in v.message
    assert "retried_after" in v.measurement and len(v.measurement["timeline"]["run"]) == 2


def test_only_the_harness_s_memory_is_retried():
    class V:
        def __init__(self, flags, message):
            self.flags, self.message = flags, message

    assert harness_out_of_memory(V(["reference_error"], "the reference program failed: torch.OutOfMemoryError: CUDA "
                                                        "out of memory. Tried to allocate 256.00 MiB"))
    assert harness_out_of_memory(V(["reference_error"], "the harness's side of the run (...) exceeded its host memory "
                                                        "limit of 32 GiB (killed at 33.0 GiB resident)"))
    assert not harness_out_of_memory(V([], "CUDA out of memory"))  # the candidate's own: its verdict stands
    assert not harness_out_of_memory(V(["reference_error"], "the reference program failed: ValueError: bad shape"))
