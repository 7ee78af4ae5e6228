"""Throughput of the training recipes on one GPU: SFT tokens/s and GRPO episodes/minute.

A small randomly initialised Qwen2 model (built here, no downloads) runs a
short SFT recipe and a short multi-turn GRPO recipe through the same code as
`kernelmill train`. The GRPO verifier is a constant fake by default (every
attempt "does not compile", so each episode runs all its turns): the figure is
then generation + policy update, the part training owns; `--verifier local`
puts the real verify API in the loop.

`--qlora` adds a QLoRA part: the SFT recipe of configs/triton_qlora.yaml
(base model in 4-bit NF4 through bitsandbytes, LoRA adapters on top) with the
model, data and a few steps swapped in. The tiny model is saved and loaded back
with the recipe's quantization config, as `kernelmill train sft` does; the part
reports tokens/s, peak GPU memory, the loss at the start and end, whether the
base model's Linear layers are bitsandbytes Linear4bit, and whether the saved
adapter loads back onto a fresh 4-bit base and gives the trained model's loss.
It needs a CUDA GPU and bitsandbytes, and says so up front otherwise.

    python benchmarks/train_gpu.py --out bench_train.json
    python benchmarks/train_gpu.py --device cpu --hidden 64 --layers 2 --sft-steps 3 --grpo-steps 1   # smoke
    python benchmarks/train_gpu.py --only qlora --out qlora.json          # QLoRA part alone (GPU)

`--write-sft-recipe DIR` runs nothing: it writes the tiny model (DIR/model), the SFT data (DIR/sft.jsonl)
and two short SFT recipes for the ZeRO-3 launch file, DIR/sft.yaml (full fine-tuning) and DIR/sft_lora.yaml
(LoRA, as configs/kernelcoder_sft.yaml), then prints their paths. bf16 as in the launch file, torch AdamW
(no DeepSpeed op to compile), a checkpoint at the last step (with --device cpu: float32 and use_cpu,
for a CPU run of the same launch with `--mixed_precision no` added):

    python benchmarks/train_gpu.py --write-sft-recipe /tmp/z3 --hidden 256 --layers 4 --seq 256 --sft-steps 5
    accelerate launch --config_file configs/accelerate_zero3.yaml --num_processes 1 \
        -m kernelmill.cli train sft --config /tmp/z3/sft.yaml
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

WORDS = ("tile block thread warp shared memory load store mask reduce sum max fused kernel grid stride "
         "offset pointer float half accumulate barrier sync loop unroll vector").split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def write_data(root: Path, rng: random.Random, n_sft: int, answer_words: int) -> tuple[Path, Path, list[str]]:
    sft, grpo, texts = root / "sft.jsonl", root / "grpo.jsonl", []
    with open(sft, "w") as fh:
        for i in range(n_sft):
            user, answer = f"Task {i}: " + sentence(rng, 40), sentence(rng, answer_words)
            texts += [user, answer]
            fh.write(json.dumps({"messages": [{"role": "user", "content": user},
                                              {"role": "assistant", "content": answer}]}) + "\n")
    with open(grpo, "w") as fh:
        for i in range(16):
            user = f"Task {i}: " + sentence(rng, 40)
            texts.append(user)
            fh.write(json.dumps({"prompt": [{"role": "user", "content": user}], "task_id": f"t{i}",
                                 "language": "torch", "task_code": "# reference"}) + "\n")
    return sft, grpo, texts


def recipe_text(kind: str, model: Path, data: Path, out: Path, a: argparse.Namespace) -> str:
    cpu = a.device == "cpu"
    common = (f"model:\n  name_or_path: {model}\n  dtype: {'float32' if cpu else 'bfloat16'}\n"
              f"data:\n  train: {data}\n")
    train = (f"training:\n  output_dir: {out}\n  use_cpu: {str(cpu).lower()}\n  bf16: {str(not cpu).lower()}\n"
             "  save_strategy: 'no'\n  disable_tqdm: true\n  logging_steps: 1\n  learning_rate: 1.0e-4\n")
    if kind == "sft":
        return (f"recipe: sft\n{common}{train}  max_steps: {a.sft_steps}\n  per_device_train_batch_size: "
                f"{a.sft_batch}\n  max_length: {a.seq}\n  packing: {str(a.packing).lower()}\n")
    return (f"recipe: grpo\n{common}episode:\n  max_turns: {a.turns}\n  turn_max_tokens: {a.turn_tokens}\n"
            f"{train}  max_steps: {a.grpo_steps}\n  per_device_train_batch_size: {a.grpo_batch}\n"
            f"  num_generations: {a.generations}\n  max_completion_length: {a.turns * a.turn_tokens + 256}\n"
            "  temperature: 0.7\n")


def zero3_recipe_text(model: Path, data: Path, out: Path, a: argparse.Namespace, lora: bool) -> str:
    """A short SFT recipe for configs/accelerate_zero3.yaml (full fine-tuning, or LoRA as the KernelCoder recipe)."""
    cpu = a.device == "cpu"
    lora_part = "lora:\n  r: 8\n  alpha: 16\n  dropout: 0.0\n  target_modules: all-linear\n" if lora else ""
    return (f"recipe: sft\nmodel:\n  name_or_path: {model}\n  dtype: {'float32' if cpu else 'bfloat16'}\n"
            f"{lora_part}data:\n  train: {data}\n"
            f"training:\n  output_dir: {out}\n  use_cpu: {str(cpu).lower()}\n  bf16: {str(not cpu).lower()}\n"
            f"  optim: adamw_torch\n  learning_rate: {1.0e-3 if lora else 1.0e-4}\n  max_steps: {a.sft_steps}\n"
            f"  per_device_train_batch_size: {a.sft_batch}\n  gradient_accumulation_steps: 1\n"
            f"  max_length: {a.seq}\n  packing: {str(a.packing).lower()}\n  save_strategy: steps\n"
            f"  save_steps: {a.sft_steps}\n  logging_steps: 1\n  disable_tqdm: true\n")


def write_sft_recipes(root: Path, a: argparse.Namespace) -> dict[str, str]:
    """The tiny model, the SFT data and the two ZeRO-3 recipes under `root` (see --write-sft-recipe)."""
    from kernelmill.train import build_tiny_model

    root.mkdir(parents=True, exist_ok=True)
    sft_data, _, texts = write_data(root, random.Random(0), n_sft=max(64, a.sft_steps * a.sft_batch),
                                    answer_words=a.seq // 2)
    model = build_tiny_model(root / "model", texts, hidden=a.hidden, layers=a.layers, vocab_size=a.vocab,
                             max_positions=max(4096, a.seq + 512))
    paths = {"model": str(model), "data": str(sft_data)}
    for name, lora in (("sft", False), ("sft_lora", True)):
        cfg = root / f"{name}.yaml"
        cfg.write_text(zero3_recipe_text(model, sft_data, root / f"out-{name}", a, lora))
        paths[name] = str(cfg)
    return paths


PARTS = ("sft", "grpo", "qlora")
QLORA_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "triton_qlora.yaml"


def qlora_recipe(model: Path, data: Path, out: Path, a: argparse.Namespace):
    """configs/triton_qlora.yaml with the tiny model, the synthetic data and a short run swapped in."""
    from kernelmill.train import load_recipe

    overrides = [f"model.name_or_path={model}", f"data.train={data}", f"training.output_dir={out}",
                 f"training.max_steps={a.qlora_steps}", f"training.per_device_train_batch_size={a.sft_batch}",
                 "training.gradient_accumulation_steps=1", f"training.max_length={a.seq}",
                 f"training.packing={str(a.packing).lower()}", "training.save_strategy='no'",
                 "training.disable_tqdm=true", "training.logging_steps=1"]
    if a.qlora_lr is not None:
        overrides.append(f"training.learning_rate={a.qlora_lr}")
    return load_recipe(QLORA_CONFIG, kind="sft", overrides=overrides)


def check_qlora_possible(recipe, a: argparse.Namespace) -> None:
    """Refuse before any other part runs: a GPU is needed, and bitsandbytes."""
    import torch

    from kernelmill.train import GpuRequiredError, check_gpu_options
    from kernelmill.train.models import quantization_config

    try:
        check_gpu_options(recipe, cuda=a.device == "cuda" and torch.cuda.is_available())
        quantization_config(recipe.quantization)
    except GpuRequiredError as exc:
        sys.exit(f"error: --qlora: {exc}")


def sft_log_figures(hist: list[dict]) -> tuple[float, float]:
    runtime = next(h["train_runtime"] for h in hist if "train_runtime" in h)
    tokens = max(float(h.get("num_tokens", 0)) for h in hist)
    return tokens, runtime


def run_qlora_part(recipe, rows: list[dict], a: argparse.Namespace) -> dict:
    """QLoRA SFT through the recipe code, then the adapter saved, reloaded on a fresh 4-bit base and compared."""
    import gc

    import bitsandbytes as bnb
    import torch
    from peft import PeftModel, get_peft_model_state_dict

    from kernelmill.train import build_sft_trainer
    from kernelmill.train.models import load_model
    from kernelmill.train.outputs import finish_run

    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    trainer, tok, mask = build_sft_trainer(recipe)  # what run_sft does, with the model kept for the checks below
    load_s = time.perf_counter() - t0
    model = trainer.model

    def linears(m) -> dict:
        four_bit, plain, quant_types = [], [], set()
        for name, mod in m.named_modules():
            if isinstance(mod, bnb.nn.Linear4bit):
                four_bit.append(name)
                qs = getattr(mod.weight, "quant_state", None)
                quant_types.add(getattr(qs, "quant_type", None) or getattr(mod.weight, "quant_type", None))
            elif isinstance(mod, torch.nn.Linear) and ".lora_" not in name:
                plain.append(name)
        # lm_head is tied to the embeddings here and bitsandbytes keeps it in full precision by design
        return {"linear4bit": len(four_bit), "quant_types": sorted(map(str, quant_types)),
                "other_linear": plain, "all_4bit": bool(four_bit) and all(n.endswith("lm_head") for n in plain),
                "loaded_in_4bit": bool(getattr(m, "is_loaded_in_4bit", False)
                                       or getattr(getattr(m, "base_model", None), "is_loaded_in_4bit", False))}

    layers = linears(model)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(json.dumps({"qlora_model": type(model).__name__, **layers, "trainable_params": trainable}), flush=True)

    t0 = time.perf_counter()
    trainer.train()
    wall = time.perf_counter() - t0
    peak = torch.cuda.max_memory_allocated() / 2**30
    result = finish_run(trainer, tok, "sft", recipe.output_dir, title=f"QLoRA SFT: {recipe.source}")
    tokens, runtime = sft_log_figures(trainer.state.log_history)
    out = recipe.output_dir
    saved = sorted(f.name for f in out.iterdir() if f.is_file())

    # a fresh 4-bit base through the same loader, the saved adapter on top
    device = next(p.device for p in model.parameters())
    text = tok.apply_chat_template(rows[0]["messages"], tokenize=False)
    ids = tok(text, return_tensors="pt", truncation=True, max_length=a.seq)["input_ids"].to(device)

    @torch.no_grad()
    def loss_of(m) -> float:
        m.eval()
        return float(m(input_ids=ids, labels=ids).loss)

    trained_loss = loss_of(model)
    trained_sd = {k: v.detach().float().cpu() for k, v in get_peft_model_state_dict(model).items()}
    reloaded = PeftModel.from_pretrained(load_model(recipe), str(out))
    reloaded_sd = {k: v.detach().float().cpu() for k, v in get_peft_model_state_dict(reloaded).items()}
    same_keys = set(trained_sd) == set(reloaded_sd)
    max_diff = max((float((trained_sd[k] - reloaded_sd[k]).abs().max()) for k in trained_sd if k in reloaded_sd),
                   default=float("nan"))
    reloaded_loss = loss_of(reloaded)
    with reloaded.disable_adapter():
        base_loss = loss_of(reloaded)
    full_weights = any(f.startswith("model") and f.endswith(".safetensors") for f in saved)
    reload = {"adapter_files": [f for f in saved if f.startswith("adapter_")], "full_weights_saved": full_weights,
              "adapter_tensors": len(trained_sd), "same_keys": same_keys, "max_abs_diff": max_diff,
              "reloaded_linears": linears(reloaded),
              "loss_trained": trained_loss, "loss_reloaded": reloaded_loss, "loss_base_without_adapter": base_loss,
              "ok": "adapter_model.safetensors" in saved and not full_weights and same_keys and max_diff <= 1e-6
              and abs(trained_loss - reloaded_loss) <= 1e-3 * abs(trained_loss)}
    return {"config": str(recipe.source), "steps": result["steps"], "tokens": tokens, "train_runtime_s": runtime,
            "wall_s": wall, "load_s": load_s, "tokens_per_s": tokens / runtime,
            "loss": [result["first_loss"], result["last_loss"]], "peak_mem_gb": peak,
            "learning_rate": recipe.training.get("learning_rate"), "lora_r": recipe.lora.r,
            "quantization": vars(recipe.quantization), "model_class": type(model).__name__,
            "trainable_params": trainable, "label_mask": mask, **layers,
            "gpu": torch.cuda.get_device_name(0), "bitsandbytes": bnb.__version__, "adapter_reload": reload}


def versions() -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str | None] = {}
    for name in ("transformers", "trl", "peft", "accelerate", "datasets", "pyarrow", "fsspec", "huggingface-hub",
                 "bitsandbytes"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--vocab", type=int, default=4000)
    p.add_argument("--seq", type=int, default=2048, help="SFT max_length")
    p.add_argument("--sft-steps", type=int, default=30)
    p.add_argument("--sft-batch", type=int, default=8)
    p.add_argument("--packing", action="store_true")
    p.add_argument("--grpo-steps", type=int, default=6)
    p.add_argument("--grpo-batch", type=int, default=8)
    p.add_argument("--generations", type=int, default=4)
    p.add_argument("--turns", type=int, default=4)
    p.add_argument("--turn-tokens", type=int, default=128)
    p.add_argument("--verifier", default="fake", choices=["fake", "local"])
    p.add_argument("--qlora", action="store_true", help="also run the QLoRA part (4-bit NF4 + LoRA; CUDA only)")
    p.add_argument("--qlora-steps", type=int, default=10)
    p.add_argument("--qlora-lr", type=float, default=1e-3,
                   help="learning rate of the QLoRA part (the config's own is for a real model; a random "
                        "model's loss barely moves with it in a few steps); 0 keeps the config's")
    p.add_argument("--skip-grpo", action="store_true")
    p.add_argument("--only", default=None, metavar="PARTS",
                   help=f"comma-separated parts to run, of {','.join(PARTS)} (e.g. --only qlora)")
    p.add_argument("--out", default=None, help="write the results as JSON here")
    p.add_argument("--write-sft-recipe", default=None, metavar="DIR",
                   help="only write the tiny model, the SFT data and ZeRO-3 SFT recipes (full and LoRA) into DIR")
    a = p.parse_args()
    if a.write_sft_recipe:
        print(json.dumps(write_sft_recipes(Path(a.write_sft_recipe), a)), flush=True)
        return
    if a.only:
        parts = [x.strip() for x in a.only.split(",") if x.strip()]
        unknown = [x for x in parts if x not in PARTS]
        if unknown or not parts:
            p.error(f"--only: unknown part(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(PARTS)}")
    else:
        parts = ["sft"] + ([] if a.skip_grpo else ["grpo"]) + (["qlora"] if a.qlora else [])
    a.qlora_lr = a.qlora_lr or None

    import torch

    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("no CUDA device: run on the GPU machine, or pass --device cpu for a smoke run")
    from kernelmill.records import Verdict
    from kernelmill.train import build_tiny_model, load_recipe, load_rows, run_grpo, run_sft

    rng = random.Random(0)
    root = Path(tempfile.mkdtemp(prefix="kernelmill-bench-"))
    steps = max(a.sft_steps, a.qlora_steps if "qlora" in parts else 0)
    sft_data, grpo_data, texts = write_data(root, rng, n_sft=max(64, steps * a.sft_batch), answer_words=a.seq // 2)
    if "qlora" in parts:  # before anything is built or trained: no GPU or no bitsandbytes ends the run here
        check_qlora_possible(qlora_recipe(root / "model", sft_data, root / "qlora-out", a), a)
    model = build_tiny_model(root / "model", texts, hidden=a.hidden, layers=a.layers, vocab_size=a.vocab,
                             max_positions=max(4096, a.seq + 512))
    n_params = sum(t.numel() for t in __import__("safetensors.torch").torch.load_file(
        str(model / "model.safetensors")).values())
    results = {"device": torch.cuda.get_device_name(0) if a.device == "cuda" else "cpu",
               "torch": torch.__version__, "params": n_params, "parts": parts, "args": vars(a),
               "versions": versions()}

    def save() -> None:  # after every part, so a later failure keeps what was measured
        if a.out:
            Path(a.out).parent.mkdir(parents=True, exist_ok=True)
            Path(a.out).write_text(json.dumps(results, indent=2, default=str))

    if "sft" in parts:
        cfg = root / "sft.yaml"
        cfg.write_text(recipe_text("sft", model, sft_data, root / "sft-out", a))
        t0 = time.perf_counter()
        sft = run_sft(load_recipe(cfg, kind="sft"), resume=False)
        wall = time.perf_counter() - t0
        hist = [json.loads(x) for x in (root / "sft-out" / "log_history.jsonl").read_text().splitlines()]
        tokens, runtime = sft_log_figures(hist)
        results["sft"] = {"steps": sft["steps"], "tokens": tokens, "train_runtime_s": runtime, "wall_s": wall,
                          "tokens_per_s": tokens / runtime, "loss": [sft["first_loss"], sft["last_loss"]],
                          "peak_mem_gb": torch.cuda.max_memory_allocated() / 2**30 if a.device == "cuda" else None}
        print(json.dumps(results["sft"]), flush=True)
        save()

    if "grpo" in parts:
        def fake(tasks, samples):  # constant, instant: every attempt fails, so every episode runs all turns
            return [Verdict(s.sample_id, s.task_id, "compile_error", message="error: expected ';'") for s in samples]

        import kernelmill.train.rewards as rewards

        if a.verifier == "fake":  # random models write no code block; pretend they did so the verifier is called
            rewards.extract_code = lambda text: ("class ModelNew: pass", None)
        cfg = root / "grpo.yaml"
        cfg.write_text(recipe_text("grpo", model, grpo_data, root / "grpo-out", a))
        if a.device == "cuda":
            torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        grpo = run_grpo(load_recipe(cfg, kind="grpo"), resume=False,
                        verifier=fake if a.verifier == "fake" else None)
        wall = time.perf_counter() - t0
        episodes = [json.loads(x) for x in (root / "grpo-out" / "episodes.jsonl").read_text().splitlines()]
        hist = [json.loads(x) for x in (root / "grpo-out" / "log_history.jsonl").read_text().splitlines()]
        runtime = next(h["train_runtime"] for h in hist if "train_runtime" in h)
        gen_tokens = sum(float(h.get("completions/mean_length", 0)) for h in hist if "loss" in h) * a.grpo_batch
        results["grpo"] = {"steps": grpo["steps"], "episodes": len(episodes),
                           "turns_per_episode": sum(len(e["turns"]) for e in episodes) / max(1, len(episodes)),
                           "train_runtime_s": runtime, "wall_s": wall,
                           "episodes_per_min": 60 * len(episodes) / runtime,
                           "model_tokens_per_s": gen_tokens / runtime,
                           "step_time_s": [h.get("step_time") for h in hist if "step_time" in h],
                           "peak_mem_gb": torch.cuda.max_memory_allocated() / 2**30 if a.device == "cuda" else None}
        print(json.dumps(results["grpo"]), flush=True)
        save()

    if "qlora" in parts:
        recipe = qlora_recipe(model, sft_data, root / "qlora-out", a)
        results["qlora"] = run_qlora_part(recipe, load_rows("sft", sft_data, 1), a)
        print(json.dumps(results["qlora"], default=str), flush=True)
        save()

    line = []
    if "sft" in results:
        line.append(f"SFT  {results['sft']['tokens_per_s']:.0f} tokens/s")
    if "grpo" in results:
        g = results["grpo"]
        line.append(f"GRPO {g['episodes_per_min']:.1f} episodes/min ({g['turns_per_episode']:.1f} turns each)")
    if "qlora" in results:
        q = results["qlora"]
        line.append(f"QLoRA {q['tokens_per_s']:.0f} tokens/s, peak {q['peak_mem_gb']:.2f} GB, loss "
                    f"{q['loss'][0]:.3f} -> {q['loss'][1]:.3f}, {q['linear4bit']} Linear4bit, "
                    f"adapter reload {'ok' if q['adapter_reload']['ok'] else 'MISMATCH'}")
    print("   ".join(line))


if __name__ == "__main__":
    main()
