"""The note extension_build_failed wherever the candidate's own load_inline/load failed, also in
`ModelNew.__init__` (cuda-l1 a100-L1-29/a100-L1-83: PYBIND11_MODULE beside functions=[...] with
build_directory, answered by fail_fast.py's check outside the builder's compile; a100-L1-35 and
l40-L1-95: a source that does not compile, with build_directory, so torch's own load_inline built
it in the candidate's process). 0.5.13 had the right verdict (torch_fallback) without the note."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CANDIDATE = '''
import os
import tempfile
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = {src!r}


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        folder = os.path.join(tempfile.gettempdir(), "km_note_{name}")
        os.makedirs(folder, exist_ok=True)
        try:
            self.ext = load_inline(name="km_note_{name}", cpp_sources=SRC, functions=["relu_f"],
                                   build_directory=folder, verbose=False)
        except Exception as exc:
            print("build failed, using torch:", exc)
            self.ext = None

    def forward(self, x):
        if self.ext is not None:
            return self.ext.relu_f(x)
        return torch.relu(x)
'''

SOURCES = {
    # its own module beside functions=[...]: the module is defined twice (fail_fast's "module twice")
    "module_twice": "#include <torch/extension.h>\ntorch::Tensor relu_f(torch::Tensor x) { return x.relu(); }\n"
                    "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"relu_f\", &relu_f); }\n",
    # a compile error no check answers ahead: torch's own load_inline compiles it (build_directory)
    "torch_compiles": "#include <torch/extension.h>\ntorch::Tensor relu_f(torch::Tensor x) { return x.relu() }\n",
}


@pytest.mark.parametrize("case", sorted(SOURCES))
def test_a_build_that_fails_in_init_gets_the_note(tmp_path, case):
    sys.path.insert(0, str(ROOT / "tests" / "guards"))
    from guard_tasks import RELU

    from kernelmill.records import Sample
    from kernelmill.verify import TimingConfig, VerifyConfig, verify_samples

    code = CANDIDATE.format(src=SOURCES[case], name=f"{case}_{tmp_path.name}")
    cfg = VerifyConfig(device="cpu", trials=2, build_timeout=300, run_timeout=240, cache_dir=str(tmp_path / "cache"),
                       guards="standard", timing=TimingConfig(warmup_ms=5, round_ms=3, budget_ms=20, min_rounds=4,
                                                              max_rounds=6))
    (v,) = verify_samples({RELU.task_id: RELU}, [Sample(case, RELU.task_id, "cpp", code)], cfg)
    assert v.status == "rejected" and "torch_fallback" in v.flags, (v.status, v.flags, v.message)
    assert v.flags.count("extension_build_failed") == 1, (v.flags, v.message)
    assert "extension_build_failed: km_note_" in v.message and "error" in v.message.lower(), v.message


def test_the_unguarded_run_notes_it_too(tmp_path):
    sys.path.insert(0, str(ROOT / "tests" / "guards"))
    from guard_tasks import RELU

    from kernelmill.records import Sample
    from kernelmill.verify import TimingConfig, VerifyConfig, verify_samples

    code = CANDIDATE.format(src=SOURCES["module_twice"], name=f"off_{tmp_path.name}")
    cfg = VerifyConfig(device="cpu", trials=2, build_timeout=300, run_timeout=240, cache_dir=str(tmp_path / "cache"),
                       guards="off", timing=TimingConfig(warmup_ms=5, round_ms=3, budget_ms=20, min_rounds=4,
                                                         max_rounds=6))
    (v,) = verify_samples({RELU.task_id: RELU}, [Sample("off", RELU.task_id, "cpp", code)], cfg)
    assert v.status == "ok" and v.flags.count("extension_build_failed") == 1, (v.status, v.flags, v.message)
    assert "extension_build_failed: km_note_off_" in v.message, v.message
