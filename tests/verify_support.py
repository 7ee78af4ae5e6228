"""Small tasks and candidates made in the test, shared by the verify tests."""

from __future__ import annotations

import textwrap

import pytest

from kernelmill.records import Sample, Task
from kernelmill.verify import TimingConfig, VerifyConfig

RELU_TASK = Task("level1/1_ReLU", textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, x):
            return torch.relu(x)

    n = 4096
    SIZE_PROFILES = {"small": {"n": 64}}

    def get_inputs():
        return [torch.randn(n, n)]

    def get_init_inputs():
        return []
"""), name="ReLU", level=1, op_type="single", sizes={"small": {"n": 64}})

LINEAR_TASK = Task("level2/1_LinearRelu", textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, d_in, d_out):
            super().__init__()
            self.fc = nn.Linear(d_in, d_out)

        def forward(self, x):
            return torch.relu(self.fc(x))

    batch, d_in, d_out = 8, 32, 16

    def get_inputs():
        return [torch.randn(batch, d_in)]

    def get_init_inputs():
        return [d_in, d_out]
"""), name="LinearRelu", level=2, op_type="fusion")


def candidate(body: str, imports: str = "") -> str:
    """A ModelNew module whose forward(self, x) is `body`."""
    return ("import torch\nimport torch.nn as nn\n" + imports + "\n\nclass ModelNew(nn.Module):\n"
            "    def __init__(self, *args):\n        super().__init__()\n\n"
            "    def forward(self, x):\n" + textwrap.indent(textwrap.dedent(body), "        ") + "\n")


def fast_config(tmp_path, **kw) -> VerifyConfig:
    defaults = dict(device="cpu", trials=2, build_timeout=60, run_timeout=20, workers=2,
                    memory_limit_gb=3, max_procs=64, cache_dir=str(tmp_path / "cache"),
                    timing=TimingConfig(warmup_ms=5, round_ms=4, budget_ms=20, min_rounds=3, max_rounds=6))
    defaults.update(kw)
    return VerifyConfig(**defaults)


@pytest.fixture(scope="session")
def relu_task() -> Task:
    return RELU_TASK


def sample(sid: str, code: str, language: str = "torch", task_id: str = RELU_TASK.task_id) -> Sample:
    return Sample(sample_id=sid, task_id=task_id, language=language, code=code)


def reporting_candidate(path) -> str:
    """A correct candidate that appends, once per process, its pid, parent pid, HOME,
    TMPDIR as tempfile sees it and its working folder (JSON lines in `path`)."""
    return candidate(
        "if not getattr(self, 'told', False):\n"
        "    self.told = True\n"
        "    with open(%r, 'a') as fh:\n"
        "        fh.write(json.dumps({'pid': os.getpid(), 'ppid': os.getppid(), 'home': os.environ.get('HOME'),\n"
        "                             'tmp': tempfile.gettempdir(), 'cwd': os.getcwd()}) + '\\n')\n"
        "return x.clamp_min(0)" % str(path), imports="import json, os, tempfile")
