"""One feedback text: the user turn a multi-turn GRPO episode trains on after an
attempt is the turn `refine` sends at inference for the same reply and verdict,
compared token for token (refine's request through the fake server on one side,
the feedback tokens of the episode's completion on the other)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kernelmill.generate import SamplingParams, load_template, make_backend
from kernelmill.generate.fake_server import FakeOpenAIServer, Reply
from kernelmill.generate.refine import RefineConfig, refine
from kernelmill.records import Task, Verdict

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

REF = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(16)]


def get_init_inputs():
    return []
"""
TASK = Task("relu", REF)
LOG = "\n".join([f"note: included from line {i}" for i in range(200)] + ['k.cu(7): error: "tid" is undefined']
                + [f'k.cu({i}): error: "x{i}" is undefined' for i in range(8, 80)])  # more errors than MAX_CHARS
MAX_CHARS = 400  # small, so that both sides trim the compiler log


def reply(tag: str) -> str:
    if tag == "nocode":
        return "I am not able to write this kernel."
    return f"<think>about {tag}</think>\n```python\nclass ModelNew:\n    pass  # {tag}\n```"


def verdict_for(sample_id: str, code: str) -> Verdict:
    """The same verdict for the same code, whoever asks."""
    tag = code.rsplit("# ", 1)[-1]
    if tag == "compile_error":
        return Verdict(sample_id, TASK.task_id, "compile_error", message=LOG)
    if tag == "wrong":
        return Verdict(sample_id, TASK.task_id, "incorrect", compiled=True, max_abs_err=0.5, max_rel_err=0.25,
                       message="output 0: 12 of 16 elements differ")
    if tag == "rejected":
        return Verdict(sample_id, TASK.task_id, "rejected", compiled=True, flags=["copies_reference"],
                       message="the candidate called the reference")
    runtime = {"slow": 2.0, "fast": 0.5}[tag]
    return Verdict(sample_id, TASK.task_id, "ok", compiled=True, correct=True, speedup=1.0 / runtime,
                   runtime_ms=runtime, ref_runtime_ms=1.0)


def verify(tasks, samples):
    return [verdict_for(s.sample_id, s.code) for s in samples]


def refine_feedback(tmp_path, tags: list[str]) -> list[str]:
    """The feedback turns refine sent (reset-to-last-good on), in order."""
    with FakeOpenAIServer(lambda body, n: Reply(content=reply(tags[n - 1]))) as srv:
        config = RefineConfig(turns=len(tags), params=SamplingParams(seed=1, max_tokens=256), examples="fallback",
                              reset_to_last_good=True, stop_speedup=None, max_error_chars=MAX_CHARS)
        backend = make_backend("openai", "fake-model", base_url=srv.url, backoff_s=0.001)
        refine([TASK], backend, load_template("torch"), verify, tmp_path / "refine.jsonl", config=config)
        bodies = list(srv.bodies)
    assert len(bodies) == len(tags)
    return [b["messages"][-1]["content"] for b in bodies[1:]]


class ScriptedTrainer:
    """What the rollout uses of a GRPOTrainer; 'generates' the scripted replies."""

    def __init__(self, tok, texts):
        self.processing_class, self.texts = tok, list(texts)
        self.max_completion_length = 1 << 16
        self.args = SimpleNamespace(max_completion_length=self.max_completion_length)
        self.accelerator = SimpleNamespace(num_processes=1, is_main_process=True)
        self.state = SimpleNamespace(global_step=0)
        self.generation_config = SimpleNamespace(max_new_tokens=None)

    def _generate_single_turn(self, prompt_ids, images, fields, n):
        tok = self.processing_class
        return [tok(self.texts.pop(0), add_special_tokens=False).input_ids + [tok.eos_token_id]
                for _ in prompt_ids], None


def grpo_feedback_tokens(tok, tags: list[str]) -> list[list[int]]:
    """The feedback turns of one GRPO episode over the same replies: the runs of
    tokens the env mask marks as not written by the model."""
    from kernelmill.chat import task_prompt
    from kernelmill.train import EpisodeRunner, EpisodeSettings, KernelReward

    prompt = task_prompt(TASK, "torch", "fallback")
    row = {"prompt": prompt, "task_id": TASK.task_id, "language": "torch", "task_code": REF}
    runner = EpisodeRunner(KernelReward(verify), EpisodeSettings(max_turns=len(tags), feedback_chars=MAX_CHARS), [row])
    out = runner([prompt], ScriptedTrainer(tok, [reply(t) for t in tags]))
    assert out["episode_turns"] == [len(tags)]
    runs: list[list[int]] = []
    prev = 1
    for t, m in zip(out["completion_ids"][0], out["env_mask"][0]):
        if not m:
            if prev:
                runs.append([])
            runs[-1].append(t)
        prev = m
    return runs


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    from transformers import AutoTokenizer

    from kernelmill.train import build_tiny_model

    texts = [reply(t) for t in ("slow", "fast", "wrong")] + [REF, LOG[-300:], "Your kernel failed to compile."]
    return AutoTokenizer.from_pretrained(build_tiny_model(tmp_path_factory.mktemp("tiny"), texts * 4))


@pytest.mark.parametrize("tags, expect", [
    # failures before any correct kernel: plain feedback
    (["compile_error", "nocode", "wrong", "slow", "fast"],
     ["failed to compile", "did not contain usable code", "do not match", "a speedup of 0.50x"]),
    # failures after a correct kernel: reported, and the conversation goes on from that kernel
    (["slow", "compile_error", "rejected", "nocode", "fast", "wrong"],
     ["a speedup of 0.50x", "next attempt failed", "copies_reference", "did not contain usable code",
      "a speedup of 2.00x"]),
])
def test_grpo_episode_trains_on_refines_feedback_turn(tmp_path, tok, tags, expect):
    from kernelmill.train.episodes import _feedback_ids

    sent = refine_feedback(tmp_path, tags)
    trained = grpo_feedback_tokens(tok, tags)
    assert len(sent) == len(trained) == len(tags) - 1
    for text, tokens, word in zip(sent, trained, expect, strict=True):
        assert word in text
        assert tokens == _feedback_ids(tok, text), text
    (log_turn,) = [t for t in sent if "failed to compile" in t]
    assert '"tid" is undefined' in log_turn and "characters omitted" in log_turn  # trimmed to MAX_CHARS
    resets = [t for t in sent if "go on from your last correct kernel" in t]
    assert len(resets) == (3 if tags[0] == "slow" else 0)  # every failure after the first correct kernel
