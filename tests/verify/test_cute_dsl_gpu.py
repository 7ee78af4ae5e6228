"""CuTe DSL candidates verified on a GPU (issue 41): a correct one is ok, with its own
kernel in the provenance and calls into the DSL seen (not a torch fallback); a wrong one
(the last column of every row never written) is incorrect.

Needs `nvidia-cutlass-dsl` (with its `-libs-base` and `-libs-cu13` wheels: the cu13 one is
92 MB, more than one device call carries; install it in two calls on one warm machine)."""

from __future__ import annotations

import importlib.util

import pytest
from cute_dsl_candidates import CORRECT, TASK, WRONG

from kernelmill.records import Sample, Task
from kernelmill.verify import VerifyConfig, verify_samples

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(importlib.util.find_spec("cutlass") is None,
                                 reason="needs nvidia-cutlass-dsl (the CuTe DSL): pip install nvidia-cutlass-dsl")]


def test_a_correct_and_a_wrong_cute_dsl_candidate(tmp_path):
    task = Task(task_id="t/add", code=TASK, name="add", level=1)
    samples = [Sample(sample_id=name, task_id="t/add", language="cute_dsl", code=code)
               for name, code in (("correct", CORRECT), ("wrong", WRONG))]
    config = VerifyConfig(device="cuda", trials=2, cache_dir=str(tmp_path / "cache"))
    ok, wrong = verify_samples({task.task_id: task}, samples, config)
    print(ok.status, ok.speedup, ok.flags, ok.message, ok.provenance)
    print(wrong.status, wrong.flags, wrong.message)
    assert ok.status == "ok", ok.message
    assert "torch_fallback" not in ok.flags
    own = [k for k in ok.provenance["candidate"]["kernels"] if k["origin"] == "own"]
    assert own and all("add_rows_kernel" in k["symbol"] for k in own), ok.provenance
    assert wrong.status == "incorrect", (wrong.status, wrong.message)
