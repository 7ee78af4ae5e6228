"""Recipe files: every key checked, errors name file and line; shipped recipes load."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelmill.train import ConfigError, load_recipe

CONFIGS = Path(__file__).resolve().parents[2] / "configs"

BASE = """recipe: sft
model:
  name_or_path: some/model
lora:
  r: 8
data:
  train: x.jsonl
training:
  output_dir: out
  learning_rate: 0.001
"""


def write(tmp_path, text):
    p = tmp_path / "r.yaml"
    p.write_text(text)
    return p


@pytest.mark.parametrize("path", sorted(p for p in CONFIGS.glob("*.yaml") if not p.name.startswith("accelerate")),
                         ids=lambda p: p.name)
def test_shipped_recipes_load(path):
    recipe = load_recipe(path)
    assert recipe.training["output_dir"]
    assert recipe.model.name_or_path


def test_kernelcoder_recipe_carries_paper_values():
    r = load_recipe(CONFIGS / "kernelcoder_sft.yaml", kind="sft")
    assert (r.lora.r, r.lora.alpha, r.lora.dropout) == (32, 32, 0.05)
    t = r.training
    assert (t["learning_rate"], t["adam_beta2"], t["weight_decay"], t["max_length"]) == (1e-4, 0.95, 0.1, 32768)
    g = load_recipe(CONFIGS / "tilelang_grpo.yaml", kind="grpo")
    assert (g.episode.max_turns, g.training["num_generations"], g.training["num_iterations"]) == (4, 2, 4)


def test_unknown_training_key_names_file_line_and_suggests(tmp_path):
    p = write(tmp_path, BASE + "  learnig_rate: 0.1\n")
    with pytest.raises(ConfigError, match=r"r\.yaml:11: unknown key 'learnig_rate' in training .*'learning_rate'"):
        load_recipe(p)


def test_unknown_section_key(tmp_path):
    p = write(tmp_path, BASE.replace("  r: 8", "  r: 8\n  rank: 4"))
    with pytest.raises(ConfigError, match=r"r\.yaml:6: unknown key 'rank' in lora"):
        load_recipe(p)


def test_unknown_top_level_section(tmp_path):
    p = write(tmp_path, BASE + "optimiser:\n  x: 1\n")
    with pytest.raises(ConfigError, match="unknown key 'optimiser'"):
        load_recipe(p)


def test_wrong_type(tmp_path):
    p = write(tmp_path, BASE.replace("r: 8", "r: eight"))
    with pytest.raises(ConfigError, match=r"r\.yaml:5: 'lora\.r' must be int"):
        load_recipe(p)


def test_recipe_kind_must_match_command(tmp_path):
    with pytest.raises(ConfigError, match="this is a 'sft' recipe"):
        load_recipe(write(tmp_path, BASE), kind="grpo")


def test_missing_output_dir_and_sections(tmp_path):
    with pytest.raises(ConfigError, match="output_dir is required"):
        load_recipe(write(tmp_path, BASE.replace("  output_dir: out\n", "")))
    with pytest.raises(ConfigError, match="missing section 'data'"):
        load_recipe(write(tmp_path, BASE.replace("data:\n  train: x.jsonl\n", "")))


def test_qlora_needs_lora(tmp_path):
    text = BASE.replace("lora:\n  r: 8\n", "quantization:\n  quant_type: nf4\n")
    with pytest.raises(ConfigError, match="needs a 'lora' section"):
        load_recipe(write(tmp_path, text))


def test_overrides(tmp_path):
    r = load_recipe(write(tmp_path, BASE), overrides=["training.max_steps=3", "lora.r=4"])
    assert r.training["max_steps"] == 3 and r.lora.r == 4
    with pytest.raises(ConfigError, match="unknown key 'max_stepz'"):
        load_recipe(write(tmp_path, BASE), overrides=["training.max_stepz=3"])


def test_gpu_only_option_without_gpu(tmp_path, monkeypatch):
    from kernelmill.train import GpuRequiredError, check_gpu_options

    r = load_recipe(write(tmp_path, BASE + "  fp16: true\n"))
    with pytest.raises(GpuRequiredError, match="training.fp16 need.* CUDA GPU"):
        check_gpu_options(r, cuda=False)
    q = load_recipe(CONFIGS / "triton_qlora.yaml")
    with pytest.raises(GpuRequiredError, match="quantization"):
        check_gpu_options(q, cuda=False)
    check_gpu_options(q, cuda=True)  # fine where a GPU is


def test_duplicate_key(tmp_path):
    with pytest.raises(ConfigError, match=r"r\.yaml:line 11: duplicate key 'training.learning_rate'"):
        load_recipe(write(tmp_path, BASE + "  learning_rate: 0.1\n"))
