"""SFT on a tiny random model: the loss mask, memorisation, adapters, resume, packing, CLI."""

from __future__ import annotations

import json

import pytest

from kernelmill.train import LabelMaskError, build_sft_trainer, load_recipe, run_sft
from kernelmill.train.tiny import CHAT_TEMPLATE, CHAT_TEMPLATE_NO_MARKERS

@pytest.fixture(scope="module")
def sft_file(tmp_path_factory, sft_rows):
    p = tmp_path_factory.mktemp("sft") / "sft.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in sft_rows))
    return p


def recipe(tmp_path, model, data, extra_training="", lora=True, chat_template=None, max_steps=4, lr=0.003):
    text = f"recipe: sft\nmodel:\n  name_or_path: {model}\n  dtype: float32\n"
    if chat_template:
        text += f"  chat_template: {chat_template}\n"
    if lora:
        text += "lora:\n  r: 8\n  alpha: 16\n  dropout: 0.0\n"
    text += (f"data:\n  train: {data}\ntraining:\n  output_dir: {tmp_path / 'out'}\n  max_steps: {max_steps}\n"
             f"  per_device_train_batch_size: 4\n  learning_rate: {lr}\n  max_length: 256\n"
             "  use_cpu: true\n  disable_tqdm: true\n" + extra_training)
    p = tmp_path / "sft.yaml"
    p.write_text(text)
    return load_recipe(p, kind="sft")


def test_label_mask_on_a_real_batch(tmp_path, tiny_model, sft_file, sft_rows):
    trainer, tok, report = build_sft_trainer(recipe(tmp_path, tiny_model, sft_file))
    assert 0 < report["trained_tokens"] < report["tokens"]
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(2)])
    for b in range(2):
        trained = batch["input_ids"][b][batch["labels"][b] != -100].tolist()
        answer = sft_rows[b]["messages"][-1]["content"]
        # exactly the assistant turn and its end-of-turn token: no system, no user, no role header
        assert tok.decode(trained) == answer + "<|im_end|>"


def test_template_without_generation_markers_is_refused(tmp_path, tiny_model, sft_file):
    tpl = tmp_path / "plain.jinja"
    tpl.write_text(CHAT_TEMPLATE_NO_MARKERS)
    with pytest.raises(LabelMaskError, match="no \\{% generation %\\}.*train on nothing"):
        build_sft_trainer(recipe(tmp_path, tiny_model, sft_file, chat_template=tpl))


def test_misplaced_markers_are_caught_on_the_batch(tmp_path, tiny_model, sft_file):
    # markers around the user's words instead of the answer: TRL trains on the prompt
    wrong = CHAT_TEMPLATE.replace("{%- generation -%}{{- message['content'] + '<|im_end|>' -}}{%- endgeneration -%}",
                                  "{{- message['content'] + '<|im_end|>' -}}")
    wrong = wrong.replace("{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' -}}",
                          "{{- '<|im_start|>' + message['role'] + '\\n' -}}{%- generation -%}"
                          "{{- message['content'] -}}{%- endgeneration -%}{{- '<|im_end|>\\n' -}}")
    assert wrong != CHAT_TEMPLATE
    tpl = tmp_path / "wrong.jinja"
    tpl.write_text(wrong)
    with pytest.raises(LabelMaskError, match="outside the assistant turns"):
        build_sft_trainer(recipe(tmp_path, tiny_model, sft_file, chat_template=tpl))


def test_full_finetune_memorises(tmp_path, tiny_model, sft_file):
    r = recipe(tmp_path, tiny_model, sft_file, lora=False, max_steps=20, lr=0.005,
               extra_training="  save_strategy: 'no'\n  lr_scheduler_type: constant\n")
    result = run_sft(r)
    assert result["last_loss"] < 0.4 * result["first_loss"], result
    assert (tmp_path / "out" / "config.json").exists() and (tmp_path / "out" / "curves.png").exists()


def test_lora_adapter_saves_loads_changes_outputs_and_resumes(tmp_path, tiny_model, sft_file):
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    extra = "  save_steps: 2\n"
    first = run_sft(recipe(tmp_path, tiny_model, sft_file, extra_training=extra, max_steps=4))
    out = tmp_path / "out"
    assert first["resumed_from"] is None and (out / "checkpoint-4").is_dir()
    assert (out / "adapter_config.json").exists() and (out / "adapter_model.safetensors").exists()
    assert not (out / "model.safetensors").exists()  # an adapter, not a merged copy

    # the same command with more steps picks up from the last checkpoint
    again = run_sft(recipe(tmp_path, tiny_model, sft_file, extra_training=extra, max_steps=6))
    assert again["resumed_from"].endswith("checkpoint-4") and again["steps"] == 6

    tok = AutoTokenizer.from_pretrained(out)
    ids = tok("Write a kernel for relu.", return_tensors="pt").input_ids
    base = AutoModelForCausalLM.from_pretrained(tiny_model, dtype=torch.float32)
    with torch.no_grad():
        before = base(ids).logits
        tuned = PeftModel.from_pretrained(base, out)
        after = tuned(ids).logits
    assert not torch.allclose(before, after, atol=1e-4)
    lines = (out / "log_history.jsonl").read_text().splitlines()
    assert any("loss" in json.loads(line) for line in lines)


def test_packing(tmp_path, tiny_model, sft_file):
    r = recipe(tmp_path, tiny_model, sft_file, extra_training="  packing: true\n  save_strategy: 'no'\n",
               max_steps=2)
    trainer, tok, report = build_sft_trainer(r)
    assert report["trained_tokens"] > 0
    assert len(trainer.train_dataset) < 6  # rows were packed together
    trainer.train()


def test_cli_reports_config_errors(tmp_path, tiny_model, sft_file):
    from typer.testing import CliRunner

    from kernelmill.cli import app

    p = tmp_path / "bad.yaml"
    p.write_text(f"recipe: sft\nmodel:\n  name_or_path: {tiny_model}\ndata:\n  train: {sft_file}\n"
                 f"training:\n  output_dir: {tmp_path}/o\n  num_epochs: 1\n")
    res = CliRunner().invoke(app, ["train", "sft", "--config", str(p)])
    assert res.exit_code == 2
    assert "bad.yaml:8: unknown key 'num_epochs'" in res.output

    bad_data = tmp_path / "kto_like.jsonl"
    bad_data.write_text(json.dumps({"prompt": [], "completion": [], "label": True}) + "\n")
    p.write_text(f"recipe: sft\nmodel:\n  name_or_path: {tiny_model}\ndata:\n  train: {bad_data}\n"
                 f"training:\n  output_dir: {tmp_path}/o\n")
    res = CliRunner().invoke(app, ["train", "sft", "--config", str(p)])
    assert res.exit_code == 2
    assert "kto_like.jsonl:1: SFT data needs columns messages" in res.output
