"""SFT under `accelerate launch` with two processes on the CPU (issue 20, CPU stand-in).

configs/accelerate_cpu2.yaml starts two processes that join over gloo as plain DDP (DeepSpeed
ZeRO-3 needs CUDA and accelerate refuses FSDP without an accelerator). A tiny random model with a
tokenizer trained here (no downloads) is fine-tuned, full and LoRA, through `kernelmill train sft`;
then: both processes ran, the loss fell, the token count is the total of both processes, exactly one
checkpoint was written, every file has one writer and reads back, and the model (transformers) or
adapter (PEFT) reloads with the same logits from the final export and from the checkpoint.

The fast tests at the end check the one-writer rules and the launch guard without launching.

On a machine with two GPUs the same test runs the real thing (bf16, ZeRO-3, both processes' GPUs):
    KM_TWO_PROCESS_LAUNCH=configs/accelerate_zero3.yaml python -m pytest -q tests/train/test_two_process_sft.py
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

SYSTEM = "You write fast GPU kernels."

REPO = Path(__file__).resolve().parents[2]
CPU2 = REPO / "configs" / "accelerate_cpu2.yaml"
LAUNCH = Path(os.environ.get("KM_TWO_PROCESS_LAUNCH") or CPU2)
LAUNCH = LAUNCH if LAUNCH.is_absolute() else REPO / LAUNCH
ON_CPU = LAUNCH.resolve() == CPU2.resolve()
# what accelerate reports the run as: the CPU config joins over gloo, a GPU config says what it is
EXPECTED = "MULTI_CPU" if ON_CPU else yaml.safe_load(LAUNCH.read_text())["distributed_type"]
OPS = ["relu", "gelu", "tanh", "exp", "sigmoid", "abs", "softplus", "hardswish"]
STEPS, BATCH = 6, 2  # 8 rows / (2 processes x 2) = 2 steps an epoch: 6 steps are 3 whole epochs


def rows() -> list[dict]:
    out = []
    for i, op in enumerate(OPS):
        extra = " then clamp" * (i % 3)  # answers of different lengths
        out.append({"messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Write a kernel for {op}."},
            {"role": "assistant", "content": f"<think>\n{op} is elementwise{extra}\n</think>\n\n```python\n"
                                             f"y = torch.{op}(x)\n```"}]})
    return out


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    from kernelmill.train import build_tiny_model

    root = tmp_path_factory.mktemp("two_process")
    data = root / "sft.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows()))
    texts = [m["content"] for r in rows() for m in r["messages"]]
    model = build_tiny_model(root / "model", texts * 4, hidden=64, layers=2)
    return root, model, data


def recipe(root: Path, model: Path, data: Path, name: str, lora: bool, use_cpu: bool = True) -> Path:
    text = f"recipe: sft\nmodel:\n  name_or_path: {model}\n  dtype: {'float32' if ON_CPU else 'bfloat16'}\n"
    if lora:
        text += "lora:\n  r: 8\n  alpha: 16\n  dropout: 0.0\n"
    text += (f"data:\n  train: {data}\ntraining:\n  output_dir: {root / name}\n  max_steps: {STEPS}\n"
             f"  per_device_train_batch_size: {BATCH}\n  learning_rate: {0.01 if lora else 0.005}\n"
             "  lr_scheduler_type: constant\n  max_length: 256\n  disable_tqdm: true\n"
             f"  save_steps: {STEPS}\n  seed: 0\n")
    # without use_cpu, bf16 (TRL's default) is refused on a CPU by transformers itself; with bf16 off
    # the processes would start, each on its own
    if ON_CPU:
        text += "  use_cpu: true\n" if use_cpu else "  bf16: false\n"
    else:
        text += "  bf16: true\n  optim: adamw_torch\n"
    path = root / f"{name}.yaml"
    path.write_text(text)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(cfg: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
               OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1")
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(LAUNCH), "--num_processes", "2",
           "--main_process_port", str(free_port()), "-m", "kernelmill.cli", "train", "sft", "--config", str(cfg)]
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def row_tokens(model: Path) -> list[int]:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model)
    return [len(tok.apply_chat_template(r["messages"], tokenize=True, return_dict=True)["input_ids"])
            for r in rows()]


def logits(model, ids):
    import torch

    with torch.no_grad():
        return model.eval()(ids).logits


@pytest.mark.slow
@pytest.mark.parametrize("lora", [False, True], ids=["full", "lora"])
def test_two_processes_train_once_and_write_once(setup, lora):
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    root, model, data = setup
    name = "lora" if lora else "full"
    res = launch(recipe(root, model, data, name, lora))
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    log = res.stdout + res.stderr

    # both processes ran, joined into one run; the summary is printed once
    assert "process 0 of 2 finished" in log and "process 1 of 2 finished" in log, log[-3000:]
    assert res.stdout.count("done:") == 1, res.stdout
    assert f"done: {STEPS} steps on 2 processes ({EXPECTED})" in res.stdout

    out = root / name
    history = [json.loads(x) for x in (out / "log_history.jsonl").read_text().splitlines()]
    steps = [h["step"] for h in history if "loss" in h]
    assert steps == list(range(1, STEPS + 1))  # one line a step: one writer
    losses = [h["loss"] for h in history if "loss" in h]
    assert losses[-1] < (0.8 if not lora else 0.97) * losses[0], losses
    # tokens are counted over both processes: 3 epochs of all 8 rows (each process sees half)
    tokens = max(h["num_tokens"] for h in history if "num_tokens" in h)
    assert tokens == 3 * sum(row_tokens(model)), (tokens, row_tokens(model))

    record = json.loads((out / "run_complete.json").read_text())["result"]
    assert record["processes"] == 2 and record["distributed"] == EXPECTED and record["steps"] == STEPS
    assert record["tokens"] == tokens and record["tokens_per_s"] > 0 and "rank" not in record
    assert record["curves"] and (out / "curves.png").stat().st_size > 0  # the main process's record

    # exactly one checkpoint; each process left its RNG state in it and nothing else of its own
    ckpts = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert ckpts == [f"checkpoint-{STEPS}"], ckpts
    ck = out / ckpts[0]
    assert sorted(p.name for p in ck.glob("rng_state*")) == ["rng_state_0.pth", "rng_state_1.pth"]
    stray = [p for p in out.rglob("*") if p.suffix == ".tmp" or p.name.startswith("tmp")]
    assert not stray, stray
    state = json.loads((ck / "trainer_state.json").read_text())
    assert state["global_step"] == STEPS

    weights = "adapter_model.safetensors" if lora else "model.safetensors"
    final, saved = load_file(str(out / weights)), load_file(str(ck / weights))
    assert final.keys() == saved.keys() and all(torch.equal(final[k], saved[k]) for k in final)
    if lora:
        assert not (out / "model.safetensors").exists()  # an adapter, not a merged copy

    tok = AutoTokenizer.from_pretrained(out)
    text = tok.apply_chat_template(rows()[0]["messages"], tokenize=False)
    ids = tok(text, return_tensors="pt").input_ids
    dtype = torch.float32 if ON_CPU else torch.bfloat16
    base = logits(AutoModelForCausalLM.from_pretrained(model, dtype=dtype), ids)
    if lora:
        from peft import PeftModel

        def load(path):
            return PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(model, dtype=dtype), path)
    else:
        def load(path):
            return AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    tuned, from_ckpt = logits(load(out), ids), logits(load(ck), ids)
    assert torch.equal(tuned, from_ckpt)
    assert not torch.allclose(tuned, base, atol=1e-4)  # it is the trained model, not the base
    # and it learnt the answer: its loss on a training row is below the base model's
    labels = ids[:, 1:]

    def nll(lg):
        return float(torch.nn.functional.cross_entropy(lg[0, :-1].float(), labels[0]))
    assert nll(tuned) < nll(base)


@pytest.mark.slow
@pytest.mark.skipif(not ON_CPU, reason="the CPU launch's guard; on GPUs the processes join without use_cpu")
def test_launch_without_use_cpu_is_refused_before_writing(setup):
    root, model, data = setup
    res = launch(recipe(root, model, data, "no_use_cpu", lora=False, use_cpu=False))
    assert res.returncode != 0
    assert "the launcher started 2 processes but the trainer runs as 1" in res.stderr, res.stderr[-3000:]
    out = root / "no_use_cpu"
    assert not out.exists() or not any(out.iterdir()), list(out.iterdir())


# ---------------------------------------------------------------- without launching
def _clear_launch_env(monkeypatch):
    for var in ("RANK", "WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"):
        monkeypatch.delenv(var, raising=False)


def test_launch_rank_from_the_launcher(monkeypatch):
    from kernelmill.train import is_main_process, launch_rank

    _clear_launch_env(monkeypatch)
    assert launch_rank() == (0, 1) and is_main_process()
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert launch_rank() == (1, 2) and not is_main_process()
    _clear_launch_env(monkeypatch)
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "3")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "4")
    assert launch_rank() == (3, 4)


def test_only_the_main_process_marks_the_run_complete(tmp_path, monkeypatch, setup):
    from kernelmill.train import load_recipe
    from kernelmill.train.run import COMPLETE_FILE, _mark_complete, completed_run

    _, model, data = setup
    r = load_recipe(recipe(tmp_path, model, data, "out", lora=False), kind="sft")
    _clear_launch_env(monkeypatch)
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    _mark_complete(r, {"steps": 6, "curves": None, "rank": 1})
    assert not (r.output_dir / COMPLETE_FILE).exists()
    monkeypatch.setenv("RANK", "0")
    _mark_complete(r, {"steps": 6, "curves": "c.png", "rank": 0})
    assert completed_run(r)["curves"] == "c.png" and "rank" not in completed_run(r)


def test_summary_is_printed_by_the_main_process_only(capsys):
    from kernelmill.cli.train import _print_result

    result = {"steps": 6, "output_dir": "o", "processes": 2, "distributed": "MULTI_CPU", "first_loss": 2.0,
              "last_loss": 1.0, "tokens": 1000.0, "train_runtime_s": 2.0, "tokens_per_s": 500.0}
    _print_result(result, 1, 2)
    cap = capsys.readouterr()
    assert "done" not in cap.out and "process 1 of 2 finished" in cap.err
    _print_result(result, 0, 2)
    cap = capsys.readouterr()
    assert "done: 6 steps on 2 processes (MULTI_CPU)" in cap.out and "500 tokens/s (all processes)" in cap.out


def test_check_launch_refuses_processes_that_train_alone(monkeypatch):
    from types import SimpleNamespace

    from kernelmill.train import LaunchError, check_launch

    _clear_launch_env(monkeypatch)
    alone = SimpleNamespace(accelerator=SimpleNamespace(num_processes=1))
    check_launch(alone)  # not launched: fine
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(LaunchError, match="started 2 processes but the trainer runs as 1.*use_cpu: true"):
        check_launch(alone)
    check_launch(SimpleNamespace(accelerator=SimpleNamespace(num_processes=2)))


def test_throughput_of_a_resumed_run_counts_this_session_only():
    from kernelmill.train.outputs import throughput

    # steps 1-4 from the first session (its runtime entry was not in the checkpoint), then a resume:
    # TRL counts tokens from 0 again and train_runtime is the second session's
    hist = [{"step": i, "loss": 1.0, "num_tokens": 256.0 * i} for i in range(1, 5)]
    hist += [{"step": 5, "loss": 1.0, "num_tokens": 256.0}, {"step": 6, "loss": 1.0, "num_tokens": 512.0},
             {"step": 6, "train_runtime": 0.5}]
    assert throughput(hist) == {"tokens": 512.0, "train_runtime_s": 0.5, "tokens_per_s": 1024.0}
    assert throughput(hist[:4] + [{"step": 4, "train_runtime": 2.0}])["tokens_per_s"] == 512.0
    assert throughput([{"step": 1, "loss": 1.0}]) == {}
