"""The generate runner: line-by-line output, exact resume, the CLI."""

import collections
import json
import signal
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from kernelmill.cli import app
from kernelmill.generate import GenerateConfig, SamplingParams, generate, load_template, make_backend, prompt_inputs
from kernelmill.generate.fake_server import FakeOpenAIServer, Reply
from kernelmill.records import Sample, Task, read_jsonl

ANSWER = "<think>plan</think>\n```python\nclass ModelNew:\n    pass\n```"
REF = "import torch\nclass Model(torch.nn.Module):\n    pass\ndef get_inputs():\n    return []\n"
TASKS = [Task(f"t{i}", REF) for i in range(4)]
N = 3


class Crash(Exception):
    pass


class CrashAfter:
    """Wraps a backend; the run dies after `after` finished requests."""

    def __init__(self, inner, after):
        self.inner, self.after = inner, after
        self.name, self.model = inner.name, inner.model

    async def check(self):
        await self.inner.check()

    def count_tokens(self, text):
        return self.inner.count_tokens(text)

    async def aclose(self):
        await self.inner.aclose()

    async def complete_all(self, requests, on_done, stats=None):
        seen = [0]

        def wrapped(req, comp):
            # a dead process writes nothing more: a completion that lands on
            # another worker after the crash must not reach the file either
            if seen[0] >= self.after:
                raise Crash()
            on_done(req, comp)
            seen[0] += 1
            if seen[0] >= self.after:
                raise Crash()

        await self.inner.complete_all(requests, wrapped, stats)



