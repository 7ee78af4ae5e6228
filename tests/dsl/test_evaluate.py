"""Held-out evaluation per round: the pass@k estimator, the rtol setting, and
the loop's table (a scripted server, the real verifier on CPU)."""

from __future__ import annotations

import json
import math
from itertools import combinations

import pytest

from kernelmill.dsl import Bootstrap, BootstrapConfig, Embedder, get_dsl, verifier_fn
from kernelmill.dsl.evaluate import PAPER_RTOL, compiled, markdown_table, pass_at_k, summarize, with_rtol
from kernelmill.dsl.retrieval import CorpusEntry
from kernelmill.generate import make_backend
from kernelmill.generate.fake_server import FakeOpenAIServer, Reply
from kernelmill.records import Sample, Verdict, read_jsonl
from kernelmill.tasks import load_tasks


def _brute_pass_at_k(n: int, c: int, k: int) -> float:
    """Share of the k-subsets of the n samples that hold a correct one."""
    good = [True] * c + [False] * (n - c)
    subsets = list(combinations(range(n), k))
    return sum(any(good[i] for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n, c, k", [(5, 0, 5), (5, 1, 5), (5, 1, 1), (6, 2, 3), (10, 3, 5), (7, 7, 2), (4, 1, 2)])
def test_pass_at_k_is_the_unbiased_estimator(n, c, k):
    assert pass_at_k(n, c, k) == pytest.approx(_brute_pass_at_k(n, c, k))
    assert pass_at_k(n, c, 1) == pytest.approx(c / n)


def test_pass_at_k_needs_k_samples():
    assert pass_at_k(3, 1, 5) is None
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)


def test_rtol_is_applied_to_every_dtype_through_the_verify_config():
    verify_mod = pytest.importorskip("kernelmill.verify")
    base = verify_mod.VerifyConfig(device="cpu")
    cfg = with_rtol(base, PAPER_RTOL)
    assert set(cfg.tolerances) == set(base.tolerances)
    assert all(rtol == 1e-5 and atol == base.tolerances[d][0] for d, (atol, rtol) in cfg.tolerances.items())
    assert base.tolerances["float32"][1] == 1e-4  # the base config is not changed
    assert cfg.answer_key("cpu") != base.answer_key("cpu")  # verdicts under another rtol are stored apart
    assert with_rtol(base, None) is base


def test_summary_rates_and_statuses():
    samples = [Sample(f"s{i}", t, "torch", "x") for i, t in enumerate(["a"] * 3 + ["b"] * 3)]
    verdicts = [Verdict("s0", "a", "ok", compiled=True, correct=True), Verdict("s1", "a", "incorrect", compiled=True),
                Verdict("s2", "a", "compile_error"), Verdict("s3", "b", "runtime_error", compiled=True),
                Verdict("s4", "b", "runtime_error", compiled=False)]  # s5 has no verdict
    row = summarize(["a", "b"], samples, verdicts, k=2, expected=3)
    assert row["samples"] == 6 and row["compiled"] == 3 and row["correct"] == 1
    assert row["compile_rate"] == pytest.approx(0.5) and row["correct_rate"] == pytest.approx(1 / 6)
    assert row["pass@1"] == pytest.approx((1 / 3 + 0) / 2)
    assert row["pass@2"] == pytest.approx((1 - 1 / 3 + 0) / 2)
    assert row["statuses"] == {"compile_error": 1, "incorrect": 1, "no_verdict": 1, "ok": 1, "runtime_error": 2}
    assert not compiled(None) and compiled(Verdict("x", "a", "incorrect"))
    table = markdown_table([{**row, "round": 0, "corpus_size": 4}], PAPER_RTOL)
    assert "| 0 | 4 | 6 | 3 | 1 | 0.500 | 0.167 | 0.167 | 0.333 |" in table and "rtol 1e-05" in table


HEAD = "import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
RELU = HEAD + "    def forward(self, x):\n        return x.clamp_min(0)\n"
SIGMOID = HEAD + "    def forward(self, x):\n        return 1.0 / (1.0 + torch.exp(-x))\n"
LEAKY_RIGHT = HEAD + ("    def __init__(self, negative_slope: float = 0.01):\n        super().__init__()\n"
                      "        self.negative_slope = negative_slope\n\n"
                      "    def forward(self, x):\n        return torch.where(x > 0, x, x * self.negative_slope)\n")
LEAKY_WRONG = HEAD + "    def forward(self, x):\n        return x.clamp_min(0)\n"
BROKEN = HEAD + "    def forward(self, x)\n        return x\n"


def test_loop_writes_one_eval_row_per_round_and_never_uses_held_out_kernels(tmp_path, tiny_embedder_path):
    pytest.importorskip("matplotlib")
    verify_mod = pytest.importorskip("kernelmill.verify")
    ts = load_tasks("builtin").by_id()
    train = [ts["level1/01_ReLU"], ts["level1/03_Sigmoid"]]
    held = [ts["level1/05_LeakyReLU"]]
    served = {"leaky": 0}

    def responder(body, n):
        user = body["messages"][-1]["content"]
        code = user[user.rfind("The PyTorch code you need to optimize"):]
        if "leaky_relu" in code:
            answer = (LEAKY_RIGHT, LEAKY_WRONG, BROKEN)[served["leaky"] % 3]
            served["leaky"] += 1
        else:
            answer = RELU if "torch.relu" in code else SIGMOID
        return Reply(content=f"```python\n{answer}```\n")

    seeds = [CorpusEntry("seed:add", "example/add", "import torch\n# a + b", "# ModelNew: a + b", "torch"),
             CorpusEntry("seed:leaky", "level1/05_LeakyReLU", held[0].code, LEAKY_RIGHT, "torch")]
    vcfg = verify_mod.VerifyConfig(device="cpu")
    vcfg.time = False
    cfg = BootstrapConfig(tasks_per_round=1, max_attempts=1, eval_samples=3, eval_k=2)
    out = tmp_path / "run"
    embedder = Embedder(tiny_embedder_path, device="cpu")
    store = out / "verify.sqlite"
    with FakeOpenAIServer(responder) as srv:
        boot = Bootstrap(get_dsl("torch"), train + held, out, embedder, verifier_fn(vcfg, store), cfg, seeds,
                         heldout=held, eval_verify=verifier_fn(with_rtol(vcfg, PAPER_RTOL), store))
        state = boot.run(make_backend("openai", "fake-model", base_url=srv.url, backoff_s=0.001))

    assert state["heldout"] == ["level1/05_LeakyReLU"] and state["heldout_seeds_left_out"] == 1
    assert "level1/05_LeakyReLU" not in state["order"] and state["seed_size"] == 1
    corpus = [json.loads(line) for line in (out / "corpus.jsonl").read_text().splitlines()]
    assert all(e["task_id"] != "level1/05_LeakyReLU" for e in corpus) and len(corpus) == 3
    rows = json.loads((out / "eval.json").read_text())["rows"]
    assert [r["round"] for r in rows] == [0, 1, 2]
    assert [r["corpus_size"] for r in rows] == [1, 2, 3]
    for r in rows:  # each round: one right, one wrong, one that does not compile
        assert r["samples"] == 3 and r["correct"] == 1 and r["compiled"] == 2
        assert r["pass@1"] == pytest.approx(1 / 3) and r["pass@2"] == pytest.approx(2 / 3)
    # after round 1 the held-out prompt retrieves the kernel verified in round 1
    got = [json.loads(line) for line in (out / "round_001" / "eval" / "retrieved.jsonl").read_text().splitlines()]
    assert {g["task_id"] for g in got[0]["retrieved"]} == {"example/add", state["rounds"][0]["tasks"][0]}
    assert len(read_jsonl(out / "round_000" / "eval" / "verdicts.jsonl", Verdict)) == 3
    md = (out / "eval.md").read_text()
    assert md.count("\n| ") == 4 and "pass@2" in md and "rtol 1e-05" in md
    assert (out / "eval.png").stat().st_size > 1000

    # a re-run with another split is refused; the same split does nothing new
    with pytest.raises(ValueError, match="keeps its split"):
        Bootstrap(get_dsl("torch"), train + held, out, embedder, verifier_fn(vcfg, store), cfg, heldout=[])
    n_before = served["leaky"]
    with FakeOpenAIServer(responder) as srv:
        Bootstrap(get_dsl("torch"), train + held, out, embedder, verifier_fn(vcfg, store), cfg, heldout=held).run(
            make_backend("openai", "fake-model", base_url=srv.url, backoff_s=0.001))
    assert served["leaky"] == n_before and len(json.loads((out / "eval.json").read_text())["rows"]) == 3
    assert not math.isnan(rows[-1]["compile_rate"])


def test_an_interrupted_evaluation_is_finished_by_the_rerun(tmp_path, tiny_embedder_path):
    ts = load_tasks("builtin").by_id()
    train, held = [ts["level1/01_ReLU"]], [ts["level1/05_LeakyReLU"]]
    cfg = BootstrapConfig(tasks_per_round=1, max_attempts=1, eval_samples=2, eval_k=2)
    out = tmp_path / "run"
    embedder = Embedder(tiny_embedder_path, device="cpu")
    calls = []

    def responder(body, n):
        calls.append(n)
        return Reply(content=f"```python\n{RELU}```\n")

    def verify(tasks_, samples):
        return [Verdict(s.sample_id, s.task_id, "ok", compiled=True, correct=True) for s in samples]

    def exploding(tasks_, samples):
        raise KeyboardInterrupt

    with FakeOpenAIServer(responder) as srv:
        boot = Bootstrap(get_dsl("torch"), train, out, embedder, verify, cfg, heldout=held, eval_verify=exploding)
        with pytest.raises(KeyboardInterrupt):
            boot.run(make_backend("openai", "fake-model", base_url=srv.url, backoff_s=0.001))
    assert len(calls) == 2 and json.loads((out / "state.json").read_text())["evals"] == []
    with FakeOpenAIServer(responder) as srv:
        Bootstrap(get_dsl("torch"), train, out, embedder, verify, cfg, heldout=held).run(
            make_backend("openai", "fake-model", base_url=srv.url, backoff_s=0.001))
    # round 0's samples were kept; round 1 ran (1 request) and was evaluated (2 requests)
    assert len(calls) == 2 + 1 + 2
    rows = json.loads((out / "eval.json").read_text())["rows"]
    assert [r["round"] for r in rows] == [0, 1] and all(r["pass@2"] == 1.0 for r in rows)
