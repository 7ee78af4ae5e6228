"""The bootstrap loop end to end on CPU: a scripted OpenAI-compatible server
answers with PyTorch-language candidates (TileLang candidates need a GPU to
run), some right, some wrong, some not compiling; the real verifier judges
them; the corpus grows by exactly the verified kernels."""

from __future__ import annotations

import json
import re

import pytest

from kernelmill.dsl import Bootstrap, BootstrapConfig, Corpus, Embedder, get_dsl, verifier_fn
from kernelmill.dsl.retrieval import CorpusEntry
from kernelmill.generate import make_backend
from kernelmill.generate.fake_server import FakeOpenAIServer, Reply
from kernelmill.records import Verdict, read_jsonl
from kernelmill.tasks import load_tasks

TASK_IDS = ["level1/01_ReLU", "level1/02_GELU", "level1/03_Sigmoid", "level1/05_LeakyReLU", "level1/06_Sum"]
HEAD = "import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
RIGHT = {
    "torch.relu(x)": HEAD + "    def forward(self, x):\n        return x.clamp_min(0)\n",
    "torch.sigmoid(x)": HEAD + "    def forward(self, x):\n        return 1.0 / (1.0 + torch.exp(-x))\n",
    "torch.sum(x, dim=-1": HEAD + "    def forward(self, x):\n        return x.sum(-1, keepdim=True)\n",
}
WRONG_GELU = HEAD + "    def forward(self, x):\n        return x * 0.5\n"
BROKEN = HEAD + "    def forward(self, x)\n        return x\n"  # a syntax error: does not compile
WRONG_SUM = HEAD + "    def forward(self, x):\n        return x.mean(-1, keepdim=True)\n"


def _task_code(body) -> str:
    user = body["messages"][-1]["content"]
    return re.findall(r"```python\n(.*?)```", user, re.S)[-1]


def responder_factory(calls):
    def responder(body, n):
        code = _task_code(body)
        calls.append(code)
        for key, answer in RIGHT.items():
            if key in code:
                if key.startswith("torch.sum") and sum(key in c for c in calls) == 1:
                    answer = WRONG_SUM  # wrong the first time, right when retried
                break
        else:
            answer = WRONG_GELU if "F.gelu" in code else BROKEN
        return Reply(content=f"<think>\nmap it\n</think>\n\n```python\n{answer}```\n")
    return responder


@pytest.fixture(scope="module")
def tasks():
    ts = load_tasks("builtin").by_id()
    return [ts[t] for t in TASK_IDS]


def test_loop_end_to_end_on_cpu(tmp_path, tasks, tiny_embedder_path):
    pytest.importorskip("matplotlib")
    verify_mod = pytest.importorskip("kernelmill.verify")
    vcfg = verify_mod.VerifyConfig(device="cpu")
    vcfg.time = False
    spec = get_dsl("torch")
    seed = CorpusEntry("seed:add", "example/add", "import torch\n# a + b", "import torch\n# ModelNew: a + b",
                       "torch", origin="seed:test")
    out = tmp_path / "run"
    cfg = BootstrapConfig(k=5, samples_per_task=1, tasks_per_round=3, max_attempts=2)
    calls: list[str] = []
    embedder = Embedder(tiny_embedder_path, device="cpu")
    with FakeOpenAIServer(responder_factory(calls)) as srv:
        backend = make_backend("openai", "fake-model", base_url=srv.url, backoff_s=0.001)
        boot = Bootstrap(spec, tasks, out, embedder, verifier_fn(vcfg, out / "verify.sqlite"), cfg, seeds=[seed])
        # easy to hard: the single elementwise ops (ReLU, GELU, Sigmoid, LeakyReLU) before the reduction
        assert boot.state["order"][-1] == "level1/06_Sum"
        state = boot.run(backend)
        first_prompt = srv.bodies[0]["messages"][-1]["content"]

    rounds = state["rounds"]
    order = state["order"]
    # round 1: the 3 easiest; round 2: the 2 untried ones first, then a retry
    assert rounds[0]["tasks"] == order[:3]
    assert rounds[1]["tasks"][:2] == order[3:] and rounds[1]["tasks"][2] in order[:3]
    verdicts = [v for r in rounds for v in read_jsonl(out / f"round_{r['round']:03d}" / "verdicts.jsonl", Verdict)]
    statuses = sorted({v.status for v in verdicts})
    assert "ok" in statuses and "incorrect" in statuses and "compile_error" in statuses, statuses
    corpus = Corpus.load(out / "corpus.jsonl")
    # the corpus grows by exactly the verified kernels
    n_ok = sum(v.status == "ok" for v in verdicts)
    assert len(corpus) == 1 + n_ok == 1 + 3
    assert {e.task_id for e in corpus.entries if e.origin == "bootstrap"} == {
        "level1/01_ReLU", "level1/03_Sigmoid", "level1/06_Sum"}
    assert sorted(state["solved"]) == ["level1/01_ReLU", "level1/03_Sigmoid", "level1/06_Sum"]
    # GELU and LeakyReLU were tried max_attempts times, Sum solved on its retry
    assert state["attempts"]["level1/02_GELU"] == 2 and state["attempts"]["level1/06_Sum"] == 2
    # the first prompt holds the seed, retrieved, and the task's features
    assert "Example 1 (task example/add" in first_prompt and "elementwise" in first_prompt
    # later prompts retrieve the kernels verified in earlier rounds
    retrieved = [json.loads(l) for r in rounds[1:] for l in
                 (out / f"round_{r['round']:03d}" / "retrieved.jsonl").read_text().splitlines()]
    assert any(g["task_id"] == "level1/01_ReLU" for row in retrieved for g in row["retrieved"])
    growth = json.loads((out / "growth.json").read_text())
    sizes = [p["corpus_size"] for p in growth["points"]]
    assert sizes[0] == 1 and sizes[-1] == 4 and sizes == sorted(sizes)
    assert (out / "growth.png").stat().st_size > 1000
    assert growth["points"][1]["success_rate"] == pytest.approx(2 / 3)

    # resuming a finished run does nothing new: no request, no new corpus entry
    n_requests = len(calls)
    with FakeOpenAIServer(responder_factory(calls)) as srv:
        backend = make_backend("openai", "fake-model", base_url=srv.url, backoff_s=0.001)
        again = Bootstrap(spec, tasks, out, embedder, verifier_fn(vcfg, out / "verify.sqlite"), cfg, seeds=[seed])
        again.run(backend)
    assert len(calls) == n_requests and len(Corpus.load(out / "corpus.jsonl")) == 4


