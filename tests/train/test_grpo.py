"""GRPO: multi-turn episodes (scripted and with TRL's trainer) and the single-turn path."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from kernelmill.records import Verdict
from kernelmill.train import EpisodeRunner, EpisodeSettings, KernelReward, load_recipe, run_grpo

PROMPT = [{"role": "system", "content": "You write fast GPU kernels."},
          {"role": "user", "content": "Write a kernel for relu."}]
ROW = {"prompt": PROMPT, "task_id": "relu", "language": "torch", "task_code": "TASK"}


class ScriptVerifier:
    """Verdicts in a fixed order, one per verified sample."""

    def __init__(self, statuses):
        self.statuses = list(statuses)
        self.seen = []

    def __call__(self, tasks, samples):
        out = []
        for s in samples:
            self.seen.append(s.code)
            status, speedup = self.statuses.pop(0)
            out.append(Verdict(s.sample_id, s.task_id, status, compiled=status != "compile_error",
                               correct=status == "ok", speedup=speedup, message=f"{status} detail"))
        return out


class ScriptedTrainer:
    """Just what the rollout uses of a GRPOTrainer; 'generates' canned answers."""

    def __init__(self, tok, answers):
        self.processing_class = tok
        self.answers = list(answers)
        self.max_completion_length = 4096
        self.args = SimpleNamespace(max_completion_length=4096)
        self.accelerator = SimpleNamespace(num_processes=1, is_main_process=True)
        self.state = SimpleNamespace(global_step=7)
        self.generation_config = SimpleNamespace(max_new_tokens=4096)
        self.calls = []

    def _generate_single_turn(self, prompt_ids, images, fields, n):
        self.calls.append([list(p) for p in prompt_ids])
        outs = []
        for _ in prompt_ids:
            text = self.answers.pop(0)
            outs.append(self.processing_class(text, add_special_tokens=False).input_ids
                        + [self.processing_class.eos_token_id])
        return outs, None


def code(body):
    return f"```python\nclass ModelNew:\n    {body}\n```"


def test_episode_turns_feedback_mask_and_reward(tmp_path, tiny_model):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model)
    verifier = ScriptVerifier([("compile_error", None), ("ok", 1.5), ("incorrect", None)])
    runner = EpisodeRunner(KernelReward(verifier), EpisodeSettings(max_turns=3), [ROW],
                           log_path=tmp_path / "episodes.jsonl")
    trainer = ScriptedTrainer(tok, [code("broken"), code("fast"), code("wrong")])
    out = runner([PROMPT], trainer)

    # three turns, the episode's reward is its best turn: 0.3 + 1.5
    assert out["episode_reward"] == [pytest.approx(1.8)] and out["episode_turns"] == [3]
    assert verifier.seen == ["class ModelNew:\n    broken", "class ModelNew:\n    fast", "class ModelNew:\n    wrong"]
    ids, mask = out["completion_ids"][0], out["env_mask"][0]
    assert len(ids) == len(mask)
    model_text = tok.decode([t for t, m in zip(ids, mask) if m])
    env_text = tok.decode([t for t, m in zip(ids, mask) if not m])
    # what the model wrote is trained on; the feedback turns are not
    assert "broken" in model_text and "fast" in model_text and "compile" not in model_text
    assert "Your kernel failed to compile." in env_text and "compile_error detail" in env_text
    assert "a speedup of 1.50x" in env_text and "Make it faster" in env_text and "user" in env_text
    # the second turn was generated after the first answer and the feedback, as one conversation
    second_prompt = tok.decode(trainer.calls[1][0])
    assert second_prompt.startswith(tok.decode(out["prompt_ids"][0]))
    assert second_prompt.endswith("<|im_start|>assistant\n")
    # the log keeps every turn's verdict
    (entry,) = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert [t["status"] for t in entry["turns"]] == ["compile_error", "ok", "incorrect"]
    assert entry["step"] == 7 and entry["best_speedup"] == 1.5



def test_every_process_logs_its_own_episodes(tmp_path, tiny_model):
    """Under `accelerate launch` each process rolls out its own prompts: each logs them, with its rank."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model)
    log = tmp_path / "episodes.jsonl"
    for rank in (0, 1):
        runner = EpisodeRunner(KernelReward(ScriptVerifier([("ok", 1.2)])), EpisodeSettings(max_turns=1), [ROW],
                               log_path=log)
        trainer = ScriptedTrainer(tok, [code("fast")])
        trainer.accelerator = SimpleNamespace(num_processes=2, process_index=rank, is_main_process=rank == 0)
        runner([PROMPT], trainer)
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["rank"] for e in entries] == [0, 1] and all(e["best_speedup"] == 1.2 for e in entries)

def test_failure_after_success_resets_to_known_good(tiny_model):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model)
    verifier = ScriptVerifier([("ok", 2.0), ("incorrect", None), ("compile_error", None)])
    runner = EpisodeRunner(KernelReward(verifier), EpisodeSettings(max_turns=3, episode_reward="last"), [ROW])
    out = runner([PROMPT], ScriptedTrainer(tok, [code("a"), code("b"), code("c")]))
    assert out["episode_reward"] == [-1.0]  # "last"
    env_text = tok.decode([t for t, m in zip(out["completion_ids"][0], out["env_mask"][0]) if not m])
    assert "Your next attempt failed." in env_text and "go on from your last correct kernel" in env_text
    assert env_text.count("a speedup of 2.00x") == 2  # the correct turn's feedback, then the reset


