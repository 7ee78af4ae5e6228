"""KTO: a few steps on a tiny model, and the class-balance warning."""

from __future__ import annotations

import json

import pytest

from kernelmill.train import class_balance, load_recipe, run_kto


def test_class_balance_rule():
    assert class_balance(100, 100, 1.0, 1.0) is None  # ratio 1
    assert class_balance(4, 3, 1.0, 1.0) is None  # ratio 1.33
    # the TileLang recipe: pos:neg 3:8 with weights 3.0/2.0 -> 0.56
    msg = class_balance(900, 2400, 3.0, 2.0)
    assert "0.56" in msg and "desirable_weight in [5.33, 7.11]" in msg
    assert "no desirable" in class_balance(0, 10, 1.0, 1.0)


def test_kto_trains_and_warns(tmp_path, tiny_model):
    rows = []
    for i, op in enumerate(["relu", "gelu", "tanh", "exp"]):
        for good in (True, False):
            rows.append({"prompt": [{"role": "user", "content": f"Write a kernel for {op}."}],
                         "completion": [{"role": "assistant",
                                         "content": f"y = torch.{op}(x)" if good else f"y = x.{op}zz()"}],
                         "label": good, "task_id": f"t{i}", "sample_id": f"s{i}{good}"})
    data = tmp_path / "kto.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = tmp_path / "kto.yaml"
    cfg.write_text(f"""recipe: kto
model:
  name_or_path: {tiny_model}
  dtype: float32
lora:
  r: 8
  alpha: 16
data:
  train: {data}
training:
  output_dir: {tmp_path / 'out'}
  max_steps: 3
  per_device_train_batch_size: 4
  learning_rate: 0.001
  beta: 0.1
  desirable_weight: 3.0
  undesirable_weight: 2.0
  use_cpu: true
  disable_tqdm: true
""")
    with pytest.warns(UserWarning, match="KTO class balance: 4 desirable x 3.0 vs 4 undesirable x 2.0"):
        result = run_kto(load_recipe(cfg, kind="kto"))
    assert result["steps"] == 3
    out = tmp_path / "out"
    assert (out / "adapter_config.json").exists() and (out / "curves.png").exists()
    history = [json.loads(line) for line in (out / "log_history.jsonl").read_text().splitlines()]
    assert any("rewards/chosen" in h or "rewards/chosen_sum" in h for h in history)

    one_class = tmp_path / "pos.jsonl"
    one_class.write_text("".join(json.dumps(r) + "\n" for r in rows if r["label"]))
    cfg.write_text(cfg.read_text().replace(str(data), str(one_class)))
    with pytest.raises(ValueError, match="no undesirable examples"):
        run_kto(load_recipe(cfg, kind="kto"))