def test_interrupted_round_resumes_with_the_same_tasks(tmp_path, tasks, tiny_embedder_path):
    spec = get_dsl("torch")
    out = tmp_path / "run"
    cfg = BootstrapConfig(samples_per_task=1, tasks_per_round=2, max_rounds=1)
    embedder = Embedder(tiny_embedder_path, device="cpu")

    def exploding_verify(tasks_, samples):
        raise KeyboardInterrupt  # the run dies after generating, before verifying

    calls: list[str] = []
    with FakeOpenAIServer(responder_factory(calls)) as srv:
        backend = make_backend("openai", "fake-model", base_url=srv.url, backoff_s=0.001)
        boot = Bootstrap(spec, tasks[:3], out, embedder, exploding_verify, cfg)
        with pytest.raises(KeyboardInterrupt):
            boot.run(backend)
    state = json.loads((out / "state.json").read_text())
    assert state["in_progress"]["round"] == 1 and state["rounds"] == []
    batch = state["in_progress"]["tasks"]
    assert len(calls) == 2

    seen = []

    def fake_verify(tasks_, samples):
        seen.extend(s.task_id for s in samples)
        return [Verdict(s.sample_id, s.task_id, "incorrect") for s in samples]

    with FakeOpenAIServer(responder_factory(calls)) as srv:
        backend = make_backend("openai", "fake-model", base_url=srv.url, backoff_s=0.001)
        Bootstrap(spec, tasks[:3], out, embedder, fake_verify, cfg).run(backend)
    # no new request: the samples were written before the interruption
    assert len(calls) == 2 and sorted(seen) == sorted(batch)
    state = json.loads((out / "state.json").read_text())
    assert state["in_progress"] is None and state["rounds"][0]["tasks"] == batch


def test_bootstrap_command(tmp_path, tiny_embedder_path):
    pytest.importorskip("matplotlib")
    import typer
    from typer.testing import CliRunner

    from kernelmill.cli.bootstrap import bootstrap_command

    app = typer.Typer()
    app.command()(bootstrap_command)
    calls: list[str] = []
    with FakeOpenAIServer(responder_factory(calls)) as srv:
        res = CliRunner().invoke(app, [
            "builtin", "--out", str(tmp_path / "run"), "--dsl", "torch", "--model", "fake-model",
            "--base-url", srv.url, "--tasks", "level1/01_ReLU,level1/05_LeakyReLU", "--embedder", tiny_embedder_path,
            "--device", "cpu", "--no-time", "--per-round", "2", "--max-attempts", "1"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    assert summary["solved"] == 1 and summary["tasks"] == 2
    assert (tmp_path / "run" / "growth.png").exists() and len(calls) == 2
