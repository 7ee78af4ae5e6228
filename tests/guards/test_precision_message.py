"""precision_downgrade names every reduced-precision cause it found, not only the first
(issue 42's cuda-l1 audit: l40-L1-54 was cited at matmul.allow_tf32, a knob that did nothing in
a conv task, while the autocast beside it was what ran). Other flags keep their first detail."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import guard_tasks as T
from hostile_corpus import model

from kernelmill.records import Sample
from kernelmill.verify import VerifyConfig, verify_samples
from kernelmill.verify.guards import Findings, check_source, decide


def test_precision_downgrade_names_every_cause():
    f = Findings()
    f.add("precision_downgrade", "line 3: sets torch.backends.cuda.matmul.allow_tf32 (reduced precision for fp32 work)")
    f.add("torch_fallback", "no call into its own compiled module")
    f.add("precision_downgrade", "line 4: sets torch.backends.cudnn.allow_tf32 (reduced precision for fp32 work)")
    f.add("torch_fallback", "a second detail")
    f.add("precision_downgrade", "ops ran on float16 data in an fp32 task")
    f.add("precision_downgrade", "ops ran on float16 data in an fp32 task")  # the same twice: once
    assert f.flags() == ["precision_downgrade", "torch_fallback"]
    detail = dict(f.items)["precision_downgrade"]
    assert detail == ("line 3: sets torch.backends.cuda.matmul.allow_tf32 (reduced precision for fp32 work) "
                      "(and 2 more: line 4: sets torch.backends.cudnn.allow_tf32; ops ran on float16 data in an fp32 task)")
    assert dict(f.items)["torch_fallback"] == "no call into its own compiled module"
    msg = decide(f, {"status": "ok", "correct": True})["message"]
    assert "cudnn.allow_tf32" in msg and "float16" in msg and "a second detail" not in msg


def test_many_causes_are_counted_and_the_message_stays_short():
    f = Findings()
    for i in range(10):
        f.add("precision_downgrade", f"line {i}: sets knob_{i}")
    detail = dict(f.items)["precision_downgrade"]
    assert detail.startswith("line 0: sets knob_0 (and 9 more: line 1: sets knob_1;") and detail.endswith("; ...)")
    assert "knob_9" not in detail and len(detail) < 200


def test_a_knob_and_the_fp16_that_ran_both_reach_the_verdict(tmp_path):
    """End to end on the CPU: a module-level TF32 knob (first, by line) and the fp16 compute the
    profile saw (the one that acted) are both in the verdict's message."""
    code = model("return torch.relu(x.half()).float()",
                 prelude="torch.backends.cuda.matmul.allow_tf32 = True\ntorch.backends.cudnn.allow_tf32 = True")
    assert len([f for f in check_source(code, "standard", "torch") if f.flag == "precision_downgrade"]) == 2
    cfg = VerifyConfig(device="cpu", trials=2, time=False, guards="standard", cache_dir=str(tmp_path / "c"))
    [v] = verify_samples({T.RELU.task_id: T.RELU}, [Sample("knob_and_half", T.RELU.task_id, "torch", code)], cfg)
    assert v.status == "rejected" and "precision_downgrade" in v.flags, (v.status, v.flags, v.message)
    assert "matmul.allow_tf32" in v.message and "cudnn.allow_tf32" in v.message, v.message
    assert "ops ran on" in v.message and ("Half" in v.message or "float16" in v.message), v.message
