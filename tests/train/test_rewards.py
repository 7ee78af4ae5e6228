"""The TileLang reward rule, through fake, HTTP and real verifiers."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from kernelmill.records import Verdict, to_dict
from kernelmill.train import HttpVerifier, KernelReward, kernel_reward

TASK = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
'''
GOOD = TASK.replace("class Model(", "class ModelNew(").split("def get_inputs")[0]
WRONG = GOOD.replace("torch.relu(x)", "x + 1")
BROKEN = "import torch\nclass ModelNew(:\n    pass\n"


def fenced(code: str, think: str = "relu is elementwise") -> str:
    return f"<think>\n{think}\n</think>\n\n```python\n{code}\n```"


def v(status, **kw):
    return Verdict(sample_id="s", task_id="t", status=status, **kw)


@pytest.mark.parametrize("verdict,reward", [
    (v("compile_error"), -1.0),
    (v("rejected", compiled=True, correct=True, speedup=9.0), -1.0),
    (v("incorrect", compiled=True), -0.5),
    (v("runtime_error", compiled=True), -0.5),
    (v("timeout", compiled=False), -1.0),
    (v("ok", compiled=True, correct=True, speedup=2.0), 2.3),
    (v("ok", compiled=True, correct=True, speedup=0.5), 0.8),
    (v("ok", compiled=True, correct=True), 1.3),  # untimed counts as eager speed
])
def test_reward_rule(verdict, reward):
    assert kernel_reward(verdict) == pytest.approx(reward)


class FakeVerifier:
    """Judges by marker strings in the code; records what it was asked."""

    def __init__(self):
        self.calls = []

    def __call__(self, tasks, samples):
        self.calls.append((tasks, samples))
        out = []
        for s in samples:
            if "FAST" in s.code:
                out.append(Verdict(s.sample_id, s.task_id, "ok", compiled=True, correct=True, speedup=3.0))
            elif "WRONG" in s.code:
                out.append(Verdict(s.sample_id, s.task_id, "incorrect", compiled=True))
            elif "CHEAT" in s.code:
                out.append(Verdict(s.sample_id, s.task_id, "rejected", compiled=True, message="reads reference"))
            else:
                out.append(Verdict(s.sample_id, s.task_id, "compile_error", message="syntax"))
        return out


def test_kernel_reward_function_with_fake_verifier():
    fake = FakeVerifier()
    reward = KernelReward(fake)
    completions = [
        [{"role": "assistant", "content": fenced("class ModelNew: FAST")}],
        [{"role": "assistant", "content": fenced("class ModelNew: WRONG")}],
        [{"role": "assistant", "content": fenced("class ModelNew: CHEAT")}],
        [{"role": "assistant", "content": "I cannot write this kernel."}],  # no code at all
        fenced("class ModelNew: oops"),  # plain-text completion
    ]
    n = len(completions)
    got = reward(completions, task_id=["t1"] * n, language=["torch"] * n, task_code=["code"] * n)
    assert got == pytest.approx([3.3, -0.5, -1.0, -1.0, -1.0])
    # the answer without code never reached the verifier; the task travelled with the row
    (tasks, samples), = fake.calls
    assert len(samples) == 4 and tasks[0].code == "code"
    assert samples[0].code == "class ModelNew: FAST" and samples[0].language == "torch"


def test_missing_task_is_a_clear_error():
    with pytest.raises(KeyError, match="no task_code column"):
        KernelReward(FakeVerifier())([fenced("x")], task_id=["t9"], language=["torch"])


def test_http_verifier_round_trip():
    seen = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.update(body, path=self.path)
            verdicts = [to_dict(Verdict(s["sample_id"], s["task_id"], "incorrect", compiled=True))
                        for s in body["samples"]]
            data = json.dumps({"verdicts": verdicts}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        reward = KernelReward(HttpVerifier(f"http://127.0.0.1:{server.server_port}"))
        got = reward([fenced("class ModelNew: pass")], task_id=["t"], language=["torch"], task_code=["TASK"])
    finally:
        server.shutdown()
    assert got == [-0.5]
    assert seen["path"] == "/verify" and seen["tasks"][0]["code"] == "TASK"


def test_http_verifier_unreachable():
    reward = KernelReward(HttpVerifier("http://127.0.0.1:9", timeout=2))
    with pytest.raises(RuntimeError, match="verifier at http://127.0.0.1:9/verify failed"):
        reward([fenced("class ModelNew: pass")], task_id=["t"], language=["torch"], task_code=["T"])


@pytest.mark.slow
def test_real_verifier_on_torch_candidates(tmp_path):
    """The real verify API on CPU: correct, wrong and broken candidates get their rungs."""
    pytest.importorskip("kernelmill.verify")
    from kernelmill.train import LocalVerifier

    verifier = LocalVerifier({"device": "cpu", "cache_dir": str(tmp_path / "cache")})
    reward = KernelReward(verifier)
    got = reward([fenced(GOOD), fenced(WRONG), fenced(BROKEN)], task_id=["relu"] * 3,
                 language=["torch"] * 3, task_code=[TASK] * 3)
    assert got[1] == -0.5 and got[2] == -1.0
    assert got[0] > 0.3  # 0.3 + measured speedup (about 1 for the same code)


def test_local_verifier_keeps_one_verifier_across_calls(tmp_path, monkeypatch):
    """A GRPO run calls the verifier once per turn: one long-lived Verifier serves them all (its
    spares and reference profiles carry over), until close()."""
    from kernelmill.records import Sample, Task
    from kernelmill.train import LocalVerifier
    from kernelmill.verify import runner, session

    made = []

    class Counting(runner.Verifier):
        def __init__(self, *a, **k):
            made.append(self)
            super().__init__(*a, **k)

    monkeypatch.setattr(session, "Verifier", Counting)  # what a VerifySession opens
    verifier = LocalVerifier({"device": "cpu", "cache_dir": str(tmp_path / "cache")},
                             store=str(tmp_path / "v.sqlite"))
    task = Task(task_id="relu", code=TASK)
    for i in range(3):  # not valid Python: a verdict without running anything
        (v,) = verifier([task], [Sample(f"s{i}", "relu", "torch", f"class ModelNew(:  # {i}")])
        assert v.status == "compile_error" and v.sample_id == f"s{i}"
    assert len(made) == 1
    verifier.close()
    verifier([task], [Sample("s9", "relu", "torch", "class ModelNew(:")])
    assert len(made) == 2  # reopened after close
    verifier.close()
