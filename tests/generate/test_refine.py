"""The refine loop: turns, feedback, reset-to-last-good, reasoning in history,
resume; with a scripted verifier, and once with the real one on CPU."""

import pytest

from kernelmill.generate import SamplingParams, load_template, make_backend
from kernelmill.generate.fake_server import FakeOpenAIServer, Reply
from kernelmill.generate.refine import RefineConfig, refine
from kernelmill.records import Sample, Task, Verdict, read_jsonl

REF = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(32, 32)]


def get_init_inputs():
    return []
"""
TASKS = [Task("relu_a", REF), Task("relu_b", REF)]
COMPILER_LOG = "\n".join([f"note: included from line {i}" for i in range(400)]
                         + ["kernel.cu(12): error: identifier \"tid\" is undefined"])


def answer(tag: str) -> str:
    return f"<think>reasoning for {tag}</think>\n```python\nclass ModelNew:\n    pass  # {tag}\n```"


def scripted(tags):
    """Reply by turn: the number of assistant messages already in the history."""
    def responder(body, n):
        turn = sum(m["role"] == "assistant" for m in body["messages"])
        return Reply(content=answer(tags[min(turn, len(tags) - 1)]))
    return responder


class FakeVerify:
    def __init__(self, crash_on_call=None):
        self.calls, self.crash_on_call = 0, crash_on_call

    def __call__(self, tasks, samples):
        self.calls += 1
        if self.calls == self.crash_on_call:
            raise KeyboardInterrupt  # the run dies while verifying
        out = []
        for s in samples:
            tag = s.code.rsplit("# ", 1)[-1]
            v = Verdict(s.sample_id, s.task_id, status="ok", compiled=True, correct=True)
            if tag == "compile_error":
                v = Verdict(s.sample_id, s.task_id, status="compile_error", message=COMPILER_LOG)
            elif tag == "wrong":
                v = Verdict(s.sample_id, s.task_id, status="incorrect", compiled=True, max_abs_err=0.5,
                            max_rel_err=0.25, message="output 0: 12 of 1024 elements differ")
            elif tag in ("slow", "fast"):
                v.speedup, v.runtime_ms, v.ref_runtime_ms = (0.5, 2.0, 1.0) if tag == "slow" else (2.0, 0.5, 1.0)
            out.append(v)
        return out


def _refine(srv, tmp_path, verify, name="r.jsonl", template="cuda", tasks=TASKS, **cfg):
    cfg.setdefault("turns", 4)
    config = RefineConfig(params=SamplingParams(seed=5, max_tokens=128), examples="fallback", **cfg)
    backend = make_backend("openai", "fake-model", base_url=srv.url, backoff_s=0.001)
    out = tmp_path / name
    summary = refine(tasks, backend, load_template(template), verify, out, config=config)
    vpath = tmp_path / name.replace(".jsonl", ".verdicts.jsonl")
    return summary, read_jsonl(out, Sample), (read_jsonl(vpath, Verdict) if vpath.exists() else [])


def _bodies_by_turn(srv):
    out = {}
    for b in srv.bodies:
        out.setdefault(sum(m["role"] == "assistant" for m in b["messages"]), []).append(b)
    return out


def test_feedback_turns_carry_errors_mismatches_and_speedups(tmp_path):
    with FakeOpenAIServer(scripted(["compile_error", "wrong", "slow", "fast"])) as srv:
        summary, samples, verdicts = _refine(srv, tmp_path, FakeVerify())
        bodies = _bodies_by_turn(srv)
    assert summary.solved_by_turn == [0, 0, 2, 2] and summary.stopped == {"solved": 2}
    assert len(samples) == 8 and len(verdicts) == 8
    a = sorted((s for s in samples if s.task_id == "relu_a"), key=lambda s: s.turn)
    assert [s.turn for s in a] == [0, 1, 2, 3]
    assert a[0].parent_id is None and [s.parent_id for s in a[1:]] == [s.sample_id for s in a[:-1]]
    fb1 = bodies[1][0]["messages"][-1]["content"]
    assert "failed to compile" in fb1 and 'identifier "tid" is undefined' in fb1
    assert "note: included from line 3\n" not in fb1 and len(fb1) < 3000  # the log was trimmed
    fb2 = bodies[2][0]["messages"][-1]["content"]
    assert "do not match" in fb2 and "12 of 1024 elements differ" in fb2 and "absolute error 0.5" in fb2
    fb3 = bodies[3][0]["messages"][-1]["content"]
    assert "speedup of 0.50x" in fb3 and "Make it faster" in fb3
    # earlier reasoning is dropped from the history by default
    history = bodies[3][0]["messages"]
    assert len(history) == 8 and not any("<think>" in m["content"] for m in history if m["role"] == "assistant")


def test_reset_to_last_good_and_kept_reasoning(tmp_path):
    tags = ["slow", "compile_error", "fast"]  # one chain: the n-th request is turn n-1
    with FakeOpenAIServer(lambda b, n: Reply(content=answer(tags[n - 1]))) as srv:
        summary, samples, _ = _refine(srv, tmp_path, FakeVerify(), tasks=TASKS[:1], reset_to_last_good=True,
                                      keep_reasoning=True)
        bodies = srv.bodies
    s = sorted(samples, key=lambda x: x.turn)
    assert [x.meta["answer"].split("# ")[-1].rstrip("`\n") for x in s] == ["slow", "compile_error", "fast"]
    # turn 2 goes on from turn 0 (the last correct kernel), not from the failed turn 1
    assert s[2].parent_id == s[0].sample_id and s[1].parent_id == s[0].sample_id
    last = bodies[-1]["messages"]
    assert len(last) == 4 and "# slow" in last[2]["content"] and last[2]["content"].startswith("<think>")
    assert "next attempt failed" in last[3]["content"] and "last correct kernel" in last[3]["content"]
    assert "speedup of 0.50x" in last[3]["content"]


def test_no_early_stop_runs_all_turns(tmp_path):
    with FakeOpenAIServer(scripted(["fast"])) as srv:
        summary, samples, _ = _refine(srv, tmp_path, FakeVerify(), tasks=TASKS[:1], turns=3, stop_speedup=None)
    assert len(samples) == 3 and summary.stopped == {"max_turns": 1}


def test_resume_after_interrupt_replays_the_same_conversation(tmp_path):
    script = ["compile_error", "wrong", "slow", "fast"]
    with FakeOpenAIServer(scripted(script)) as ref_srv:
        _refine(ref_srv, tmp_path, FakeVerify(), name="ref.jsonl")
        ref_bodies = [b["messages"] for b in ref_srv.bodies]
    with FakeOpenAIServer(scripted(script)) as srv:
        with pytest.raises(KeyboardInterrupt):
            _refine(srv, tmp_path, FakeVerify(crash_on_call=2))  # dies verifying turn 1
        first = len(srv.bodies)
        summary, samples, verdicts = _refine(srv, tmp_path, FakeVerify())
        bodies = [b["messages"] for b in srv.bodies]
    assert first == 4 and len(bodies) == 8  # turns 0-1 not asked again
    keys = [(s.task_id, s.turn) for s in samples]
    assert len(keys) == len(set(keys)) == 8 and len({v.sample_id for v in verdicts}) == len(verdicts) == 8
    key = lambda msgs: repr(msgs)
    assert sorted(map(key, bodies)) == sorted(map(key, ref_bodies))
    assert summary.solved_by_turn == [0, 0, 2, 2]


def test_request_failure_ends_the_chain(tmp_path):
    with FakeOpenAIServer(lambda b, n: Reply(status=400, raw="{}")) as srv:
        summary, samples, verdicts = _refine(srv, tmp_path, FakeVerify(), tasks=TASKS[:1])
    assert len(samples) == 1 and not verdicts and summary.stopped == {"request_failed": 1}


def test_refine_with_the_real_verifier_on_cpu(tmp_path):
    verify_mod = pytest.importorskip("kernelmill.verify")
    config = verify_mod.VerifyConfig(device="cpu")
    if hasattr(config, "time"):
        config.time = False  # correctness is what this test is about; timing costs seconds

    def verify(tasks, samples):
        return verify_mod.verify_samples(tasks, samples, config, store=str(tmp_path / "store.sqlite"))

    wrong = "import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x.clamp_min(0) * 2\n"
    right = wrong.replace(" * 2", "")

    def responder(body, n):
        turn = sum(m["role"] == "assistant" for m in body["messages"])
        return Reply(content=f"```python\n{wrong if turn == 0 else right}```")

    with FakeOpenAIServer(responder) as srv:
        summary, samples, verdicts = _refine(srv, tmp_path, verify, template="torch", tasks=TASKS[:1], turns=3)
        feedback = srv.bodies[-1]["messages"][-1]["content"]
    assert [s.language for s in samples] == ["torch", "torch"]
    by_id = {v.sample_id: v for v in verdicts}
    statuses = [by_id[s.sample_id].status for s in sorted(samples, key=lambda s: s.turn)]
    assert statuses == ["incorrect", "ok"]
    assert "do not match" in feedback and "Largest absolute error" in feedback
    assert summary.solved_by_turn == [0, 1, 1] and summary.stopped == {"solved": 1}
