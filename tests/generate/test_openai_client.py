"""The OpenAI-compatible backend against a scripted server on 127.0.0.1."""

import threading
import time

import pytest

from kernelmill.generate import (AuthError, BackendError, GenerateConfig, SamplingParams, ServerUnreachable, generate,
                                 load_template, make_backend, prompt_inputs)
from kernelmill.generate.fake_server import FakeOpenAIServer, Reply
from kernelmill.records import Sample, Task, read_jsonl

CODE = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
ANSWER = f"```python\n{CODE}```"
TASKS = [Task(f"t{i}", "import torch\nclass Model(torch.nn.Module):\n    pass\ndef get_inputs():\n    return []\n")
         for i in range(3)]


def run(server: FakeOpenAIServer, tmp_path, n=1, tasks=TASKS, **opts) -> list[Sample]:
    tpl = load_template("cuda")
    cfg = GenerateConfig(n=n, params=SamplingParams(max_tokens=64, seed=7), examples="fallback")
    opts.setdefault("backoff_s", 0.001)
    backend = make_backend("openai", "fake-model", base_url=server.url, **opts)
    out = tmp_path / "samples.jsonl"
    generate(prompt_inputs(tasks, tpl, cfg), backend, tpl, out, cfg)
    return sorted(read_jsonl(out, Sample), key=lambda s: (s.task_id, s.meta["sample_index"]))


def test_reasoning_field_and_usage_reasoning_tokens(tmp_path):
    usage = {"prompt_tokens": 50, "completion_tokens": 90, "total_tokens": 140,
             "completion_tokens_details": {"reasoning_tokens": 77}}
    with FakeOpenAIServer(lambda b, n: Reply(content=ANSWER, reasoning="think hard", usage=usage)) as srv:
        samples = run(srv, tmp_path)
        body = srv.bodies[0]
    s = samples[0]
    assert s.reasoning == "think hard" and s.code == CODE.rstrip("\n")
    assert s.reasoning_tokens == 77 and s.meta["reasoning_tokens_approx"] is False
    assert s.meta["usage"]["completion_tokens"] == 90 and s.meta["finish_reason"] == "stop"
    assert s.language == "cuda" and s.model == "fake-model" and s.turn == 0
    assert body["max_tokens"] == 64 and body["model"] == "fake-model" and "seed" in body


def test_inline_think_without_usage_is_marked_approximate(tmp_path):
    with FakeOpenAIServer(lambda b, n: Reply(content=f"<think>{'word ' * 40}</think>{ANSWER}")) as srv:
        s = run(srv, tmp_path)[0]
    assert s.reasoning.startswith("word") and s.meta["reasoning_tokens_approx"] is True and s.reasoning_tokens > 0


def test_429_and_500_are_retried_then_succeed(tmp_path):
    script = {1: Reply(status=429, headers={"Retry-After": "0"}), 2: Reply(status=500), 3: Reply(raw="{not json")}

    def responder(body, n):
        return script.get(n, Reply(content=ANSWER))

    with FakeOpenAIServer(responder) as srv:
        s = run(srv, tmp_path, tasks=TASKS[:1])[0]
        assert len(srv.bodies) == 4
    assert s.meta["attempts"] == 4 and s.code and not s.meta.get("error")


def test_garbage_json_is_retried_then_recorded_and_the_run_goes_on(tmp_path):
    from kernelmill.generate.runner import derive_seed

    bad_seed = derive_seed(7, "t1", 0)  # the seed identifies task t1's request

    def responder(body, n):
        if body.get("seed") == bad_seed:
            return Reply(raw="<html>proxy error</html>")
        return Reply(content=ANSWER)
    with FakeOpenAIServer(responder) as srv:
        samples = run(srv, tmp_path, max_retries=2)
    by_task = {s.task_id: s for s in samples}
    assert len(samples) == 3
    bad = by_task["t1"]
    assert bad.meta["error_kind"] == "bad_response" and bad.meta["attempts"] == 3 and bad.code == ""
    assert bad.meta["parse_error"] == "request failed: bad_response" and "proxy error" in bad.meta["error"]
    assert by_task["t0"].code and by_task["t2"].code


def test_length_truncation_and_missing_code(tmp_path):
    def responder(body, n):
        if n % 2:
            return Reply(content="<think>and then I", finish_reason="length")
        return Reply(content="Sorry, here is an explanation but no code.")

    with FakeOpenAIServer(responder) as srv:
        samples = run(srv, tmp_path, n=4, tasks=TASKS[:1])
    cut = [s for s in samples if s.meta["truncated"]]
    plain = [s for s in samples if not s.meta["truncated"]]
    assert cut and plain
    assert all(s.meta["parse_error"] == "reply ended while reasoning (no answer)" for s in cut)
    assert all(s.meta["parse_error"] == "no code block in the answer" and s.code == "" for s in plain)


def test_rejected_prompt_is_not_retried(tmp_path):
    with FakeOpenAIServer(lambda b, n: Reply(status=400, raw='{"error": "context too long"}')) as srv:
        s = run(srv, tmp_path, tasks=TASKS[:1])[0]
        assert len(srv.bodies) == 1
    assert s.meta["error_kind"] == "http_400" and "context too long" in s.meta["error"]


def test_unreachable_server_fails_before_writing(tmp_path):
    srv = FakeOpenAIServer()
    url = srv.url
    srv.stop()  # the port is now closed
    tpl = load_template("cuda")
    cfg = GenerateConfig(n=1, examples="fallback")
    backend = make_backend("openai", "fake-model", base_url=url)
    with pytest.raises(ServerUnreachable, match=r"cannot reach the server at http://127\.0\.0\.1:\d+/v1"):
        generate(prompt_inputs(TASKS, tpl, cfg), backend, tpl, tmp_path / "out.jsonl", cfg)
    assert not (tmp_path / "out.jsonl").exists()


def test_auth_failure_names_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("MY_LAB_KEY", raising=False)
    with FakeOpenAIServer(api_key="s3cret") as srv:
        with pytest.raises(AuthError, match=r"\$MY_LAB_KEY \(not set\)"):
            run(srv, tmp_path, api_key_env="MY_LAB_KEY")
        assert not (tmp_path / "samples.jsonl").exists()
        monkeypatch.setenv("MY_LAB_KEY", "wrong")
        with pytest.raises(AuthError, match=r"\$MY_LAB_KEY \(set\)"):
            run(srv, tmp_path, api_key_env="MY_LAB_KEY")
        monkeypatch.setenv("MY_LAB_KEY", "s3cret")
        assert len(run(srv, tmp_path, api_key_env="MY_LAB_KEY")) == 3


def test_unknown_model_is_refused_up_front(tmp_path):
    with FakeOpenAIServer(models=("other",)) as srv:
        with pytest.raises(BackendError, match="'fake-model' is not served.*other"):
            run(srv, tmp_path)


def test_concurrency_is_bounded(tmp_path):
    lock, active, peak = threading.Lock(), [0], [0]

    def responder(body, n):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return Reply(content=ANSWER)

    with FakeOpenAIServer(responder) as srv:
        samples = run(srv, tmp_path, n=8, concurrency=3)
    assert len(samples) == 24
    assert 1 < peak[0] <= 3
