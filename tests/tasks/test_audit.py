"""`kernelmill tasks audit`: trivial candidates against tasks written for the test."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from kernelmill.cli import app
from kernelmill.tasks import load_tasks
from kernelmill.tasks.audit import FAIL, NA, PASS, AuditOptions, run_audit
from kernelmill.verify.measure.trivial import fit, trivial_output

TEMPLATE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, x):
            {body}


    def get_inputs():
        return [torch.randn(16, 32)]


    def get_init_inputs():
        return []
    """)

BODIES = {
    "level1/1_Zeros": "return x * 0.0",
    "level1/2_ShiftedReLU": "return torch.relu(x + 0.5)",
    "level1/3_Identity": "return x",
    "level1/4_Raises": "raise RuntimeError('broken reference')",
    "level1/5_Bias": "return torch.arange(32.0).expand(16, 32) + 1e-6 * x",
}


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("audit_tasks")
    for task_id, body in BODIES.items():
        path = root / f"{task_id}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(TEMPLATE.format(body=body))
    return root


@pytest.fixture(scope="module")
def report(task_dir):
    return run_audit(load_tasks(task_dir).tasks, str(task_dir), AuditOptions(timeout_s=120, threads=1))


def _by_id(report):
    return {t.task_id: t for t in report.tasks}


def test_all_zero_output_lets_zeros_pass(report):
    t = _by_id(report)["level1/1_Zeros"]
    assert t.status == "ok"
    assert t.verdicts["zeros"] == PASS and t.verdicts["constant"] == PASS
    assert t.verdicts["input_copy"] == FAIL
    assert t.weak and "zeros" in t.weak_by
    assert t.outputs[0].zero_frac == 1.0 and t.outputs[0].near_constant


def test_shifted_relu_lets_nothing_trivial_pass(report):
    t = _by_id(report)["level1/2_ShiftedReLU"]
    assert t.status == "ok"
    assert set(t.verdicts.values()) == {FAIL}
    assert not t.weak
    assert 0.0 < t.outputs[0].zero_frac < 0.6 and not t.outputs[0].near_constant
    assert "input set 1/2" in t.failures["zeros"]


def test_identity_lets_input_copy_pass(report):
    t = _by_id(report)["level1/3_Identity"]
    assert t.verdicts["input_copy"] == PASS and t.details["input_copy_mode"] == "as is"
    assert t.verdicts["zeros"] == FAIL and t.weak_by == ["input_copy"]


def test_per_channel_constant_lets_mean_only_pass(report):
    t = _by_id(report)["level1/5_Bias"]
    assert t.verdicts["mean_only"] == PASS and t.verdicts["constant"] == FAIL
    assert t.verdicts["shape_only"] == FAIL


def test_reference_that_raises_is_an_error_row(report):
    t = _by_id(report)["level1/4_Raises"]
    assert t.status == "error" and "broken reference" in t.message and "reference forward" in t.message
    assert report.summary()["errors"] == 1 and report.summary()["audited"] == 4


def test_input_copy_pads_truncates_and_reports_na():
    ref = torch.ones(2, 3)
    f = fit(ref)
    out, mode = trivial_output("input_copy", ref, f, torch.arange(4.0), None)
    assert mode == "zero-padded" and out.flatten().tolist() == [0, 1, 2, 3, 0, 0]
    out, mode = trivial_output("input_copy", ref, f, torch.arange(10.0), None)
    assert mode == "truncated" and out.shape == (2, 3) and out.flatten().tolist() == [0, 1, 2, 3, 4, 5]
    out, mode = trivial_output("input_copy", ref, f, torch.arange(6.0).reshape(3, 2), None)
    assert mode == "reshaped" and out.flatten().tolist() == [0, 1, 2, 3, 4, 5]
    assert trivial_output("input_copy", ref, f, None, None) == (None, "no tensor input")
    idx = torch.tensor([1, 2])
    out, _ = trivial_output("constant", idx, fit(idx), None, None)
    assert out.dtype == torch.int64 and out.tolist() == [2, 2]  # mean 1.5 rounded, integer dtype kept


def test_cli_writes_json_and_reports_timeouts(task_dir, tmp_path):
    slow = tmp_path / "slow"
    (slow / "level1").mkdir(parents=True)
    for name in ("1_Zeros",):
        (slow / "level1" / f"{name}.py").write_text((task_dir / "level1" / f"{name}.py").read_text())
    (slow / "level1" / "9_Hang.py").write_text(TEMPLATE.format(body="import time; time.sleep(600)"))
    out = tmp_path / "audit.json"
    res = CliRunner().invoke(app, ["tasks", "audit", str(slow), "--json", str(out), "--timeout", "10",
                                   "--threads", "1"])
    assert res.exit_code == 0, res.output
    assert "1 weak" in res.output and "1 timeouts" in res.output
    data = json.loads(out.read_text())
    assert data["summary"]["weak_by"]["zeros"] == 1 and data["summary"]["weak_by"]["input_copy"] == 0
    rows = {t["task_id"]: t for t in data["tasks"]}
    assert rows["level1/9_Hang"]["status"] == "timeout"
    assert rows["level1/1_Zeros"]["verdicts"]["input_copy"] == FAIL and rows["level1/1_Zeros"]["weak"]
    assert rows["level1/1_Zeros"]["outputs"][0]["shape"] == [16, 32]
    assert rows["level1/1_Zeros"]["overall"] == {"max_abs": 0.0, "std": 0.0, "zero_frac": 1.0}


def test_cli_rejects_one_trial(task_dir):
    res = CliRunner().invoke(app, ["tasks", "audit", str(task_dir), "--trials", "1"])
    assert res.exit_code == 2 and "at least 2" in res.output


def test_na_is_not_weak():
    from kernelmill.tasks.audit import TaskAudit

    t = TaskAudit("x", "ok", verdicts={"zeros": FAIL, "constant": FAIL, "mean_only": FAIL,
                                        "shape_only": PASS, "input_copy": NA})
    assert not t.weak
