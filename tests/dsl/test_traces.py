from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from kernelmill.dsl.traces import prompt_text, score_traces, task_prompt_for, top_fraction, trace_inputs  # noqa: E402
from kernelmill.dsl import get_dsl  # noqa: E402


def _manual(model, tok, prompt, trace):
    pi = tok(prompt, add_special_tokens=False)["input_ids"]
    ti = tok(trace, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([pi + ti])
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=ids).logits[0].float(), -1)
    return sum(float(logp[len(pi) - 1 + j, t]) for j, t in enumerate(ti)), len(ti)


def test_batched_scores_equal_one_by_one_log_probs(tiny_lm):
    model, tok = tiny_lm
    prompts = ["class Model def forward relu", "torch.sigmoid x", "matmul softmax layer_norm inputs outputs float32"]
    traces = ["Step 1 map the PyTorch operation to a kernel.",
              "each thread reads one element and writes one. memory access parallelisation",
              "Step 2 block thread shared fragment"]
    batched = score_traces(model, tok, prompts, traces, batch_size=3)
    single = score_traces(model, tok, prompts, traces, batch_size=1)
    for b, s, p, t in zip(batched, single, prompts, traces):
        want, n = _manual(model, tok, p, t)
        assert b.tokens == n > 0
        assert b.logprob == pytest.approx(want, abs=1e-3) and s.logprob == pytest.approx(want, abs=1e-3)
        assert b.logprob < 0
    mean = score_traces(model, tok, prompts, traces, batch_size=2, reduce="mean")
    assert [m.logprob for m in mean] == pytest.approx([b.logprob / b.tokens for b in batched], abs=1e-4)


def test_top_quartile_keeps_the_most_likely_traces(tiny_lm):
    model, tok = tiny_lm
    prompt = prompt_text(task_prompt_for({"task_id": "t", "task_code": "import torch\n"}, "tilelang"), tok)
    assert "TileLang" in prompt
    traces = [f"Step {i} each thread reads one element" + " memory" * (i % 4) for i in range(8)]
    scored = score_traces(model, tok, [prompt] * 8, traces, batch_size=4, max_length=500)
    keep = top_fraction([s.logprob for s in scored], 0.25)
    assert len(keep) == 2
    best = sorted(range(8), key=lambda i: -scored[i].logprob)[:2]
    assert keep == best
    assert top_fraction([1.0, 3.0, 2.0, 3.0, 0.0], 0.25) == [1, 3]
    assert top_fraction([], 0.25) == []
    with pytest.raises(ValueError):
        top_fraction([1.0], 0)


def test_trace_prompts_use_the_dsl_trace_template():
    spec = get_dsl("tilelang")
    tpl = spec.load_trace_template()
    inp = trace_inputs([{"task_id": "a", "task_code": "import torch\n# ref", "code": "import tilelang\n# new"}])[0]
    msgs = tpl.render(inp.variables)
    assert msgs[-1]["role"] == "user" and "# ref" in msgs[-1]["content"] and "# new" in msgs[-1]["content"]
    assert "memory access" in msgs[-1]["content"]
    assert not math.isnan(len(msgs))