def test_stop_when_correct_and_unknown_prompt(tiny_model):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model)
    runner = EpisodeRunner(KernelReward(ScriptVerifier([("ok", 1.0)])),
                           EpisodeSettings(max_turns=4, stop_when_correct=True), [ROW])
    out = runner([PROMPT], ScriptedTrainer(tok, [code("a")]))
    assert out["episode_turns"] == [1] and out["episode_reward"] == [pytest.approx(1.3)]
    with pytest.raises(KeyError, match="not in the GRPO dataset"):
        runner([[{"role": "user", "content": "something else"}]], ScriptedTrainer(tok, [code("a")]))


@pytest.mark.parametrize("processes, vllm, zero_stage, expected", [
    (1, False, 3, False), (2, False, 0, False), (2, True, 0, True), (2, False, 3, True)])
def test_processes_generate_in_lockstep_when_generation_is_collective(tiny_model, processes, vllm, zero_stage,
                                                                       expected):
    """Several processes with vLLM or ZeRO-3: an episode that stopped early still
    rides along, so every process makes the same number of generate calls."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model)
    runner = EpisodeRunner(KernelReward(ScriptVerifier([("ok", 1.0), ("incorrect", None)])),
                           EpisodeSettings(max_turns=3, stop_when_correct=True), [ROW])
    trainer = ScriptedTrainer(tok, [code("a"), code("b"), code("c")])
    plugin = SimpleNamespace(zero_stage=zero_stage) if zero_stage else None
    trainer.accelerator = SimpleNamespace(num_processes=processes, is_main_process=True,
                                          state=SimpleNamespace(deepspeed_plugin=plugin))
    trainer.use_vllm = vllm
    out = runner([PROMPT], trainer)
    assert len(trainer.calls) == (3 if expected else 1)
    assert out["episode_turns"] == [1] and out["episode_reward"] == [pytest.approx(1.3)]  # the ride-along is not scored


def grpo_recipe(tmp_path, tiny_model, max_turns):
    data = tmp_path / "grpo.jsonl"
    rows = [{"prompt": [{"role": "user", "content": f"Write a kernel for {op}."}], "task_id": op,
             "language": "torch", "task_code": f"# {op}"} for op in ("relu", "gelu")]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = tmp_path / "grpo.yaml"
    cfg.write_text(f"""recipe: grpo
model:
  name_or_path: {tiny_model}
  dtype: float32
data:
  train: {data}
episode:
  max_turns: {max_turns}
  turn_max_tokens: 8
training:
  output_dir: {tmp_path / 'out'}
  max_steps: 2
  per_device_train_batch_size: 4
  num_generations: 2
  max_completion_length: {96 if max_turns > 1 else 16}
  learning_rate: 0.001
  use_cpu: true
  disable_tqdm: true
  save_steps: 1
""")
    return load_recipe(cfg, kind="grpo")


class AlternatingVerifier:
    """Even calls fail to compile, odd calls are correct: rewards differ within a group."""

    def __init__(self):
        self.n = 0

    def __call__(self, tasks, samples):
        out = []
        for s in samples:
            ok = self.n % 2 == 1
            self.n += 1
            out.append(Verdict(s.sample_id, s.task_id, "ok" if ok else "compile_error", compiled=ok,
                               correct=ok, speedup=1.0 if ok else None))
        return out


def test_multi_turn_grpo_with_trl(tmp_path, tiny_model, monkeypatch):
    # the random model writes no code blocks; give every completion one so the verifier is consulted
    import kernelmill.train.rewards as rewards

    monkeypatch.setattr(rewards, "extract_code", lambda text: ("class ModelNew: pass", None))
    result = run_grpo(grpo_recipe(tmp_path, tiny_model, max_turns=2), verifier=AlternatingVerifier())
    out = tmp_path / "out"
    assert result["steps"] == 2 and (out / "config.json").exists() and (out / "curves.png").exists()
    episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 8  # 2 steps x 4 rollouts
    assert all(len(e["turns"]) == 2 for e in episodes)
    assert all(e["reward"] == max(t["reward"] for t in e["turns"]) for e in episodes)
    history = [json.loads(line) for line in (out / "log_history.jsonl").read_text().splitlines()]
    assert any("reward" in h for h in history)


def test_single_turn_grpo_uses_kernel_reward(tmp_path, tiny_model):
    seen = []

    def verifier(tasks, samples):
        seen.extend(samples)
        return [Verdict(s.sample_id, s.task_id, "incorrect", compiled=True) for s in samples]

    result = run_grpo(grpo_recipe(tmp_path, tiny_model, max_turns=1), verifier=verifier)
    assert result["steps"] == 2
    assert result["first_reward"] == -1.0  # random text has no code: compile failure, no verifier call
    assert not (tmp_path / "out" / "episodes.jsonl").exists()