def _sigint_default() -> None:
    """The child takes Ctrl-C even where this test runs as a background job
    (a non-interactive shell starts those with SIGINT ignored, which children inherit)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)

def _run(url, out, wrap=None, retry_errors=False):
    tpl = load_template("cuda")
    cfg = GenerateConfig(n=N, params=SamplingParams(seed=3), examples="fallback", retry_errors=retry_errors)
    backend = make_backend("openai", "fake-model", base_url=url, concurrency=2, backoff_s=0.001, max_retries=1)
    return generate(prompt_inputs(TASKS, tpl, cfg), wrap(backend) if wrap else backend, tpl, out, cfg)


def _settled_count(srv, quiet_s=0.3):
    """Requests the server has seen once no more arrive for `quiet_s`."""
    import time

    n = -1
    while n != len(srv.bodies):
        n = len(srv.bodies)
        time.sleep(quiet_s)
    return n


def _keys(path):
    return [(s.task_id, s.meta["sample_index"]) for s in read_jsonl(path, Sample)]


def test_resume_after_crash_and_torn_line_has_no_duplicates(tmp_path):
    with FakeOpenAIServer(lambda b, n: Reply(content=ANSWER)) as srv:
        ref = tmp_path / "uninterrupted.jsonl"
        _run(srv.url, ref)
        out = tmp_path / "samples.jsonl"
        with pytest.raises(Crash):
            _run(srv.url, out, wrap=lambda b: CrashAfter(b, 5))
        first = read_jsonl(out, Sample)
        assert len(first) == 5
        with open(out, "a") as fh:  # a writer killed mid-line
            fh.write('{"sample_id": "t9#0.0-x", "task_id": "t9", "lang')
        before = _settled_count(srv)  # the crashed run's in-flight request may land late
        with pytest.warns(UserWarning, match="truncated"):
            summary = _run(srv.url, out)
        assert summary.skipped == 5 and summary.written == len(TASKS) * N - 5
        assert len(srv.bodies) - before == len(TASKS) * N - 5  # nothing asked twice
    keys = _keys(out)
    assert len(keys) == len(set(keys)) == len(TASKS) * N
    # the resumed file holds the same samples (ids, seeds) an uninterrupted run makes
    a = {(s.sample_id, s.meta["seed"]) for s in read_jsonl(out, Sample)}
    b = {(s.sample_id, s.meta["seed"]) for s in read_jsonl(ref, Sample)}
    assert a == b
    assert {s.sample_id for s in first} <= {x for x, _ in a}


def test_retry_errors_redoes_failed_requests_in_place(tmp_path):
    out = tmp_path / "s.jsonl"
    with FakeOpenAIServer(lambda b, n: Reply(status=503)) as srv:
        s = _run(srv.url, out)
    assert s.errors["http_503"] == len(TASKS) * N
    with FakeOpenAIServer(lambda b, n: Reply(content=ANSWER)) as srv:
        assert _run(srv.url, out).written == 0  # errors count as done by default
        s = _run(srv.url, out, retry_errors=True)
    assert s.written == len(TASKS) * N
    samples = read_jsonl(out, Sample)
    assert len(samples) == len(TASKS) * N and all(x.code and not x.meta.get("error") for x in samples)


def _write_tasks(tmp_path):
    d = tmp_path / "tasks"
    d.mkdir()
    for t in TASKS:
        (d / f"{t.task_id}.py").write_text(t.code)
    return d


def test_cli_generate_and_resume(tmp_path):
    tasks = _write_tasks(tmp_path)
    out = tmp_path / "out.jsonl"
    runner = CliRunner()
    with FakeOpenAIServer(lambda b, n: Reply(content=ANSWER, usage={"completion_tokens": 9})) as srv:
        args = ["generate", str(tasks), "-o", str(out), "--base-url", srv.url, "-m", "fake-model", "-n", "2",
                "--template", "triton", "--seed", "1", "--no-progress", "--temperature", "0.3"]
        r = runner.invoke(app, args)
        assert r.exit_code == 0, r.output
        assert "wrote 8 samples (0 already there)" in " ".join(r.output.split())
        assert srv.bodies[0]["temperature"] == 0.3
        r = runner.invoke(app, args[:9] + ["3"] + args[10:])
        assert r.exit_code == 0, r.output
        assert "wrote 4 samples (8 already there)" in " ".join(r.output.split())
    samples = read_jsonl(out, Sample)
    assert {s.language for s in samples} == {"triton"} and len(samples) == 12


def test_cli_unreachable_server_is_a_clear_error(tmp_path):
    srv = FakeOpenAIServer()
    url = srv.url
    srv.stop()
    out = tmp_path / "out.jsonl"
    r = CliRunner().invoke(app, ["generate", str(_write_tasks(tmp_path)), "-o", str(out), "--base-url", url,
                                 "-m", "fake-model", "--no-progress"])
    assert r.exit_code == 1 and "cannot reach the server" in " ".join(r.output.split()) and not out.exists()


def test_ctrl_c_then_rerun_completes_without_duplicates(tmp_path):
    """A real SIGINT to a real `generate` process, while requests hang."""
    import threading

    release = threading.Event()

    def responder(body, n):
        if n > 2:
            release.wait(60)  # the first two finish; the rest are in flight at Ctrl-C
        return Reply(content=ANSWER)

    tasks = _write_tasks(tmp_path)
    out = tmp_path / "out.jsonl"
    with FakeOpenAIServer(responder) as srv:
        # the generate command alone: the full CLI imports torch (seconds) for other stages
        entry = "import typer; from kernelmill.cli.generate import generate_command; typer.run(generate_command)"
        cmd = [sys.executable, "-c", entry, str(tasks), "-o", str(out), "--base-url", srv.url,
               "-m", "fake-model", "-n", str(N), "-c", "2", "--no-progress"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                preexec_fn=_sigint_default)
        while not (out.exists() and len(out.read_text().splitlines()) >= 2) and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        text, _ = proc.communicate(timeout=120)
        assert proc.returncode == 130 and "interrupted" in text and "resume" in text
        assert len(_keys(out)) == 2
        release.set()
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        assert f"wrote {len(TASKS) * N - 2} samples (2 already there)" in " ".join(r.stderr.split())
    keys = _keys(out)
    assert collections.Counter(keys).most_common(1)[0][1] == 1 and len(keys) == len(TASKS) * N
    assert all(json.loads(line) for line in out.read_text().splitlines())


def test_cli_ptx_decompilation_from_pairs(tmp_path):
    from kernelmill.records import Pair, write_jsonl

    pairs = tmp_path / "pairs.jsonl"
    write_jsonl(pairs, [Pair("p1", "scale", "cuda", "src", ".visible .entry scale(.param .u64 x)",
                             rolled_ptx="for.size.2 i in range(0, 4, 1):")])
    reply = "Here it is:\n```cuda\nextern \"C\" __global__ void scale(float* x) { x[threadIdx.x] *= 2.f; }\n```"
    out = tmp_path / "dec.jsonl"
    with FakeOpenAIServer(lambda b, n: Reply(content=reply)) as srv:
        r = CliRunner().invoke(app, ["generate", str(pairs), "-o", str(out), "--template", "ptx2cuda", "--base-url",
                                     srv.url, "-m", "fake-model", "-n", "1", "--ptx-field", "rolled_ptx",
                                     "--no-progress"])
        assert r.exit_code == 0, r.output
        prompt = srv.bodies[0]["messages"][-1]["content"]
    assert "for.size.2 i in range(0, 4, 1):" in prompt and ".visible .entry" not in prompt
    (s,) = read_jsonl(out, Sample)
    assert s.task_id == "p1" and s.language == "cuda" and s.code.startswith('extern "C" __global__ void scale')
    assert s.meta["parse_error"] is None
