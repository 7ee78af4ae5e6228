"""Decontamination against a benchmark: Jaccard words and long n-grams."""

from __future__ import annotations

from kernelmill.curate import DecontamConfig, decontaminate
from kernelmill.records import Task

BENCH_A = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """Computes a Smooth L1 (Huber) loss between predictions and targets for regression tasks."""
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions, targets):
        return torch.nn.functional.smooth_l1_loss(predictions, targets)

batch_size = 128
input_shape = (4096,)
dim = 1

def get_inputs():
    return [torch.randn(batch_size, *input_shape), torch.randn(batch_size, *input_shape)]

def get_init_inputs():
    return []
'''

BENCH_B = BENCH_A.replace("smooth_l1_loss", "mse_loss").replace("Smooth L1 (Huber)", "mean squared error")
OTHER = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
    def forward(self, x):
        return torch.sigmoid(self.fc(x)) * 3.0
def get_inputs():
    return [torch.randn(32, 1024)]
def get_init_inputs():
    return [1024, 512]
'''


def bench():
    return [Task("level1/96_HuberLoss", BENCH_A), Task("level1/94_MSELoss", BENCH_B)]


def test_flags_renamed_copy_by_jaccard_and_names_task():
    renamed = BENCH_A.replace("batch_size", "bs").replace("# comment", "")
    rows = [{"sample_id": "s1", "task_id": "x", "task_code": renamed, "code": "kernel"},
            {"sample_id": "s2", "task_id": "y", "task_code": OTHER, "code": "kernel"}]
    res = decontaminate(rows, bench())
    assert res.flagged == 1
    flagged = [r for r in res.kept if "contamination" in r]
    assert [r["sample_id"] for r in flagged] == ["s1"]
    hit = {m["benchmark_task"]: m for m in flagged[0]["contamination"]}
    assert hit["level1/96_HuberLoss"]["test"] == "jaccard"
    assert hit["level1/96_HuberLoss"]["score"] >= 0.8


def test_long_ngram_catches_embedded_copy():
    # the benchmark program buried in a much longer one: Jaccard is low, the 20-gram is shared
    long_text = OTHER + "\n".join(f"# note {i} about nothing in particular v{i}" for i in range(300)) + BENCH_A
    rows = [{"sample_id": "s", "task_id": "z", "task_code": long_text.replace("# note", "x_note =")}]
    res = decontaminate(rows, bench(), DecontamConfig(ngram=20, max_task_share=0.5))
    tests = {m["test"] for m in res.kept[0]["contamination"]}
    assert "20-gram" in tests


def test_boilerplate_ngrams_shared_by_many_benchmark_tasks_are_ignored():
    # 20-grams common to both benchmark tasks (the get_inputs tail) are boilerplate when
    # max_task_share allows one task only
    tail = BENCH_A[BENCH_A.index("batch_size = 128"):]
    rows = [{"sample_id": "s", "task_id": "z", "task_code": OTHER + tail}]
    res = decontaminate(rows, bench(), DecontamConfig(ngram=20, max_task_share=0.01))
    assert res.flagged == 0


def test_drop_mode_and_task_lookup():
    rows = [{"sample_id": "s1", "task_id": "copy", "code": "k"}, {"sample_id": "s2", "task_id": "fine", "code": "k"}]
    res = decontaminate(rows, bench(), DecontamConfig(drop=True), task_code={"copy": BENCH_B, "fine": OTHER})
    assert [r["sample_id"] for r in res.kept] == ["s2"]
    assert res.excluded[0]["id"] == "s1" and res.excluded[0]["benchmark_task"] == "level1/94_MSELoss"
    assert res.counts()["dropped"] == 1
