"""Reference semantics (docs/SEMANTICS.md) on tasks of our own, guarded and not:
both models built under one seed in the state a fresh module is in (training
mode), identical inputs, and the candidate's own state never overwritten."""

from __future__ import annotations

import textwrap

import pytest

from kernelmill.records import Sample, Task
from kernelmill.verify.guards import FLAGS
from kernelmill.verify import VerifyConfig, verify_samples


def _task(task_id: str, model: str, inputs: str, init: str = "[]") -> Task:
    code = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n" + textwrap.dedent(model) +
            f"\n\ndef get_inputs():\n    return {inputs}\n\n\ndef get_init_inputs():\n    return {init}\n")
    return Task(task_id, code, level=1)


BATCHNORM = _task("sem/batchnorm", """
    class Model(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.bn = nn.BatchNorm1d(c)

        def forward(self, x):
            return self.bn(x)
    """, "[torch.randn(16, 8) * 3.0 + 1.5]", "[8]")

DROPOUT0 = _task("sem/dropout0", """
    class Model(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.fc = nn.Linear(d, d)
            self.drop = nn.Dropout(p=0.0)

        def forward(self, x):
            return self.drop(self.fc(x))
    """, "[torch.randn(4, 16)]", "[16]")

FOLD = _task("sem/fold", """
    class Model(nn.Module):
        def __init__(self, d, divisor):
            super().__init__()
            self.fc = nn.Linear(d, d)
            self.divisor = divisor

        def forward(self, x):
            return self.fc(x) / self.divisor
    """, "[torch.randn(4, 16)]", "[16, 4.0]")

TWO_LAYERS = _task("sem/order", """
    class Model(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.fc1 = nn.Linear(d, d)
            self.fc2 = nn.Linear(d, d)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))
    """, "[torch.randn(4, 16)]", "[16]")


def _cand(init: str, forward: str) -> str:
    return ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass ModelNew(nn.Module):\n"
            "    def __init__(self, *args):\n        super().__init__()\n" + textwrap.indent(textwrap.dedent(init), "        ") +
            "\n\n    def forward(self, x):\n" + textwrap.indent(textwrap.dedent(forward), "        ") + "\n")


CASES = {
    # a fresh BatchNorm is in training mode: it normalises with the batch's statistics
    "bn_running_stats": (BATCHNORM, _cand("self.bn = nn.BatchNorm1d(args[0])",
                                          "return F.batch_norm(x, self.bn.running_mean, self.bn.running_var,\n"
                                          "                    self.bn.weight, self.bn.bias, training=False)"), "incorrect"),
    "bn_batch_stats": (BATCHNORM, _cand("self.bn = nn.BatchNorm1d(args[0])",
                                        "m = x.mean(0)\nv = x.var(0, unbiased=False)\n"
                                        "return (x - m) / torch.sqrt(v + self.bn.eps) * self.bn.weight + self.bn.bias"), "ok"),
    "dropout_p0": (DROPOUT0, _cand("self.fc = nn.Linear(args[0], args[0])", "return x @ self.fc.weight.t() + self.fc.bias"),
                   "ok"),
    # constant folding at __init__: the candidate's own (transformed) weights are kept
    "fold_at_init": (FOLD, _cand("self.fc = nn.Linear(args[0], args[0])\nwith torch.no_grad():\n"
                                 "    self.fc.weight.div_(args[1])\n    self.fc.bias.div_(args[1])", "return self.fc(x)"), "ok"),
    # parameters created in another order draw other random weights (KernelBench: incorrect too)
    "params_other_order": (TWO_LAYERS, _cand("self.fc2 = nn.Linear(args[0], args[0])\nself.fc1 = nn.Linear(args[0], args[0])",
                                             "return self.fc2(torch.relu(self.fc1(x)))"), "incorrect"),
    "params_same_order": (TWO_LAYERS, _cand("self.fc1 = nn.Linear(args[0], args[0])\nself.fc2 = nn.Linear(args[0], args[0])",
                                            "return F.linear(F.linear(x, self.fc1.weight, self.fc1.bias).clamp_min(0),\n"
                                            "                self.fc2.weight, self.fc2.bias)"), "ok"),
}


def _check(tmp_path, guards: str, device: str, time: bool) -> None:
    tasks = [BATCHNORM, DROPOUT0, FOLD, TWO_LAYERS]
    samples = [Sample(name, task.task_id, "torch", code) for name, (task, code, _) in CASES.items()]
    cfg = VerifyConfig(device=device, trials=2, time=time, guards=guards, cache_dir=str(tmp_path / "cache"),
                       workers=1)
    verdicts = {v.sample_id: v for v in verify_samples(tasks, samples, cfg)}
    got = {name: verdicts[name].status for name in CASES}
    want = {name: expected for name, (_, _, expected) in CASES.items()}
    assert got == want, {n: verdicts[n].message for n in CASES if got[n] != want[n]}
    # no guard's flag on an honest candidate; the measurement's notes (events_disagree on a
    # launch-bound call, clocks_moved, weak_task) say how it was measured, not what it did
    flagged = {n: [f for f in verdicts[n].flags if f in FLAGS] for n in CASES if want[n] == "ok"}
    assert not any(flagged.values()), {n: verdicts[n].flags for n in CASES if want[n] == "ok"}


@pytest.mark.parametrize("guards", ["standard", "off"])
def test_reference_semantics(tmp_path, guards):
    _check(tmp_path, guards, "cpu", time=False)


@pytest.mark.gpu
@pytest.mark.parametrize("guards", ["standard", "off"])
def test_reference_semantics_on_the_gpu(tmp_path, guards):
    """The same rules through the GPU path, timed (the flags of honest timed candidates count too)."""
    _check(tmp_path, guards, "cuda", time=True)
