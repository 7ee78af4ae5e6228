"""Multi-turn GRPO on a DSL's tasks through the code path `kernelmill train grpo`
takes on TileLang: prompts from the DSL's chat template (`align.grpo_rows`), the
paper's reward through the real verifier (on CPU, with the `torch` DSL)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("trl")

from kernelmill.chat import export_prompt  # noqa: E402
from kernelmill.dsl.align import grpo_rows  # noqa: E402
from kernelmill.tasks import load_tasks  # noqa: E402

RELU = ("import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
        "    def forward(self, x):\n        return x.clamp_min(0)\n")


def test_grpo_rows_use_the_dsl_language_template():
    ts = load_tasks("builtin").by_id()
    res = grpo_rows([ts["level1/01_ReLU"], ts["level1/03_Sigmoid"]], "tilelang")
    assert [r["task_id"] for r in res.rows] == ["level1/01_ReLU", "level1/03_Sigmoid"]
    row = res.rows[0]
    assert row["language"] == "tilelang" and row["task_code"] == ts["level1/01_ReLU"].code
    assert row["prompt"] == export_prompt({"task_id": "level1/01_ReLU", "task_code": row["task_code"],
                                           "language": "tilelang"})
    assert "TileLang" in row["prompt"][0]["content"] and row["prompt"][-1]["role"] == "user"


def test_multi_turn_grpo_on_dsl_tasks_rewards_through_the_verifier(tmp_path, monkeypatch):
    pytest.importorskip("kernelmill.verify")
    from kernelmill.train import build_tiny_model, load_recipe, run_grpo
    import kernelmill.train.rewards as rewards

    ts = load_tasks("builtin").by_id()
    res = grpo_rows([ts["level1/01_ReLU"]], "torch")
    data = tmp_path / "grpo.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in res.rows))
    texts = [m["content"] for m in res.rows[0]["prompt"]] + [RELU, "Attempt 1 result: correct, speedup"]
    model = build_tiny_model(tmp_path / "model", texts * 4, hidden=32, layers=1)
    # the random model writes no code: every turn's code is the right kernel, so the
    # verifier (not a parse failure) decides the reward
    monkeypatch.setattr(rewards, "extract_code", lambda text: (RELU, None))
    cfg = tmp_path / "grpo.yaml"
    cfg.write_text(f"""recipe: grpo
model:
  name_or_path: {model}
  dtype: float32
data:
  train: {data}
reward:
  verifier: local
  tasks: builtin
  store: {tmp_path / 'verdicts.sqlite'}
  verify:
    device: cpu
    time: false
episode:
  max_turns: 2
  turn_max_tokens: 8
training:
  output_dir: {tmp_path / 'out'}
  max_steps: 2
  per_device_train_batch_size: 2
  num_generations: 2
  max_completion_length: 256
  learning_rate: 0.001
  use_cpu: true
  disable_tqdm: true
  save_steps: 2
""")
    result = run_grpo(load_recipe(cfg, kind="grpo"))
    assert result["steps"] == 2
    episodes = [json.loads(line) for line in (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 4 and all(e["task_id"] == "level1/01_ReLU" for e in episodes)
    # correct, untimed: 0.3 + 1.0 on every turn, and the episode's reward is its best turn
    assert all(t["status"] == "ok" and t["reward"] == pytest.approx(1.3) for e in episodes for t in e["turns"])
    assert all(len(e["turns"]) == 2 and e["reward"] == pytest.approx(1.3) for e in episodes)
