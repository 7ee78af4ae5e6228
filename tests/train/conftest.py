"""Shared fixtures: a tiny chat model built once per session (no downloads)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

# asked of the installed packages, not imported: importing peft takes ~3 s (transformers,
# torch._dynamo), in each xdist worker's collection, and the tests import it when they run
for _needed in ("trl", "peft"):
    if importlib.util.find_spec(_needed) is None:
        pytest.skip(f"{_needed} is not installed (pip install 'kernelmill[train]')", allow_module_level=True)

OPS = ["relu", "gelu", "tanh", "exp", "sigmoid", "abs"]
SYSTEM = "You write fast GPU kernels."


def sft_rows() -> list[dict]:
    return [{"messages": [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Write a kernel for {op}."},
        {"role": "assistant", "content": f"<think>\n{op} is elementwise\n</think>\n\n```python\ny = torch.{op}(x)\n```"}],
        "task_id": f"t{i}", "sample_id": f"s{i}", "source_part": "a"} for i, op in enumerate(OPS)]


def feedback_texts() -> list[str]:
    """Multi-turn episodes' feedback turns (kernelmill.chat's), so the tiny tokenizer has their words."""
    from kernelmill.chat import feedback_message, load_template
    from kernelmill.records import Sample, Verdict

    sample, tpl = Sample("s", "t", "torch", "pass"), load_template("feedback")
    verdicts = [Verdict("s", "t", "compile_error"), Verdict("s", "t", "ok", compiled=True, correct=True, speedup=1.0)]
    return [feedback_message(tpl, sample, v, require="ModelNew")["content"] for v in verdicts]


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    from kernelmill.train import build_tiny_model

    texts = [m["content"] for r in sft_rows() for m in r["messages"]]
    texts += feedback_texts()
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", texts * 4, hidden=64, layers=2)


@pytest.fixture(scope="session", name="sft_rows")
def sft_rows_fixture() -> list[dict]:
    return sft_rows()
